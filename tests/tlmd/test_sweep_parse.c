/* test_sweep_parse.c: sweep files.  Every file of the malformed catalogue
 * (tests/data/sweeps/bad/, first line "# expect: LINE:COL: message") fails
 * with exactly that position and message; ok_grid.yaml expands in order
 * with grid x seeds minus exclude plus include, duplicates merged, dotted
 * and nested keys merged; a job's key is the one the same config gets on
 * its own; two sweep files with one name and different jobs are an error,
 * identical copies are listed once; 100,000 jobs expand in seconds; a grid
 * key that does not apply to a point (taper.ratio with uniform) is dropped
 * there, the jobs it leaves identical merge, and --dry-run says so. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "engine/config/config.h"
#include "orchestrator/opts.h"
#include "orchestrator/plan.h"
#include "orchestrator/sweep.h"
#include "tests/lib/tap.h"

static const char *srcdir;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ignore_job(void *ctx, const orc_sweep_job *j, tlm_err *e)
{
    (void)j;
    (void)e;
    (*(size_t *)ctx)++;
    return 0;
}

/* Parse + expand; 0 if the sweep is valid, else the message in e. */
static int load_and_expand(const char *path, tlm_err *e)
{
    orc_sweep *s;
    if (orc_sweep_load(path, &s, e))
        return -1;
    size_t n = 0;
    int rc = orc_sweep_expand(s, ignore_job, &n, NULL, NULL, e);
    orc_sweep_free(s);
    return rc;
}

/* The same from a sweep's text (name for its messages). */
static int parse_and_expand(const char *name, const char *text, tlm_err *e)
{
    orc_sweep *s;
    int rc = orc_sweep_parse(name, text, strlen(text), &s, e);
    if (rc)
        return rc;
    size_t n = 0;
    rc = orc_sweep_expand(s, ignore_job, &n, NULL, NULL, e);
    orc_sweep_free(s);
    return rc;
}

static void test_catalogue(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/data/sweeps/bad", srcdir);
    DIR *d = opendir(dir);
    TAP_OK(d != NULL, "catalogue folder %s", dir);
    if (!d)
        return;
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256)
        if (strstr(de->d_name, ".yaml"))
            names[n++] = strdup(de->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    TAP_OK(n >= 25, "%d malformed sweep files", n);
    for (int i = 0; i < n; i++) {
        char path[2048], first[512] = "";
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(first, sizeof first, f))
                first[0] = '\0';
            fclose(f);
        }
        first[strcspn(first, "\n")] = '\0';
        const char *expect = strncmp(first, "# expect: ", 10) == 0 ? first + 10 : NULL;
        tlm_err e = {0};
        int rc = load_and_expand(path, &e);
        /* "LINE:COL: message" -> "<path>:LINE:COL: message"; "-: message" -> "<path>: message";
         * FILE in the message stands for the path too */
        char want[8192] = "";
        if (expect && expect[0] == '-') {
            snprintf(want, sizeof want, "%s", path);
            expect++;
        } else if (expect) {
            snprintf(want, sizeof want, "%s:", path);
        }
        for (const char *p = expect; p && *p;) {
            size_t at = strlen(want);
            if (!strncmp(p, "FILE", 4)) {
                snprintf(want + at, sizeof want - at, "%s", path);
                p += 4;
            } else {
                snprintf(want + at, sizeof want - at, "%c", *p++);
            }
        }
        int good = expect && rc != 0 && strncmp(e.msg, want, strlen(want)) == 0;
        TAP_OK(good, "%s: %s", names[i], rc ? e.msg + strlen(dir) + 1 : "accepted!");
        if (!good && expect)
            TAP_DIAG("expected: %s", want + strlen(dir) + 1);
        free(names[i]);
    }
}

typedef struct {
    char keys[16][65];
    char axes[16][256];
    int64_t seed[16];
    double lr[16];
    int64_t tokens[16];
    int sched[16];
    int include[16];
    size_t n;
} collected;

static int collect(void *ctx, const orc_sweep_job *j, tlm_err *e)
{
    (void)e;
    collected *c = ctx;
    if (c->n < 16) {
        snprintf(c->keys[c->n], 65, "%s", j->key);
        snprintf(c->axes[c->n], 256, "%s", j->axes);
        c->seed[c->n] = j->cfg->seed;
        c->lr[c->n] = j->cfg->train.lr;
        c->tokens[c->n] = j->cfg->train.tokens;
        c->sched[c->n] = j->cfg->taper.schedule;
        c->include[c->n] = j->include;
    }
    c->n++;
    return 0;
}

