/* bench_tlmd.c: how fast tlmd's ingestion path takes worker step events
 * into results.db, beside its peers.  The path measured is the daemon's
 * own: bytes -> line framing (linebuf.c) -> checked parse (event.c) ->
 * one upsert in `steps` (db_step_put), inside batch transactions committed
 * every 100 ms as the daemon's tick does.  Peers on the same lines:
 * Jansson for the parse, and version 1's one-row-per-metric layout (four
 * B-tree inserts per event) for the insert.  Target: > 100,000 events/s.
 *
 *   bench_tlmd [--events N]        (default 500000)
 *
 * The end-to-end figures (dispatch latency, jobs/s, events through a real
 * pipe, memory for 100,000 jobs) come from bench/bench_tlmd.sh. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/clock.h"
#include "db/db.h"
#include "orchestrator/event.h"
#include "orchestrator/linebuf.h"

static const char KEY[] = "44cdf1cc143347e134f1c6f6125967a13fa04d46a14cc4593f86ff425a45f2cd";

/* N step lines as tlm-worker writes them (about 250 bytes each). */
static char *make_stream(long n, size_t *len)
{
    size_t cap = (size_t)n * 320 + 1;
    char *s = malloc(cap);
    size_t at = 0;
    for (long i = 1; i <= n; i++)
        at += (size_t)snprintf(s + at, cap - at,
                               "{\"ev\":\"step\",\"v\":1,\"t\":%.3f,\"job\":\"%s\",\"step\":%ld,\"tokens\":%ld,"
                               "\"loss\":%.16g,\"lr\":%.16g,\"grad_norm\":%.16g,\"tokens_per_s\":%.16g,"
                               "\"step_ms\":%.16g}\n",
                               1795940495.015 + i * 0.05, KEY, i, i * 524288, 5.0 / (1 + i * 1e-3), 4e-4 * (1 - 1e-7 * i),
                               0.3 + 1e-6 * i, 19701.951039540378 + i, 51.97454800008927);
    *len = at;
    return s;
}

typedef struct {
    orc_event_parser *p;
    db *d;
    int insert;    /* 0: parse only; 1: steps row; 2: v1 layout, 4 metric rows */
    sqlite3_stmt *v1;
    long events, bad;
    double next_commit;
} ingest;

static void on_line(void *ctx, const char *s, size_t n)
{
    ingest *g = ctx;
    orc_event ev;
    char why[256];
    if (orc_event_parse(g->p, s, n, &ev, why, sizeof why)) {
        g->bad++;
        return;
    }
    g->events++;
    tlm_err e;
    if (g->insert == 1) {
        db_step_row r = {.job = KEY, .attempt = 1, .step = ev.step, .tokens = ev.tokens, .loss = ev.loss, .lr = ev.lr,
                         .grad_norm = ev.grad_norm, .tokens_per_s = ev.tokens_per_s, .step_ms = ev.step_ms};
        if (db_step_put(g->d, &r, &e))
            g->bad++;
    } else if (g->insert == 2) {
        const double v[4] = {ev.loss, ev.lr, ev.grad_norm, ev.tokens_per_s};
        static const char *const names[4] = {"loss", "lr", "grad_norm", "tokens_per_s"};
        for (int k = 0; k < 4; k++) {
            sqlite3_reset(g->v1);
            sqlite3_bind_text(g->v1, 1, KEY, -1, SQLITE_STATIC);
            sqlite3_bind_int64(g->v1, 2, ev.step);
            sqlite3_bind_text(g->v1, 3, names[k], -1, SQLITE_STATIC);
            sqlite3_bind_int64(g->v1, 4, ev.tokens);
            sqlite3_bind_double(g->v1, 5, v[k]);
            if (sqlite3_step(g->v1) != SQLITE_DONE)
                g->bad++;
        }
    }
    /* the daemon's tick: one commit per 100 ms */
    if (g->insert && (g->events & 255) == 0 && tlm_clock_mono() >= g->next_commit) {
        db_commit(g->d, &e);
        db_begin(g->d, &e);
        g->next_commit = tlm_clock_mono() + 0.1;
    }
}

static void on_long(void *ctx) { ((ingest *)ctx)->bad++; }

/* Feeds the stream in 64 KiB reads (what libuv hands the daemon). */
static double run(ingest *g, const char *stream, size_t len)
{
    orc_linebuf lb = {0};
    orc_line_sink sink = {on_line, on_long, g};
    tlm_err e;
    if (g->insert)
        db_begin(g->d, &e);
    g->next_commit = tlm_clock_mono() + 0.1;
    double t0 = tlm_clock_mono();
    for (size_t at = 0; at < len; at += 65536)
        orc_linebuf_feed(&lb, stream + at, len - at < 65536 ? len - at : 65536, &sink);
    if (g->insert)
        db_commit(g->d, &e);
    double t = tlm_clock_mono() - t0;
    orc_linebuf_clear(&lb);
    return t;
}

