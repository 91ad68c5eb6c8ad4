/* plan.c: sweep files -> this run's jobs (see plan.h). */
#include "orchestrator/plan.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/fmt.h"
#include "common/sha256.h"
#include "common/vec.h"
#include "engine/config/ranks.h"
#include "orchestrator/inputs.h"
#include "orchestrator/jobinfo.h"
#include "orchestrator/rundir.h"
#include "orchestrator/sweep.h"

int orc_reason_is_final(const char *reason)
{
    const tlm_failure *f = tlm_failure_of_kind(reason);
    return f && f->policy == TLM_POLICY_FINAL;
}

/* ------------------------------------------------------------ files */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int push(char ***v, size_t *n, size_t *cap, const char *s)
{
    if (TLM_GROW(*v, *cap, *n + 1, 16))
        return -1;
    if (!((*v)[*n] = strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

static int has_yaml_ext(const char *name)
{
    size_t n = strlen(name);
    return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml"));
}

/* Sweep files named by the arguments (folders: their *.yaml and *.yml, sorted). */
static void orc_plan_files_free(char **files, size_t n);

static int orc_plan_files(const char *const *args, size_t n, char ***files, size_t *n_files, tlm_err *e)
{
    char **v = NULL;
    size_t nv = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(args[i], &st) != 0) {
            orc_plan_files_free(v, nv);
            return tlm_errf(e, TLM_ECONFIG, "--sweeps %s: %s", args[i], strerror(errno));
        }
        if (!S_ISDIR(st.st_mode)) {
            if (push(&v, &nv, &cap, args[i]))
                goto oom;
            continue;
        }
        DIR *dir = opendir(args[i]);
        if (!dir) {
            orc_plan_files_free(v, nv);
            return tlm_errf(e, TLM_ECONFIG, "--sweeps %s: %s", args[i], strerror(errno));
        }
        size_t first = nv;
        struct dirent *de;
        while ((de = readdir(dir))) {
            if (de->d_name[0] == '.' || !has_yaml_ext(de->d_name))
                continue;
            char path[TLM_PATH_CAP];
            size_t len = strlen(args[i]);
            if ((size_t)snprintf(path, sizeof path, "%s%s%s", args[i], len && args[i][len - 1] == '/' ? "" : "/",
                                 de->d_name) >= sizeof path) {
                closedir(dir);
                orc_plan_files_free(v, nv);
                return tlm_errf(e, TLM_ECONFIG, "--sweeps %s: the path of %s in it is longer than the %d bytes this "
                                "system allows", args[i], de->d_name, TLM_PATH_CAP - 1);
            }
            if (push(&v, &nv, &cap, path)) {
                closedir(dir);
                goto oom;
            }
        }
        closedir(dir);
        if (nv == first) {
            orc_plan_files_free(v, nv);
            return tlm_errf(e, TLM_ECONFIG, "--sweeps %s: the folder holds no .yaml or .yml file", args[i]);
        }
        qsort(v + first, nv - first, sizeof *v, cmp_str);
    }
    *files = v;
    *n_files = nv;
    return 0;
oom:
    orc_plan_files_free(v, nv);
    return tlm_errf(e, TLM_ENOMEM, "out of memory");
}

static void orc_plan_files_free(char **files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
}

/* ------------------------------------------------------------ the scan */
/* Sweeps of this run by name: the same name twice must mean the same jobs. */
typedef struct {
    char name[128];
    char hash[65];
    const char *file;
} seen_sweep;

/* What each use of the scan (dry run, check, load) does with it. */
typedef struct scan_ops {
    /* Before a sweep's expansion; `before` is the file of an earlier sweep
     * of the same name (else NULL).  1: its jobs go to `job`; 0: only
     * hashed (the same sweep listed again); negative: an error. */
    int (*begin)(void *ctx, const orc_sweep *s, const char *file, const char *before, tlm_err *e);
    orc_sweep_job_fn job;
    /* After it (also after a failure: rc), hash = the sweep's content
     * hash (its job keys in order); the same name with other jobs has been
     * refused already.  Returns the sweep's result. */
    int (*end)(void *ctx, const orc_sweep *s, const char *file, const char *before, const char *hash,
               const orc_sweep_stats *st, int rc, tlm_err *e);
} scan_ops;

typedef struct {
    const scan_ops *ops;
    void *ctx;
    int jobs;
    tlm_sha256 sha;
    const orc_sweep *s;
    int ranks;        /* the sweep's (its resources over the command line's) */
} scan_job_ctx;

/* The ranks a sweep's jobs run on: its resources over the command line's */
static int sweep_ranks(const orc_opts *o, const orc_sweep *s, orc_resources *res)
{
    orc_resources_merge(res, &o->res, &s->res);
    return orc_resources_ranks(res);
}

static int scan_job(void *ctx, const orc_sweep_job *j, tlm_err *e)
{
    scan_job_ctx *c = ctx;
    tlm_sha256_update(&c->sha, j->key, 64);
    tlm_sha256_update(&c->sha, "\n", 1);
    eng_rank_split sp;
    if (c->ranks > 1 && eng_rank_split_of(&j->cfg->train, c->ranks, &sp, e)) {
        const tlm_cfg_node *at = tlm_cfg_map_get(c->s->root, "resources");
        char where[64] = "";
        if (at)
            snprintf(where, sizeof where, ":%d", at->line);
        return tlm_err_prefix(e, "%s%s: sweep %s, job %.12s (%s) on %d ranks (resources)", c->s->file, where,
                              c->s->name, j->key, j->axes, c->ranks);
    }
    return c->jobs ? c->ops->job(c->ctx, j, e) : 0;
}

/* One sweep: loaded, expanded, hashed, checked against the sweeps before. */
static int scan_sweep(const orc_opts *o, const scan_ops *ops, void *ctx, const char *file, seen_sweep *seen,
                      size_t *n_seen, orc_plan_needs *needs, tlm_err *e)
{
    orc_sweep *s;
    int rc = orc_sweep_load(file, &s, e);
    if (rc)
        return rc;
    orc_resources res;
    const int ranks = sweep_ranks(o, s, &res);
    if (needs) {
        needs->nodes = res.nodes > needs->nodes ? res.nodes : needs->nodes;
        needs->ranks_per_node = res.ranks_per_node > needs->ranks_per_node ? res.ranks_per_node : needs->ranks_per_node;
        if (ranks > needs->ranks) {
            needs->ranks = ranks;
            snprintf(needs->sweep, sizeof needs->sweep, "%s", s->name);
        }
        const int rpn = res.ranks_per_node > 0 ? res.ranks_per_node : 1;
        if (ranks > 1 && res.gpus > 0 && res.gpus != rpn && !needs->gpu_sweep[0]) {
            snprintf(needs->gpu_sweep, sizeof needs->gpu_sweep, "%s", s->name);
            needs->gpus = res.gpus;
            needs->gpu_ranks_per_node = rpn;
        }
    }
    const seen_sweep *before = NULL;
    for (size_t i = 0; i < *n_seen && !before; i++)
        if (!strcmp(seen[i].name, s->name))
            before = &seen[i];
    scan_job_ctx c = {.ops = ops, .ctx = ctx, .jobs = 1, .s = s, .ranks = ranks};
    if (ops->begin)
        rc = c.jobs = ops->begin(ctx, s, file, before ? before->file : NULL, e);
    orc_sweep_stats st = {0};
    char hex[65] = "";
    if (rc >= 0) {
        tlm_sha256_init(&c.sha);
        rc = orc_sweep_expand_stats(s, scan_job, &c, &st, e);
    }
    if (!rc) {
        uint8_t h[32];
        tlm_sha256_final(&c.sha, h);
        tlm_hex(h, 32, hex);
        if (before && strcmp(before->hash, hex) != 0)
            rc = tlm_cfg_errf(e, tlm_cfg_map_get(s->root, "name"),
                              "sweep name '%s' is already used by %s with different jobs; give each sweep its own "
                              "name",
                              s->name, before->file);
    }
    if (!rc && !before) {
        snprintf(seen[*n_seen].name, sizeof seen[*n_seen].name, "%s", s->name);
        memcpy(seen[*n_seen].hash, hex, 65);
        seen[(*n_seen)++].file = file;
    }
    if (ops->end)
        rc = ops->end(ctx, s, file, before ? before->file : NULL, hex, &st, rc, e);
    orc_sweep_free(s);
    return rc;
}

/* Every sweep file of --sweeps, in order. */
static int scan(const orc_opts *o, const scan_ops *ops, void *ctx, orc_plan_needs *needs, tlm_err *e)
{
    if (needs)
        *needs = (orc_plan_needs){.nodes = 1, .ranks_per_node = 1, .ranks = 1};
    char **files;
    size_t nf;
    if (orc_plan_files(o->sweeps, o->n_sweeps, &files, &nf, e))
        return TLM_ECONFIG;
    seen_sweep *seen = calloc(nf ? nf : 1, sizeof *seen);
    size_t n_seen = 0;
    int rc = seen ? 0 : tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (size_t i = 0; i < nf && !rc; i++)
        rc = scan_sweep(o, ops, ctx, files[i], seen, &n_seen, needs, e);
    free(seen);
    orc_plan_files_free(files, nf);
    return rc;
}

/* ------------------------------------------------------------ dry run */
typedef struct {
    FILE *out, *err;
    db *d;
    const orc_opts *o;
    int ranks;          /* of the sweep being listed */
    int rerun, retry_failed;
    const char *file;    /* the sweep file being listed */
    orc_inputs inputs;   /* the files the jobs read */
    orc_jobs distinct;
    size_t n_new, n_done, n_other, n_failed;
    double flops;
} dry_ctx;

/* the plan's parameters and FLOPs: 124M, 7.52e+20 is 752E */
static void human(double v, char *out, size_t cap) { tlm_fmt_si(out, cap, v, 8, "%.3g%s", "%.0f%s"); }

static int dry_job(void *ctx, const orc_sweep_job *j, tlm_err *e)
{
    dry_ctx *c = ctx;
    orc_jobinfo info;
    if (orc_jobinfo_compute(j->cfg, &info, e))
        return TLM_ECONFIG;
    if (orc_inputs_check(&c->inputs, j->cfg, c->file, c->err, e))
        return TLM_ENOMEM;
    const char *status = "new";
    db_job_state st;
    if (c->d) {
        int rc = db_job_state_get(c->d, j->key, &st, e);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            status = st.status;
            if (c->rerun && !st.rerun)
                status = "rerun";
            else if (!strcmp(st.status, "failed") && (c->retry_failed || !orc_reason_is_final(st.reason)))
                status = "retry";
        }
    }
    size_t idx;
    int added;
    if (orc_jobs_add(&c->distinct, j->key, &idx, &added))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    if (added) {
        if (!strcmp(status, "new"))
            c->n_new++;
        else if (!strcmp(status, "done"))
            c->n_done++;
        else if (!strcmp(status, "failed"))
            c->n_failed++;
        else
            c->n_other++;
        c->flops += info.flops_per_token * (double)j->cfg->train.tokens;
    }
    char p[16], f[16], ft[16];
    human((double)info.params, p, sizeof p);
    human(info.flops_per_token, f, sizeof f);
    human(info.flops_per_token * (double)j->cfg->train.tokens, ft, sizeof ft);
    fprintf(c->out, "  %.12s  %-11s %-20s %7s %9s %9s  %-22s %s\n", j->key, status, info.label, p, f, ft, info.dff,
            j->axes);
    eng_rank_split sp;
    if (c->ranks > 1 && !eng_rank_split_of(&j->cfg->train, c->ranks, &sp, e))
        fprintf(c->out, "  %12s  on %d ranks: %d of the %d sequences of a step each, micro-batch %d (%d pass%s)\n", "",
                sp.ranks, sp.share, sp.seqs, sp.micro, sp.accum, sp.accum == 1 ? "" : "es");
    return 0;
}

