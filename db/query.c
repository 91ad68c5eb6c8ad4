/* query.c: read queries over results.db used by `tlmd status`, the daemon's
 * crash recovery, tlm-report and the tests.  Each runs on a read snapshot
 * (WAL): it never waits for the writer and never blocks it.
 * Must not: write. */
#include "db/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

/* A text column into a fixed field; too long a value ends in "..." (never cut silently). */
static void copy_col(sqlite3_stmt *s, int i, char *out, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    tlm_msg_copy(out, cap, t ? (const char *)t : "");
}

/* Runs a prepared query to the end, calling row() per row; row's non-zero
 * return stops early and is returned. */
static int each_row(db *d, sqlite3_stmt *s, int (*row)(sqlite3_stmt *, void *), void *ctx, tlm_err *e,
                    const char *what)
{
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int r = row(s, ctx);
        if (r) {
            sqlite3_finalize(s);
            return r;
        }
    }
    if (rc != SQLITE_DONE) {
        rc = db__fail(d, e, what);
        sqlite3_finalize(s);
        return rc;
    }
    sqlite3_finalize(s);
    return 0;
}

/* ------------------------------------------------------------ collected rows */
/* Rows of `size` bytes, each zeroed and filled from a row of the query. */
typedef struct {
    void *v;
    size_t n, cap, size;
    void (*fill)(sqlite3_stmt *s, void *row);
} row_list;

static int collect_row(sqlite3_stmt *s, void *ctx)
{
    row_list *l = ctx;
    if (tlm_grow(&l->v, &l->cap, l->n + 1, l->size, 16))
        return TLM_ENOMEM;
    void *row = (char *)l->v + l->n++ * l->size;
    memset(row, 0, l->size);
    l->fill(s, row);
    return 0;
}

/* Every row of sql, collected before the caller hands them on, so that its
 * callback may write to the same connection: *rows (malloc'd), *n. */
static int collect(db *d, const char *sql, size_t size, void (*fill)(sqlite3_stmt *, void *), void **rows,
                   size_t *n, tlm_err *e, const char *what)
{
    sqlite3_stmt *s;
    *rows = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(d->h, sql, -1, &s, NULL) != SQLITE_OK)
        return db__fail(d, e, what);
    row_list l = {.size = size, .fill = fill};
    int rc = each_row(d, s, collect_row, &l, e, what);
    if (rc == TLM_ENOMEM)
        tlm_errf(e, rc, "out of memory");
    *rows = l.v;
    *n = l.n;
    return rc;
}

/* ------------------------------------------------------------ open attempts */
static void fill_attempt(sqlite3_stmt *s, void *row)
{
    db_open_attempt *a = row;
    a->id = sqlite3_column_int64(s, 0);
    copy_col(s, 1, a->job, sizeof a->job);
    a->pid = sqlite3_column_type(s, 2) == SQLITE_NULL ? 0 : sqlite3_column_int64(s, 2);
    copy_col(s, 3, a->device, sizeof a->device);
    copy_col(s, 4, a->executor, sizeof a->executor);
}

int db_open_attempts(db *d, int (*cb)(void *ctx, const db_open_attempt *a), void *ctx, tlm_err *e)
{
    void *rows;
    size_t n;
    int rc = collect(d, "SELECT id, job, pid, device, executor FROM attempts WHERE ended_at IS NULL ORDER BY id",
                     sizeof(db_open_attempt), fill_attempt, &rows, &n, e, "reading open attempts");
    const db_open_attempt *v = rows;
    for (size_t i = 0; !rc && i < n; i++)
        rc = cb(ctx, &v[i]);
    free(rows);
    return rc;
}

/* ------------------------------------------------------------ summaries */
typedef struct {
    int (*cb)(void *, const db_sweep_summary *);
    void *ctx;
} sweep_cb;

static int sweep_row(sqlite3_stmt *s, void *ctx)
{
    sweep_cb *c = ctx;
    db_sweep_summary r;
    memset(&r, 0, sizeof r);
    copy_col(s, 0, r.name, sizeof r.name);
    copy_col(s, 1, r.file, sizeof r.file);
    r.jobs = sqlite3_column_int64(s, 2);
    r.pending = sqlite3_column_int64(s, 3);
    r.running = sqlite3_column_int64(s, 4);
    r.done = sqlite3_column_int64(s, 5);
    r.failed = sqlite3_column_int64(s, 6);
    r.interrupted = sqlite3_column_int64(s, 7);
    r.inactive = sqlite3_column_int64(s, 8);
    r.tokens_done = sqlite3_column_int64(s, 9);
    r.tokens_total = sqlite3_column_int64(s, 10);
    return c->cb(c->ctx, &r);
}

