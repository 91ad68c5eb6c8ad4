/* jobs.c: tlm-dash's jobs table, one page at a time (/api/jobs).
 *
 * The page never holds the whole table: the server filters (words of the
 * label and the axes, or col=value), sorts (any column, NULLs last) and
 * pages it (offset, at most DASH_JOBS_MAX_LIMIT rows), and answers the
 * count that matched, so that 100,000 jobs cost what one page of them
 * costs.  It runs in two steps: the row ids of the jobs that match, in
 * order (only the sort key is computed for each), then the page's columns
 * by row id.  Without words in the filter only the first TOP_IDS ids are
 * ordered at first: SQLite keeps the best of them as it scans instead of
 * sorting 100,000 rows, and the count comes from an index; a page past
 * them orders every id.  The ordered ids are kept for the
 * database's current version (PRAGMA data_version), so that turning pages
 * of a sort over 100,000 jobs orders them once, not at every page.
 *
 * Must not: put request text into SQL (the columns and their SQL are this
 * file's tables; words, the sweep and the status are bound parameters), or
 * answer an unbounded page. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dashboard/dash.h"
#include "reports/rpt.h"

/* The metrics as the `results` view of db/schema.sql defines them (the
 * page's numbers are SELECT ... FROM results's: tests/dashboard compare
 * them), read from the latest numbers each jobs row keeps (schema version
 * 7, kept by triggers) rather than by the view's search of steps and evals
 * per job: a sort by val ppl over 100,000 jobs walks the index jobs_val_ppl
 * instead of searching evals 100,000 times.  Read from jobs directly, since
 * the view has no row id to page by. */
#define TRAIN_LOSS "CASE WHEN j.final_loss IS NOT NULL THEN j.final_loss ELSE j.last_loss END"
/* a finished job's average over its training time, else the last step's */
#define TOKENS_PER_S "CASE WHEN j.train_seconds > 0 THEN j.tokens_done / j.train_seconds ELSE j.last_tokens_per_s END"
#define RATIO                                                                                                    \
    "CASE WHEN j.ratio_start IS NOT NULL THEN printf('%g→%g', j.ratio_start, j.ratio_end)"                      \
    " WHEN j.groups IS NOT NULL THEN '[' || j.groups || ']' ELSE '' END"

typedef struct jobs_col {
    const char *name;  /* the answer's column, and what cols= and sort= name */
    const char *expr;  /* its SQL over jobs j */
    const char *order; /* what sort= orders by, comma-separated keys (NULL: expr) */
    int std;           /* answered when cols= is not given */
} jobs_col;

static const jobs_col COLS[] = {
    {"key", "j.key", NULL, 1},
    {"sweep", "j.sweep", NULL, 1},
    {"label", "j.label", NULL, 1},
    {"arch", "j.arch", NULL, 1},
    /* by size: a scale's name ("440m", "1.3b") does not sort as text */
    {"scale", "j.scale", "j.params,j.scale", 1},
    {"schedule", "j.schedule", NULL, 1},
    {"ratio", RATIO, "j.ratio_start,j.ratio_end,j.groups", 1},
    {"ratio_start", "j.ratio_start", NULL, 1},
    {"ratio_end", "j.ratio_end", NULL, 1},
    {"groups", "j.groups", NULL, 1},
    {"seed", "j.seed", NULL, 1},
    {"status", "j.status", NULL, 1},
    {"attempts", "j.attempts", NULL, 1},
    {"reason", "j.reason", NULL, 1},
    {"tokens_done", "j.tokens_done", NULL, 1},
    {"tokens_total", "j.tokens_total", NULL, 1},
    {"train_loss", TRAIN_LOSS, NULL, 1},
    {"val_loss", "j.val_loss", NULL, 0},
    {"val_ppl", "j.val_ppl", NULL, 1},
    {"tokens_per_s", TOKENS_PER_S, NULL, 1},
    /* a running job's tokens left over its last step's tokens/s */
    {"eta", "CASE WHEN j.status = 'running' THEN (j.tokens_total - j.tokens_done) / j.last_tokens_per_s END", NULL, 1},
    {"params", "j.params", NULL, 0},
    {"flops_per_token", "j.flops_per_token", NULL, 0},
    {"created_at", "j.created_at", NULL, 0},
    {"finished_at", "j.finished_at", NULL, 0},
    {"train_seconds", "j.train_seconds", NULL, 0},
};
#define N_COLS ((int)(sizeof COLS / sizeof COLS[0]))

