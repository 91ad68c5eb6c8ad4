/* t_wider.c: table wider_early_vs_late, the paper's Figure 2: uniform
 * against blocks schedules that widen the early, middle or late third of
 * the layers, validation perplexity and its change against uniform.
 * A blocks job is placed by where its widest group sits (rpt_blocks_kind),
 * not by its label.
 * Must not: mix panels (a 440M uniform is no reference for a tiny model). */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_ALLOC, C_GROUPS, C_PPL, C_DELTA, C_P_PPL, C_P_DELTA, C_D_PPL, C_D_DELTA, C_N };

static const rpt_col COLS[C_N] = {
    {"allocation", "allocation", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"groups", "groups", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"val_ppl", "val ppl", RPT_COL_STAT, -1, 2, 0, RPT_OURS, 0},
    {"delta_vs_uniform", "Δ vs uniform", RPT_COL_DELTA, 0, 2, 1, RPT_DERIVED, 0},
    {"paper_val_ppl", "paper val ppl", RPT_COL_NUM, 0, 2, 0, RPT_PAPER, 0},
    {"paper_delta", "paper Δ", RPT_COL_NUM, 0, 2, 1, RPT_PAPER, 0},
    {"val_ppl_minus_paper", "val ppl − paper", RPT_COL_NUM, 0, 2, 1, RPT_DIFF, 0},
    {"delta_minus_paper", "Δ − paper Δ", RPT_COL_NUM, 0, 2, 1, RPT_DIFF, 0},
};

static const char *const KINDS[] = {"uniform", "wider-early", "wider-middle", "wider-late"};

static int kind_rank(const char *kind)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(kind, KINDS[i]))
            return i;
    return 4; /* flat and anything else last */
}

typedef struct {
    int group; /* -1: a row the sweep lacks */
    const char *kind;
} wrow;

static int cmp_wrow(const void *pa, const void *pb, void *ctx)
{
    const rpt_ctx *c = ctx;
    const wrow *a = pa, *b = pb;
    int r = kind_rank(a->kind) - kind_rank(b->kind);
    if (r)
        return r;
    if (a->group < 0 || b->group < 0)
        return (a->group >= 0) - (b->group >= 0);
    const char *ga = c->groups[a->group].groups, *gb = c->groups[b->group].groups;
    return strcmp(ga ? ga : "", gb ? gb : "");
}

static void fill_row(rpt_ctx *c, rpt_table *t, rpt_panel *p, const wrow *w, const rpt_values *ppl,
                     const rpt_stat *uni, int uniform)
{
    int r = rpt_row_add(t, p, RPT_OURS);
    rpt_set_text(t, p, r, C_ALLOC, "%s", w->kind);
    rpt_stat s;
    if (w->group >= 0) {
        const rpt_group *g = &c->groups[w->group];
        if (g->groups)
            rpt_set_text(t, p, r, C_GROUPS, "%s", g->groups);
        rpt_stat_group(c, g, ppl, 1.0, &s);
    } else {
        memset(&s, 0, sizeof s); /* jobs = 0: not in sweep */
    }
    rpt_set_stat(t, p, r, C_PPL, &s);
    int is_uniform = !strcmp(w->kind, "uniform");
    double delta = NAN;
    if (!is_uniform) {
        /* paired by seed against uniform: the seed's own luck cancels */
        rpt_paired d;
        memset(&d, 0, sizeof d);
        d.paired = -1;
        if (w->group >= 0 && uniform >= 0)
            rpt_paired_groups(c, &c->groups[w->group], &c->groups[uniform], ppl, 1.0, &d);
        rpt_set_delta(t, p, r, C_DELTA, &d, &s, uni, "uniform");
        if (w->group >= 0) /* a row the sweep lacks is no finding */
            rpt_finding_add(t, p, r, C_DELTA, w->kind, "uniform", "ppl", -1, &d,
                            rpt_paper_round(rpt_paper_fig2(w->kind) - rpt_paper_fig2("uniform")));
        delta = d.paired >= 0 ? d.mean : NAN;
    }
    if (!c->o.paper)
        return;
    double pp = rpt_paper_fig2(w->kind), pu = rpt_paper_fig2("uniform");
    if (isnan(pp)) {
        rpt_set_missing(t, p, r, C_P_PPL, "not in paper");
        return;
    }
    rpt_set_num(p, r, C_P_PPL, pp);
    if (!is_uniform)
        rpt_set_num(p, r, C_P_DELTA, rpt_paper_round(pp - pu));
    if (s.n)
        rpt_set_num(p, r, C_D_PPL, s.mean - pp);
    if (!isnan(delta))
        rpt_set_num(p, r, C_D_DELTA, delta - rpt_paper_round(pp - pu));
}

