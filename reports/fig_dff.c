/* fig_dff.c: figure dff: the MLP width d_ff of every layer, one line per
 * schedule of one panel (architecture, scale, tokens): the shape of each
 * taper at a glance.  Widths come from jobs.widths (written by tlmd from
 * the resolved config), so pending jobs are drawn too.
 * Must not: put models of different depth on one plot. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LAYERS 512

static int has_widths(const rpt_ctx *c, const rpt_group *g) { return c->jobs[g->jobs[0]].widths != NULL; }

int rpt_fig_dff(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    f->xlabel = "layer";
    f->ylabel = "MLP width d#dff#u";
    f->ylo_hint = 0;
    /* the panel with the most schedules */
    int best = rpt_figure_best_panel(c, has_widths);
    if (best < 0) {
        f->title = "Per-layer MLP width";
        f->note = "dff: no job has per-layer widths";
        return 0;
    }
    const rpt_pgroup *pg = &c->panels[best];
    rpt_figure_panel_title(f, "Per-layer MLP width", pg);
    double w[MAX_LAYERS];
    int drawn = 0, left = 0;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < pg->n_groups; i++) {
            const rpt_group *g = &c->groups[pg->groups[i]];
            if (rpt_group_rank(c, g, 1) != r) /* uniform, the taper, blocks, the other tapers */
                continue;
            int n;
            rpt_job_widths(&c->jobs[g->jobs[0]], w, MAX_LAYERS, &n);
            if (n == 0)
                continue;
            if (drawn >= c->o.max_series) {
                left++;
                continue;
            }
            rpt_series *s = rpt_figure_series(f, g->label, n, 0);
            if (!s)
                return tlm_errf(e, TLM_ENOMEM, "out of memory");
            for (int l = 0; l < n; l++) {
                s->x[l] = l;
                s->y[l] = w[l];
            }
            s->points = 1;
            drawn++;
        }
    if (c->n_panels > 1 || left)
        f->note = rpt_printf(&f->a, "dff: drew %s (%d schedules%s); choose another with --arch/--scale/--sweep",
                             rpt_panel_title(&f->a, pg->arch, pg->scale, pg->tokens_total), drawn,
                             left ? ", more left out" : "");
    return 0;
}