/* A word of the filter matches a row when one of these contains it (any
 * case; LIKE, which folds ASCII without copying the row's text as lower()
 * of a concatenation did: a tenth of the time over 100,000 jobs), or the
 * key begins with it.  The label carries a taper's ratio ("cosine
 * 1.5->0.5"). */
static const char *const WORD_COLS[] = {"j.label", "j.arch", "j.scale", "j.schedule", "j.groups", "j.status",
                                        "j.sweep"};
/* col=value: that column equal to the value (text in any case). */
static const struct {
    const char *name, *expr;
    int integer;
} EXACT[] = {
    {"seed", "j.seed", 1},         {"arch", "j.arch", 0},     {"scale", "j.scale", 0}, {"schedule", "j.schedule", 0},
    {"status", "j.status", 0},     {"sweep", "j.sweep", 0},   {"label", "j.label", 0}, {"attempts", "j.attempts", 1},
};
#define N_EXACT ((int)(sizeof EXACT / sizeof EXACT[0]))

static const char *const STATUSES[] = {"pending", "running", "done", "failed", "interrupted"};

static int col_find(const char *name, size_t len)
{
    for (int i = 0; i < N_COLS; i++)
        if (strlen(COLS[i].name) == len && !strncmp(COLS[i].name, name, len))
            return i;
    return -1;
}

/* One word of the filter: exact (EXACT[col] = value) or contained in a WORD_COLS column. */
typedef struct word {
    int exact;          /* index into EXACT, -1: contained */
    const char *value;  /* the text after '=' (exact), or the word */
    int64_t number;     /* an integer column's value */
    char like[2 * DASH_JOBS_MAX_FILTER + 3], prefix[2 * DASH_JOBS_MAX_FILTER + 2]; /* %word% and word% */
} word;

/* LIKE's pattern of s with its own '%', '_' and '\\' escaped, between pre and post. */
static void like_pattern(char *out, const char *pre, const char *s, const char *post)
{
    strcpy(out, pre);
    out += strlen(pre);
    for (; *s; s++) {
        if (*s == '%' || *s == '_' || *s == '\\')
            *out++ = '\\';
        *out++ = *s;
    }
    strcpy(out, post);
}

/* The filter's words (lowercased in buf), at most DASH_JOBS_MAX_WORDS. */
static int split_words(const char *q, char *buf, size_t cap, word *words, tlm_err *e)
{
    int n = 0;
    size_t at = 0;
    if (!q)
        return 0;
    if (strlen(q) >= cap)
        return tlm_errf(e, TLM_ECONFIG, "q: at most %zu characters", cap - 1);
    for (const char *p = q; *p;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (n == DASH_JOBS_MAX_WORDS)
            return tlm_errf(e, TLM_ECONFIG, "q: at most %d words", DASH_JOBS_MAX_WORDS);
        word *w = &words[n++];
        char *text = buf + at;
        while (*p && !isspace((unsigned char)*p))
            buf[at++] = (char)tolower((unsigned char)*p++);
        buf[at++] = 0;
        w->exact = -1;
        w->value = text;
        char *eq = strchr(text, '=');
        for (int i = 0; eq && i < N_EXACT; i++)
            if ((size_t)(eq - text) == strlen(EXACT[i].name) && !strncmp(text, EXACT[i].name, (size_t)(eq - text))) {
                w->exact = i;
                w->value = eq + 1;
            }
        if (w->exact >= 0 && EXACT[w->exact].integer) {
            char *end;
            w->number = strtoll(w->value, &end, 10);
            if (!*w->value || *end)
                return tlm_errf(e, TLM_ECONFIG, "q: %s=%.40s: expected a whole number", EXACT[w->exact].name, w->value);
        }
        like_pattern(w->like, "%", w->value, "%");
        like_pattern(w->prefix, "", w->value, "%");
    }
    return n;
}

