/* metrics.c: final values out of results.db: the last evaluation of a
 * metric per job (cached: several tables read validation perplexity), the
 * last layer statistics, the last training loss, the widths.
 * Evaluations are read in bulk: the distinct (suite, task, metric) names
 * come from a skip scan of the evals_metric index (one index search per
 * name), then each wanted name is one range of that index, matched to the
 * loaded jobs by key; the largest step per job wins.  A table over 10,000
 * jobs costs a few range scans, not 10,000 lookups per column.
 * Must not: write, or scan whole tables. */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

typedef struct entry {
    struct entry *next;
    char *suite, *task, *metric;
    rpt_values v;
} entry;

typedef struct triple {
    char *suite, *task, *metric;
} triple;

struct rpt_metric_cache {
    entry *head;
    triple *names; /* distinct (suite, task, metric) of evals, sorted */
    int n_names, names_loaded;
    sqlite3_stmt *last_step_loss, *layer_stat;
};

void rpt_metric_cache_free(rpt_metric_cache *m)
{
    if (!m)
        return;
    for (entry *x = m->head, *next; x; x = next) {
        next = x->next;
        free(x->suite);
        free(x->task);
        free(x->metric);
        free(x->v.v);
        free(x->v.state);
        free(x);
    }
    for (int i = 0; i < m->n_names; i++) {
        free(m->names[i].suite);
        free(m->names[i].task);
        free(m->names[i].metric);
    }
    free(m->names);
    sqlite3_finalize(m->last_step_loss);
    sqlite3_finalize(m->layer_stat);
    free(m);
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static char *dup_or_null(const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *p = strdup(s);
    if (!p)
        *oom = 1;
    return p;
}

static int cache_of(rpt_ctx *c, tlm_err *e)
{
    if (!c->cache && !(c->cache = calloc(1, sizeof *c->cache)))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    return 0;
}

/* Decodes value + nonfinite into v/state. */
static void read_value(sqlite3_stmt *s, int vcol, int nfcol, double *v, unsigned char *state)
{
    const unsigned char *nf = sqlite3_column_text(s, nfcol);
    if (nf) {
        *state = strcmp((const char *)nf, "nan") ? RPT_V_INF : RPT_V_NAN;
        *v = !strcmp((const char *)nf, "nan") ? NAN : !strcmp((const char *)nf, "-inf") ? -INFINITY : INFINITY;
    } else if (sqlite3_column_type(s, vcol) == SQLITE_NULL) {
        *state = RPT_V_NAN;
        *v = NAN;
    } else {
        *v = sqlite3_column_double(s, vcol);
        *state = isfinite(*v) ? RPT_V_OK : isnan(*v) ? RPT_V_NAN : RPT_V_INF;
    }
}

/* The distinct evaluation names, by skipping through the evals_metric
 * index: each step is one search for the next larger (suite, task, metric). */
static int load_names(rpt_ctx *c, tlm_err *e)
{
    rpt_metric_cache *m = c->cache;
    if (m->names_loaded)
        return 0;
    sqlite3_stmt *first, *next;
    int rc = rpt_prepare(c, "SELECT suite, task, metric FROM evals ORDER BY suite, task, metric LIMIT 1", &first,
                         "evals", e);
    if (rc)
        return rc;
    if ((rc = rpt_prepare(c,
                          "SELECT suite, task, metric FROM evals WHERE (suite, task, metric) > (?1, ?2, ?3)"
                          " ORDER BY suite, task, metric LIMIT 1",
                          &next, "evals", e))) {
        sqlite3_finalize(first);
        return rc;
    }
    sqlite3_stmt *s = first;
    int oom = 0;
    size_t cap = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (TLM_GROW(m->names, cap, (size_t)m->n_names + 1, 32)) {
            oom = 1;
            break;
        }
        triple *t = &m->names[m->n_names++];
        t->suite = dup_or_null((const char *)sqlite3_column_text(s, 0), &oom);
        t->task = dup_or_null((const char *)sqlite3_column_text(s, 1), &oom);
        t->metric = dup_or_null((const char *)sqlite3_column_text(s, 2), &oom);
        if (oom || !t->suite || !t->task || !t->metric) {
            oom = 1;
            break;
        }
        sqlite3_reset(next);
        sqlite3_bind_text(next, 1, t->suite, -1, SQLITE_STATIC);
        sqlite3_bind_text(next, 2, t->task, -1, SQLITE_STATIC);
        sqlite3_bind_text(next, 3, t->metric, -1, SQLITE_STATIC);
        s = next;
    }
    sqlite3_finalize(first);
    sqlite3_finalize(next);
    if (oom)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    if (rc != SQLITE_DONE)
        return rpt_db_err(c, "evals", e);
    m->names_loaded = 1;
    return 0;
}