static int dry_begin(void *ctx, const orc_sweep *s, const char *file, const char *before, tlm_err *e)
{
    (void)before, (void)e;
    dry_ctx *c = ctx;
    c->file = file;
    fprintf(c->out, "sweep %s (%s)%s%s\n", s->name, file, *s->description ? ": " : "", s->description);
    orc_resources res;
    c->ranks = sweep_ranks(c->o, s, &res);
    if (c->ranks > 1)
        fprintf(c->out, "  each job: one attempt of %d ranks (%d node%s x %d), launched by mpirun (local) or srun "
                        "--mpi=pmix (slurm)\n",
                c->ranks, res.nodes > 0 ? res.nodes : 1, res.nodes > 1 ? "s" : "",
                res.ranks_per_node > 0 ? res.ranks_per_node : 1);
    fprintf(c->out, "  %-12s  %-11s %-20s %7s %9s %9s  %-22s %s\n", "id", "status", "label", "params", "FLOPs/tok",
            "FLOPs", "d_ff", "axes");
    return 1;
}

static int dry_end(void *ctx, const orc_sweep *s, const char *file, const char *before, const char *hash,
                   const orc_sweep_stats *st, int rc, tlm_err *e)
{
    (void)file, (void)before;
    dry_ctx *c = ctx;
    char stored[65];
    int found = 0;
    if (!rc && c->d && (found = db_sweep_hash(c->d, s->name, stored, e)) < 0)
        rc = found;
    if (rc)
        return rc;
    fprintf(c->out, "  %zu jobs%s", st->n_jobs, st->n_dups ? "" : "\n");
    if (st->n_dups)
        fprintf(c->out, " (%zu duplicates merged: they resolve to the same config)\n", st->n_dups);
    /* grid keys dropped where they do not apply (docs/sweeps.md) */
    for (size_t k = 0; k < st->n_drops; k++)
        fprintf(c->out, "  %s: %zu grid point%s, %zu job%s\n", st->drops[k].what, st->drops[k].points,
                st->drops[k].points == 1 ? "" : "s", st->drops[k].jobs, st->drops[k].jobs == 1 ? "" : "s");
    if (st->more_drops)
        fprintf(c->out, "  (%zu more kinds of dropped grid keys)\n", st->more_drops);
    if (found && strcmp(stored, hash) != 0)
        fprintf(c->out, "  the database holds another version of sweep %s: it will be reconciled\n", s->name);
    return 0;
}

