/* t_ratio.c: table schedule_ratio, the paper's Table 1: rows are start ->
 * end ratios, columns the cosine / linear / sigmoid schedules, each cell
 * the validation perplexity and its change against the uniform model of
 * the same panel.  --paper adds, under each row, the paper's row and the
 * difference (ours - paper).
 * Must not: invent rows: a ratio appears when a job (or, with --paper,
 * the paper) has it. */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_SCHED 3 /* Table 1's schedules, rpt_paper_table1_schedule(0..2): the columns below */
#define C_RATIO 0
#define C_PPL(s) (1 + 2 * (s))
#define C_DELTA(s) (2 + 2 * (s))
#define C_N (1 + 2 * N_SCHED)

static const rpt_col COLS[C_N] = {
    {"ratio", "start -> end", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"cosine", "cosine", RPT_COL_STAT, -1, 2, 0, RPT_OURS, 0},
    {"cosine_delta", "Δ", RPT_COL_DELTA, 0, 2, 1, RPT_DERIVED, 0},
    {"linear", "linear", RPT_COL_STAT, -1, 2, 0, RPT_OURS, 0},
    {"linear_delta", "Δ", RPT_COL_DELTA, 0, 2, 1, RPT_DERIVED, 0},
    {"sigmoid", "sigmoid", RPT_COL_STAT, -1, 2, 0, RPT_OURS, 0},
    {"sigmoid_delta", "Δ", RPT_COL_DELTA, 0, 2, 1, RPT_DERIVED, 0},
};

typedef struct {
    double start, end;
} ratio;

static int cmp_ratio(const void *pa, const void *pb)
{
    const ratio *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->end < b->end) - (a->end > b->end);
}

static int same_ratio(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

static int find(const rpt_ctx *c, const rpt_pgroup *pg, const char *sched, double rs, double re)
{
    for (int i = 0; pg && i < pg->n_groups; i++) {
        const rpt_group *g = &c->groups[pg->groups[i]];
        if (!strcmp(g->schedule, sched) && (isnan(rs) || (same_ratio(g->ratio_start, rs) && same_ratio(g->ratio_end, re))))
            return pg->groups[i];
    }
    return -1;
}

static void ratio_text(char *out, size_t cap, double rs, double re)
{
    snprintf(out, cap, "%g -> %g", rs, re);
}

/* The rows' ratios: ours, and the paper's with --paper (even those we
 * lack), sorted, each once; *rs is the caller's to free. */
static int collect_ratios(const rpt_ctx *c, const rpt_pgroup *pg, ratio **rs_out, int *m_out, tlm_err *e)
{
    ratio r1;
    int paper_rows = 0;
    while (!rpt_paper_table1_ratio((size_t)paper_rows, &r1.start, &r1.end))
        paper_rows++;
    int cap = (pg ? pg->n_groups : 0) + paper_rows, n = 0;
    ratio *rs = calloc((size_t)cap + 1, sizeof *rs);
    if (!rs)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (int i = 0; pg && i < pg->n_groups; i++) {
        const rpt_group *g = &c->groups[pg->groups[i]];
        if (rpt_is_ratio_schedule(g->schedule))
            rs[n++] = (ratio){g->ratio_start, g->ratio_end};
    }
    for (int i = 0; c->o.paper && i < paper_rows; i++, n++)
        rpt_paper_table1_ratio((size_t)i, &rs[n].start, &rs[n].end);
    qsort(rs, (size_t)n, sizeof *rs, cmp_ratio);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!m || !same_ratio(rs[i].start, rs[m - 1].start) || !same_ratio(rs[i].end, rs[m - 1].end))
            rs[m++] = rs[i];
    *rs_out = rs;
    *m_out = m;
    return 0;
}

/* uniform, the reference of every column: our row, and with --paper the
 * paper's and the difference */
static void uniform_rows(const rpt_ctx *c, rpt_table *t, rpt_panel *p, const rpt_stat *uni, double pu)
{
    int r = rpt_row_add(t, p, RPT_OURS);
    rpt_set_text(t, p, r, C_RATIO, "uniform");
    for (int s = 0; s < N_SCHED; s++)
        rpt_set_stat(t, p, r, C_PPL(s), uni);
    if (!c->o.paper)
        return;
    int pr = rpt_row_add(t, p, RPT_PAPER), dr = rpt_row_add(t, p, RPT_DIFF);
    rpt_set_text(t, p, pr, C_RATIO, "uniform");
    rpt_set_text(t, p, dr, C_RATIO, "uniform");
    for (int s = 0; s < N_SCHED; s++) {
        rpt_set_num(p, pr, C_PPL(s), pu);
        if (uni->n)
            rpt_set_num(p, dr, C_PPL(s), uni->mean - pu);
    }
}

/* One ratio: our row (each schedule's perplexity and Δ), and with --paper
 * the paper's and the difference. */
