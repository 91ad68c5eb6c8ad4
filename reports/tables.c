/* tables.c: the registry of tables (names as the design contract spells
 * them), the one entry point that builds any of them, and what the tables
 * that compare with the paper do alike (their panels, the setting note).
 * Must not: render. */
#include "reports/rpt.h"

#include <string.h>

const rpt_table_def rpt_table_defs[] = {
    {"wider_early_vs_late", "uniform vs wider-early/middle/late blocks: val ppl and change (paper Figure 2)",
     "Wider early vs late: validation perplexity against uniform", rpt_build_wider, RPT_USES_PAPER},
    {"schedule_ratio", "start->end ratio x cosine/linear/sigmoid: val ppl and change vs uniform (paper Table 1)",
     "Taper schedule x start -> end ratio: validation perplexity", rpt_build_ratio, RPT_USES_PAPER},
    {"main", "per scale, architecture x {uniform, tapered}: WikiText, LAMBADA, commonsense (paper Table 2)",
     "Main results: uniform vs tapered", rpt_build_main, RPT_USES_PAPER | RPT_USES_TAPER},
    {"alignment", "rho_MLP and rho_block per layer for chosen jobs (paper Section 5)",
     "Alignment of updates with the residual stream, per layer", rpt_build_alignment,
     RPT_USES_PAPER | RPT_USES_TAPER},
    {"niah", "needle-in-a-haystack accuracy, task x context, uniform vs tapered (paper Table 3)",
     "Needle in a haystack: accuracy by context length", rpt_build_niah, RPT_USES_PAPER | RPT_USES_TAPER},
    {"runs", "every job: state, attempts, tokens, last loss, failure reason", "Runs", rpt_build_runs, 0},
};
const int rpt_n_table_defs = (int)(sizeof rpt_table_defs / sizeof rpt_table_defs[0]);

const rpt_table_def *rpt_table_find(const char *name)
{
    for (int i = 0; i < rpt_n_table_defs; i++)
        if (!strcmp(rpt_table_defs[i].name, name))
            return &rpt_table_defs[i];
    return NULL;
}

int rpt_table_build(rpt_ctx *c, const rpt_table_def *def, rpt_table *t, tlm_err *e)
{
    rpt_table_init(t, def->name, def->title);
    t->db_path = c->db_path;
    t->sweep = c->o.sweep;
    int rc = def->build(c, t, e);
    if (rc)
        return rc;
    rpt_mark_best(t);
    return rpt_table_status(t, e);
}

int rpt_build_panels(rpt_ctx *c, rpt_table *t, int (*want)(const rpt_group *g), rpt_panel_fn build,
                     const rpt_values *v, tlm_err *e)
{
    int panels = 0, rc;
    for (int pi = 0; pi < c->n_panels; pi++) {
        const rpt_pgroup *pg = &c->panels[pi];
        int wanted = 0;
        for (int i = 0; i < pg->n_groups && !wanted; i++)
            wanted = want(&c->groups[pg->groups[i]]);
        if (!wanted)
            continue;
        if ((rc = build(c, t, pg, v, e)))
            return rc;
        panels++;
    }
    return !panels && c->o.paper ? build(c, t, NULL, v, e) : 0;
}

void rpt_note_paper_setting(const rpt_ctx *c, rpt_table *t, rpt_panel *p, const char *arch, const char *scale,
                            int64_t tokens)
{
    if (c->o.paper && (strcmp(arch, RPT_PAPER_440M_ARCH) || strcmp(scale, RPT_PAPER_440M_SCALE) ||
                       tokens != RPT_PAPER_440M_TOKENS))
        rpt_note(t, p,
                 "The paper's figures are for the 440M Transformer++ at 30B tokens: in another setting compare "
                 "the sign and size of Δ, not the perplexities.");
}