int orc_plan_dry_run(const orc_opts *o, FILE *out, tlm_err *e)
{
    static const scan_ops ops = {dry_begin, dry_job, dry_end};
    dry_ctx c = {.out = out, .err = stderr, .o = o, .rerun = o->rerun, .retry_failed = o->retry_failed};
    orc_inputs_init(&c.inputs);
    int rc = 0;
    if (access(o->db_path, F_OK) == 0 && (rc = db_open(o->db_path, DB_READONLY, &c.d, e)))
        goto done;
    if (!c.d)
        fprintf(out, "(%s does not exist yet: every job is new)\n", o->db_path);
    rc = scan(o, &ops, &c, NULL, e);
    if (!rc) {
        char fl[16];
        human(c.flops, fl, sizeof fl);
        fprintf(out, "total: %zu distinct jobs: %zu new, %zu done, %zu to resume or retry, %zu failed; %s training FLOPs\n",
                c.distinct.n, c.n_new, c.n_done, c.n_other, c.n_failed, fl);
        if (c.inputs.bad)
            rc = tlm_errf(e, TLM_ECONFIG,
                          "%zu input path(s) of the jobs cannot be read (above): every job that names one would fail "
                          "at its start; make them readable or fix the sweep",
                          c.inputs.bad);
    }
done:
    orc_inputs_clear(&c.inputs);
    orc_jobs_clear(&c.distinct);
    db_close(c.d);
    return rc;
}