/* FROM and WHERE of the jobs that match: ?1 the sweep, ?2 the status, ?(3+2i) and ?(4+2i) word i. */
static void put_from_where(FILE *s, const dash_query *q, const word *words, int n_words)
{
    fputs(" FROM jobs j", s);
    if (q->sweep)
        fputs(" JOIN sweep_jobs sj ON sj.job = j.key AND sj.sweep = ?1 AND sj.active = 1", s);
    fputs(" WHERE 1", s);
    if (q->status)
        fputs(" AND j.status = ?2", s);
    for (int i = 0; i < n_words; i++) {
        int p = 3 + 2 * i;
        if (words[i].exact >= 0) {
            fprintf(s, " AND %s = ?%d%s", EXACT[words[i].exact].expr, p,
                    EXACT[words[i].exact].integer ? "" : " COLLATE NOCASE");
            continue;
        }
        fputs(" AND (", s);
        for (size_t c = 0; c < sizeof WORD_COLS / sizeof WORD_COLS[0]; c++)
            fprintf(s, "%s LIKE ?%d ESCAPE '\\' OR ", WORD_COLS[c], p);
        fprintf(s, "j.key LIKE ?%d ESCAPE '\\')", p + 1);
    }
}

static void bind_where(sqlite3_stmt *st, const dash_query *q, const word *words, int n_words)
{
    if (q->sweep)
        sqlite3_bind_text(st, 1, q->sweep, -1, SQLITE_STATIC);
    if (q->status)
        sqlite3_bind_text(st, 2, q->status, -1, SQLITE_STATIC);
    for (int i = 0; i < n_words; i++) {
        const word *w = &words[i];
        if (w->exact >= 0 && EXACT[w->exact].integer)
            sqlite3_bind_int64(st, 3 + 2 * i, w->number);
        else if (w->exact >= 0)
            sqlite3_bind_text(st, 3 + 2 * i, w->value, -1, SQLITE_STATIC);
        else {
            sqlite3_bind_text(st, 3 + 2 * i, w->like, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 4 + 2 * i, w->prefix, -1, SQLITE_STATIC);
        }
    }
}

/* ORDER BY: each key of the column with NULLs last either way (a job
 * without a value is not the best one), then the jobs' own order
 * (creation, or the sweep's), which also breaks ties. */
static void put_order(FILE *s, const dash_query *q, int sort)
{
    const char *dir = q->desc ? " DESC" : "";
    fputs(" ORDER BY ", s);
    if (sort >= 0) {
        if (!COLS[sort].order) {
            fprintf(s, "(%s)%s NULLS LAST, ", COLS[sort].expr, dir);
        } else {
            for (const char *p = COLS[sort].order; *p;) { /* "a,b,c": each its own key */
                size_t n = strcspn(p, ",");
                fprintf(s, "%.*s%s NULLS LAST, ", (int)n, p, dir);
                p += n + (p[n] == ',');
            }
        }
    }
    fprintf(s, "%s%s", q->sweep ? "sj.ord, j.rowid" : "j.rowid", sort < 0 ? dir : "");
}