static int panel(rpt_ctx *c, rpt_table *t, const rpt_pgroup *pg, const rpt_values *ppl, tlm_err *e)
{
    const char *arch = pg ? pg->arch : RPT_PAPER_440M_ARCH, *scale = pg ? pg->scale : RPT_PAPER_440M_SCALE;
    int64_t tokens = pg ? pg->tokens_total : RPT_PAPER_440M_TOKENS;
    int n_cols = c->o.paper ? C_N : C_P_PPL;
    rpt_panel *p = rpt_panel_add_setting(t, arch, scale, tokens, pg != NULL, COLS, n_cols);

    /* rows: uniform, then each blocks group, with a placeholder for a third the sweep lacks */
    int cap = (pg ? pg->n_groups : 0) + 4, n = 0;
    wrow *rows = calloc((size_t)cap, sizeof *rows);
    if (!rows)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    int uniform = -1;
    for (int i = 0; pg && i < pg->n_groups; i++) {
        const rpt_group *g = &c->groups[pg->groups[i]];
        if (!strcmp(g->schedule, "uniform")) {
            uniform = pg->groups[i];
        } else if (!strcmp(g->schedule, "blocks")) {
            const char *k = rpt_blocks_kind(g->groups);
            rows[n++] = (wrow){pg->groups[i], k ? k : "blocks"};
        }
    }
    rows[n++] = (wrow){uniform, "uniform"};
    for (int k = 1; k < 4; k++) {
        int have = 0;
        for (int i = 0; i < n && !have; i++)
            have = !strcmp(rows[i].kind, KINDS[k]);
        if (!have)
            rows[n++] = (wrow){-1, KINDS[k]};
    }
    qsort_r(rows, (size_t)n, sizeof *rows, cmp_wrow, c);

    rpt_stat uni;
    memset(&uni, 0, sizeof uni);
    if (uniform >= 0)
        rpt_stat_group(c, &c->groups[uniform], ppl, 1.0, &uni);
    for (int i = 0; i < n; i++)
        fill_row(c, t, p, &rows[i], ppl, &uni, uniform);
    free(rows);

    rpt_note_paper_setting(c, t, p, arch, scale, tokens);
    return 0;
}

static int is_blocks(const rpt_group *g) { return !strcmp(g->schedule, "blocks"); }

int rpt_build_wider(rpt_ctx *c, rpt_table *t, tlm_err *e)
{
    const rpt_values *ppl;
    int rc = rpt_metric(c, "val", NULL, "ppl", &ppl, e);
    if (rc || (rc = rpt_build_panels(c, t, is_blocks, panel, ppl, e)))
        return rc;
    rpt_note(t, NULL, "val ppl: validation perplexity at each job's last evaluation; seeds as mean ± sample std (n).");
    rpt_note(t, NULL, "%s", RPT_DELTA_NOTE);
    rpt_note(t, NULL, "Allocation is read from the blocks groups: the third of the layers holding the widest group.");
    if (c->o.paper)
        rpt_note(t, NULL,
                 "Paper: Figure 2 of Tapered Language Models (group multipliers not confirmed by our sources; one "
                 "summary quotes 15.96 -> 15.64 for wider-early, the figure says 16.28 -> 15.96).");
    return 0;
}