/* ------------------------------------------------------------ check */
static int check_job(void *ctx, const orc_sweep_job *j, tlm_err *e)
{
    (void)ctx;
    orc_jobinfo info;
    return orc_jobinfo_compute(j->cfg, &info, e) ? TLM_ECONFIG : 0;
}

int orc_plan_check(const orc_opts *o, orc_plan_needs *needs, tlm_err *e)
{
    static const scan_ops ops = {NULL, check_job, NULL};
    return scan(o, &ops, NULL, needs, e);
}

/* ------------------------------------------------------------ run mode */
typedef struct {
    orc_plan *p;
    const orc_opts *o;
    db *d;
    FILE *log;
    orc_plan_sweep *ps;   /* the sweep being loaded */
    size_t cap;           /* of ps->jobs */
    size_t sweeps_cap;    /* of p->sweeps */
} load_ctx;

/* A new job's row, or a known job's state (a retriable failure made
 * pending again; --rerun: reset). */
static int load_state(load_ctx *c, const orc_sweep_job *j, orc_job *job, tlm_err *e)
{
    db_job_state st;
    int found = db_job_state_get(c->d, j->key, &st, e);
    if (found < 0)
        return found;
    if (!found) {
        orc_jobinfo info;
        if (orc_jobinfo_compute(j->cfg, &info, e))
            return TLM_ECONFIG;
        char *json = eng_config_json(j->cfg);
        if (!json)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        char run_dir[TLM_PATH_CAP];
        if (orc_rundir_path(c->o->runs_dir, j->key, run_dir, sizeof run_dir, e)) {
            free(json);
            return TLM_ECONFIG;
        }
        db_job_row r = {
            .key = j->key, .sweep = c->ps->name, .config = json,
            .arch = eng_arch_name(j->cfg->arch), .scale = j->cfg->scale,
            .schedule = eng_schedule_name(j->cfg->taper.schedule),
            .ratio_start = info.ratio_start, .ratio_end = info.ratio_end,
            .groups = info.groups[0] ? info.groups : NULL, .seed = j->cfg->seed, .label = info.label,
            .tokens_total = j->cfg->train.tokens, .params = info.params,
            .flops_per_token = info.flops_per_token, .widths = info.widths, .run_dir = run_dir,
        };
        int rc = db_job_put(c->d, &r, NULL, e);
        free(json);
        job->status = ORC_PENDING;
        /* new under --rerun: marked as rerun all the same, so that the same
         * command after a Ctrl-C goes on from its checkpoints */
        if (!rc && c->o->rerun)
            rc = db_job_reset(c->d, j->key, e);
        return rc;
    }
    int s = orc_status_from_name(st.status);
    job->status = (uint8_t)(s < 0 ? ORC_PENDING : s);
    job->attempts = st.attempts;
    job->failures = st.failures;
    /* a failure that can pass (crash, timeout, oom, io...) is tried
     * again by a new run; one that cannot (config, data, diverged)
     * after a fix, when asked (--retry-failed: done jobs stay done) */
    if (job->status == ORC_FAILED && (c->o->retry_failed || !orc_reason_is_final(st.reason))) {
        job->status = ORC_PENDING;
        job->failures = 0;
        if (db_job_clear_failures(c->d, j->key, e) ||
            db_job_set_status(c->d, j->key, DB_JOB_PENDING, st.reason, NULL, e))
            return TLM_EIO;
    }
    if (c->o->rerun && st.rerun) {
        /* --rerun applies once: an earlier --rerun reset it and its run has
         * not finished (a Ctrl-C, then the same command again): it goes on
         * from what that rerun trained */
        c->p->n_rerun_kept++;
    } else if (c->o->rerun) {
        /* its checkpoints are set aside once this is committed (orc_plan_load) */
        if (db_job_reset(c->d, j->key, e))
            return TLM_EIO;
        job->status = ORC_PENDING;
        job->failures = 0;
        job->reset = 1;
    }
    return 0;
}