static db *fresh_db(const char *path, int v1)
{
    unlink(path);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    tlm_err e;
    db *d;
    if (db_open(path, DB_READWRITE, &d, &e)) {
        fprintf(stderr, "bench_tlmd: %s\n", e.msg);
        exit(1);
    }
    db_exec(d, "PRAGMA defer_foreign_keys=ON", &e);
    db_exec(d, "INSERT INTO sweeps VALUES ('b', '', 'b.yaml', 'h', 'x', 0, 0);"
               "INSERT INTO jobs(key, sweep, config, arch, scale, schedule, seed, label, tokens_total, params,"
               " flops_per_token, created_at, updated_at) VALUES ('44cdf1cc143347e134f1c6f6125967a13fa04d46a14cc4593f86"
               "ff425a45f2cd', 'b', '{}', 'transformer', '1m', 'uniform', 0, 'u', 1, 1, 1, 0, 0);"
               "INSERT INTO attempts(id, job, n, host, device, started_at) VALUES (1, '44cdf1cc143347e134f1c6f6125967a"
               "13fa04d46a14cc4593f86ff425a45f2cd', 1, 'h', 'cpu:0', 0);",
            &e);
    if (v1) /* version 1's layout, for comparison */
        db_exec(d, "CREATE TABLE metrics_v1 (job TEXT NOT NULL REFERENCES jobs(key), step INTEGER NOT NULL,"
                   " name TEXT NOT NULL, tokens INTEGER NOT NULL, value REAL, nonfinite TEXT,"
                   " attempt INTEGER REFERENCES attempts(id), PRIMARY KEY (job, name, step)) WITHOUT ROWID",
                &e);
    return d;
}

int main(int argc, char **argv)
{
    long n = 500000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--events") && i + 1 < argc)
            n = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_tlmd [--events N]\n");
            return 2;
        }
    }
    size_t len;
    char *stream = make_stream(n, &len);
    char dir[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tlm-bench-tlmd-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    char path[600];
    snprintf(path, sizeof path, "%s/results.db", dir);
    orc_event_parser *p = malloc(sizeof *p);

    printf("bench_tlmd: %ld step events, %.0f bytes each, as tlm-worker writes them\n\n", n, (double)len / n);
    printf("%-46s %12s %12s\n", "", "us/event", "events/s");

    ingest g = {.p = p};
    double t = run(&g, stream, len);
    printf("%-46s %12.2f %12.0f\n", "parse: tlmd (linebuf + event.c)", t / n * 1e6, n / t);
    /* peer: Jansson on the same lines */
    double t0 = tlm_clock_mono();
    long ok = 0;
    for (char *s = stream, *end; (end = strchr(s, '\n')); s = end + 1) {
        json_error_t je;
        json_t *j = json_loadb(s, (size_t)(end - s), JSON_REJECT_DUPLICATES, &je);
        ok += j && json_is_real(json_object_get(j, "loss"));
        json_decref(j);
    }
    double tj = tlm_clock_mono() - t0;
    printf("%-46s %12.2f %12.0f\n", "parse: Jansson (json_loadb, no checks)", tj / n * 1e6, n / tj);

    g = (ingest){.p = p, .insert = 1, .d = fresh_db(path, 0)};
    tlm_err e;
    db_checkpointer *ck = NULL; /* as the daemon runs it */
    db_checkpointer_start(g.d, path, 1000, &ck, &e);
    t = run(&g, stream, len);
    db_checkpointer_stop(ck);
    db_close(g.d);
    printf("%-46s %12.2f %12.0f%s\n", "parse + insert: tlmd (steps, one row/event)", t / n * 1e6, n / t,
           g.bad ? "  ERRORS" : "");
    double tlmd_rate = n / t;

    g = (ingest){.p = p, .insert = 2, .d = fresh_db(path, 1)};
    sqlite3_prepare_v2(db_handle(g.d),
                       "INSERT INTO metrics_v1(job, step, name, tokens, value) VALUES (?1, ?2, ?3, ?4, ?5) "
                       "ON CONFLICT(job, name, step) DO UPDATE SET value = excluded.value",
                       -1, &g.v1, NULL);
    t = run(&g, stream, len);
    sqlite3_finalize(g.v1);
    db_close(g.d);
    printf("%-46s %12.2f %12.0f%s\n", "parse + insert: schema v1 (4 rows/event)", t / n * 1e6, n / t,
           g.bad ? "  ERRORS" : "");

    printf("\ntarget > 100,000 step events/s: %s (%.0f)\n", tlmd_rate > 100000 ? "met" : "NOT met", tlmd_rate);
    (void)ok;
    (void)e;
    if (tlm_rm_tree(dir))
        fprintf(stderr, "bench_tlmd: could not remove %s\n", dir);
    free(stream);
    free(p);
    return 0;
}
