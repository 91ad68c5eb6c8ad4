/* bench_report_gen.c: fills a synthetic results.db with N jobs (default
 * 10,000) through the db API, shaped like a large study: four
 * architectures x five scales x five token budgets, uniform, three blocks
 * schedules and fifteen tapers, several seeds each; most jobs done with a
 * loss curve, validation evaluations, the full benchmark suite and per-layer
 * widths, some with alignment statistics or NIAH, the rest pending,
 * running, interrupted or failed.  Values are plausible, not meaningful.
 * For bench_report.sh (tlm-report's speed); not a test.
 * usage: bench_report_gen OUT.db [--jobs N] [--steps S] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "db/db.h"
#include "tests/lib/main_evals.h"

static uint64_t rng = 0x853c49e6748fea9bull;
static double u01(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

#define TRY(x)                                                                                                 \
    do {                                                                                                       \
        if ((x)) {                                                                                             \
            fprintf(stderr, "bench_report_gen: %s: %s\n", #x, e.msg);                                          \
            return 1;                                                                                          \
        }                                                                                                      \
    } while (0)

static const char *const ARCH[] = {"transformer", "gated_attn", "hope_attn", "titans"};
static const struct {
    const char *name;
    int layers;
    int d_ff;
} SCALE[] = {{"1m", 6, 256}, {"20m", 6, 1408}, {"440m", 24, 2816}, {"760m", 20, 4096}, {"1.3b", 20, 5632}};
static const double TOKENS[] = {1e9, 5e9, 10e9, 30e9, 50e9};
static const char *const GROUPS[] = {"1.5,1,0.5", "0.75,1.5,0.75", "0.5,1,1.5"};
static const double RATIO[][2] = {{1.25, 0.75}, {1.375, 0.625}, {1.5, 0.5}, {1.625, 0.375}, {1.75, 0.25}};
static const char *const SCHED[] = {"cosine", "linear", "sigmoid"};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_report_gen OUT.db [--jobs N] [--steps S]\n");
        return 2;
    }
    long n_jobs = 10000, n_steps = 50;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--jobs"))
            n_jobs = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--steps"))
            n_steps = strtol(argv[i + 1], NULL, 10);
    }
    tlm_err e = {0};
    db *d;
    remove(argv[1]);
    TRY(db_open(argv[1], DB_READWRITE, &d, &e));
    double t0 = tlm_clock_mono();
    TRY(db_begin(d, &e));
    /* one sweep per architecture and scale, like a study run piece by piece */
    char sweep[64];
    for (int a = 0; a < 4; a++)
        for (int s = 0; s < 5; s++) {
            snprintf(sweep, sizeof sweep, "%s_%s", ARCH[a], SCALE[s].name);
            db_sweep_row r = {sweep, "synthetic", "bench/synthetic.yaml", "0", "name: synthetic\n"};
            TRY(db_sweep_put(d, &r, NULL, &e));
            TRY(db_sweep_jobs_mark(d, sweep, &e));
        }
    long made = 0;
    int widths[32];
    for (int seed = 0; made < n_jobs; seed++)
        for (int t = 0; t < 5 && made < n_jobs; t++)
            for (int a = 0; a < 4 && made < n_jobs; a++)
                for (int s = 0; s < 5 && made < n_jobs; s++)
                    for (int g = 0; g < 19 && made < n_jobs; g++) {
                        const char *sched = g == 0 ? "uniform" : g < 4 ? "blocks" : SCHED[(g - 4) / 5];
                        double rs = g >= 4 ? RATIO[(g - 4) % 5][0] : NAN, re = g >= 4 ? RATIO[(g - 4) % 5][1] : NAN;
                        const char *groups = g >= 1 && g < 4 ? GROUPS[g - 1] : NULL;
                        char label[64], key[65], json[160], run_dir[64];
                        if (g == 0)
                            snprintf(label, sizeof label, "uniform");
                        else if (groups)
                            snprintf(label, sizeof label, "%s", g == 1 ? "wider-early" : g == 2 ? "wider-middle"
                                                                                            : "wider-late");
                        else
                            snprintf(label, sizeof label, "%s %g->%g", sched, rs, re);
                        for (int k = 0; k < 64; k++)
                            key[k] = "0123456789abcdef"[(int)(u01() * 16)];
                        key[64] = '\0';
                        int L = SCALE[s].layers, base = SCALE[s].d_ff;
                        size_t at = 0;
                        json[at++] = '[';
                        for (int l = 0; l < L; l++) {
                            double r = 1;
                            if (groups)
                                r = (g == 1 ? (double[]){1.5, 1, 0.5} : g == 2 ? (double[]){0.75, 1.5, 0.75}
                                                                              : (double[]){0.5, 1, 1.5})[l * 3 / L];
                            else if (g >= 4)
                                r = rs + (re - rs) * l / (L - 1);
                            widths[l] = (int)(r * base / 16) * 16;
                            at += (size_t)snprintf(json + at, sizeof json - at, "%s%d", l ? "," : "", widths[l]);
                        }
                        snprintf(json + at, sizeof json - at, "]");
                        snprintf(sweep, sizeof sweep, "%s_%s", ARCH[a], SCALE[s].name);
                        snprintf(run_dir, sizeof run_dir, "runs/%.12s", key);
                        int64_t tokens = (int64_t)TOKENS[t];
                        db_job_row r = {key, sweep, "{\"synthetic\": true}", ARCH[a], SCALE[s].name, sched, rs, re,
                                        groups, seed, label, tokens, 1000000, 6e9, json, run_dir};
                        TRY(db_job_put(d, &r, NULL, &e));
                        TRY(db_sweep_job_link(d, sweep, key, made, &e));
                        made++;
                        double p = u01();
                        const char *status = p < 0.85 ? "done" : p < 0.90 ? "failed" : p < 0.95 ? "pending"
                                                               : p < 0.98 ? "running" : "interrupted";
                        if (!strcmp(status, "pending"))
                            continue;
                        int n;
                        TRY(db_job_start_attempt(d, key, &n, &e));
                        int done = !strcmp(status, "done");
                        long steps = done ? n_steps : n_steps / 3;
                        double floor_loss = 2.0 + 0.3 * s * -0.3 + 0.02 * g + 0.05 * u01();
                        for (long k = 1; k <= steps; k++) {
                            db_step_row st = {key, 0, k, tokens / n_steps * k,
                                              floor_loss + 8 * exp(-0.1 * (double)k), 4e-4, 1.0, 1e5, 200};
                            TRY(db_step_put(d, &st, &e));
                        }
                        TRY(db_job_set_tokens(d, key, tokens / n_steps * steps, &e));
                        double ppl = exp(floor_loss) + u01();
                        for (int k = 1; k <= (done ? 5 : 1); k++) {
                            db_eval_row ev = {key, 0, k * n_steps / 5, tokens / 5 * k, "val", "val", "ppl",
                                              ppl + (5 - k), 100000, NAN};
                            TRY(db_eval_put(d, &ev, &e));
                            ev.metric = "loss";
                            ev.value = log(ppl + (5 - k));
                            TRY(db_eval_put(d, &ev, &e));
                        }
                        if (!done) {
                            if (!strcmp(status, "failed"))
                                TRY(db_job_set_status(d, key, DB_JOB_FAILED, u01() < 0.5 ? "diverged" : "oom",
                                                      "synthetic failure", &e));
                            else
                                TRY(db_job_set_status(d, key, db_job_status_find(status), NULL, NULL, &e));
                            continue;
                        }
                        for (int m = 0; m < MAIN_EVALS_N; m++) {
                            double v = m < MAIN_EVALS_PPL ? ppl * (1.2 + 0.2 * u01()) : 0.3 + 0.4 * u01();
                            const char *const *me = MAIN_EVALS[m];
                            db_eval_row ev = {key, 0, n_steps, tokens, me[0], me[1], me[2], v, 1000, 0.01};
                            TRY(db_eval_put(d, &ev, &e));
                        }
                        if (g == 0 || g == 6) /* uniform and cosine 1.5->0.5: NIAH */
                            for (int c = 0; c < 3; c++)
                                for (int k = 1; k <= 3; k++) {
                                    char task[32];
                                    snprintf(task, sizeof task, "s_niah_%d@%d", k, 4096 << c);
                                    db_eval_row ev = {key, 0, n_steps, tokens, "niah", task, "exact_match",
                                                      0.5 * u01() / (c + 1), 100, NAN};
                                    TRY(db_eval_put(d, &ev, &e));
                                }
                        for (int l = 0; l < L; l++) {
                            TRY(db_layer_put(d, key, 0, l, "d_ff", widths[l], &e));
                            if (seed < 2) { /* alignment statistics for a few seeds */
                                TRY(db_layer_put(d, key, n_steps, l, "rho_mlp", -0.1 + 0.5 * l / L + 0.05 * u01(), &e));
                                TRY(db_layer_put(d, key, n_steps, l, "rho_block", -0.05 + 0.3 * l / L + 0.05 * u01(),
                                                 &e));
                            }
                        }
                        TRY(db_job_set_final(d, key, floor_loss, log(ppl), 3600, &e));
                        TRY(db_job_set_status(d, key, DB_JOB_DONE, NULL, NULL, &e));
                        if (made % 1000 == 0) { /* bounded transactions */
                            TRY(db_commit(d, &e));
                            TRY(db_begin(d, &e));
                        }
                    }
    for (int a = 0; a < 4; a++)
        for (int s = 0; s < 5; s++) {
            snprintf(sweep, sizeof sweep, "%s_%s", ARCH[a], SCALE[s].name);
            TRY(db_sweep_jobs_settle(d, sweep, NULL, NULL, &e));
        }
    TRY(db_commit(d, &e));
    TRY(db_exec(d, "PRAGMA wal_checkpoint(TRUNCATE)", &e));
    db_close(d);
    printf("bench_report_gen: %ld jobs in %s (%.1f s)\n", made, argv[1], tlm_clock_mono() - t0);
    return 0;
}
