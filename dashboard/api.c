/* api.c: tlm-dash's JSON answers, read from results.db.
 *
 * Every value that comes from a request (a sweep name, a job key) is a
 * bound parameter; keys are checked to be 64 hex digits before that.
 * Several queries of one answer share a read transaction (one snapshot:
 * a job that finishes meanwhile is seen one way only), which in WAL mode
 * never holds up tlmd.  The paper's tables and figures go through
 * reports/ with their own connection, as `tlm-report --table` does.
 *
 * Must not: write to the database, or keep a read transaction open past
 * the answer (a WAL reader that lingers keeps the WAL from being reset). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "dashboard/dash.h"
#include "reports/rpt.h"

int dash_key_ok(const char *key)
{
    if (!key || strlen(key) != 64)
        return 0;
    for (const char *p = key; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

/* ------------------------------------------------------------ connection */
void dash_db_init(dash_db *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    pthread_mutex_init(&s->mu, NULL);
}

void dash_db_clear(dash_db *s)
{
    db_close(s->d);
    s->d = NULL;
    dash_jobs_cache_clear(&s->jobs);
    pthread_mutex_destroy(&s->mu);
}

int dash_db_acquire(dash_db *s, tlm_err *e)
{
    pthread_mutex_lock(&s->mu);
    if (s->d)
        return 0;
    /* SQLite would say "unable to open database file": say what to do */
    if (access(s->path, F_OK) != 0) {
        pthread_mutex_unlock(&s->mu);
        return tlm_errf(e, TLM_EDATA, "%s: no such file (tlmd writes it: run tlmd first, or pass --db PATH)",
                        s->path);
    }
    int rc = db_open(s->path, DB_READONLY, &s->d, e);
    if (rc) {
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    /* the jobs page reads a few pages of every job: map the file, and keep
     * what was read between requests (the connection lives on) */
    sqlite3_exec(db_handle(s->d), "PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -65536", NULL, NULL, NULL);
    s->gen++;
    return 0;
}

void dash_db_release(dash_db *s, int failed)
{
    if (failed && s->d) {
        db_close(s->d);
        s->d = NULL;
    }
    pthread_mutex_unlock(&s->mu);
}

int dash_db_version(dash_db *s, char *out, size_t cap, tlm_err *e)
{
    sqlite3_stmt *st = NULL;
    sqlite3 *h = db_handle(s->d);
    if (sqlite3_prepare_v2(h, "PRAGMA data_version", -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
        int rc = tlm_errf(e, TLM_EIO, "%s: %s", s->path, sqlite3_errmsg(h));
        sqlite3_finalize(st);
        return rc;
    }
    snprintf(out, cap, "%u.%lld", s->gen, (long long)sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
    return 0;
}

/* ------------------------------------------------------------ helpers */
int dash__sql_fail(sqlite3 *h, tlm_err *e)
{
    return tlm_errf(e, TLM_EIO, "results.db: %s", sqlite3_errmsg(h));
}

int dash__prepare(sqlite3 *h, const char *sql, sqlite3_stmt **st, tlm_err *e)
{
    if (sqlite3_prepare_v2(h, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return dash__sql_fail(h, e);
    }
    return 0;
}

/* An integer in decimal without printf's format parsing (the jobs answer
 * holds 60,000 of them). */
static void put_int(FILE *f, int64_t v)
{
    char b[24], *p = b + sizeof b;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--p = '-';
    fwrite(p, 1, (size_t)(b + sizeof b - p), f);
}

/* Column i as JSON: text as a string, numbers as numbers, NULL as null.
 * Reals get 12 significant digits, more than any page shows, without the
 * shortest-exact search of rpt_json_num (a quarter of the jobs page's time). */
void dash__put_col(FILE *f, sqlite3_stmt *st, int i)
{
    double v;
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: fputs("null", f); break;
    case SQLITE_INTEGER: put_int(f, sqlite3_column_int64(st, i)); break;
    case SQLITE_FLOAT:
        v = sqlite3_column_double(st, i);
        if (isfinite(v))
            fprintf(f, "%.12g", v);
        else
            fputs("null", f);
        break;
    default: rpt_json_str(f, (const char *)sqlite3_column_text(st, i)); break;
    }
}

/* Every row of st as an array of objects named by its columns. */
static int put_rows(FILE *f, sqlite3 *h, sqlite3_stmt *st, tlm_err *e)
{
    int nc = sqlite3_column_count(st), rc, first = 1;
    fputc('[', f);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fputs(first ? "{" : ",\n{", f);
        first = 0;
        for (int i = 0; i < nc; i++) {
            if (i)
                fputc(',', f);
            rpt_json_str(f, sqlite3_column_name(st, i));
            fputc(':', f);
            dash__put_col(f, st, i);
        }
        fputc('}', f);
    }
    fputc(']', f);
    return rc == SQLITE_DONE ? 0 : dash__sql_fail(h, e);
}

/* One query's rows as "name": [...]; params are bound as text (?1, ?2...). */
static int put_query(FILE *f, sqlite3 *h, const char *name, const char *sql, const char *p1, const char *p2,
                     tlm_err *e)
{
    sqlite3_stmt *st;
    int rc = dash__prepare(h, sql, &st, e);
    if (rc)
        return rc;
    if (p1)
        sqlite3_bind_text(st, 1, p1, -1, SQLITE_STATIC);
    if (p2)
        sqlite3_bind_text(st, 2, p2, -1, SQLITE_STATIC);
    if (name) {
        rpt_json_str(f, name);
        fputc(':', f);
    }
    rc = put_rows(f, h, st, e);
    sqlite3_finalize(st);
    return rc;
}

int dash__begin(sqlite3 *h, tlm_err *e)
{
    return sqlite3_exec(h, "BEGIN", NULL, NULL, NULL) == SQLITE_OK ? 0 : dash__sql_fail(h, e);
}

void dash__end(sqlite3 *h)
{
    if (!sqlite3_get_autocommit(h))
        sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
}

/* ------------------------------------------------------------ sweeps */
int dash_api_sweeps(db *d, FILE *f, tlm_err *e)
{
    sqlite3 *h = db_handle(d);
    /* FLOPs done: each job's tokens so far times its training FLOPs per token */
    static const char sql[] =
        "SELECT s.name, s.description, s.file, s.created_at, s.updated_at, count(j.key) AS jobs,"
        " coalesce(sum(j.status = 'pending'), 0) AS pending, coalesce(sum(j.status = 'running'), 0) AS running,"
        " coalesce(sum(j.status = 'done'), 0) AS done, coalesce(sum(j.status = 'failed'), 0) AS failed,"
        " coalesce(sum(j.status = 'interrupted'), 0) AS interrupted,"
        " coalesce(sum(j.tokens_done), 0) AS tokens_done, coalesce(sum(j.tokens_total), 0) AS tokens_total,"
        " coalesce(sum(j.tokens_done * j.flops_per_token), 0.0) AS flops_done,"
        " coalesce(sum(j.tokens_total * j.flops_per_token), 0.0) AS flops_total"
        " FROM sweeps s LEFT JOIN sweep_jobs sj ON sj.sweep = s.name AND sj.active = 1"
        " LEFT JOIN jobs j ON j.key = sj.job GROUP BY s.name ORDER BY s.created_at, s.name";
    fputc('{', f);
    int rc = put_query(f, h, "sweeps", sql, NULL, NULL, e);
    fputs("}\n", f);
    return rc;
}

/* ------------------------------------------------------------ one job */
int dash_api_job(db *d, const dash_query *q, FILE *f, tlm_err *e)
{
    sqlite3 *h = db_handle(d);
    const char *key = q->n_keys == 1 ? q->keys[0] : NULL;
    if (!dash_key_ok(key))
        return tlm_errf(e, TLM_ECONFIG, "job: expected ?key= and 64 hex digits (a job's key)");
    int rc = dash__begin(h, e);
    if (rc)
        return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = dash__prepare(h, "SELECT count(*) FROM jobs WHERE key = ?1", &st, e)))
        goto done;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW) {
        rc = dash__sql_fail(h, e);
        goto done;
    }
    if (sqlite3_column_int(st, 0) == 0) {
        rc = tlm_errf(e, TLM_EDATA, "no job %s in results.db", key);
        goto done;
    }
    /* the answer's parts, one query each, ?1 the job's key */
    static const struct {
        const char *name, *sql;
    } PARTS[] = {
        {"job", "SELECT key, sweep, label, arch, scale, schedule, ratio_start, ratio_end, groups, seed, status,"
                " attempts, failures, reason, message, tokens_total, tokens_done, params, flops_per_token, widths,"
                " config, run_dir, created_at, updated_at, finished_at, final_loss, final_val_loss, train_seconds"
                " FROM jobs WHERE key = ?1"},
        {"attempts", "SELECT a.n, a.host, a.device, a.pid, a.started_at, a.ended_at, a.exit_code, a.signal,"
                     " a.reason, a.message, a.step, a.tokens, a.resumed_from_step, a.protocol_errors,"
                     " v.git_commit, v.tlm_version, v.compiler, v.blas, v.blas_kernel, v.threads, v.cuda,"
                     " v.driver, v.os, v.cmdline"
                     " FROM attempts a LEFT JOIN environment v ON v.attempt = a.id WHERE a.job = ?1 ORDER BY a.n"},
        /* each statistic at the last step that measured it */
        {"layers", "SELECT l.name, l.step, l.layer, l.value, l.nonfinite FROM layer_stats l"
                   " WHERE l.job = ?1 AND l.step = (SELECT max(m.step) FROM layer_stats m"
                   " WHERE m.job = ?1 AND m.name = l.name) ORDER BY l.name, l.layer"},
        {"evals", "SELECT e.suite, e.task, e.metric, e.step, e.tokens, e.value, e.nonfinite, e.n, e.stderr"
                  " FROM evals e WHERE e.job = ?1 AND e.step = (SELECT max(x.step) FROM evals x"
                  " WHERE x.job = ?1 AND x.suite = e.suite AND x.task = e.task AND x.metric = e.metric)"
                  " ORDER BY e.suite, e.task, e.metric"},
    };
    fputc('{', f);
    for (size_t i = 0; i < sizeof PARTS / sizeof PARTS[0] && !rc; i++) {
        if (i)
            fputc(',', f);
        rc = put_query(f, h, PARTS[i].name, PARTS[i].sql, key, NULL, e);
    }
    fputs("}\n", f);