static void test_semantics(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/sweeps/ok_grid.yaml", srcdir);
    orc_sweep *s;
    tlm_err e = {0};
    TAP_OK(orc_sweep_load(path, &s, &e) == 0, "ok_grid.yaml parses (%s)", e.msg);
    if (!s)
        return;
    TAP_OK(!strcmp(s->name, "ok_grid") && !strcmp(s->description, "semantics of grid, exclude, include and seeds"),
           "name and description");
    collected c = {0};
    size_t n = 0, dups = 0;
    TAP_OK(orc_sweep_expand(s, collect, &c, &n, &dups, &e) == 0, "expands (%s)", e.msg);
    TAP_OK(n == 8 && c.n == 8, "8 jobs (%zu)", n);
    TAP_OK(dups == 2, "the include equal to a grid point is merged, once per seed (%zu duplicates)", dups);
    static const char *const want[] = {
        "taper.schedule=linear taper.ratio=[1.5,0.5] seed=0", "taper.schedule=linear taper.ratio=[1.5,0.5] seed=7",
        "taper.schedule=linear taper.ratio=[1.25,0.75] seed=0", "taper.schedule=linear taper.ratio=[1.25,0.75] seed=7",
        "taper.schedule=cosine taper.ratio=[1.5,0.5] seed=0", "taper.schedule=cosine taper.ratio=[1.5,0.5] seed=7",
        "taper.schedule=uniform seed=0", "taper.schedule=uniform seed=7",
    };
    int order = 1;
    for (int i = 0; i < 8; i++)
        order &= !strcmp(c.axes[i], want[i]);
    TAP_OK(order, "order: grid (last key fastest) x seeds, excluded point gone, then includes");
    if (!order)
        for (int i = 0; i < 8; i++)
            TAP_DIAG("job %d: %s", i, c.axes[i]);
    TAP_OK(c.seed[1] == 7 && c.seed[2] == 0, "seeds applied");
    TAP_OK(c.lr[0] == 1e-3 && c.tokens[0] == 2000000, "base: nested and dotted keys both apply");
    TAP_OK(c.sched[6] == ENG_TAPER_UNIFORM && c.include[6] == 0 && c.include[0] == -1, "includes are marked");
    int distinct = 1;
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < i; k++)
            distinct &= strcmp(c.keys[i], c.keys[k]) != 0;
    TAP_OK(distinct, "8 distinct keys");

    snprintf(path, sizeof path, "%s/tests/data/sweeps/ok_same_job.yaml", srcdir);
    eng_config cfg;
    char key[65] = "";
    if (eng_config_load(path, &cfg, &e) == 0)
        eng_config_id(&cfg, key);
    TAP_OK(!strcmp(key, c.keys[0]), "a job's key is its config's identity, however written (%.12s / %.12s)", key,
           c.keys[0]);
    orc_sweep_free(s);

    /* exclude patterns compare numbers by value and lists element-wise */
    const char *yaml = "name: ex\nbase: {scale: 1m, train: {tokens: 2e6}}\n"
                       "grid: {train.lr: [1e-3, 0.002, 3e-3]}\nexclude: [{train.lr: 2.0e-3}]\n";
    TAP_OK(orc_sweep_parse("<ex>", yaml, strlen(yaml), &s, &e) == 0, "inline sweep parses");
    n = 0;
    TAP_OK(s && orc_sweep_expand(s, ignore_job, &n, NULL, NULL, &e) == 0 && n == 2, "exclude by value: 2 jobs");
    orc_sweep_free(s);

    /* resources: what each Slurm job asks for; the sweep's values over the command line's */
    const char *res = "name: res\nbase: {scale: 1m}\nresources: {gpus: 2, cpus: 8, time: 1-12:00, partition: gpu.a100,"
                      " qos: high, sbatch: [--mem=64G, --constraint=a100]}\n";
    s = NULL;
    TAP_OK(orc_sweep_parse("<res>", res, strlen(res), &s, &e) == 0, "a sweep with resources: parses (%s)", e.msg);
    if (s) {
        orc_resources cli, m;
        orc_resources_init(&cli);
        cli.gpus = 1;
        snprintf(cli.account, sizeof cli.account, "lab");
        snprintf(cli.partition, sizeof cli.partition, "cpu");
        orc_resources_merge(&m, &cli, &s->res);
        TAP_OK(m.gpus == 2 && m.cpus == 8 && !strcmp(m.time, "1-12:00") && !strcmp(m.partition, "gpu.a100") &&
                   !strcmp(m.account, "lab") && !strcmp(m.qos, "high") && m.n_extra == 2 &&
                   !strcmp(m.extra[1], "--constraint=a100"),
               "resources: merged over the command line's (gpus %d, partition %s, account %s from the CLI)", m.gpus,
               m.partition, m.account);
        orc_sweep_free(s);
    }
    s = NULL;
    TAP_OK(orc_sweep_parse("<nores>", yaml, strlen(yaml), &s, &e) == 0 && s->res.gpus == -1 && s->res.n_extra == -1 &&
               !s->res.partition[0],
           "without resources: nothing is asked for (the command line decides)");
    orc_sweep_free(s);
}

