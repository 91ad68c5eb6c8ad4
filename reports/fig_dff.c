/* fig_dff.c: figure dff: the MLP width d_ff of every layer, one line per
 * configuration of one setting (the one with the most configurations):
 * the shape of each of the paper's schedules at a glance.  Widths come
 * from jobs.widths (tlmd writes them from the resolved config), so
 * pending jobs are drawn too; seeds have the same widths.
 * Must not: put models of different depth on one plot. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LAYERS 512

static int has_widths(const rpt_ctx *c, const rpt_group *g)
{
    return c->jobs[g->jobs[0]].widths != NULL;
}

int rpt_fig_dff(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    int best;
    if (!rpt_figure_begin(f, "MLP width per layer", "dff: no job has per-layer widths", c, has_widths, 1, &best))
        return 0;
    const rpt_pgroup *pg = &c->panels[best];
    f->title = rpt_figure_panel_title(f, "MLP width per layer", pg);
    rpt_axes *ax = rpt_figure_axes(f, NULL);
    ax->xlabel = "layer";
    ax->ylabel = "MLP width d" RPT_SUB("ff");
    ax->ylo_hint = 0;
    ax->xint = 1;
    int *color, rc = rpt_config_colors(c, &color, e);
    if (rc)
        return rc;
    double *w = malloc(sizeof *w * MAX_LAYERS);
    if (!w) {
        free(color);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    int drawn = 0, left = 0, depth = -1, uniform = -1, *order = malloc(sizeof *order * (size_t)pg->n_groups);
    if (!order) {
        free(w);
        free(color);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    rpt_figure_order(pg, color, order);
    for (int i = 0; i < pg->n_groups; i++) {
        const rpt_group *g = &c->groups[order[i]];
        int n;
        rpt_job_widths(&c->jobs[g->jobs[0]], w, MAX_LAYERS, &n);
        if (n == 0 || (depth >= 0 && n != depth))
            continue;
        if (drawn >= c->o.max_series) {
            left++;
            continue;
        }
        depth = n;
        rpt_series *s = rpt_figure_series(f, rpt_figure_label(f, g->label), 0, n, 0);
        if (!s) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        for (int l = 0; l < n; l++) {
            s->x[l] = l;
            s->y[l] = w[l];
        }
        s->color = color[order[i]];
        s->marker = RPT_MARK_CIRCLE;
        if (!strcmp(g->schedule, "uniform")) {
            s->dashed = 1;
            uniform = (int)w[0];
        }
        drawn++;
    }
    free(order);
    free(w);
    free(color);
    if (rc)
        return rc;
    f->caption = rpt_printf(&f->a,
                            "d_ff of each layer (layer 0 next to the embedding) from the resolved config; every "
                            "configuration has the same total, so the same parameters and FLOPs%s.",
                            uniform > 0 ? rpt_printf(&f->a, " as uniform (dashed, %d per layer)", uniform) : "");
    if (c->n_panels > 1 || left)
        f->note = rpt_printf(&f->a, "dff: drew %s (%d configurations%s); choose another with --arch/--scale/--sweep",
                             rpt_figure_panel_title(f, NULL, pg), drawn, left ? ", more left out" : "");
    return 0;
}
