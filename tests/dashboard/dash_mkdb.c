/* dash_mkdb.c: writes the fixed results.db that test_views.sh shows in
 * Chromium and compares with reviewed screenshots.  Everything in it is a
 * function of this file: keys, times, curves (deterministic noise), so the
 * pages look the same at every run.
 *
 * Two sweeps: "taper" (the 1m Transformer++: uniform, three tapers and
 * wider-early, three seeds each, with one job running, one failed and one
 * pending) and "arch" (gated attention at 1m and the Transformer++ at 5m,
 * two seeds).  Curves of 40 steps of 4096 tokens (the x axis ends at 160K,
 * the case where log x once ran on to 1M), a validation evaluation every
 * 10 steps, d_ff per layer for every job and rho for a few, an attempt
 * each (two for the failed one) with its environment.
 *
 * db_open makes the schema; the rows are plain INSERTs with their columns
 * named (the schema only ever adds columns).  Not a test by itself.
 * usage: dash_mkdb OUT.db */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"

#define T0 1767225600.0 /* 2026-01-01 00:00:00 UTC: every time is this plus a fixed offset */
#define STEPS 40
#define STEP_TOKENS 4096
#define EVAL_EVERY 10

typedef struct spec {
    const char *sweep, *arch, *scale, *schedule;
    double rs, re;
    const char *groups, *label;
    int seed;
    const char *status; /* done, running (half way), failed (diverged at step 12), pending */
    double floor;       /* the loss it tends to */
} spec;

#define NA NAN
static const spec JOBS[] = {
    {"taper", "transformer", "1m", "uniform", NA, NA, NULL, "uniform", 0, "done", 2.30},
    {"taper", "transformer", "1m", "uniform", NA, NA, NULL, "uniform", 1, "done", 2.34},
    {"taper", "transformer", "1m", "uniform", NA, NA, NULL, "uniform", 2, "done", 2.28},
    {"taper", "transformer", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 0, "done", 2.21},
    {"taper", "transformer", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 1, "done", 2.24},
    {"taper", "transformer", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 2, "done", 2.20},
    {"taper", "transformer", "1m", "linear", 1.5, 0.5, NULL, "linear 1.5->0.5", 0, "done", 2.25},
    {"taper", "transformer", "1m", "linear", 1.5, 0.5, NULL, "linear 1.5->0.5", 1, "done", 2.27},
    {"taper", "transformer", "1m", "linear", 1.5, 0.5, NULL, "linear 1.5->0.5", 2, "failed", 2.26},
    {"taper", "transformer", "1m", "cosine", 1.25, 0.75, NULL, "cosine 1.25->0.75", 0, "done", 2.26},
    {"taper", "transformer", "1m", "cosine", 1.25, 0.75, NULL, "cosine 1.25->0.75", 1, "done", 2.25},
    {"taper", "transformer", "1m", "cosine", 1.25, 0.75, NULL, "cosine 1.25->0.75", 2, "running", 2.27},
    {"taper", "transformer", "1m", "blocks", NA, NA, "1.5,1,0.5", "wider-early", 0, "done", 2.27},
    {"taper", "transformer", "1m", "blocks", NA, NA, "1.5,1,0.5", "wider-early", 1, "done", 2.29},
    {"taper", "transformer", "1m", "blocks", NA, NA, "1.5,1,0.5", "wider-early", 2, "pending", 2.28},
    {"arch", "gated_attn", "1m", "uniform", NA, NA, NULL, "uniform", 0, "done", 2.26},
    {"arch", "gated_attn", "1m", "uniform", NA, NA, NULL, "uniform", 1, "done", 2.29},
    {"arch", "gated_attn", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 0, "done", 2.19},
    {"arch", "gated_attn", "1m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 1, "done", 2.22},
    {"arch", "transformer", "5m", "uniform", NA, NA, NULL, "uniform", 0, "done", 1.95},
    {"arch", "transformer", "5m", "uniform", NA, NA, NULL, "uniform", 1, "done", 1.97},
    {"arch", "transformer", "5m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 0, "done", 1.90},
    {"arch", "transformer", "5m", "cosine", 1.5, 0.5, NULL, "cosine 1.5->0.5", 1, "done", 1.93},
};
#define N_JOBS ((int)(sizeof JOBS / sizeof JOBS[0]))

/* deterministic noise in [-1, 1) from two integers (splitmix64 of both) */
static double noise(uint64_t a, uint64_t b)
{
    uint64_t x = (a << 32 ^ b) + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (double)(x >> 11) / 4503599627370496.0 - 1.0;
}

static int exec_sql(sqlite3 *h, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "dash_mkdb: %s: %s\n", sql, msg);
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* One INSERT with its values bound in order: i integer, d double (NaN: NULL), s text (NULL: NULL). */
static int insert(sqlite3 *h, const char *sql, const char *types, ...)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "dash_mkdb: %s: %s\n", sql, sqlite3_errmsg(h));
        return -1;
    }
    va_list ap;
    va_start(ap, types);
    for (int i = 0; types[i]; i++) {
        if (types[i] == 'i') {
            sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
        } else if (types[i] == 'd') {
            double v = va_arg(ap, double);
            if (isnan(v))
                sqlite3_bind_null(st, i + 1);
            else
                sqlite3_bind_double(st, i + 1, v);
        } else {
            const char *s = va_arg(ap, const char *);
            if (s)
                sqlite3_bind_text(st, i + 1, s, -1, SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(st, i + 1);
        }
    }
    va_end(ap);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    if (rc)
        fprintf(stderr, "dash_mkdb: %s: %s\n", sql, sqlite3_errmsg(h));
    sqlite3_finalize(st);
    return rc;
}