/* Table 1 written the natural way: schedule x ratio, where ratio does not apply to uniform. */
static void test_natural_grid(void)
{
    const char *yaml = "name: t1\nbase: {scale: 1m, train: {tokens: 2e6}}\n"
                       "grid:\n  taper.schedule: [uniform, linear, cosine, sigmoid]\n"
                       "  taper.ratio: [[1.25, 0.75], [1.5, 0.5], [1.75, 0.25]]\nseeds: [0, 1]\n";
    orc_sweep *s;
    tlm_err e = {0};
    TAP_OK(orc_sweep_parse("t1.yaml", yaml, strlen(yaml), &s, &e) == 0, "schedule x ratio parses (%s)", e.msg);
    if (!s)
        return;
    collected c = {0};
    orc_sweep_stats st;
    int rc = orc_sweep_expand_stats(s, collect, &c, &st, &e);
    TAP_OK(rc == 0 && st.n_jobs == 20 && st.n_dups == 4,
           "4 x 3 points x 2 seeds: uniform's three points collapse into one per seed: 20 jobs, 4 merged (%s; %zu, %zu)",
           rc ? e.msg : "ok", st.n_jobs, st.n_dups);
    TAP_OK(st.n_drops == 1 && !strcmp(st.drops[0].what, "taper.ratio does not apply to schedule uniform") &&
               st.drops[0].points == 3 && st.drops[0].jobs == 2,
           "the drop is told: '%s', %zu points, %zu jobs", st.n_drops ? st.drops[0].what : "", st.n_drops ? st.drops[0].points : 0,
           st.n_drops ? st.drops[0].jobs : 0);
    TAP_OK(!strcmp(c.axes[0], "taper.schedule=uniform seed=0") && !strcmp(c.axes[1], "taper.schedule=uniform seed=1") &&
               !strcmp(c.axes[2], "taper.schedule=linear taper.ratio=[1.25,0.75] seed=0"),
           "the uniform job's axes leave the dropped key out: '%s'", c.axes[0]);
    orc_sweep_free(s);
    /* the uniform job is the one an include would give */
    const char *inc = "name: t1i\nbase: {scale: 1m, train: {tokens: 2e6}}\ninclude: [{taper.schedule: uniform}]\n";
    collected ci = {0};
    rc = orc_sweep_parse("t1i.yaml", inc, strlen(inc), &s, &e);
    if (!rc) {
        rc = orc_sweep_expand(s, collect, &ci, NULL, NULL, &e);
        orc_sweep_free(s);
    }
    TAP_OK(rc == 0 && ci.n == 1 && !strcmp(ci.keys[0], c.keys[0]), "the same key as include {taper.schedule: uniform}");

    /* another rule of the engine: the titans keys for other architectures */
    const char *arch = "name: ar\nbase: {scale: 1m, train: {tokens: 2e6}}\n"
                       "grid: {arch: [transformer, titans], model.titans.mem_depth: [1, 2]}\n";
    size_t n = 0;
    rc = orc_sweep_parse("ar.yaml", arch, strlen(arch), &s, &e);
    if (!rc) {
        rc = orc_sweep_expand_stats(s, ignore_job, &n, &st, &e);
        orc_sweep_free(s);
    }
    TAP_OK(rc == 0 && n == 3 && st.n_drops == 1 &&
               !strcmp(st.drops[0].what, "model.titans.mem_depth does not apply to arch transformer") &&
               st.drops[0].points == 2 && st.drops[0].jobs == 1,
           "arch x model.titans.mem_depth: 3 jobs, '%s' (%s)", st.n_drops ? st.drops[0].what : "", rc ? e.msg : "ok");

    /* inside a mapping value of the grid, a key that does not apply is an error (as in an include):
     * dropping the whole mapping would lose its schedule too */
    const char *sect = "name: sc\nbase: {scale: 1m, train: {tokens: 2e6}}\n"
                       "grid: {taper: [{schedule: uniform, ratio: [1.5, 0.5]}, {schedule: cosine, ratio: [1.5, 0.5]}]}\n";
    rc = parse_and_expand("sc.yaml", sect, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "sc.yaml:3:43: taper.ratio: only used with"),
           "a grid mapping {schedule: uniform, ratio: ...}: an error at the ratio (%s)", e.msg);

    /* a value that is wrong, not inapplicable, stays an error */
    const char *bad = "name: bd\nbase: {scale: 1m, train: {tokens: 2e6}}\n"
                      "grid: {taper.schedule: [uniform, cosine], taper.ratio: [[1.5, 0.7]]}\n";
    rc = parse_and_expand("bd.yaml", bad, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "the mean of start and end must be 1"), "a bad ratio: %s", e.msg);

    /* --dry-run says so */
    char dir[256], file[300], dbp[300];
    snprintf(dir, sizeof dir, "%s/tlm-test-natural-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return;
    snprintf(file, sizeof file, "%s/t1.yaml", dir);
    snprintf(dbp, sizeof dbp, "%s/none.db", dir);
    FILE *f = fopen(file, "w");
    fputs("name: t1\nbase: {scale: 1m, train: {tokens: 2e6}}\ngrid:\n  taper.schedule: [uniform, cosine]\n"
          "  taper.ratio: [[1.25, 0.75], [1.5, 0.5], [1.75, 0.25], [1.375, 0.625], [1.625, 0.375]]\n",
          f);
    fclose(f);
    const char *files[] = {file};
    orc_opts o = {.db_path = dbp, .runs_dir = dir, .sweeps = files, .n_sweeps = 1};
    FILE *out = tmpfile();
    rc = orc_plan_dry_run(&o, out, &e);
    char buf[16384] = "";
    rewind(out);
    size_t len = fread(buf, 1, sizeof buf - 1, out);
    buf[len] = '\0';
    fclose(out);
    TAP_OK(rc == 0 && strstr(buf, "\n  taper.ratio does not apply to schedule uniform: 5 grid points, 1 job\n") &&
               strstr(buf, "  6 jobs (4 duplicates merged"),
           "--dry-run: 'taper.ratio does not apply to schedule uniform: 5 grid points, 1 job' (%s)", rc ? e.msg : "ok");
    if (rc == 0 && !strstr(buf, "5 grid points, 1 job"))
        TAP_DIAG("%s", buf);
    remove(file);
    rmdir(dir);
}

