/* figures.c: the registry of figures (--plot NAME).
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
