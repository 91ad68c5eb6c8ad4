/* figures.c: the registry of figures (--plot NAME), and how a figure of
 * one panel chooses and titles it.
 * Must not: draw (plot.c does). */
#include "reports/plot.h"

#include <string.h>

const rpt_figure_def rpt_figure_defs[] = {
    {"loss", "training loss against tokens, one line per job", rpt_fig_loss, RPT_USES_SERIES},
    {"dff", "MLP width d_ff per layer, one line per schedule", rpt_fig_dff, RPT_USES_TAPER | RPT_USES_SERIES},
    {"rho", "rho_MLP and rho_block per layer, one colour per schedule", rpt_fig_rho,
     RPT_USES_TAPER | RPT_USES_SERIES},
    {"ppl_ratio", "validation perplexity against taper strength, one line per schedule", rpt_fig_ppl_ratio,
     RPT_USES_PAPER},
    {"delta", "change against uniform per configuration with its 95% interval, beside the paper's", rpt_fig_delta,
     0},
};
const int rpt_n_figure_defs = (int)(sizeof rpt_figure_defs / sizeof rpt_figure_defs[0]);

const rpt_figure_def *rpt_figure_find(const char *name)
{
    for (int i = 0; i < rpt_n_figure_defs; i++)
        if (!strcmp(rpt_figure_defs[i].name, name))
            return &rpt_figure_defs[i];
    return NULL;
}

int rpt_figure_best_panel(const rpt_ctx *c, int (*counts)(const rpt_ctx *c, const rpt_group *g))
{
    int best = -1, most = 0;
    for (int pi = 0; pi < c->n_panels; pi++) {
        int n = 0;
        for (int i = 0; i < c->panels[pi].n_groups; i++)
            n += counts(c, &c->groups[c->panels[pi].groups[i]]) != 0;
        if (n > most) {
            most = n;
            best = pi;
        }
    }
    return best;
}

void rpt_figure_panel_title(rpt_figure *f, const char *what, const rpt_pgroup *pg)
{
    char t[256];
    rpt_pl_escape(t, sizeof t, rpt_panel_title(&f->a, pg->arch, pg->scale, pg->tokens_total));
    f->title = rpt_printf(&f->a, "%s: %s", what, t);
}