static void test_plan_names(void)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/tlm-test-sweep-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return;
    char a[300], b[300], c[300], dbp[300];
    snprintf(a, sizeof a, "%s/a.yaml", dir);
    snprintf(b, sizeof b, "%s/b.yaml", dir);
    snprintf(c, sizeof c, "%s/c.yaml", dir);
    snprintf(dbp, sizeof dbp, "%s/none.db", dir);
    FILE *f = fopen(a, "w");
    fputs("name: same\nbase: {scale: 1m, train: {tokens: 2e6}}\ngrid: {taper.schedule: [linear, cosine]}\n", f);
    fclose(f);
    f = fopen(b, "w"); /* the same jobs, written differently */
    fputs("name: same\nbase: {scale: 1m, train.tokens: 2000000}\ngrid:\n  taper.schedule: [linear, cosine]\n", f);
    fclose(f);
    f = fopen(c, "w"); /* the same name, other jobs */
    fputs("name: same\nbase: {scale: 1m, train: {tokens: 2e6}}\ngrid: {taper.schedule: [sigmoid]}\n", f);
    fclose(f);

    const char *ab[] = {a, b}, *ac[] = {a, c};
    orc_opts o = {.db_path = dbp, .runs_dir = dir, .sweeps = ab, .n_sweeps = 2};
    tlm_err e = {0};
    FILE *out = tmpfile();
    TAP_OK(orc_plan_dry_run(&o, out, &e) == 0, "two copies of one sweep: accepted (%s)", e.msg);
    char buf[8192] = "";
    rewind(out);
    size_t len = fread(buf, 1, sizeof buf - 1, out);
    buf[len] = '\0';
    fclose(out);
    TAP_OK(strstr(buf, "total: 2 distinct jobs: 2 new"), "and its jobs counted once");
    o.sweeps = ac;
    out = tmpfile();
    int rc = orc_plan_dry_run(&o, out, &e);
    fclose(out);
    char want[1000];
    snprintf(want, sizeof want, "%s:1:7: sweep name 'same' is already used by %s with different jobs", c, a);
    TAP_OK(rc == TLM_ECONFIG && !strncmp(e.msg, want, strlen(want)), "same name, other jobs: %s", e.msg);

    const char *missing[] = {"/nonexistent.yaml"};
    o.sweeps = missing;
    o.n_sweeps = 1;
    TAP_OK(orc_plan_dry_run(&o, stdout, &e) != 0 && strstr(e.msg, "/nonexistent.yaml"), "missing file: %s", e.msg);
    o.sweeps = (const char *[]){dir};
    remove(a);
    remove(b);
    remove(c);
    TAP_OK(orc_plan_dry_run(&o, stdout, &e) != 0 && strstr(e.msg, "no .yaml"), "empty folder: %s", e.msg);
    rmdir(dir);
}