done:
    sqlite3_finalize(st);
    dash__end(h);
    return rc;
}

/* ------------------------------------------------------------ curves */
/* A curve's number: integers (steps, tokens) exactly, others to 7
 * significant digits (more than a chart or its cursor shows; the shortest
 * exact form of a loss is 17, which doubled the job page's bytes), null
 * for NaN. */
static void put_point(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else if (v == floor(v) && fabs(v) < 1e15)
        put_int(f, (int64_t)v);
    else
        fprintf(f, "%.7g", v);
}

/* The rows of st (all columns numbers) as one array per column: every
 * stride-th row and the last one, stride = what fits in `points`. */
static int put_columns(FILE *f, sqlite3 *h, sqlite3_stmt *st, int64_t rows, int points, tlm_err *e)
{
    int nc = sqlite3_column_count(st);
    int64_t stride = rows > points ? (rows + points - 1) / points : 1;
    int cap = (int)(rows / stride + 2);
    double *v = malloc(sizeof *v * (size_t)cap * (size_t)nc);
    if (!v)
        return tlm_errf(e, TLM_ENOMEM, "out of memory (%d points)", cap);
    int n = 0, rc;
    int64_t i = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < cap) {
        int last = i == rows - 1;
        if (i++ % stride && !last)
            continue;
        for (int c = 0; c < nc; c++)
            v[(size_t)c * (size_t)cap + (size_t)n] =
                sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
        n++;
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        free(v);
        return dash__sql_fail(h, e);
    }
    fputc('{', f);
    for (int c = 0; c < nc; c++) {
        rpt_json_str(f, sqlite3_column_name(st, c));
        fputs(":[", f);
        for (int k = 0; k < n; k++) {
            if (k)
                fputc(',', f);
            put_point(f, v[(size_t)c * (size_t)cap + (size_t)k]);
        }
        fputs("],", f);
    }
    fprintf(f, "\"rows\":%lld,\"stride\":%lld}", (long long)rows, (long long)stride);
    free(v);
    return 0;
}