/* Merges one (suite, task, metric) range into v: the largest step per job. */
static int read_range(rpt_ctx *c, sqlite3_stmt *s, const triple *t, rpt_values *v, int64_t *step, tlm_err *e)
{
    sqlite3_reset(s);
    sqlite3_bind_text(s, 1, t->suite, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, t->task, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, t->metric, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int j = rpt_job_find(c, (const char *)sqlite3_column_text(s, 0));
        int64_t at = sqlite3_column_int64(s, 1);
        if (j < 0 || at < step[j])
            continue;
        step[j] = at;
        read_value(s, 2, 3, &v->v[j], &v->state[j]);
    }
    if (rc != SQLITE_DONE)
        return rpt_db_err(c, "evals", e);
    return 0;
}

int rpt_metric(rpt_ctx *c, const char *suite, const char *task, const char *metric, const rpt_values **out,
               tlm_err *e)
{
    int rc = cache_of(c, e);
    if (rc)
        return rc;
    for (entry *x = c->cache->head; x; x = x->next)
        if (same(x->suite, suite) && same(x->task, task) && !strcmp(x->metric, metric)) {
            *out = &x->v;
            return 0;
        }
    if ((rc = load_names(c, e)))
        return rc;
    int oom = 0;
    entry *x = calloc(1, sizeof *x);
    if (!x)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    x->suite = dup_or_null(suite, &oom);
    x->task = dup_or_null(task, &oom);
    x->metric = dup_or_null(metric, &oom);
    size_t n = c->n_jobs ? (size_t)c->n_jobs : 1;
    x->v.v = malloc(n * sizeof *x->v.v);
    x->v.state = calloc(n, 1);
    x->next = c->cache->head;
    c->cache->head = x; /* owned by the cache from here, whatever happens */
    int64_t *step = malloc(n * sizeof *step);
    if (oom || !x->v.v || !x->v.state || !step) {
        free(step);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        x->v.v[i] = NAN;
        step[i] = INT64_MIN;
    }
    sqlite3_stmt *s;
    if ((rc = rpt_prepare(c,
                          "SELECT job, step, value, nonfinite FROM evals"
                          " WHERE suite = ?1 AND task = ?2 AND metric = ?3",
                          &s, "evals", e))) {
        free(step);
        return rc;
    }
    const rpt_metric_cache *m = c->cache;
    for (int i = 0; i < m->n_names && !rc; i++) {
        const triple *t = &m->names[i];
        if ((!suite || !strcmp(t->suite, suite)) && (!task || !strcmp(t->task, task)) && !strcmp(t->metric, metric))
            rc = read_range(c, s, t, &x->v, step, e);
    }
    sqlite3_finalize(s);
    free(step);
    if (rc)
        return rc;
    *out = &x->v;
    return 0;
}

int rpt_suite_tasks(rpt_ctx *c, const char *suite, const char *metric, const char ***tasks, int *n, tlm_err *e)
{
    *tasks = NULL;
    *n = 0;
    int rc = cache_of(c, e);
    if (rc || (rc = load_names(c, e)))
        return rc;
    const rpt_metric_cache *m = c->cache;
    const char **v = rpt_alloc(&c->a, sizeof *v * (size_t)(m->n_names + 1));
    if (!v)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    /* names are sorted by (suite, task, metric): tasks come out sorted and distinct */
    for (int i = 0; i < m->n_names; i++)
        if (!strcmp(m->names[i].suite, suite) && !strcmp(m->names[i].metric, metric) &&
            (*n == 0 || strcmp(v[*n - 1], m->names[i].task)))
            v[(*n)++] = m->names[i].task;
    *tasks = v;
    return 0;
}