/* d_ff of layer l of n for a job (the 1m and 5m presets: 256 and 512 wide). */
static int width(const spec *j, int l, int n)
{
    int base = !strcmp(j->scale, "5m") ? 512 : 256;
    double r = 1;
    if (j->groups)
        r = (double[]){1.5, 1, 0.5}[l * 3 / n];
    else if (!isnan(j->rs))
        r = !strcmp(j->schedule, "linear") ? j->rs + (j->re - j->rs) * l / (n - 1)
                                            : j->re + (j->rs - j->re) * 0.5 * (1 + cos(M_PI * l / (n - 1)));
    return (int)(r * base / 16 + 0.5) * 16;
}

static int job(sqlite3 *h, int i, int64_t *attempt_id)
{
    const spec *j = &JOBS[i];
    char key[65], config[512], widths[128], run_dir[64];
    for (int k = 0; k < 64; k++)
        key[k] = "0123456789abcdef"[(int)((noise((uint64_t)i + 100, (uint64_t)k) + 1) * 8) & 15];
    key[64] = 0;
    int layers = !strcmp(j->scale, "5m") ? 8 : 6;
    size_t at = 0;
    widths[at++] = '[';
    for (int l = 0; l < layers; l++)
        at += (size_t)snprintf(widths + at, sizeof widths - at, "%s%d", l ? "," : "", width(j, l, layers));
    snprintf(widths + at, sizeof widths - at, "]");
    snprintf(config, sizeof config,
             "{\"arch\": \"%s\", \"scale\": \"%s\", \"model\": {\"d_model\": %d, \"layers\": %d, \"heads\": 4, "
             "\"vocab\": 256}, \"taper\": {\"schedule\": \"%s\"}, \"seed\": %d, \"train\": {\"tokens\": %d, "
             "\"batch_tokens\": %d, \"lr\": 0.002}}",
             j->arch, j->scale, !strcmp(j->scale, "5m") ? 256 : 128, layers, j->schedule, j->seed,
             STEPS * STEP_TOKENS, STEP_TOKENS);
    snprintf(run_dir, sizeof run_dir, "runs/%.12s", key);
    int done = !strcmp(j->status, "done"), failed = !strcmp(j->status, "failed");
    int pending = !strcmp(j->status, "pending");
    int steps = done ? STEPS : failed ? 12 : pending ? 0 : STEPS / 2;
    int attempts = pending ? 0 : failed ? 2 : 1;
    double created = T0 + i * 60, finished = created + 3600 + i * 7;
    double final_loss = j->floor + 0.01 * noise((uint64_t)i, 77);
    double val_final = NAN;
    if (insert(h,
               "INSERT INTO jobs (key, sweep, config, arch, scale, schedule, ratio_start, ratio_end, groups, seed,"
               " label, tokens_total, params, flops_per_token, status, attempts, reason, message, run_dir,"
               " tokens_done, created_at, updated_at, failures, widths, finished_at, final_loss, train_seconds)"
               " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
               "ssssssddsisiidsisssiddisddd", key, j->sweep, config, j->arch, j->scale, j->schedule, j->rs, j->re,
               j->groups, (int64_t)j->seed, j->label, (int64_t)STEPS * STEP_TOKENS,
               (int64_t)(!strcmp(j->scale, "5m") ? 5100000 : 1050000), !strcmp(j->scale, "5m") ? 3.1e7 : 6.4e6,
               j->status, (int64_t)attempts, failed ? "diverged" : NULL,
               failed ? "loss is NaN at step 12 (lr too high for this seed)" : NULL, run_dir,
               (int64_t)steps * STEP_TOKENS, created, done || failed ? finished : created + 1800,
               (int64_t)(failed ? 2 : 0), widths, done || failed ? finished : NAN, done ? final_loss : NAN,
               done ? STEPS * STEP_TOKENS / 52000.0 + 0.01 * i : NAN))
        return -1;
    if (insert(h, "INSERT INTO sweep_jobs (sweep, job, ord, active) VALUES (?,?,?,1)", "ssi", j->sweep, key,
               (int64_t)i))
        return -1;
    for (int n = 1; n <= attempts; n++) {
        int64_t id = ++*attempt_id;
        int last = n == attempts;
        double t = created + 10 + (n - 1) * 900;
        int ended = last ? (done || failed) : 1;
        const char *reason = last ? (done ? "done" : failed ? "diverged" : NULL) : "interrupted";
        if (insert(h,
                   "INSERT INTO attempts (id, job, n, pid, host, device, resumed_from_step, started_at, ended_at,"
                   " exit_code, reason, message, step, tokens, executor) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,'local')",
                   "isiissddddssii", id, key, (int64_t)n, (int64_t)(4000 + i * 10 + n), "node-a", "cpu:0",
                   n > 1 ? 8.0 : NAN, t, ended ? t + 890 : NAN, ended ? (last && done ? 0.0 : 1.0) : NAN, reason,
                   last && failed ? "loss is NaN at step 12" : NULL, (int64_t)(last ? steps : 8),
                   (int64_t)(last ? steps : 8) * STEP_TOKENS))
            return -1;
        if (insert(h,
                   "INSERT INTO environment (attempt, git_commit, tlm_version, compiler, blas, blas_kernel, threads,"
                   " host, os, cmdline) VALUES (?,?,?,?,?,?,?,?,?,?)",
                   "isssssisss", id, "0123456789abcdef0123456789abcdef01234567", "0.9.0", "gcc 12.2.0",
                   "OpenBLAS 0.3.21", "Haswell", (int64_t)1, "node-a", "Debian GNU/Linux 12",
                   "[\"tlm-worker\", \"--config\", \"job.json\"]"))
            return -1;
    }
    for (int k = 1; k <= steps; k++) {
        /* each seed its own wobble, so that a group's band shows */
        double loss = j->floor + 3.3 * exp(-k / 7.0) * (1 + 0.08 * j->seed) + 0.05 * noise((uint64_t)i, (uint64_t)k);
        if (failed && k == steps)
            loss = NAN;
        double lr = 2e-3 * (k <= 4 ? k / 4.0 : 0.5 * (1 + cos(M_PI * (k - 4) / (STEPS - 4))));
        double grad = 0.4 + 1.6 * exp(-k / 10.0) + 0.08 * noise((uint64_t)i, (uint64_t)k + 500);
        double tps = 52000 + 3000 * noise((uint64_t)i, (uint64_t)k + 900);
        if (insert(h,
                   "INSERT INTO steps (job, step, tokens, loss, lr, grad_norm, tokens_per_s, step_ms, attempt)"
                   " VALUES (?,?,?,?,?,?,?,?,?)",
                   "siidddddi", key, (int64_t)k, (int64_t)k * STEP_TOKENS, loss, lr, grad, tps,
                   STEP_TOKENS / tps * 1000, *attempt_id))
            return -1;
        if (k % EVAL_EVERY == 0) {
            double vl = j->floor + 0.08 + 3.1 * exp(-k / 7.0) + 0.01 * noise((uint64_t)i, (uint64_t)k + 300);
            val_final = vl;
            if (insert(h,
                       "INSERT INTO evals (job, step, tokens, suite, task, metric, value, n, attempt)"
                       " VALUES (?,?,?,'val','val','loss',?,65536,?)",
                       "siidi", key, (int64_t)k, (int64_t)k * STEP_TOKENS, vl, *attempt_id) ||
                insert(h,
                       "INSERT INTO evals (job, step, tokens, suite, task, metric, value, n, attempt)"
                       " VALUES (?,?,?,'val','val','ppl',?,65536,?)",
                       "siidi", key, (int64_t)k, (int64_t)k * STEP_TOKENS, exp(vl), *attempt_id))
                return -1;
        }
    }
    if (done && insert(h, "UPDATE jobs SET final_val_loss = ? WHERE key = ?", "ds", val_final, key))
        return -1;
    for (int l = 0; l < layers && !pending; l++) {
        if (insert(h, "INSERT INTO layer_stats (job, step, layer, name, value) VALUES (?,0,?,'d_ff',?)", "sid", key,
                   (int64_t)l, (double)width(j, l, layers)))
            return -1;
        if (done && j->seed == 0 && !strcmp(j->sweep, "taper"))
            for (int r = 0; r < 2; r++)
                if (insert(h, "INSERT INTO layer_stats (job, step, layer, name, value) VALUES (?,?,?,?,?)", "siisd",
                           key, (int64_t)STEPS, (int64_t)l, r ? "rho_block" : "rho_mlp",
                           (r ? 0.2 : 0.35) * l / (layers - 1) - 0.05 + 0.02 * noise((uint64_t)i, (uint64_t)(l + 40 * r))))
                    return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dash_mkdb OUT.db\n");
        return 2;
    }
    tlm_err e = {0};
    db *d;
    remove(argv[1]);
    if (db_open(argv[1], DB_READWRITE, &d, &e)) {
        fprintf(stderr, "dash_mkdb: %s\n", e.msg);
        return 1;
    }
    sqlite3 *h = db_handle(d);
    int64_t attempt = 0;
    int rc = exec_sql(h, "BEGIN");
    static const char *const SWEEPS[][2] = {{"taper", "the 1m Transformer++: uniform, tapers and wider-early, 3 seeds"},
                                            {"arch", "gated attention at 1m, the Transformer++ at 5m, 2 seeds"}};
    for (int s = 0; s < 2 && !rc; s++)
        rc = insert(h,
                    "INSERT INTO sweeps (name, description, file, content_hash, source, created_at, updated_at)"
                    " VALUES (?,?,?,?,?,?,?)",
                    "sssssdd", SWEEPS[s][0], SWEEPS[s][1], s ? "sweeps/arch.yaml" : "sweeps/taper.yaml",
                    "0000000000000000000000000000000000000000000000000000000000000000", "name: fixture\n",
                    T0 - 600 + s * 60, T0 + 7200 + s * 60);
    for (int i = 0; i < N_JOBS && !rc; i++)
        rc = job(h, i, &attempt);
    if (!rc)
        rc = exec_sql(h, "COMMIT");
    if (!rc)
        rc = exec_sql(h, "PRAGMA wal_checkpoint(TRUNCATE)");
    db_close(d);
    if (rc)
        return 1;
    printf("dash_mkdb: %d jobs in %s\n", N_JOBS, argv[1]);
    return 0;
}