/* The SQL written into s (an open_memstream over *sql) is complete. */
static int sql_done(FILE *s, char **sql, tlm_err *e)
{
    if (fclose(s)) {
        free(*sql);
        *sql = NULL;
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    return 0;
}

/* Ids ordered first when the filter has no words: ten pages of 100 rows,
 * or the parallel coordinates' 1,000 jobs.  (Not more: with a LIMIT SQLite
 * keeps the best rows in a B-tree, which costs more than its sort of every
 * row once the LIMIT nears their number.)  A page past them orders every
 * id, once. */
#define TOP_IDS DASH_JOBS_MAX_LIMIT

static int count_matches(sqlite3 *h, const dash_query *q, int64_t *n, tlm_err *e);

/* The row ids that match, in order, into c (its signature sig, taken):
 * every one, or, when bound > 0 (no words), the first bound of them. */
static int order_ids(sqlite3 *h, const dash_query *q, int sort, const word *words, int n_words, int64_t bound,
                     dash_jobs_cache *c, char *sig, tlm_err *e)
{
    char *sql = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&sql, &len);
    if (!s) {
        free(sig);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    fputs("SELECT j.rowid", s);
    put_from_where(s, q, words, n_words);
    put_order(s, q, sort);
    if (bound > 0)
        fputs(" LIMIT ?3", s); /* ?3 is the first word's, and there is none */
    int rc = sql_done(s, &sql, e);
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = dash__prepare(h, sql, &st, e);
    free(sql);
    if (rc) {
        free(sig);
        return rc;
    }
    bind_where(st, q, words, n_words);
    if (bound > 0)
        sqlite3_bind_int64(st, 3, bound);
    dash_jobs_cache_clear(c);
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((size_t)c->n == cap) {
            size_t ncap = cap ? 2 * cap : 1024;
            int64_t *ids = realloc(c->ids, ncap * sizeof *ids);
            if (!ids) {
                rc = SQLITE_NOMEM;
                break;
            }
            c->ids = ids;
            cap = ncap;
        }
        c->ids[c->n++] = sqlite3_column_int64(st, 0);
    }
    if (rc == SQLITE_DONE) {
        /* fewer than the bound: that is every match */
        rc = bound > 0 && c->n == bound ? count_matches(h, q, &c->total, e) : 0;
        if (bound <= 0 || c->n < bound)
            c->total = c->n;
        if (!rc) {
            c->sig = sig;
            sig = NULL;
        } else {
            dash_jobs_cache_clear(c);
        }
    } else {
        rc = rc == SQLITE_NOMEM ? tlm_errf(e, TLM_ENOMEM, "out of memory") : dash__sql_fail(h, e);
        dash_jobs_cache_clear(c);
    }
    free(sig);
    sqlite3_finalize(st);
    return rc;
}

/* What the ordered ids depend on, as one string (NULL when out of memory). */
static char *signature(const char *version, const dash_query *q, int sort, const word *words, int n_words)
{
    char *sig = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&sig, &len);
    if (!s)
        return NULL;
    /* '\x1f' between the parts: a unit separator no request value holds unescaped */
    fprintf(s, "%s\x1f%s\x1f%s\x1f%d\x1f%d", version, q->sweep ? q->sweep : "", q->status ? q->status : "", sort,
            q->desc);
    for (int i = 0; i < n_words; i++)
        fprintf(s, "\x1f%d=%s", words[i].exact, words[i].value);
    if (fclose(s)) {
        free(sig);
        return NULL;
    }
    return sig;
}

/* The jobs that match a filter without words (the sweep's, with the status): an index count. */
static int count_matches(sqlite3 *h, const dash_query *q, int64_t *n, tlm_err *e)
{
    char *sql = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&sql, &len);
    if (!s)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    fputs("SELECT count(*)", s);
    put_from_where(s, q, NULL, 0);
    int rc = sql_done(s, &sql, e);
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = dash__prepare(h, sql, &st, e);
    free(sql);
    if (rc)
        return rc;
    bind_where(st, q, NULL, 0);
    rc = sqlite3_step(st) == SQLITE_ROW ? 0 : dash__sql_fail(h, e);
    *n = rc ? 0 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