int rpt_layer_stat(rpt_ctx *c, const char *job, const char *name, double **out, int *n, tlm_err *e)
{
    *out = NULL;
    *n = 0;
    int rc = cache_of(c, e);
    if (rc)
        return rc;
    /* newest step first, in the primary key's order: no sort, stop at the next step */
    sqlite3_stmt **s = &c->cache->layer_stat;
    if (!*s && (rc = rpt_prepare(c,
                                 "SELECT step, layer, value, nonfinite FROM layer_stats WHERE job = ?1 AND name = ?2"
                                 " ORDER BY step DESC, layer DESC",
                                 s, "layer_stats", e)))
        return rc;
    sqlite3_reset(*s);
    sqlite3_bind_text(*s, 1, job, -1, SQLITE_STATIC);
    sqlite3_bind_text(*s, 2, name, -1, SQLITE_STATIC);
    size_t cap = 0;
    int64_t step = 0;
    double *v = NULL;
    while ((rc = sqlite3_step(*s)) == SQLITE_ROW) {
        int64_t at = sqlite3_column_int64(*s, 0);
        if (v && at != step)
            break; /* an older measurement */
        step = at;
        int layer = sqlite3_column_int(*s, 1);
        if (layer < 0 || layer > 4096)
            continue; /* not a layer this report can draw */
        if ((size_t)layer >= cap) {
            size_t had = cap;
            if (TLM_GROW(v, cap, (size_t)layer + 1, 32)) {
                rc = SQLITE_NOMEM;
                break;
            }
            for (size_t l = had; l < cap; l++)
                v[l] = NAN; /* layers without a row */
        }
        unsigned char st;
        read_value(*s, 2, 3, &v[layer], &st);
        if (st != RPT_V_OK)
            v[layer] = NAN;
        if (layer + 1 > *n)
            *n = layer + 1;
    }
    sqlite3_reset(*s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        free(v);
        *n = 0;
        return rc == SQLITE_NOMEM ? tlm_errf(e, TLM_ENOMEM, "out of memory")
                                  : rpt_db_err(c, "layer_stats", e);
    }
    *out = v;
    return 0;
}

int rpt_last_loss(rpt_ctx *c, int job, double *loss, tlm_err *e)
{
    const rpt_job *j = &c->jobs[job];
    if (!isnan(j->final_loss)) {
        *loss = j->final_loss;
        return 1;
    }
    int rc = cache_of(c, e);
    if (rc)
        return rc;
    sqlite3_stmt **s = &c->cache->last_step_loss;
    if (!*s && (rc = rpt_prepare(c, "SELECT loss FROM steps WHERE job = ?1 ORDER BY step DESC LIMIT 1", s, "steps", e)))
        return rc;
    sqlite3_reset(*s);
    sqlite3_bind_text(*s, 1, j->key, -1, SQLITE_STATIC);
    rc = sqlite3_step(*s);
    if (rc == SQLITE_ROW) {
        /* NULL in steps means NaN (schema.sql) */
        *loss = sqlite3_column_type(*s, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(*s, 0);
        return 1;
    }
    if (rc != SQLITE_DONE)
        return rpt_db_err(c, "steps", e);
    return 0;
}

int rpt_job_widths(const rpt_job *j, double *out, int cap, int *n)
{
    *n = 0;
    const char *p = j->widths;
    if (!p || *p != '[')
        return 0;
    p++;
    while (*n < cap) {
        char *end;
        double v = strtod(p, &end);
        if (end == p)
            break;
        out[(*n)++] = v;
        p = end;
        while (*p == ' ')
            p++;
        if (*p != ',')
            break;
        p++;
    }
    return 0;
}

int rpt_group_layer_mean(rpt_ctx *c, const rpt_group *g, const char *name, double **out, int *n, tlm_err *e)
{
    *out = NULL;
    *n = 0;
    double *sum = NULL;
    int *cnt = NULL, cap = 0, rc = 0;
    for (int j = 0; j < g->n_jobs && !rc; j++) {
        double *v;
        int m;
        if ((rc = rpt_layer_stat(c, c->jobs[g->jobs[j]].key, name, &v, &m, e)))
            break;
        if (m > cap) {
            double *ns = realloc(sum, sizeof *ns * (size_t)m);
            int *nc = ns ? realloc(cnt, sizeof *nc * (size_t)m) : NULL;
            if (ns)
                sum = ns;
            if (!ns || !nc) {
                free(v);
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                break;
            }
            cnt = nc;
            for (int l = cap; l < m; l++) {
                sum[l] = 0;
                cnt[l] = 0;
            }
            cap = m;
        }
        for (int l = 0; l < m; l++)
            if (isfinite(v[l])) {
                sum[l] += v[l];
                cnt[l]++;
            }
        free(v);
    }
    if (rc) {
        free(sum);
        free(cnt);
        return rc;
    }
    for (int l = 0; l < cap; l++)
        sum[l] = cnt[l] ? sum[l] / cnt[l] : NAN;
    free(cnt);
    *out = sum;
    *n = cap;
    return 0;
}
