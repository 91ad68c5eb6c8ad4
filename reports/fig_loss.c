/* fig_loss.c: figure loss: training loss against tokens, one line per job
 * (the selected ones, in sweep order, at most --max-series), averaged into
 * at most MAX_POINTS buckets so a 100k-step run stays a light SVG.  A
 * bucket holding a NaN loss is drawn as a gap.
 * Must not: load more than the jobs it draws. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 600

/* Reads (tokens, loss) of one job into a new series, bucket-averaged. */
static int load(rpt_ctx *c, sqlite3_stmt *count, sqlite3_stmt *rows, const rpt_job *j, rpt_figure *f,
                const char *label, double xscale, tlm_err *e)
{
    sqlite3_reset(count);
    sqlite3_bind_text(count, 1, j->key, -1, SQLITE_STATIC);
    if (sqlite3_step(count) != SQLITE_ROW)
        return tlm_errf(e, TLM_EIO, "%s: reading steps: %s", c->db_path, sqlite3_errmsg(c->h));
    int64_t n = sqlite3_column_int64(count, 0);
    if (n == 0)
        return 0;
    int64_t per = (n + MAX_POINTS - 1) / MAX_POINTS;
    int m = (int)((n + per - 1) / per);
    rpt_series *s = rpt_figure_series(f, label, m, 0);
    if (!s)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    sqlite3_reset(rows);
    sqlite3_bind_text(rows, 1, j->key, -1, SQLITE_STATIC);
    int64_t i = 0;
    int k = 0, in = 0, gap = 0, rc;
    double sum = 0;
    while ((rc = sqlite3_step(rows)) == SQLITE_ROW && k < m) {
        double x = (double)sqlite3_column_int64(rows, 0) / xscale;
        /* NULL loss means NaN (schema.sql) */
        double y = sqlite3_column_type(rows, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(rows, 1);
        if (isfinite(y)) {
            sum += y;
            in++;
        } else {
            gap = 1;
        }
        if (++i % per == 0 || i == n) {
            s->x[k] = x;
            s->y[k] = gap || !in ? NAN : sum / in;
            k++;
            sum = 0;
            in = gap = 0;
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tlm_errf(e, TLM_EIO, "%s: reading steps: %s", c->db_path, sqlite3_errmsg(c->h));
    s->n = k; /* steps written meanwhile do not overflow the series */
    return 0;
}

int rpt_fig_loss(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    f->title = "Training loss";
    f->ylabel = "loss";
    f->yclip = 0.05;
    /* the x unit from the largest budget drawn */
    int64_t most = 0;
    for (int i = 0; i < c->n_jobs; i++)
        if (c->jobs[i].tokens_total > most)
            most = c->jobs[i].tokens_total;
    double xscale = most >= 2000000000LL ? 1e9 : most >= 2000000 ? 1e6 : 1e3;
    f->xlabel = xscale == 1e9 ? "tokens (billions)" : xscale == 1e6 ? "tokens (millions)" : "tokens (thousands)";

    sqlite3_stmt *count = NULL, *rows = NULL;
    if (sqlite3_prepare_v2(c->h, "SELECT count(*) FROM steps WHERE job = ?1", -1, &count, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->h, "SELECT tokens, loss FROM steps WHERE job = ?1 ORDER BY step", -1, &rows, NULL) !=
            SQLITE_OK) {
        sqlite3_finalize(count);
        return tlm_errf(e, TLM_EIO, "%s: reading steps: %s", c->db_path, sqlite3_errmsg(c->h));
    }
    /* several scales or architectures: say which in the legend */
    int mixed = 0;
    for (int i = 1; i < c->n_jobs && !mixed; i++)
        mixed = strcmp(c->jobs[i].scale, c->jobs[0].scale) || strcmp(c->jobs[i].arch, c->jobs[0].arch);
    int rc = 0, skipped = 0;
    for (int i = 0; i < c->n_jobs && !rc; i++) {
        const rpt_job *j = &c->jobs[i];
        if (j->tokens_done == 0 && j->status == RPT_PENDING)
            continue;
        if (f->n >= c->o.max_series) {
            skipped++;
            continue;
        }
        char label[160];
        if (mixed)
            snprintf(label, sizeof label, "%s %s %s s%lld", j->arch, j->scale, j->label, (long long)j->seed);
        else
            snprintf(label, sizeof label, "%s s%lld", j->label, (long long)j->seed);
        rc = load(c, count, rows, j, f, label, xscale, e);
    }
    sqlite3_finalize(count);
    sqlite3_finalize(rows);
    if (rc)
        return rc;
    if (skipped)
        f->note = rpt_printf(&f->a, "loss: drew %d jobs, left out %d more (choose with --sweep, --job or "
                                    "--max-series)",
                             f->n, skipped);
    return 0;
}
