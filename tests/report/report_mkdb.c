/* report_mkdb.c: writes the results.db that test_report.sh renders:
 * jobs with known values through the db API (as tlmd would), covering what
 * the tables must get right: several seeds per cell, pending / running /
 * interrupted / failed jobs, a NaN evaluation, a NaN loss, NaN layer
 * statistics, an older evaluation step that must not be read as final,
 * a second sweep sharing a job, and every suite the tables read, named as
 * docs/evaluation.md names them; a panel of three seeds with chosen values
 * for the paired differences and their intervals.
 * Not a test by itself: report_check.py computes what the tables must
 * say from this database with its own SQL.
 * A second argument names another database instead (mkdb_profiles.c).
 * usage: report_mkdb OUT.db [fixture|rerun|lrgrid|paper440|demo|arch4] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "tests/lib/main_evals.h"
#include "tests/report/mkdb.h"

typedef struct {
    const char *sweep, *arch, *scale, *schedule;
    double rs, re;
    const char *groups, *label;
    int seed;
    const char *status, *reason;
    int main_evals, niah, rho, nan_ppl, nan_loss, skip_boolq;
    double ppl; /* the final validation perplexity when not 0 (else a pseudo-random one) */
} spec;

#define NA NAN
static const spec JOBS[] = {
    /* sweep fx: the 1m transformer, Figure 2 and Table 1 shapes */
    {"fx", "transformer", "1m", "uniform", NA, NA, NULL, "uniform", 0, "done", NULL, 1, 1, 1, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "uniform", NA, NA, NULL, "uniform", 1, "done", NULL, 1, 1, 1, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "uniform", NA, NA, NULL, "uniform", 2, "done", NULL, 1, 1, 0, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "blocks", NA, NA, "1.5,1,0.5", "wider-early", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "blocks", NA, NA, "1.5,1,0.5", "wider-early", 1, "done", NULL, 0, 0, 0, 0, 1, 0, 0},
    {"fx", "transformer", "1m", "blocks", NA, NA, "0.75,1.5,0.75", "wider-middle", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "blocks", NA, NA, "0.75,1.5,0.75", "wider-middle", 1, "pending", NULL, 0, 0, 0, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "blocks", NA, NA, "0.5,1,1.5", "wider-late", 0, "failed", "diverged", 0, 0, 0, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 0, "done", NULL, 1, 1, 1, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 1, "done", NULL, 1, 1, 1, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 2, "running", NULL, 1, 1, 1, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "cosine", 1.25, 0.75, NULL, "cosine 1.25->0.75", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "cosine", 1.25, 0.75, NULL, "cosine 1.25->0.75", 1, "done", NULL, 0, 0, 0, 1, 0, 0, 0},
    {"fx", "transformer", "1m", "linear", 1.5, 0.5, NULL, "linear 1.5->0.5", 0, "running", NULL, 0, 0, 0, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "linear", 1.25, 0.75, NULL, "linear 1.25->0.75", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 0},
    {"fx", "transformer", "1m", "sigmoid", 1.5, 0.5, NULL, "sigmoid 1.5->0.5", 0, "interrupted", NULL, 0, 0, 0, 0, 0, 0, 0},
    /* gated attention at the same scale: the main table's second architecture */
    {"fx", "gated_attn", "1m", "uniform", NA, NA, NULL, "uniform", 0, "done", NULL, 1, 0, 0, 0, 0, 0, 0},
    {"fx", "gated_attn", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 0, "done", NULL, 1, 0, 0, 0, 0, 1, 0},
    /* the 5m transformer, three seeds with chosen perplexities: paired differences whose intervals are
     * computed by hand in test_report.sh (wider-late +1.10 [+0.85, +1.35], the others include 0) */
    {"fx", "transformer", "5m", "uniform", NA, NA, NULL, "uniform", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 10.0},
    {"fx", "transformer", "5m", "uniform", NA, NA, NULL, "uniform", 1, "done", NULL, 0, 0, 0, 0, 0, 0, 10.3},
    {"fx", "transformer", "5m", "uniform", NA, NA, NULL, "uniform", 2, "done", NULL, 0, 0, 0, 0, 0, 0, 9.9},
    {"fx", "transformer", "5m", "blocks", NA, NA, "1.5,1,0.5", "wider-early", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 10.1},
    {"fx", "transformer", "5m", "blocks", NA, NA, "1.5,1,0.5", "wider-early", 1, "done", NULL, 0, 0, 0, 0, 0, 0, 10.2},
    {"fx", "transformer", "5m", "blocks", NA, NA, "1.5,1,0.5", "wider-early", 2, "done", NULL, 0, 0, 0, 0, 0, 0, 10.0},
    {"fx", "transformer", "5m", "blocks", NA, NA, "0.75,1.5,0.75", "wider-middle", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 10.4},
    {"fx", "transformer", "5m", "blocks", NA, NA, "0.75,1.5,0.75", "wider-middle", 1, "done", NULL, 0, 0, 0, 0, 0, 0, 10.6},
    {"fx", "transformer", "5m", "blocks", NA, NA, "0.5,1,1.5", "wider-late", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 11.0},
    {"fx", "transformer", "5m", "blocks", NA, NA, "0.5,1,1.5", "wider-late", 1, "done", NULL, 0, 0, 0, 0, 0, 0, 11.5},
    {"fx", "transformer", "5m", "blocks", NA, NA, "0.5,1,1.5", "wider-late", 2, "done", NULL, 0, 0, 0, 0, 0, 0, 11.0},
    {"fx", "transformer", "5m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 9.8},
    {"fx", "transformer", "5m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 1, "done", NULL, 0, 0, 0, 0, 0, 0, 10.0},
    {"fx", "transformer", "5m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 2, "done", NULL, 0, 0, 0, 0, 0, 0, 9.9},
    /* sweep other: another scale */
    {"other", "transformer", "3m", "uniform", NA, NA, NULL, "uniform", 0, "done", NULL, 0, 0, 0, 0, 0, 0, 0},
    {"other", "transformer", "3m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 0, "pending", NULL, 0, 0, 0, 0, 0, 0, 0},
};
#define N_JOBS (int)(sizeof JOBS / sizeof JOBS[0])

/* A deterministic value in [0, 1) per (job, what). */
static double u01(int job, int what)
{
    uint64_t z = (uint64_t)job * 1000003u + (uint64_t)what * 7919u + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

static int check(int rc, const tlm_err *e, const char *what)
{
    if (rc)
        fprintf(stderr, "test_report_mkdb: %s: %s\n", what, e->msg);
    return rc;
}

#define TRY(x, what)                                                                                           \
    do {                                                                                                       \
        if (check((x), &e, (what)))                                                                            \
            return 1;                                                                                          \
    } while (0)

static int put_eval(db *d, const char *key, int64_t step, const char *suite, const char *task, const char *metric,
                    double v, tlm_err *e)
{
    db_eval_row r = {key, 0, step, step * 100000, suite, task, metric, v, 1000, NAN};
    return db_eval_put(d, &r, e);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: report_mkdb OUT.db [fixture|rerun|lrgrid|paper440|demo|arch4]\n");
        return 2;
    }
    tlm_err e = {0};
    db *d;
    remove(argv[1]);
    TRY(db_open(argv[1], DB_READWRITE, &d, &e), "open");
    TRY(db_begin(d, &e), "begin");
    if (argc == 3 && strcmp(argv[2], "fixture")) {
        TRY(mkdb_profile(d, argv[2], &e), argv[2]);
        TRY(db_commit(d, &e), "commit");
        db_close(d);
        return 0;
    }
    static const char *const SWEEPS[] = {"fx", "other"};
    for (int s = 0; s < 2; s++) {
        db_sweep_row r = {SWEEPS[s], "test fixture", "tests/fixture.yaml", "0", "name: fixture\n"};
        TRY(db_sweep_put(d, &r, NULL, &e), "sweep");
        TRY(db_sweep_jobs_mark(d, SWEEPS[s], &e), "mark");
    }
    static const char *const NIAH[] = {"s_niah_1@4096", "s_niah_1@8192", "s_niah_2@4096", "s_niah_2@8192"};
    for (int i = 0; i < N_JOBS; i++) {
        const spec *j = &JOBS[i];
        char key[65], widths[128], run_dir[64];
        /* keys look like tlmd's (SHA-256 hex) and differ in their first 12 characters */
        for (int k = 0; k < 8; k++)
            snprintf(key + 8 * k, sizeof key - 8 * (size_t)k, "%08x", (unsigned)(u01(i, 1000 + k) * 4294967296.0));
        /* six layers, d_base 256: widths that describe the schedule well enough for the figure */
        int w[6];
        for (int l = 0; l < 6; l++) {
            double r = 1;
            if (!isnan(j->rs))
                r = j->rs + (j->re - j->rs) * l / 5.0;
            else if (j->groups)
                r = j->groups[0] == '1' ? (l < 2 ? 1.5 : l < 4 ? 1 : 0.5)
                    : j->groups[0] == '0' && j->groups[2] == '7' ? (l < 2 ? 0.75 : l < 4 ? 1.5 : 0.75)
                                                                : (l < 2 ? 0.5 : l < 4 ? 1 : 1.5);
            w[l] = (int)(r * 256 / 16 + 0.5) * 16;
        }
        snprintf(widths, sizeof widths, "[%d,%d,%d,%d,%d,%d]", w[0], w[1], w[2], w[3], w[4], w[5]);
        snprintf(run_dir, sizeof run_dir, "runs/%.12s", key);
        db_job_row r = {key, j->sweep, "{\"fixture\": true}", j->arch, j->scale, j->schedule, j->rs, j->re,
                        j->groups, j->seed, j->label, strcmp(j->scale, "1m") ? 6000000 : 2000000, 1000000, 6e6,
                        widths, run_dir};
        TRY(db_job_put(d, &r, NULL, &e), "job");
        TRY(db_sweep_job_link(d, j->sweep, key, i, &e), "link");
        if (i == 0) /* the first uniform job is asked for by both sweeps */
            TRY(db_sweep_job_link(d, "other", key, 100, &e), "link");
        if (!strcmp(j->status, "pending"))
            continue;
        int n;
        TRY(db_job_start_attempt(d, key, &n, &e), "attempt");
        int steps = !strcmp(j->status, "done") ? 20 : 8;
        for (int s = 1; s <= steps; s++) {
            double loss = 5.0 * exp(-0.08 * s) + 1.0 + 0.05 * u01(i, 900 + s);
            if (j->nan_loss && s == 7)
                loss = NAN;
            db_step_row st = {key, 0, s * 5, (int64_t)s * 5 * 20000, loss, 1e-3, 1.0, 1e5, 10};
            TRY(db_step_put(d, &st, &e), "step");
        }
        TRY(db_job_set_tokens(d, key, (int64_t)steps * 5 * 20000, &e), "tokens");
        /* an early evaluation (step 50) that a table must not take for the final one (step 100) */
        double ppl = j->ppl ? j->ppl : 20 + 4 * u01(i, 1);
        if (!strcmp(j->status, "failed")) {
            TRY(db_job_set_status(d, key, DB_JOB_FAILED, j->reason, "loss became NaN at step 40", &e), "status");
            continue;
        }
        TRY(put_eval(d, key, 50, "val", "val", "ppl", ppl + 7, &e), "eval");
        TRY(put_eval(d, key, 50, "val", "val", "loss", log(ppl + 7), &e), "eval");
        if (strcmp(j->status, "done")) {
            TRY(db_job_set_status(d, key, db_job_status_find(j->status), NULL, NULL, &e), "status");
            continue;
        }
        TRY(put_eval(d, key, 100, "val", "val", "ppl", j->nan_ppl ? NAN : ppl, &e), "eval");
        TRY(put_eval(d, key, 100, "val", "val", "loss", j->nan_ppl ? NAN : log(ppl), &e), "eval");
        for (int m = 0; j->main_evals && m < MAIN_EVALS_N; m++) {
            if (j->skip_boolq && m == 9)
                continue;
            int is_ppl = m < MAIN_EVALS_PPL;
            double v = is_ppl ? 25 + 10 * u01(i, 10 + m) : 0.3 + 0.4 * u01(i, 10 + m);
            const char *const *me = MAIN_EVALS[m];
            TRY(put_eval(d, key, 50, me[0], me[1], me[2], is_ppl ? v + 9 : v - 0.1, &e), "eval");
            TRY(put_eval(d, key, 100, me[0], me[1], me[2], v, &e), "eval");
        }
        for (int m = 0; j->niah && m < 4; m++)
            TRY(put_eval(d, key, 100, "niah", NIAH[m], "exact_match", 0.2 + 0.6 * u01(i, 30 + m), &e), "eval");
        for (int l = 0; l < 6; l++) {
            TRY(db_layer_put(d, key, 0, l, "d_ff", w[l], &e), "layer");
            if (!j->rho)
                continue;
            double mlp = -0.1 + 0.08 * l + 0.05 * u01(i, 40 + l), blk = -0.05 + 0.05 * l + 0.05 * u01(i, 50 + l);
            if (i == 1 && l == 3)
                mlp = NAN; /* one NaN statistic */
            TRY(db_layer_put(d, key, 50, l, "rho_mlp", 0.9, &e), "layer");
            TRY(db_layer_put(d, key, 100, l, "rho_mlp", mlp, &e), "layer");
            TRY(db_layer_put(d, key, 100, l, "rho_block", blk, &e), "layer");
        }
        TRY(db_job_set_final(d, key, 1.0 + u01(i, 99), j->nan_ppl ? NAN : log(ppl), 12.5, &e), "final");
        TRY(db_job_set_status(d, key, DB_JOB_DONE, NULL, NULL, &e), "status");
    }
    for (int s = 0; s < 2; s++)
        TRY(db_sweep_jobs_settle(d, SWEEPS[s], NULL, NULL, &e), "settle");
    TRY(db_commit(d, &e), "commit");
    db_close(d);
    return 0;
}
