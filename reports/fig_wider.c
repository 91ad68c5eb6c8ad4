/* fig_wider.c: figure wider, the paper's Figure 2: validation perplexity
 * of uniform and of the blocks allocations that widen the early, middle or
 * late third of the layers, per setting with blocks jobs (up to four),
 * beside the paper's own values on their own axes: a 440M token-level
 * perplexity and a 1M byte-level one share no scale, their patterns do.
 * Ours: the mean over finished seeds with a bar from the lowest to the
 * highest seed; a grey line at uniform's mean (the paper's too).
 * Must not: draw a value the tables do not show (the same rpt_stat). */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OURS 4

static const char *const KINDS[] = {"uniform", "wider-early", "wider-middle", "wider-late"};
#define N_KINDS 4

static int has_blocks(const rpt_ctx *c, const rpt_group *g)
{
    return !strcmp(g->schedule, "blocks") && rpt_group_done(c, g);
}

/* The group of a panel for an allocation, -1 when none. */
static int find(const rpt_ctx *c, const rpt_pgroup *pg, const char *kind)
{
    for (int i = 0; i < pg->n_groups; i++) {
        const rpt_group *g = &c->groups[pg->groups[i]];
        const char *k = !strcmp(g->schedule, "uniform")  ? "uniform"
                        : !strcmp(g->schedule, "blocks") ? rpt_blocks_kind(g->groups)
                                                         : NULL;
        if (k && !strcmp(k, kind))
            return pg->groups[i];
    }
    return -1;
}

int rpt_fig_wider(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    int panels[MAX_OURS], np = rpt_figure_begin(f, "Wider early vs late: validation perplexity (paper Figure 2)",
                                          "wider: no blocks (wider-early/middle/late) jobs", c,
                                          has_blocks, MAX_OURS, panels);
    if (!np)
        return 0;
    const rpt_values *ppl;
    int *color, rc = rpt_metric(c, "val", NULL, "ppl", &ppl, e);
    if (rc || (rc = rpt_config_colors(c, &color, e)))
        return rc;
    int kind_color[N_KINDS] = {0, 1, 2, 3}, seeds = 0, drawn = 0;
    for (int a = 0; a < np && !rc; a++) {
        const rpt_pgroup *pg = &c->panels[panels[a]];
        rpt_axes *ax = rpt_figure_axes(f, rpt_figure_panel_title(f, "ours", pg));
        ax->xcats = (const char **)KINDS;
        ax->n_xcats = N_KINDS;
        ax->ylabel = "validation perplexity";
        for (int k = 0; k < N_KINDS && !rc; k++) {
            int gi = find(c, pg, KINDS[k]);
            if (gi < 0)
                continue;
            const rpt_group *g = &c->groups[gi];
            kind_color[k] = color[gi];
            rpt_stat st;
            rpt_stat_group(c, g, ppl, 1.0, &st);
            if (!st.n)
                continue;
            double lo = INFINITY, hi = -INFINITY;
            for (int j = 0; j < g->n_jobs; j++) {
                int job = g->jobs[j];
                if (c->jobs[job].status == RPT_DONE && ppl->state[job] == RPT_V_OK) {
                    lo = fmin(lo, ppl->v[job]);
                    hi = fmax(hi, ppl->v[job]);
                }
            }
            rpt_series *s = rpt_figure_series(f, NULL, f->n_axes - 1, 1, 1);
            if (!s) {
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                break;
            }
            s->x[0] = k + 1;
            s->y[0] = st.mean;
            if (st.n >= 2) {
                s->lo[0] = lo;
                s->hi[0] = hi;
            }
            s->line = 0;
            s->marker = RPT_MARK_CIRCLE;
            s->bars = RPT_BAR_Y;
            s->color = color[gi];
            if (k == 0)
                ax->yref = st.mean;
            seeds = st.n > seeds ? st.n : seeds;
            drawn++;
        }
    }
    free(color);
    if (rc)
        return rc;
    if (!drawn) {
        /* the paper's values alone are no figure of this database */
        f->n = f->n_axes = 0;
        f->note = "wider: no blocks job has a validation perplexity yet";
        return 0;
    }
    /* the paper's values, on axes of their own */
    rpt_axes *ax = rpt_figure_axes(f, "the paper: 440M Transformer++, 30B tokens");
    if (ax) {
        ax->xcats = (const char **)KINDS;
        ax->n_xcats = N_KINDS;
        ax->ylabel = "validation perplexity";
        ax->yref = rpt_paper_fig2("uniform");
        for (int k = 0; k < N_KINDS; k++) {
            rpt_series *s = rpt_figure_series(f, NULL, f->n_axes - 1, 1, 0);
            if (!s)
                return tlm_errf(e, TLM_ENOMEM, "out of memory");
            s->x[0] = k + 1;
            s->y[0] = rpt_paper_fig2(KINDS[k]);
            s->line = 0;
            s->marker = RPT_MARK_DIAMOND;
            s->hollow = 1;
            s->color = kind_color[k];
        }
    }
    f->caption =
        rpt_printf(&f->a,
                   "Dot: the mean validation perplexity over finished seeds (up to %d); bar: the lowest to the "
                   "highest seed; no dot: no finished seed; grey line: uniform's mean. Open diamonds: the paper's "
                   "Figure 2, on its own "
                   "scale (token-level perplexity of a 440M model): compare the pattern, not the values.",
                   seeds);
    return 0;
}