int db_sweep_summaries(db *d, int (*cb)(void *ctx, const db_sweep_summary *s), void *ctx, tlm_err *e)
{
    static const char sql[] =
        "SELECT s.name, s.file,"
        " count(CASE WHEN sj.active THEN 1 END),"
        " count(CASE WHEN sj.active AND j.status = 'pending' THEN 1 END),"
        " count(CASE WHEN sj.active AND j.status = 'running' THEN 1 END),"
        " count(CASE WHEN sj.active AND j.status = 'done' THEN 1 END),"
        " count(CASE WHEN sj.active AND j.status = 'failed' THEN 1 END),"
        " count(CASE WHEN sj.active AND j.status = 'interrupted' THEN 1 END),"
        " count(CASE WHEN NOT sj.active THEN 1 END),"
        " total(CASE WHEN sj.active THEN (CASE WHEN j.status = 'done' THEN j.tokens_total"
        "  ELSE min(j.tokens_done, j.tokens_total) END) END),"
        " total(CASE WHEN sj.active THEN j.tokens_total END)"
        " FROM sweeps s LEFT JOIN sweep_jobs sj ON sj.sweep = s.name LEFT JOIN jobs j ON j.key = sj.job"
        " GROUP BY s.name ORDER BY s.created_at, s.name";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(d->h, sql, -1, &s, NULL) != SQLITE_OK)
        return db__fail(d, e, "reading sweeps");
    sweep_cb c = {cb, ctx};
    return each_row(d, s, sweep_row, &c, e, "reading sweeps");
}

typedef struct {
    int (*cb)(void *, const db_job_summary *);
    void *ctx;
} job_cb;

static int job_row(sqlite3_stmt *s, void *ctx)
{
    job_cb *c = ctx;
    db_job_summary r;
    memset(&r, 0, sizeof r);
    copy_col(s, 0, r.key, sizeof r.key);
    copy_col(s, 1, r.label, sizeof r.label);
    copy_col(s, 2, r.arch, sizeof r.arch);
    copy_col(s, 3, r.scale, sizeof r.scale);
    r.seed = sqlite3_column_int64(s, 4);
    copy_col(s, 5, r.status, sizeof r.status);
    r.attempts = sqlite3_column_int(s, 6);
    copy_col(s, 7, r.reason, sizeof r.reason);
    r.tokens_done = sqlite3_column_int64(s, 8);
    r.tokens_total = sqlite3_column_int64(s, 9);
    r.has_loss = sqlite3_column_int(s, 11);
    r.last_loss = r.has_loss ? db_column_number(s, 10, -1) : NAN;
    copy_col(s, 12, r.message, sizeof r.message);
    copy_col(s, 13, r.executor, sizeof r.executor);
    copy_col(s, 14, r.slurm_job, sizeof r.slurm_job);
    copy_col(s, 15, r.slurm_state, sizeof r.slurm_state);
    copy_col(s, 16, r.node, sizeof r.node);
    r.has_val_ppl = sqlite3_column_int(s, 19);
    r.val_ppl = r.has_val_ppl ? db_column_number(s, 17, 18) : NAN;
    copy_col(s, 20, r.last_reason, sizeof r.last_reason);
    copy_col(s, 21, r.last_message, sizeof r.last_message);
    return c->cb(c->ctx, &r);
}

int db_sweep_jobs(db *d, const char *sweep, int (*cb)(void *ctx, const db_job_summary *j), void *ctx, tlm_err *e)
{
    static const char sql[] =
        "SELECT j.key, j.label, j.arch, j.scale, j.seed, j.status, j.attempts, j.reason, j.tokens_done,"
        " j.tokens_total, l.loss, l.job IS NOT NULL, j.message, a.executor, a.slurm_job, a.slurm_state, a.node,"
        " v.value, v.nonfinite, v.job IS NOT NULL, a.reason, a.message"
        " FROM sweep_jobs sj JOIN jobs j ON j.key = sj.job"
        " LEFT JOIN steps l ON l.job = j.key AND l.step = (SELECT max(step) FROM steps WHERE job = j.key)"
        " LEFT JOIN evals v ON v.job = j.key AND v.suite = 'val' AND v.metric = 'ppl' AND v.step ="
        "  (SELECT max(step) FROM evals WHERE job = j.key AND suite = 'val' AND metric = 'ppl')"
        " LEFT JOIN attempts a ON a.id = (SELECT max(id) FROM attempts WHERE job = j.key)"
        " WHERE sj.sweep = ?1 AND sj.active ORDER BY sj.ord";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(d->h, sql, -1, &s, NULL) != SQLITE_OK)
        return db__fail(d, e, "reading a sweep's jobs");
    sqlite3_bind_text(s, 1, sweep, -1, SQLITE_TRANSIENT);
    job_cb c = {cb, ctx};
    return each_row(d, s, job_row, &c, e, "reading a sweep's jobs");
}

