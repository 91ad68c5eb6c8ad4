/* fig_loss.c: figure loss: training loss against tokens, one axes per
 * setting (architecture, scale, tokens; the four with the most
 * configurations), per configuration the mean over its seeds with the
 * seeds' min-max shaded: seeds of one configuration share their steps, so
 * step k of every seed falls in the same bucket.  At most MAX_POINTS
 * buckets per line (averaged steps), so a 100k-step run stays a light
 * figure.  The y axis is logarithmic when the loss falls by half or more
 * (a loss from ln 256 down to 2 keeps its last steps readable), and shows
 * every point: the first steps are not cut off.  A bucket where a seed's
 * loss is NaN leaves that seed out there.
 * Must not: load the steps of more jobs than it draws. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 300
#define MAX_AXES 4

typedef struct {
    double sum, lo, hi, x;
    int n;    /* seeds with a finite mean here */
    int seen; /* seeds with a step here: seen but no n is a NaN, drawn as a gap */
} bucket;

static int has_steps(const rpt_ctx *c, const rpt_group *g)
{
    for (int i = 0; i < g->n_jobs; i++) {
        const rpt_job *j = &c->jobs[g->jobs[i]];
        if (j->tokens_done > 0 || j->status != RPT_PENDING)
            return 1;
    }
    return 0;
}

/* One group's seeds into buckets of `per` steps: each seed's mean in the
 * bucket, then their mean, min and max. */
