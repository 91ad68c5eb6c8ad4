/* mkdb_profiles.c: the other databases report_mkdb writes (its second
 * argument names one), each through the db API in the order tlmd writes
 * (sweep row, membership marked, jobs linked, membership settled), with
 * config JSON shaped as tlmd stores it (canonical, sorted keys) and keys
 * that are its SHA-256, as tlmd's are:
 *   rerun     a sweep whose first definition failed on a wrong data path,
 *             corrected and run again (issue 26): the failed jobs keep
 *             their rows, the sweep no longer lists them;
 *   lrgrid    a sweep whose grid varies train.lr besides the taper: each
 *             lr is its own setting, compared with its own uniform model;
 *   paper440  the paper's setting (440M Transformer++, 30B Llama 3 tokens)
 *             beside a 1M byte-level sweep: ours - paper only in the first;
 *   demo      what scripts/demo.sh trains (sweeps/demo.yaml): five
 *             allocations x three seeds of the 1M byte-level model, 30
 *             steps, one validation at the end;
 *   arch4     four architectures x nine configurations x three seeds with
 *             every suite the tables read (val, WikiText, LAMBADA,
 *             commonsense, NIAH, rho per layer): the report at full width.
 * Values are made up but shaped like real runs (a loss falling from ln 256,
 * seed effects shared by the configurations of a seed, as paired seeds
 * share data order).  Not a test by itself: test_report.sh asserts on
 * what tlm-report makes of them.
 * Must not: depend on the time or the machine (every value is a function
 * of the profile). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/sha256.h"
#include "db/db.h"
#include "tests/lib/main_evals.h"
#include "tests/report/mkdb.h"

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        if ((x)) {                                                                                                     \
            fprintf(stderr, "report_mkdb: %s:%d: %s\n", __FILE__, __LINE__, e->msg);                                   \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

/* One job as a sweep expands it. */
typedef struct {
    const char *arch, *scale, *schedule;
    double rs, re;     /* ratio schedules */
    const double *grp; /* blocks: three group multipliers */
    const char *label;
    int seed;
    const char *data; /* data folder: data/<x>/train, data/<x>/val */
    const char *tokenizer;
    int64_t tokens;
    double lr;
    int batch_tokens;
} jspec;