static void ratio_rows(rpt_ctx *c, rpt_table *t, rpt_panel *p, const rpt_pgroup *pg, const rpt_values *ppl,
                       const ratio *ra, int ug, const rpt_stat *uni, double pu)
{
    char buf[64];
    int r = rpt_row_add(t, p, RPT_OURS);
    ratio_text(buf, sizeof buf, ra->start, ra->end);
    rpt_set_text(t, p, r, C_RATIO, "%s", buf);
    rpt_stat st[N_SCHED];
    rpt_paired dl[N_SCHED];
    for (int s = 0; s < N_SCHED; s++) {
        const char *sched = rpt_paper_table1_schedule((size_t)s);
        int g = find(c, pg, sched, ra->start, ra->end);
        memset(&st[s], 0, sizeof st[s]);
        if (g >= 0)
            rpt_stat_group(c, &c->groups[g], ppl, 1.0, &st[s]);
        rpt_set_stat(t, p, r, C_PPL(s), &st[s]);
        memset(&dl[s], 0, sizeof dl[s]);
        dl[s].paired = -1;
        if (g >= 0 && ug >= 0)
            rpt_paired_groups(c, &c->groups[g], &c->groups[ug], ppl, 1.0, &dl[s]);
        rpt_set_delta(t, p, r, C_DELTA(s), &dl[s], &st[s], uni, "uniform");
        if (g >= 0) /* a ratio only the paper has is no finding */
            rpt_finding_add(t, p, r, C_DELTA(s), rpt_printf(&t->a, "%s %s", sched, buf), "uniform", "ppl", -1, &dl[s],
                            rpt_paper_round(rpt_paper_table1(sched, ra->start, ra->end) - pu));
    }
    if (!c->o.paper)
        return;
    int pr = rpt_row_add(t, p, RPT_PAPER), dr = rpt_row_add(t, p, RPT_DIFF);
    rpt_set_text(t, p, pr, C_RATIO, "%s", buf);
    rpt_set_text(t, p, dr, C_RATIO, "%s", buf);
    for (int s = 0; s < N_SCHED; s++) {
        double pv = rpt_paper_table1(rpt_paper_table1_schedule((size_t)s), ra->start, ra->end);
        if (isnan(pv)) {
            rpt_set_missing(t, p, pr, C_PPL(s), "not in paper");
            continue;
        }
        rpt_set_num(p, pr, C_PPL(s), pv);
        rpt_set_num(p, pr, C_DELTA(s), rpt_paper_round(pv - pu));
        if (st[s].n)
            rpt_set_num(p, dr, C_PPL(s), st[s].mean - pv);
        if (dl[s].paired >= 0)
            rpt_set_num(p, dr, C_DELTA(s), dl[s].mean - rpt_paper_round(pv - pu));
    }
}

static int panel(rpt_ctx *c, rpt_table *t, const rpt_pgroup *pg, const rpt_values *ppl, tlm_err *e)
{
    const char *arch = pg ? pg->arch : RPT_PAPER_440M_ARCH, *scale = pg ? pg->scale : RPT_PAPER_440M_SCALE;
    int64_t tokens = pg ? pg->tokens_total : RPT_PAPER_440M_TOKENS;
    rpt_panel *p = rpt_panel_add_setting(t, arch, scale, tokens, pg != NULL, COLS, C_N);

    ratio *rs = NULL;
    int m, rc = collect_ratios(c, pg, &rs, &m, e);
    if (rc)
        return rc;
    rpt_stat uni;
    memset(&uni, 0, sizeof uni);
    int ug = find(c, pg, "uniform", NAN, NAN);
    if (ug >= 0)
        rpt_stat_group(c, &c->groups[ug], ppl, 1.0, &uni);
    double pu = rpt_paper_table1_uniform();
    uniform_rows(c, t, p, &uni, pu);
    for (int i = 0; i < m; i++)
        ratio_rows(c, t, p, pg, ppl, &rs[i], ug, &uni, pu);
    free(rs);
    rpt_note_paper_setting(c, t, p, arch, scale, tokens);
    return 0;
}

static int has_taper(const rpt_group *g) { return rpt_is_ratio_schedule(g->schedule); }

int rpt_build_ratio(rpt_ctx *c, rpt_table *t, tlm_err *e)
{
    const rpt_values *ppl;
    int rc = rpt_metric(c, "val", NULL, "ppl", &ppl, e);
    if (rc || (rc = rpt_build_panels(c, t, has_taper, panel, ppl, e)))
        return rc;
    rpt_note(t, NULL,
             "Cells: validation perplexity at each job's last evaluation (mean ± sample std over seeds, n) and "
             "Δ, its change against the uniform model of the same panel (negative: the taper helps).");
    rpt_note(t, NULL, "%s", RPT_DELTA_NOTE);
    if (c->o.paper)
        rpt_note(t, NULL, "Paper: Table 1 of Tapered Language Models (440M Transformer++, uniform 16.28).");
    return 0;
}