static int count_of(sqlite3 *h, const char *sql, const char *key, int64_t *n, tlm_err *e)
{
    sqlite3_stmt *st;
    int rc = dash__prepare(h, sql, &st, e);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_ROW ? 0 : dash__sql_fail(h, e);
    *n = rc ? 0 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

/* A job's curves: "steps" (one row per step event) and "val" (one per
 * evaluated step, validation loss and perplexity side by side), or, with
 * metric=, the one of them that holds it with only that column. */
#define STEPS_COUNT "SELECT count(*) FROM steps WHERE job = ?1"
#define VAL_COUNT "SELECT count(DISTINCT step) FROM evals WHERE job = ?1 AND suite = 'val'"
#define STEPS_OF(cols) "SELECT step, tokens" cols " FROM steps WHERE job = ?1 ORDER BY step"
#define VAL_LOSS ", max(CASE WHEN metric = 'loss' THEN value END) AS val_loss"
#define VAL_PPL ", max(CASE WHEN metric = 'ppl' THEN value END) AS val_ppl"
#define VAL_OF(cols) "SELECT step, max(tokens) AS tokens" cols " FROM evals WHERE job = ?1 AND suite = 'val' GROUP BY step ORDER BY step"
static const struct curve_part {
    const char *metric; /* NULL: every column of the part */
    const char *part;   /* the answer's name for it */
    const char *count, *rows;
} CURVES[] = {
    {NULL, "steps", STEPS_COUNT, STEPS_OF(", loss, lr, grad_norm, tokens_per_s")},
    {NULL, "val", VAL_COUNT, VAL_OF(VAL_LOSS VAL_PPL)},
    {"loss", "steps", STEPS_COUNT, STEPS_OF(", loss")},
    {"lr", "steps", STEPS_COUNT, STEPS_OF(", lr")},
    {"grad_norm", "steps", STEPS_COUNT, STEPS_OF(", grad_norm")},
    {"tokens_per_s", "steps", STEPS_COUNT, STEPS_OF(", tokens_per_s")},
    {"val_loss", "val", VAL_COUNT, VAL_OF(VAL_LOSS)},
    {"val_ppl", "val", VAL_COUNT, VAL_OF(VAL_PPL)},
};
#define N_CURVES ((int)(sizeof CURVES / sizeof CURVES[0]))

static int put_curves(FILE *f, sqlite3 *h, const char *key, const char *metric, int points, tlm_err *e)
{
    sqlite3_stmt *st = NULL;
    int64_t known;
    int rc = count_of(h, "SELECT count(*) FROM jobs WHERE key = ?1", key, &known, e);
    if (rc)
        return rc;
    if (!known)
        return tlm_errf(e, TLM_EDATA, "no job %s in results.db", key);
    rpt_json_str(f, key);
    fputs(":{", f);
    for (int p = 0; p < N_CURVES && !rc; p++) {
        if (metric ? !CURVES[p].metric || strcmp(CURVES[p].metric, metric) : CURVES[p].metric != NULL)
            continue;
        int64_t rows;
        if ((rc = count_of(h, CURVES[p].count, key, &rows, e)) || (rc = dash__prepare(h, CURVES[p].rows, &st, e)))
            break;
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        rpt_json_str(f, CURVES[p].part);
        fputc(':', f);
        rc = put_columns(f, h, st, rows, points, e);
        fputc(',', f);
        sqlite3_finalize(st);
        st = NULL;
    }
    if (!rc)
        rc = put_query(f, h, "meta",
                       "SELECT label, status, seed, arch, scale, schedule, ratio_start, ratio_end, groups, sweep,"
                       " tokens_total FROM jobs WHERE key = ?1",
                       key, NULL, e);
    fputc('}', f);
    return rc;
}

int dash_api_series(db *d, const dash_query *q, FILE *f, tlm_err *e)
{
    sqlite3 *h = db_handle(d);
    if (q->n_keys < 1)
        return tlm_errf(e, TLM_ECONFIG, "series: expected ?key= (one to %d job keys)", DASH_MAX_KEYS);
    for (int i = 0; i < q->n_keys; i++)
        if (!dash_key_ok(q->keys[i]))
            return tlm_errf(e, TLM_ECONFIG, "series: key %d: expected 64 hex digits (a job's key)", i + 1);
    int known = !q->metric;
    for (int p = 0; p < N_CURVES; p++)
        known |= q->metric && CURVES[p].metric && !strcmp(CURVES[p].metric, q->metric);
    if (!known)
        return tlm_errf(e, TLM_ECONFIG,
                        "series: metric: expected loss, lr, grad_norm, tokens_per_s, val_loss or val_ppl");
    /* each job's share of the answer's points (two parts each without metric=) */
    int points = q->points > 0 ? q->points : DASH_SERIES_POINTS;
    int share = DASH_SERIES_BUDGET / (q->n_keys * (q->metric ? 1 : 2));
    if (points > DASH_SERIES_MAX_POINTS)
        points = DASH_SERIES_MAX_POINTS;
    if (points > share)
        points = share;
    int rc = dash__begin(h, e);
    if (rc)
        return rc;
    fputs("{\"series\":{", f);
    for (int i = 0; i < q->n_keys && !rc; i++) {
        if (i)
            fputc(',', f);
        rc = put_curves(f, h, q->keys[i], q->metric, points, e);
    }
    fprintf(f, "},\"points\":%d}\n", points);
    dash__end(h);
    return rc;
}