/* A deterministic value in [0, 1) per (a, b). */
static double u01(uint64_t a, uint64_t b)
{
    uint64_t z = a * 0x9e3779b97f4a7c15ull + b * 0xbf58476d1ce4e5b9ull + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* Roughly normal, mean 0, sd 1 (sum of four uniforms). */
static double gauss(uint64_t a, uint64_t b)
{
    double s = 0;
    for (int k = 0; k < 4; k++)
        s += u01(a, b * 4 + (uint64_t)k);
    return (s - 2.0) * sqrt(3.0);
}

static uint64_t str_seed(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The widths of six layers of d_base 256 (the 1m preset), rounded to 16
 * with the ends pinned: close to what the engine computes, enough for the
 * reports (the real 1.5 -> 0.5 cosine is 384 352 288 224 160 128). */
static void widths_of(const jspec *j, int w[6])
{
    for (int l = 0; l < 6; l++) {
        double t = l / 5.0, r = 1;
        if (!strcmp(j->schedule, "cosine"))
            r = j->re + (j->rs - j->re) / 2 * (1 + cos(M_PI * t));
        else if (!strcmp(j->schedule, "linear"))
            r = j->rs - (j->rs - j->re) * t;
        else if (!strcmp(j->schedule, "sigmoid"))
            r = l == 0 ? j->rs : l == 5 ? j->re : j->re + (j->rs - j->re) / (1 + exp(10 * (t - 0.5)));
        else if (!strcmp(j->schedule, "blocks"))
            r = j->grp[l / 2];
        w[l] = (int)(r * 256 / 16 + 0.5) * 16;
    }
}

static void taper_json(const jspec *j, char *out, size_t cap)
{
    if (!strcmp(j->schedule, "uniform"))
        snprintf(out, cap, "{\"schedule\":\"uniform\"}");
    else if (!strcmp(j->schedule, "blocks"))
        snprintf(out, cap, "{\"groups\":[%g,%g,%g],\"multiple\":16,\"schedule\":\"blocks\"}", j->grp[0], j->grp[1],
                 j->grp[2]);
    else
        snprintf(out, cap, "{\"multiple\":16,\"ratio\":[%g,%g],\"schedule\":\"%s\"}", j->rs, j->re, j->schedule);
}

/* The job row, its key (SHA-256 of the config, as tlmd's) into key, and
 * its link to the sweep at position ord. */
static int put_job(db *d, const char *sweep, const jspec *j, int ord, char key[65], int w[6], tlm_err *e)
{
    char taper[160], cfg[2048], widths[96], run_dir[64], groups[48] = "";
    taper_json(j, taper, sizeof taper);
    int big = !strcmp(j->scale, "440m");
    snprintf(cfg, sizeof cfg,
             "{\"arch\":\"%s\",\"data\":{\"train\":\"%s/train\",\"val\":\"%s/val\"},"
             "\"eval\":{\"every_tokens\":0,\"suites\":[\"val\"],\"val_tokens\":1048576},"
             "\"model\":{\"d_ff\":%d,\"d_model\":%d,\"heads\":%d,\"init_std\":0.05,\"kv_heads\":%d,\"layers\":%d,"
             "\"norm_eps\":1e-05,\"rope_theta\":10000,\"tied\":true,\"vocab\":%d},"
             "\"scale\":\"%s\",\"seed\":%d,\"taper\":%s,\"tokenizer\":\"%s\","
             "\"train\":{\"adam_eps\":1e-08,\"batch_tokens\":%d,\"beta1\":0.9,\"beta2\":0.99,\"grad_clip\":1,"
             "\"log_every\":1,\"lr\":%g,\"min_lr_ratio\":0.1,\"seq_len\":256,\"tokens\":%lld,"
             "\"warmup_tokens\":163840,\"weight_decay\":0.1}}",
             j->arch, j->data, j->data, big ? 2816 : 256, big ? 1024 : 128, big ? 16 : 4, big ? 16 : 4, big ? 24 : 6,
             big ? 128256 : 256, j->scale, j->seed, taper, j->tokenizer, j->batch_tokens, j->lr, (long long)j->tokens);
    tlm_sha256_hex(cfg, strlen(cfg), key);
    widths_of(j, w);
    snprintf(widths, sizeof widths, "[%d,%d,%d,%d,%d,%d]", w[0], w[1], w[2], w[3], w[4], w[5]);
    snprintf(run_dir, sizeof run_dir, "runs/%.12s", key);
    if (j->grp)
        snprintf(groups, sizeof groups, "%g,%g,%g", j->grp[0], j->grp[1], j->grp[2]);
    int ratio = strcmp(j->schedule, "uniform") && strcmp(j->schedule, "blocks");
    db_job_row r = {key,
                    sweep,
                    cfg,
                    j->arch,
                    j->scale,
                    j->schedule,
                    ratio ? j->rs : NAN,
                    ratio ? j->re : NAN,
                    j->grp ? groups : NULL,
                    j->seed,
                    j->label,
                    j->tokens,
                    big ? 440000000 : 1017472,
                    big ? 2.6e9 : 6394368.0,
                    widths,
                    run_dir};
    TRY(db_job_put(d, &r, NULL, e));
    TRY(db_sweep_job_link(d, sweep, key, ord, e));
    return 0;
}

static int put_eval(db *d, const char *key, int64_t step, int64_t tokens, const char *suite, const char *task,
                    const char *metric, double v, tlm_err *e)
{
    db_eval_row r = {key, 0, step, tokens, suite, task, metric, v, 1000, NAN};
    return db_eval_put(d, &r, e);
}

/* A finished run: `steps` steps whose loss falls from ln 256 towards
 * ln(ppl) (with a little noise of the seed), the d_ff statistics at step 0,
 * one validation at the end. */
static int put_done(db *d, const char *key, const jspec *j, const int w[6], int steps, double ppl, tlm_err *e)
{
    int n;
    TRY(db_job_start_attempt(d, key, &n, e));
    for (int l = 0; l < 6; l++)
        TRY(db_layer_put(d, key, 0, l, "d_ff", w[l], e));
    double l0 = log(256.0), lf = log(ppl) + 0.04;
    uint64_t seed = str_seed(key);
    int64_t per = j->tokens / steps;
    for (int s = 1; s <= steps; s++) {
        double t = (double)s / steps;
        double loss =
            lf + (l0 - lf) * exp(-4.5 * t) + 0.12 * exp(-1.5 * t) * (1 - t) + 0.012 * gauss(seed, (uint64_t)s);
        db_step_row st = {key, 0, s, per * s, loss, 2e-3, 1.0, 6000, 2500};
        TRY(db_step_put(d, &st, e));
    }
    TRY(db_job_set_tokens(d, key, per * steps, e));
    TRY(put_eval(d, key, steps, per * steps, "val", "val", "ppl", ppl, e));
    TRY(put_eval(d, key, steps, per * steps, "val", "val", "loss", log(ppl), e));
    TRY(db_job_set_final(d, key, lf + 0.01 * gauss(seed, 999), log(ppl), 75.0, e));
    TRY(db_job_set_status(d, key, DB_JOB_DONE, NULL, NULL, e));
    return 0;
}

static int begin_sweep(db *d, const char *name, const char *file, const char *hash, tlm_err *e)
{
    db_sweep_row r = {name, "report_mkdb profile", file, hash, "name: profile\n"};
    TRY(db_sweep_put(d, &r, NULL, e));
    TRY(db_sweep_jobs_mark(d, name, e));
    return 0;
}

/* A 1m Transformer of the uniform-vs-cosine comparisons (rerun, lrgrid):
 * uniform, or (cosine) cosine 1.5 -> 0.5, on bytes for 491520 tokens. */
static jspec pair_job(int cosine, int seed, const char *data, double lr)
{
    jspec j = {"transformer", "1m", cosine ? "cosine" : "uniform", 1.5, 0.5, NULL,
               cosine ? "cosine 1.5->0.5" : "uniform", seed, data, "bytes", 491520, lr, 16384};
    return j;
}

/* ------------------------------------------------------------ rerun */
/* The case: `tlmd` on a sweep whose data path was wrong (every job
 * failed in a second with a data error), the file corrected, `tlmd` again.
 * The corrected jobs have other keys (the config holds the path); the
 * failed ones stay in results.db, no longer listed.  Perplexities: uniform
 * 14.00 and 14.40, cosine 11.79 and 12.29 (seeds 0 and 1): Δ -2.21 and
 * -2.11, mean -2.16, sd 0.0707, 95% interval -2.16 +- 12.706 x 0.0707 /
 * sqrt(2) = [-2.80, -1.52]. */
static int mk_rerun(db *d, tlm_err *e)
{
    static const double ppl[2][2] = {{14.00, 14.40}, {11.79, 12.29}};
    for (int pass = 0; pass < 2; pass++) {
        TRY(begin_sweep(d, "rr", "sweeps/rr.yaml", pass ? "corrected" : "first", e));
        int ord = 0;
        for (int c = 0; c < 2; c++)
            for (int s = 0; s < 2; s++) {
                jspec j = pair_job(c, s, pass ? "data/demo" : "data/dmeo", 2e-3);
                char key[65];
                int w[6], n;
                TRY(put_job(d, "rr", &j, ord++, key, w, e));
                if (pass) {
                    TRY(put_done(d, key, &j, w, 30, ppl[c][s], e));
                    continue;
                }
                TRY(db_job_start_attempt(d, key, &n, e));
                TRY(db_job_set_status(d, key, DB_JOB_FAILED, "data",
                                      "data error (exit 3): data.train: data/dmeo/train: No such file or directory",
                                      e));
            }
        TRY(db_sweep_jobs_settle(d, "rr", NULL, NULL, e));
    }
    return 0;
}

/* ------------------------------------------------------------ lrgrid */
/* grid: train.lr [0.001, 0.003] x {uniform, cosine 1.5 -> 0.5}, seeds 0 and
 * 1.  lr 0.001: uniform 13.0, 13.4, cosine 12.6, 13.1 (Δ -0.40, -0.30);
 * lr 0.003: uniform 12.0, 12.2, cosine 12.5, 12.8 (Δ +0.50, +0.60). */
static int mk_lrgrid(db *d, tlm_err *e)
{
    static const double ppl[2][2][2] = {{{13.0, 13.4}, {12.6, 13.1}}, {{12.0, 12.2}, {12.5, 12.8}}};
    TRY(begin_sweep(d, "lr", "sweeps/lr.yaml", "lr", e));
    int ord = 0;
    for (int l = 0; l < 2; l++)
        for (int c = 0; c < 2; c++)
            for (int s = 0; s < 2; s++) {
                jspec j = pair_job(c, s, "data/demo", l ? 3e-3 : 1e-3);
                char key[65];
                int w[6];
                TRY(put_job(d, "lr", &j, ord++, key, w, e));
                TRY(put_done(d, key, &j, w, 30, ppl[l][c][s], e));
            }
    TRY(db_sweep_jobs_settle(d, "lr", NULL, NULL, e));
    return 0;
}

/* ------------------------------------------------------------ paper440 */
static const double EARLY[3] = {1.5, 1.0, 0.5}, MIDDLE[3] = {0.75, 1.5, 0.75}, LATE[3] = {0.5, 1.0, 1.5};

typedef struct {
    const char *schedule;
    double rs, re;
    const double *grp;
    const char *label;
    double effect; /* on the validation perplexity, in ppl at ~12.5 */
} config;

static const config FIG2[] = {
    {"uniform", NAN, NAN, NULL, "uniform", 0},
    {"blocks", NAN, NAN, EARLY, "wider-early", -0.30},
    {"blocks", NAN, NAN, MIDDLE, "wider-middle", 0.13},
    {"blocks", NAN, NAN, LATE, "wider-late", 0.95},
    {"cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", -0.35},
};

/* The paper's setting (two seeds, perplexities near its Figure 2) and a
 * 1M byte-level sweep in the same database. */
static int mk_paper440(db *d, tlm_err *e)
{
    for (int big = 1; big >= 0; big--) {
        const char *sweep = big ? "p440" : "tiny";
        TRY(begin_sweep(d, sweep, big ? "sweeps/p440.yaml" : "sweeps/tiny.yaml", sweep, e));
        int ord = 0;
        for (size_t c = 0; c < sizeof FIG2 / sizeof FIG2[0]; c++)
            for (int s = 0; s < 2; s++) {
                const config *k = &FIG2[c];
                jspec j = {"transformer",
                           big ? "440m" : "1m",
                           k->schedule,
                           k->rs,
                           k->re,
                           k->grp,
                           k->label,
                           s,
                           big ? "data/fineweb" : "data/demo",
                           big ? "llama3" : "bytes",
                           big ? 30000000000LL : 491520,
                           big ? 4e-4 : 2e-3,
                           big ? 524288 : 16384};
                char key[65];
                int w[6];
                TRY(put_job(d, sweep, &j, ord++, key, w, e));
                double base = big ? 16.28 : 12.62;
                double luck = s ? 0.06 : -0.06, own = 0.03 * gauss(str_seed(key), 7);
                TRY(put_done(d, key, &j, w, big ? 8 : 30, base + k->effect * (big ? 1.05 : 1) + luck + own, e));
            }
        TRY(db_sweep_jobs_settle(d, sweep, NULL, NULL, e));
    }
    return 0;
}

/* ------------------------------------------------------------ demo */
/* sweeps/demo.yaml: per seed, the perplexities of the README's run (uniform
 * 12.62 +- 0.25, wider-early 12.32, wider-middle 12.75, wider-late 13.58,
 * cosine 12.27). */
static int mk_demo(db *d, tlm_err *e)
{
    static const double ppl[5][3] = {{12.40, 12.57, 12.89},
                                     {12.26, 12.29, 12.41},
                                     {12.68, 12.74, 12.82},
                                     {13.39, 13.53, 13.82},
                                     {12.18, 12.27, 12.36}};
    TRY(begin_sweep(d, "demo", "sweeps/demo.yaml", "demo", e));
    int ord = 0;
    /* the expansion's order: the grid (blocks), then the includes; seeds innermost */
    static const int order[5] = {1, 2, 3, 0, 4};
    for (int i = 0; i < 5; i++)
        for (int s = 0; s < 3; s++) {
            const config *k = &FIG2[order[i]];
            jspec j = {"transformer", "1m",    k->schedule, k->rs, k->re, k->grp, k->label, s,
                       "data/demo",   "bytes", 491520,      2e-3,  16384};
            char key[65];
            int w[6];
            TRY(put_job(d, "demo", &j, ord++, key, w, e));
            TRY(put_done(d, key, &j, w, 30, ppl[order[i]][s], e));
        }
    TRY(db_sweep_jobs_settle(d, "demo", NULL, NULL, e));
    return 0;
}

/* ------------------------------------------------------------ arch4 */
static const config ARCH4[] = {
    {"uniform", NAN, NAN, NULL, "uniform", 0},
    {"cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", -0.35},
    {"blocks", NAN, NAN, EARLY, "wider-early", -0.30},
    {"blocks", NAN, NAN, MIDDLE, "wider-middle", 0.15},
    {"blocks", NAN, NAN, LATE, "wider-late", 0.90},
    {"linear", 1.5, 0.5, NULL, "linear 1.5->0.5", -0.20},
    {"sigmoid", 1.5, 0.5, NULL, "sigmoid 1.5->0.5", 0.10},
    {"cosine", 1.25, 0.75, NULL, "cosine 1.25->0.75", -0.20},
    {"cosine", 1.75, 0.25, NULL, "cosine 1.75->0.25", 0.10},
};

/* lambada acc .. boolq */
static const double ACC_BASE[MAIN_EVALS_N - MAIN_EVALS_PPL] = {0.30, 0.62, 0.32, 0.51, 0.45, 0.26, 0.38, 0.55};

/* Four architectures of the 1m preset, nine configurations, three seeds,
 * 60 steps each; a seed's luck is shared by the configurations of that
 * seed (same data order), so paired differences are tighter than the
 * spread of either side. */
static int mk_arch4(db *d, tlm_err *e)
{
    static const char *const ARCHS[] = {"transformer", "gated_attn", "hope_attn", "titans"};
    static const double BASE[] = {12.62, 12.31, 12.08, 12.44};
    static const char *const NIAH[] = {"s_niah_1@1024", "s_niah_1@2048", "s_niah_2@1024", "s_niah_2@2048"};
    TRY(begin_sweep(d, "arch4", "sweeps/arch4.yaml", "arch4", e));
    int ord = 0;
    for (int a = 0; a < 4; a++)
        for (size_t c = 0; c < sizeof ARCH4 / sizeof ARCH4[0]; c++)
            for (int s = 0; s < 3; s++) {
                const config *k = &ARCH4[c];
                jspec j = {ARCHS[a], "1m",        k->schedule, k->rs,  k->re, k->grp, k->label,
                           s,        "data/demo", "bytes",     983040, 2e-3,  16384};
                char key[65];
                int w[6];
                TRY(put_job(d, "arch4", &j, ord++, key, w, e));
                double luck = 0.22 * gauss(100 + (uint64_t)a, (uint64_t)s);
                double ppl = BASE[a] + k->effect * (1 + 0.1 * a) + luck + 0.07 * gauss(str_seed(key), 1);
                TRY(put_done(d, key, &j, w, 60, ppl, e));
                int64_t step = 60, tok = 983040;
                double better = -k->effect / 10; /* a lower perplexity, a few points more accuracy */
                for (int m = 0; m < MAIN_EVALS_N; m++) {
                    double v;
                    if (m < MAIN_EVALS_PPL)
                        v = ppl * (m ? 2.6 : 2.1) * (1 + 0.02 * gauss(str_seed(key), 10 + (uint64_t)m));
                    else
                        v = ACC_BASE[m - MAIN_EVALS_PPL] + 0.02 * a + better * 0.4 +
                            0.012 * gauss(str_seed(key), 20 + (uint64_t)m);
                    TRY(put_eval(d, key, step, tok, MAIN_EVALS[m][0], MAIN_EVALS[m][1], MAIN_EVALS[m][2], v, e));
                }
                for (int t = 0; t < 4; t++) {
                    double v =
                        (t % 2 ? 0.35 : 0.55) - 0.1 * (t / 2) + better + 0.04 * gauss(str_seed(key), 30 + (uint64_t)t);
                    TRY(put_eval(d, key, step, tok, "niah", NIAH[t], "exact_match", v < 0 ? 0 : v > 1 ? 1 : v, e));
                }
                /* the alignment statistics: near 0 early, rising with depth (the paper's shape) */
                for (int l = 0; l < 6; l++) {
                    double t = l / 5.0, tilt = (double)(w[0] - w[5]) / 2560.0;
                    double mlp =
                        -0.06 + 0.30 * t * t + 0.05 * tilt * (1 - t) + 0.02 * gauss(str_seed(key), 40 + (uint64_t)l);
                    double blk = -0.03 + 0.22 * t + 0.015 * gauss(str_seed(key), 50 + (uint64_t)l);
                    TRY(db_layer_put(d, key, step, l, "rho_mlp", mlp, e));
                    TRY(db_layer_put(d, key, step, l, "rho_block", blk, e));
                }
            }
    TRY(db_sweep_jobs_settle(d, "arch4", NULL, NULL, e));
    return 0;
}

static const struct {
    const char *name;
    int (*make)(db *d, tlm_err *e);
} PROFILES[] = {
    {"rerun", mk_rerun}, {"lrgrid", mk_lrgrid}, {"paper440", mk_paper440}, {"demo", mk_demo}, {"arch4", mk_arch4},
};

int mkdb_profile(db *d, const char *name, tlm_err *e)
{
    for (size_t i = 0; i < sizeof PROFILES / sizeof PROFILES[0]; i++)
        if (!strcmp(PROFILES[i].name, name))
            return PROFILES[i].make(d, e);
    snprintf(e->msg, sizeof e->msg, "unknown profile '%s' (fixture, rerun, lrgrid, paper440, demo, arch4)", name);
    return -1;
}