static int load_job(void *ctx, const orc_sweep_job *j, tlm_err *e)
{
    load_ctx *c = ctx;
    size_t idx;
    int added;
    if (orc_jobs_add(&c->p->jobs, j->key, &idx, &added))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    orc_job *job = &c->p->jobs.v[idx];
    c->p->arch_mask |= 1u << j->cfg->arch;
    if (added) {
        job->arch = (uint8_t)j->cfg->arch;
        job->sweep = (uint16_t)c->p->n_sweeps;
        job->tokens_total = j->cfg->train.tokens;
        int rc = load_state(c, j, job, e);
        if (rc)
            return rc;
    }
    if (TLM_GROW(c->ps->jobs, c->cap, c->ps->n_jobs + 1, 64))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    c->ps->jobs[c->ps->n_jobs++] = (uint32_t)idx;
    return db_sweep_job_link(c->d, c->ps->name, j->key, (int64_t)j->index, e);
}

/* A sweep listed again (the same name, the same jobs: a copy of the file)
 * is listed once; a new one is recorded with its jobs. */
static int load_begin(void *ctx, const orc_sweep *s, const char *file, const char *before, tlm_err *e)
{
    load_ctx *c = ctx;
    if (before)
        return 0;
    if (TLM_GROW(c->p->sweeps, c->sweeps_cap, c->p->n_sweeps + 1, 8))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    orc_plan_sweep *ps = c->ps = &c->p->sweeps[c->p->n_sweeps];
    memset(ps, 0, sizeof *ps);
    c->cap = 0;
    snprintf(ps->name, sizeof ps->name, "%s", s->name);
    ps->res = s->res;
    if (!(ps->file = strdup(file)))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    int rc = db_sweep_jobs_mark(c->d, s->name, e);
    return rc ? rc : 1;
}

static int load_end(void *ctx, const orc_sweep *s, const char *file, const char *before, const char *hash,
                    const orc_sweep_stats *st, int rc, tlm_err *e)
{
    load_ctx *c = ctx;
    if (before) {
        if (!rc)
            fprintf(c->log, "tlmd: sweep %s in %s is the same as in %s; listed once\n", s->name, file, before);
        return rc;
    }
    orc_plan_sweep *ps = c->ps;
    ps->n_jobs = st->n_jobs;
    ps->n_dups = st->n_dups;
    if (!rc) {
        db_sweep_row r = {.name = s->name, .description = s->description, .file = file, .content_hash = hash,
                          .source = s->source};
        rc = db_sweep_put(c->d, &r, &ps->changed, e);
    }
    if (!rc)
        rc = db_sweep_jobs_settle(c->d, s->name, &ps->added, &ps->removed, e);
    if (!rc) {
        c->p->n_sweeps++;
    } else {
        free(ps->file);
        free(ps->jobs);
    }
    return rc;
}