static int load_group(rpt_ctx *c, sqlite3_stmt *rows, const rpt_group *g, int64_t per, bucket *b, int nb, double xscale,
                      tlm_err *e)
{
    for (int i = 0; i < nb; i++)
        b[i] = (bucket){0, INFINITY, -INFINITY, NAN, 0, 0};
    for (int k = 0; k < g->n_jobs; k++) {
        const rpt_job *j = &c->jobs[g->jobs[k]];
        sqlite3_reset(rows);
        sqlite3_bind_text(rows, 1, j->key, -1, SQLITE_STATIC);
        int rc, cur = -1, in = 0, bad = 0;
        double sum = 0, x = NAN;
        for (;;) {
            rc = sqlite3_step(rows);
            int at = -1;
            double loss = NAN, tok = NAN;
            if (rc == SQLITE_ROW) {
                int64_t step = sqlite3_column_int64(rows, 0);
                at = (int)(step / per);
                tok = (double)sqlite3_column_int64(rows, 1) / xscale;
                /* NULL loss means NaN (schema.sql) */
                loss = sqlite3_column_type(rows, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(rows, 2);
                if (at >= nb)
                    at = nb - 1;
            }
            if (at != cur && cur >= 0)
                b[cur].seen++;
            if (at != cur && cur >= 0 && in && !bad) {
                double m = sum / in;
                bucket *u = &b[cur];
                u->sum += m;
                u->lo = fmin(u->lo, m);
                u->hi = fmax(u->hi, m);
                u->x = isnan(u->x) ? x : fmax(u->x, x);
                u->n++;
            }
            if (rc != SQLITE_ROW)
                break;
            if (at != cur) {
                cur = at;
                sum = 0;
                in = bad = 0;
            }
            if (isfinite(loss)) {
                sum += loss;
                in++;
            } else {
                bad = 1;
            }
            x = tok;
        }
        if (rc != SQLITE_DONE)
            return rpt_db_err(c, "steps", e);
    }
    return 0;
}

/* What the axes of one figure share while they are filled. */
typedef struct {
    rpt_ctx *c;
    rpt_figure *f;
    sqlite3_stmt *maxstep, *rows;
    bucket *b; /* MAX_POINTS + 1 */
    const int *color;
    double xscale;
    double ymin, ymax; /* of the axes being filled */
    int left, max_seeds, one_seed;
    int64_t max_per;
} loss_fig;

/* One configuration's line and band in axes a; nothing when it has no step. */
static int group_series(loss_fig *L, int gi, int a, tlm_err *e)
{
    rpt_ctx *c = L->c;
    const rpt_group *g = &c->groups[gi];
    /* the bucket width from the longest seed */
    int64_t last = 0;
    for (int k = 0; k < g->n_jobs; k++) {
        sqlite3_reset(L->maxstep);
        sqlite3_bind_text(L->maxstep, 1, c->jobs[g->jobs[k]].key, -1, SQLITE_STATIC);
        if (sqlite3_step(L->maxstep) == SQLITE_ROW && sqlite3_column_int64(L->maxstep, 0) > last)
            last = sqlite3_column_int64(L->maxstep, 0);
    }
    if (last == 0)
        return 0;
    int64_t per = (last + MAX_POINTS) / MAX_POINTS;
    int nb = (int)(last / per) + 1, rc;
    bucket *b = L->b;
    if ((rc = load_group(c, L->rows, g, per, b, nb, L->xscale, e)))
        return rc;
    rpt_series *s = rpt_figure_series(L->f, rpt_figure_label(L->f, g->label), a, nb, 1);
    if (!s)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    int seeds = 0, m = 0;
    for (int k = 0; k < nb; k++) {
        if (!b[k].seen)
            continue; /* no step of any seed here (steps logged every few) */
        if (!b[k].n) {
            m++; /* a NaN loss: a gap in the line */
            continue;
        }
        s->x[m] = b[k].x;
        s->y[m] = b[k].sum / b[k].n;
        if (b[k].n >= 2) {
            s->lo[m] = b[k].lo;
            s->hi[m] = b[k].hi;
        }
        m++;
        L->ymin = fmin(L->ymin, b[k].lo);
        L->ymax = fmax(L->ymax, b[k].hi);
        seeds = b[k].n > seeds ? b[k].n : seeds;
    }
    s->n = m;
    s->color = L->color[gi];
    s->band = 1;
    L->max_seeds = seeds > L->max_seeds ? seeds : L->max_seeds;
    L->one_seed |= seeds == 1;
    L->max_per = per > L->max_per ? per : L->max_per;
    return 0;
}

/* The axes of one setting: its configurations in colour order, at most --max-series. */
static int setting_axes(loss_fig *L, const rpt_pgroup *pg, int a, int np, tlm_err *e)
{
    rpt_ctx *c = L->c;
    rpt_figure *f = L->f;
    rpt_axes *ax = rpt_figure_axes(f, np > 1 ? rpt_figure_panel_title(f, NULL, pg) : NULL);
    int *order = malloc(sizeof *order * (size_t)pg->n_groups);
    if (!ax || !order) {
        free(order);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    if (np == 1)
        f->title = rpt_figure_panel_title(f, "Training loss", pg);
    ax->xlabel = L->xscale == 1e9 ? "tokens (billions)" : L->xscale == 1e6 ? "tokens (millions)" : "tokens (thousands)";
    ax->ylabel = "training loss";
    L->ymin = INFINITY;
    L->ymax = -INFINITY;
    rpt_figure_order(pg, L->color, order);
    int drawn = 0, rc = 0;
    for (int i = 0; i < pg->n_groups && !rc; i++) {
        if (!has_steps(c, &c->groups[order[i]]))
            continue;
        if (drawn >= c->o.max_series) {
            L->left++;
            continue;
        }
        int had = f->n;
        rc = group_series(L, order[i], a, e);
        drawn += f->n > had;
    }
    free(order);
    /* a loss that falls by half or more: log, so its end stays readable */
    ax->logy = L->ymin > 0 && L->ymax / L->ymin >= 2;
    return rc;
}

int rpt_fig_loss(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    int panels[MAX_AXES], np = rpt_figure_begin(f, "Training loss",
                                          "loss: no job has trained a step yet", c, has_steps, MAX_AXES, panels);
    if (!np)
        return 0;
    loss_fig L = {.c = c, .f = f, .max_per = 1};
    int64_t most = 0;
    for (int i = 0; i < c->n_jobs; i++)
        most = c->jobs[i].tokens_total > most ? c->jobs[i].tokens_total : most;
    L.xscale = most >= 2000000000LL ? 1e9 : most >= 2000000 ? 1e6 : 1e3;
    int *color = NULL, rc = rpt_config_colors(c, &color, e);
    if (rc)
        return rc;
    L.color = color;
    L.b = malloc(sizeof *L.b * (MAX_POINTS + 1));
    if (!L.b)
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    else if (!(rc = rpt_prepare(c, "SELECT max(step) FROM steps WHERE job = ?1", &L.maxstep, "steps", e)))
        rc = rpt_prepare(c, "SELECT step, tokens, loss FROM steps WHERE job = ?1 ORDER BY step", &L.rows, "steps", e);
    for (int a = 0; a < np && !rc; a++)
        rc = setting_axes(&L, &c->panels[panels[a]], a, np, e);
    free(L.b);
    free(color);
    sqlite3_finalize(L.maxstep);
    sqlite3_finalize(L.rows);
    if (rc)
        return rc;
    f->caption = rpt_printf(
        &f->a, "Line: the mean over a configuration's seeds%s; shaded: their min-max (up to %d seeds)%s.%s%s",
        L.max_per > 1 ? rpt_printf(&f->a, " (steps averaged %lld at a time)", (long long)L.max_per) : "", L.max_seeds,
        L.one_seed ? "; a configuration with one seed has no band" : "", f->ax[0].logy ? " Log scale." : "",
        c->n_left_out ? " Jobs no current sweep definition lists are left out." : "");
    if (L.left || np < c->n_panels)
        f->note = rpt_printf(
            &f->a, "loss: drew %d setting%s%s; choose with --sweep, --arch, --scale, --job or --max-series", np,
            np == 1 ? "" : "s",
            L.left ? rpt_printf(&f->a, ", left out %d configuration%s", L.left, L.left == 1 ? "" : "s") : "");
    return 0;
}