/* ------------------------------------------------------------ identity */
int db_database_id(db *d, char id[DB_ID_LEN + 1], tlm_err *e)
{
    id[0] = '\0';
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(d->h, "SELECT value FROM meta WHERE key = 'database_id'", -1, &s, NULL) != SQLITE_OK)
        return db__fail(d, e, "reading the database id");
    int rc = sqlite3_step(s);
    const unsigned char *v = rc == SQLITE_ROW ? sqlite3_column_text(s, 0) : NULL;
    size_t n = v ? strlen((const char *)v) : 0;
    if (rc == SQLITE_ROW && n == DB_ID_LEN)
        memcpy(id, v, n + 1);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db__fail(d, e, "reading the database id");
    if (!id[0])
        return tlm_errf(e, TLM_EDATA, "%s: the database has no valid id (meta.database_id): expected %d hex digits",
                        d->path, DB_ID_LEN);
    return 0;
}

int db_job_prefix_known(db *d, const char *prefix, tlm_err *e)
{
    /* keys are lowercase hex: a range scan of the primary key, no LIKE */
    char hi[80];
    size_t n = strlen(prefix);
    if (n == 0 || n >= sizeof hi - 1)
        return 0;
    snprintf(hi, sizeof hi, "%s~", prefix);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(d->h, "SELECT 1 FROM jobs WHERE key >= ?1 AND key < ?2 LIMIT 1", -1, &s, NULL) !=
        SQLITE_OK)
        return db__fail(d, e, "looking up a job");
    sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, hi, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return db__fail(d, e, "looking up a job");
}

/* ------------------------------------------------------------ open slurm attempts */
static void fill_slurm(sqlite3_stmt *s, void *row)
{
    db_slurm_attempt *a = row;
    a->id = sqlite3_column_int64(s, 0);
    copy_col(s, 1, a->job, sizeof a->job);
    a->n = sqlite3_column_int(s, 2);
    copy_col(s, 3, a->token, sizeof a->token);
    copy_col(s, 4, a->slurm_job, sizeof a->slurm_job);
    a->restart = sqlite3_column_type(s, 5) == SQLITE_NULL ? 0 : sqlite3_column_int64(s, 5);
    copy_col(s, 6, a->state, sizeof a->state);
    copy_col(s, 7, a->node, sizeof a->node);
    a->events_offset = sqlite3_column_int64(s, 8);
    a->started_at = sqlite3_column_double(s, 9);
}

int db_open_slurm_attempts(db *d, int (*cb)(void *ctx, const db_slurm_attempt *a), void *ctx, tlm_err *e)
{
    void *rows;
    size_t n;
    int rc = collect(d,
                     "SELECT id, job, n, token, slurm_job, slurm_restart, slurm_state, node, events_offset, "
                     "started_at FROM attempts WHERE ended_at IS NULL AND executor = 'slurm' ORDER BY id",
                     sizeof(db_slurm_attempt), fill_slurm, &rows, &n, e, "reading open Slurm attempts");
    const db_slurm_attempt *v = rows;
    for (size_t i = 0; !rc && i < n; i++)
        rc = cb(ctx, &v[i]);
    free(rows);
    return rc;
}

int db_attempt_has_env(db *d, int64_t id, tlm_err *e)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(d->h, "SELECT count(*) FROM environment WHERE attempt = ?1", -1, &s, NULL) != SQLITE_OK)
        return db__fail(d, e, "reading an attempt's environment");
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    int v = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) > 0 : -1;
    sqlite3_finalize(s);
    if (v < 0)
        return db__fail(d, e, "reading an attempt's environment");
    return v;
}
