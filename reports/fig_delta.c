/* fig_delta.c: figure delta: each configuration's change against uniform
 * (wider_early_vs_late's allocations, schedule_ratio's schedules and
 * ratios) as a forest plot: one row per comparison, labels read
 * horizontally, the mean of the per-seed differences with its 95% interval
 * as a bar, the paper's Δ for the same comparison beside it as an open
 * diamond, a line at 0.  One axes per setting (the four with the most
 * comparisons that have a value).  The numbers are the tables' own (their
 * findings), so figure and tables cannot disagree.
 * Must not: draw the paper's Δ as if it were a measurement of this
 * setting: the legend and the caption say where it comes from. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const TABLES[] = {"wider_early_vs_late", "schedule_ratio"};
#define N_TABLES 2
#define MAX_AXES 4
#define MAX_ROWS 24

typedef struct {
    const char *panel;
    int n; /* comparisons with a value */
} pcount;

/* One setting's rows: ours with its interval, the paper's beside.  *pairs
 * is the most pairs of a row, *single whether a row had one pair only. */
static int setting_axes(rpt_figure *f, const rpt_table *t, const char *panel, int rows, int a, const int *color,
                        int *pairs, int *single, tlm_err *e)
{
    rpt_axes *ax = rpt_figure_axes(f, panel);
    const char **cats = rpt_alloc(&f->a, sizeof *cats * (size_t)rows);
    if (!ax || !cats)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    ax->ycats = cats;
    ax->n_ycats = rows;
    ax->xlabel = "\xce\x94 val ppl vs uniform";
    ax->xref = 0;
    int row = 0;
    for (int k = 0; k < N_TABLES; k++)
        for (int i = 0; i < t[k].n_findings && row < rows; i++) {
            const rpt_finding *x = &t[k].findings[i];
            if (strcmp(x->panel, panel) || x->d.paired < 0)
                continue;
            cats[row] = rpt_figure_label(f, x->what);
            rpt_series *s = rpt_figure_series(f, NULL, a, 1, 1);
            rpt_series *p = isfinite(x->paper) ? rpt_figure_series(f, NULL, a, 1, 0) : NULL;
            if (!s || (isfinite(x->paper) && !p))
                return tlm_errf(e, TLM_ENOMEM, "out of memory");
            s->x[0] = x->d.mean;
            s->y[0] = row + 1 - 0.12;
            if (x->d.n >= 2) { /* the t interval */
                s->lo[0] = x->d.lo;
                s->hi[0] = x->d.hi;
                *pairs = x->d.n > *pairs ? x->d.n : *pairs;
            } else {
                *single = 1;
            }
            s->line = 0;
            s->marker = RPT_MARK_CIRCLE;
            s->bars = RPT_BAR_X;
            s->color = x->group >= 0 ? color[x->group] : 1;
            if (p) {
                p->x[0] = x->paper;
                p->y[0] = row + 1 + 0.2;
                p->line = 0;
                p->marker = RPT_MARK_DIAMOND;
                p->hollow = 1;
                p->color = 0;
            }
            row++;
        }
    return 0;
}

/* The legend says what the marks are (the rows say which configuration),
 * the caption what the bars mean. */
static int legend_caption(rpt_figure *f, int pairs, int single, tlm_err *e)
{
    rpt_series *o = rpt_figure_series(f, "ours (95% CI)", 0, 0, 0);
    rpt_series *p = rpt_figure_series(f, "the paper (440M)", 0, 0, 0);
    if (!o || !p)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    o->line = p->line = 0;
    o->marker = RPT_MARK_CIRCLE;
    o->bars = RPT_BAR_X;
    o->color = 0;
    p->marker = RPT_MARK_DIAMOND;
    p->hollow = 1;
    p->color = 0;
    f->caption = rpt_printf(&f->a,
                            "Dot: the mean over seeds of each seed's difference from uniform (same seed, same data "
                            "order; negative: better than uniform); bar: its 95%% Student-t interval (%d pairs at "
                            "most)%s. Open diamond: the paper's change for the same comparison (440M Transformer++, "
                            "30B tokens; token-level perplexity): compare the sign, not the size.",
                            pairs, single ? "; no bar: one pair, no interval" : "");
    return 0;
}

int rpt_fig_delta(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    f->title = "Change against uniform, beside the paper's";
    f->sharex = 1; /* one x for every panel: architectures' changes compared by eye */
    rpt_table t[N_TABLES];
    memset(t, 0, sizeof t);
    int *color = NULL, rc = 0;
    for (int k = 0; k < N_TABLES && !rc; k++)
        rc = rpt_table_build(c, rpt_table_find(TABLES[k]), &t[k], e);
    if (!rc)
        rc = rpt_config_colors(c, &color, e);
    /* the settings, in the tables' order, with their comparisons */
    int n_all = 0, np = 0;
    for (int k = 0; k < N_TABLES; k++)
        n_all += t[k].n_findings;
    pcount *pc = rc ? NULL : calloc((size_t)(n_all ? n_all : 1), sizeof *pc);
    if (!rc && !pc)
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (int k = 0; k < N_TABLES && !rc; k++)
        for (int i = 0; i < t[k].n_findings; i++) {
            const rpt_finding *x = &t[k].findings[i];
            int at = 0;
            while (at < np && strcmp(pc[at].panel, x->panel))
                at++;
            if (at == np)
                pc[np++] = (pcount){x->panel, 0};
            pc[at].n += x->d.paired >= 0;
        }
    /* the MAX_AXES settings with the most, in order */
    int nc = 0, more = 0, pairs = 0, single = 0, rows_left = 0;
    for (int i = 0; i < np && !rc; i++) {
        if (!pc[i].n)
            continue;
        int better = 0;
        for (int q = 0; q < np; q++)
            better += pc[q].n > pc[i].n || (pc[q].n == pc[i].n && q < i);
        if (better >= MAX_AXES) {
            more++;
            continue;
        }
        int rows = pc[i].n < MAX_ROWS ? pc[i].n : MAX_ROWS;
        rows_left += pc[i].n - rows;
        rc = setting_axes(f, t, pc[i].panel, rows, nc++, color, &pairs, &single, e);
    }
    if (!rc && !nc)
        f->note = "delta: no configuration has a value to compare with uniform";
    if (!rc && nc)
        rc = legend_caption(f, pairs, single, e);
    if (!rc && (more || rows_left))
        f->note = rpt_printf(
            &f->a, "delta: drew %d setting%s%s%s; choose with --arch/--scale/--sweep", nc, nc == 1 ? "" : "s",
            more ? rpt_printf(&f->a, ", %d more left out", more) : "",
            rows_left ? rpt_printf(&f->a, ", %d comparisons past %d rows left out", rows_left, MAX_ROWS) : "");
    free(pc);
    free(color);
    for (int k = 0; k < N_TABLES; k++)
        rpt_table_clear(&t[k]);
    return rc;
}
