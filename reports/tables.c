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
    if (c->n_left_out && t->n_panels)
        rpt_note(t, NULL, "%s", rpt_left_out_text(c, &t->a));
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

int rpt_paper_tokenizer(const rpt_ctx *c, int job)
{
    /* read here, for the few panels --paper asks about, not with every job */
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->h, "SELECT json_extract(config, '$.tokenizer') FROM jobs WHERE key = ?1 AND json_valid(config)",
                           -1, &s, NULL) != SQLITE_OK)
        return 1;
    sqlite3_bind_text(s, 1, c->jobs[job].key, -1, SQLITE_STATIC);
    const unsigned char *t = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_text(s, 0) : NULL;
    int paper = !t || !strncmp((const char *)t, "llama", 5);
    sqlite3_finalize(s);
    return paper;
}

int rpt_paper_setting(const rpt_ctx *c, const rpt_pgroup *pg)
{
    if (!pg || strcmp(pg->arch, RPT_PAPER_440M_ARCH) || strcmp(pg->scale, RPT_PAPER_440M_SCALE) ||
        pg->tokens_total != RPT_PAPER_440M_TOKENS || !pg->n_groups)
        return 0;
    return rpt_paper_tokenizer(c, c->groups[pg->groups[0]].jobs[0]);
}

void rpt_note_paper_setting(const rpt_ctx *c, rpt_table *t, rpt_panel *p, const rpt_pgroup *pg)
{
    if (c->o.paper && !rpt_paper_setting(c, pg))
        rpt_note(t, p,
                 "The paper's figures are for the 440M Transformer++ at 30B Llama 3 tokens: in another setting "
                 "compare the sign and size of Δ with the paper's Δ, not the perplexities (ours − paper is not "
                 "computed).");
}

const char *rpt_left_out_text(const rpt_ctx *c, rpt_arena *a)
{
    int n = c->n_left_out;
    if (c->o.sweep)
        return rpt_printf(a,
                          "Left out: %d job%s that an earlier definition of sweep %s listed and the current one "
                          "does not (sweep_jobs.active = 0 in results.db).",
                          n, n == 1 ? "" : "s", c->o.sweep);
    return rpt_printf(a,
                      "Left out: %d job%s that an earlier definition of a sweep listed and no current one does "
                      "(sweep_jobs.active = 0 in results.db): the tables read the latest definition of each sweep.",
                      n, n == 1 ? "" : "s");
}
