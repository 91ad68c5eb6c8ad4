/* fig_delta.c: figure delta: each configuration's change against uniform
 * (wider_early_vs_late's allocations, schedule_ratio's schedules and
 * ratios), the mean of the per-seed differences with its 95% interval as
 * an error bar, beside the paper's Δ for the same comparison.  One panel:
 * the one with the most comparisons that have a value.  The numbers are
 * the tables' own (their findings), so figure and tables cannot disagree.
 * Must not: draw the paper's Δ as if it were a measurement of this
 * setting: the legend says where it comes from. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const TABLES[] = {"wider_early_vs_late", "schedule_ratio"};
#define N_TABLES 2

int rpt_fig_delta(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    f->title = "#gD against uniform, 95% intervals, and the paper's";
    f->ylabel = "#gD val ppl (config - uniform)";
    rpt_table t[N_TABLES];
    memset(t, 0, sizeof t);
    int rc = 0;
    for (int k = 0; k < N_TABLES && !rc; k++)
        rc = rpt_table_build(c, rpt_table_find(TABLES[k]), &t[k], e);
    /* the panel with the most comparisons that have a value */
    const char *panel = NULL;
    int most = 0, panels = 0;
    for (int k = 0; k < N_TABLES && !rc; k++)
        for (int i = 0; i < t[k].n_findings; i++) {
            const char *title = t[k].findings[i].panel;
            int n = 0, seen = 0;
            for (int k2 = 0; k2 < N_TABLES; k2++)
                for (int j = 0; j < t[k2].n_findings; j++) {
                    const rpt_finding *x = &t[k2].findings[j];
                    if (!strcmp(x->panel, title)) {
                        n += x->d.paired >= 0;
                        seen |= (k2 < k || (k2 == k && j < i));
                    }
                }
            panels += !seen && n > 0;
            if (n > most) {
                most = n;
                panel = title;
            }
        }
    if (!rc && !panel)
        f->note = "delta: no configuration has a value to compare with uniform";
    if (rc || !panel)
        goto done;
    char esc[256];
    rpt_pl_escape(esc, sizeof esc, panel);
    f->title = rpt_printf(&f->a, "#gD against uniform and the paper's: %s", esc);
    f->xticks = rpt_alloc(&f->a, sizeof *f->xticks * (size_t)most);
    rpt_series *ours = rpt_figure_series(f, "ours: mean over seeds, 95% interval", most, 1);
    rpt_series *paper = rpt_figure_series(f, "the paper (440M Transformer++, 30B tokens)", most, 0);
    if (!f->xticks || !ours || !paper) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto done;
    }
    int n = 0;
    for (int k = 0; k < N_TABLES; k++)
        for (int i = 0; i < t[k].n_findings && n < most; i++) {
            const rpt_finding *x = &t[k].findings[i];
            if (strcmp(x->panel, panel) || x->d.paired < 0)
                continue;
            f->xticks[n] = rpt_strdup(&f->a, x->what);
            ours->x[n] = n + 1;
            ours->y[n] = x->d.mean;
            ours->err[n] = x->d.n >= 2 ? x->d.hi - x->d.mean : NAN; /* the t interval is symmetric */
            paper->x[n] = n + 1.2;
            paper->y[n] = x->paper;
            n++;
        }
    f->n_xticks = ours->n = paper->n = n;
    ours->points = ours->no_line = 1;
    paper->points = paper->no_line = 1;
    paper->color = 1;
    int have_paper = 0;
    for (int i = 0; i < n; i++)
        have_paper |= isfinite(paper->y[i]);
    if (!have_paper)
        f->n--; /* no legend entry for a series with nothing drawn */
    if (panels > 1)
        f->note = rpt_printf(&f->a, "delta: drew %s (%d comparisons); choose another with --arch/--scale/--sweep",
                             panel, n);
done:
    for (int k = 0; k < N_TABLES; k++)
        rpt_table_clear(&t[k]);
    return rc;
}
