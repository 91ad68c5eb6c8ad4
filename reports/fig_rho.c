/* fig_rho.c: figure rho: rho_MLP (solid) and rho_block (dashed) per
 * layer, one colour per schedule (seeds averaged), for the first panel
 * that has the statistics: uniform and the taper first, the same choice as
 * the alignment table.
 * Must not: mix models of different depth. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int rpt_fig_rho(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    f->title = "Alignment with the residual stream";
    f->xlabel = "layer";
    f->ylabel = "cosine: #gr#dMLP#u (solid), #gr#dblock#u (dashed)";
    int max_groups = c->o.max_series / 2 > 0 ? c->o.max_series / 2 : 1;
    for (int pi = 0; pi < c->n_panels && f->n == 0; pi++) {
        const rpt_pgroup *pg = &c->panels[pi];
        int drawn = 0, probed = 0;
        for (int r = 0; r < 3 && drawn < max_groups; r++)
            for (int i = 0; i < pg->n_groups && drawn < max_groups; i++) {
                const rpt_group *g = &c->groups[pg->groups[i]];
                if (rpt_group_rank(c, g, 0) != r)
                    continue;
                if (++probed > 200)
                    break; /* a database of thousands of groups without rho: stop looking */
                double *v[2];
                int n[2], rc = rpt_group_layer_mean(c, g, "rho_mlp", &v[0], &n[0], e);
                if (rc)
                    return rc;
                if (n[0] == 0) {
                    free(v[0]);
                    continue;
                }
                if ((rc = rpt_group_layer_mean(c, g, "rho_block", &v[1], &n[1], e))) {
                    free(v[0]);
                    return rc;
                }
                for (int k = 0; k < 2; k++) {
                    char label[128];
                    snprintf(label, sizeof label, "%s %s", g->label, k ? "block" : "MLP");
                    rpt_series *s = n[k] ? rpt_figure_series(f, label, n[k], 0) : NULL;
                    if (n[k] && !s) {
                        free(v[0]);
                        free(v[1]);
                        return tlm_errf(e, TLM_ENOMEM, "out of memory");
                    }
                    if (!s)
                        continue;
                    for (int l = 0; l < n[k]; l++) {
                        s->x[l] = l;
                        s->y[l] = v[k][l];
                    }
                    s->color = drawn;
                    s->dashed = k;
                    s->points = 1;
                }
                free(v[0]);
                free(v[1]);
                drawn++;
            }
        if (drawn) {
            char t[256];
            rpt_pl_escape(t, sizeof t, rpt_panel_title(&f->a, pg->arch, pg->scale, pg->tokens_total));
            f->title = rpt_printf(&f->a, "Alignment with the residual stream: %s", t);
        }
    }
    if (f->n == 0)
        f->note = "rho: no job has rho_mlp layer statistics (the alignment evaluation suite)";
    return 0;
}