static int count_all(sqlite3 *h, const dash_query *q, int64_t *n, tlm_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = dash__prepare(h, q->sweep ? "SELECT count(*) FROM sweep_jobs WHERE sweep = ?1 AND active = 1"
                                       : "SELECT count(*) FROM jobs", &st, e);
    if (rc)
        return rc;
    if (q->sweep)
        sqlite3_bind_text(st, 1, q->sweep, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_ROW ? 0 : dash__sql_fail(h, e);
    *n = rc ? 0 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

void dash_jobs_cache_clear(dash_jobs_cache *c)
{
    free(c->sig);
    free(c->ids);
    memset(c, 0, sizeof *c);
}

/* Which columns: cols= (comma-separated names, "key" always first), else the standard ones. */
static int pick_cols(const char *cols, int *pick, int *n, tlm_err *e)
{
    *n = 0;
    pick[(*n)++] = 0; /* key: what a row is */
    for (int i = 1; i < N_COLS; i++)
        if (!cols && COLS[i].std)
            pick[(*n)++] = i;
    if (!cols)
        return 0;
    for (const char *p = cols; *p;) {
        size_t len = strcspn(p, ",");
        int c = col_find(p, len);
        if (c < 0)
            return tlm_errf(e, TLM_ECONFIG, "cols: no column '%.*s' (expected names of the jobs answer's columns)",
                            (int)(len > 40 ? 40 : len), p);
        int dup = 0;
        for (int i = 0; i < *n; i++)
            dup |= pick[i] == c;
        if (!dup)
            pick[(*n)++] = c;
        p += len + (p[len] == ',');
    }
    return 0;
}

int dash_api_jobs(db *d, dash_jobs_cache *cache, const char *version, const dash_query *q, FILE *f, tlm_err *e)
{
    sqlite3 *h = db_handle(d);
    int sort = -1;
    if (q->sort && (sort = col_find(q->sort, strlen(q->sort))) < 0)
        return tlm_errf(e, TLM_ECONFIG, "sort: no column '%.40s' (expected a column of the jobs answer)", q->sort);
    if (q->status) {
        int known = 0;
        for (size_t i = 0; i < sizeof STATUSES / sizeof STATUSES[0]; i++)
            known |= !strcmp(q->status, STATUSES[i]);
        if (!known)
            return tlm_errf(e, TLM_ECONFIG, "status: expected pending, running, done, failed or interrupted");
    }
    int pick[N_COLS], n_pick;
    int rc = pick_cols(q->cols, pick, &n_pick, e);
    if (rc)
        return rc;
    char wbuf[DASH_JOBS_MAX_FILTER + 1];
    word words[DASH_JOBS_MAX_WORDS]; /* 8 KB */
    int n_words = split_words(q->filter, wbuf, sizeof wbuf, words, e);
    if (n_words < 0)
        return n_words;

    char *sql = NULL;
    size_t len = 0;
    sqlite3_stmt *st = NULL;
    int64_t all = 0;
    /* one snapshot: the count, the order and the page agree */
    if ((rc = dash__begin(h, e)))
        return rc;
    char *sig = signature(version, q, sort, words, n_words);
    if (!sig) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto done;
    }
    /* the page's last row must be among the ordered ids */
    int64_t need = q->offset + q->limit;
    int same = cache->sig && !strcmp(cache->sig, sig);
    if (same && (cache->n == cache->total || need <= cache->n))
        free(sig);
    else if ((rc = order_ids(h, q, sort, words, n_words, !n_words && !same && need <= TOP_IDS ? TOP_IDS : 0,
                             cache, sig, e)))
        goto done;
    int64_t total = cache->total;
    all = total;
    if ((q->status || n_words) && (rc = count_all(h, q, &all, e)))
        goto done;
    FILE *s = open_memstream(&sql, &len);
    if (!s) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto done;
    }
    fputs("SELECT ", s);
    for (int i = 0; i < n_pick; i++)
        fprintf(s, "%s%s AS %s", i ? ", " : "", COLS[pick[i]].expr, COLS[pick[i]].name);
    fputs(" FROM jobs j WHERE j.rowid = ?1", s);
    if ((rc = sql_done(s, &sql, e)) || (rc = dash__prepare(h, sql, &st, e)))
        goto done;

    fputs("{\"columns\":[", f);
    for (int i = 0; i < n_pick; i++) {
        if (i)
            fputc(',', f);
        rpt_json_str(f, COLS[pick[i]].name);
    }
    fputs("],\"rows\":[", f);
    int first = 1;
    for (int64_t r = q->offset; r < cache->n && r < q->offset + q->limit && !rc; r++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, cache->ids[r]);
        int step = sqlite3_step(st);
        if (step == SQLITE_DONE)
            continue; /* cannot happen inside one read transaction */
        if (step != SQLITE_ROW) {
            rc = dash__sql_fail(h, e);
            break;
        }
        fputs(first ? "[" : ",\n[", f);
        first = 0;
        for (int i = 0; i < n_pick; i++) {
            if (i)
                fputc(',', f);
            dash__put_col(f, st, i);
        }
        fputc(']', f);
    }
    fprintf(f, "],\"total\":%lld,\"all\":%lld,\"offset\":%lld,\"limit\":%d,\"sort\":", (long long)total,
            (long long)all, (long long)q->offset, q->limit);
    rpt_json_str(f, sort >= 0 ? COLS[sort].name : NULL);
    fprintf(f, ",\"dir\":\"%s\"}\n", q->desc ? "desc" : "asc");
done:
    sqlite3_finalize(st);
    free(sql);
    dash__end(h);
    return rc;
}