int orc_plan_load(orc_plan *p, const orc_opts *o, db *d, FILE *log, tlm_err *e)
{
    static const scan_ops ops = {load_begin, load_job, load_end};
    memset(p, 0, sizeof *p);
    load_ctx c = {.p = p, .o = o, .d = d, .log = log};
    int rc = 0;
    /* one transaction: a bad sweep leaves the database as it was; foreign
     * keys are checked at commit since jobs name their sweep before the
     * sweep row (whose hash needs the whole expansion) is written */
    if (!rc)
        rc = db_begin(d, e);
    if (!rc)
        rc = db_exec(d, "PRAGMA defer_foreign_keys = ON", e);
    if (!rc)
        rc = scan(o, &ops, &c, NULL, e);
    if (!rc)
        rc = db_commit(d, e);
    else
        db_rollback(d);
    if (rc)
        return rc;

    /* --rerun trains from scratch: the old checkpoints go aside (after the
     * commit: a sweep that fails to load leaves the run folders as they were) */
    if (p->n_rerun_kept)
        fprintf(log,
                "tlmd: --rerun: %zu job(s) were reset by an earlier --rerun whose run has not finished; they go on "
                "from there (--rerun applies once; a finished run ends it)\n",
                p->n_rerun_kept);
    for (size_t i = 0; o->rerun && i < p->jobs.n; i++) {
        if (!p->jobs.v[i].reset)
            continue;
        const char *key = p->jobs.v[i].key;
        char run_dir[TLM_PATH_CAP], aside[TLM_PATH_CAP], note[TLM_PATH_CAP + 512];
        if (orc_rundir_path(o->runs_dir, key, run_dir, sizeof run_dir, e))
            return TLM_ECONFIG;
        snprintf(note, sizeof note,
                 "tlmd set these checkpoints aside: `tlmd --rerun` trains job\n%s again from scratch (its results in "
                 "%s were reset).\ntlmd never reads this folder again; each step-N folder is a checkpoint of the "
                 "earlier run.\nDelete this folder when no longer needed.\n",
                 key, o->db_path);
        int moved = 0;
        if (orc_rundir_set_aside(run_dir, -1, "rerun", note, &moved, aside, sizeof aside, e))
            return TLM_EIO;
        if (moved)
            fprintf(log, "tlmd: job %.12s: --rerun: its %d checkpoint(s) set aside in %s\n", key, moved, aside);
    }

    p->queue = malloc((p->jobs.n ? p->jobs.n : 1) * sizeof *p->queue);
    if (!p->queue)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->jobs.n; i++) {
        orc_job *j = &p->jobs.v[i];
        if (j->status == ORC_DONE)
            p->n_done++;
        else if (j->status == ORC_FAILED)
            p->n_failed++;
        else {
            j->status = ORC_PENDING;
            j->queued = 1;
            p->queue[p->n_queue++] = (uint32_t)i;
        }
    }
    for (size_t i = 0; i < p->n_sweeps; i++) {
        orc_plan_sweep *ps = &p->sweeps[i];
        size_t done = 0, failed = 0;
        for (size_t k = 0; k < ps->n_jobs; k++) {
            int st = p->jobs.v[ps->jobs[k]].status;
            done += st == ORC_DONE;
            failed += st == ORC_FAILED;
        }
        fprintf(log, "tlmd: sweep %s (%s): %zu jobs, %zu done, %zu to run, %zu failed", ps->name, ps->file,
                ps->n_jobs, done, ps->n_jobs - done - failed, failed);
        if (ps->n_dups)
            fprintf(log, "; %zu duplicates merged", ps->n_dups);
        if (ps->changed == 1)
            fprintf(log, "; reconciled with the stored sweep: %lld added, %lld no longer listed",
                    (long long)ps->added, (long long)ps->removed);
        fprintf(log, "\n");
    }
    return 0;
}

void orc_plan_clear(orc_plan *p)
{
    for (size_t i = 0; i < p->n_sweeps; i++) {
        free(p->sweeps[i].file);
        free(p->sweeps[i].jobs);
    }
    free(p->sweeps);
    free(p->queue);
    orc_jobs_clear(&p->jobs);
    memset(p, 0, sizeof *p);
}