/* 4 grid points x `seeds`: the seconds it took to expand and resolve (-1:
 * the count or a step was wrong, said in msg) */
static double expand_seeds(int seeds, char *msg, size_t cap)
{
    size_t ycap = 100 + (size_t)seeds * 8;
    char *yaml = malloc(ycap);
    size_t at = (size_t)snprintf(yaml, ycap, "name: big\nbase: {scale: 1m, train: {tokens: 2e6}}\n"
                                             "grid:\n  taper.schedule: [linear, cosine]\n"
                                             "  taper.ratio: [[1.5, 0.5], [1.25, 0.75]]\nseeds: [");
    for (int i = 0; i < seeds; i++)
        at += (size_t)snprintf(yaml + at, ycap - at, "%s%d", i ? "," : "", i);
    at += (size_t)snprintf(yaml + at, ycap - at, "]\n");
    double t0 = tlm_clock_mono();
    orc_sweep *s;
    tlm_err e = {0};
    size_t n = 0, counted = 0;
    int rc = orc_sweep_parse("<big>", yaml, at, &s, &e);
    if (!rc)
        rc = orc_sweep_expand(s, ignore_job, &counted, &n, NULL, &e);
    double t = tlm_clock_mono() - t0;
    snprintf(msg, cap, "%s", rc ? e.msg : n != (size_t)seeds * 4 || counted != n ? "wrong count" : "ok");
    if (!rc)
        orc_sweep_free(s);
    free(yaml);
    return rc || n != (size_t)seeds * 4 || counted != n ? -1 : t;
}

/* 100,000 jobs expand, and in time that grows with the jobs, not with
 * their square: ten times the jobs may take at most 40 times as long
 * (quadratic work would take 100; a fixed time limit would fail on a slow
 * or loaded machine and under the sanitizers). */
static void test_scale(void)
{
    char m1[TLM_MSG_MAX], m2[TLM_MSG_MAX];
    double small = expand_seeds(2500, m1, sizeof m1), big = expand_seeds(25000, m2, sizeof m2);
    TAP_OK(small >= 0 && big >= 0, "10,000 and 100,000 jobs expanded and resolved (%s, %s)", m1, m2);
    TAP_OK(big <= 40 * (small > 0.01 ? small : 0.01), "100,000 jobs in %.2f s, 10,000 in %.2f s (%.1fx; at most 40x)",
           big, small, small > 0 ? big / small : 0.0);
}

static int keep_axes(void *ctx, const orc_sweep_job *j, tlm_err *e)
{
    (void)e;
    snprintf(ctx, 2048, "%s", j->axes);
    return 0;
}

/* A job's axes label that does not fit ends in "...", never cut silently. */
static void test_long_axes(void)
{
    char text[4096], value[400], axes[2048] = "";
    memset(value, 'p', 300);
    value[300] = '\0';
    snprintf(text, sizeof text, "name: long\nbase: {scale: 1m}\ngrid:\n  data.train: [/%s]\n", value);
    orc_sweep *s;
    tlm_err e;
    int rc = orc_sweep_parse("long.yaml", text, strlen(text), &s, &e);
    if (!rc) {
        rc = orc_sweep_expand(s, keep_axes, axes, NULL, NULL, &e);
        orc_sweep_free(s);
    }
    size_t n = strlen(axes);
    TAP_OK(rc == 0 && n > 200 && !strncmp(axes, "data.train=/ppp", 15) && !strcmp(axes + n - 3, "..."),
           "a 301-byte grid value: the axes label ends in '...' (%zu bytes): %s", n, rc ? e.msg : "ok");
}

int main(void)
{
    srcdir = getenv("TLM_SRCDIR") ? getenv("TLM_SRCDIR") : "..";
    test_catalogue();
    test_semantics();
    test_natural_grid();
    test_plan_names();
    test_scale();
    test_long_axes();
    return tap_done();
}
