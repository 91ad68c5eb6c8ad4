/* fig_ppl.c: figure ppl_ratio: validation perplexity against the taper's
 * strength (start ratio - end ratio; 0 is the uniform model), one line per
 * schedule with seed error bars (sample std), for the panel with the most
 * tapered groups.  --paper adds the paper's Table 1 as dashed lines when
 * the panel is the paper's setting (440M Transformer++).
 * Must not: draw the paper's 440M perplexities over another scale. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double x, y, err;
} pt;

static int cmp_pt(const void *a, const void *b)
{
    double x = ((const pt *)a)->x, y = ((const pt *)b)->x;
    return (x > y) - (x < y);
}

static int has_ratio(const rpt_ctx *c, const rpt_group *g)
{
    (void)c;
    return rpt_is_ratio_schedule(g->schedule);
}

int rpt_fig_ppl_ratio(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    f->title = "Validation perplexity against taper strength";
    f->xlabel = "taper strength r#dstart#u - r#dend#u (0: uniform)";
    f->ylabel = "validation perplexity";
    const rpt_values *ppl;
    int rc = rpt_metric(c, "val", NULL, "ppl", &ppl, e);
    if (rc)
        return rc;
    int best = rpt_figure_best_panel(c, has_ratio);
    if (best < 0) {
        f->note = "ppl_ratio: no linear, cosine or sigmoid jobs";
        return 0;
    }
    const rpt_pgroup *pg = &c->panels[best];
    rpt_figure_panel_title(f, "Validation perplexity against taper strength", pg);
    rpt_stat uni;
    memset(&uni, 0, sizeof uni);
    for (int i = 0; i < pg->n_groups; i++)
        if (!strcmp(c->groups[pg->groups[i]].schedule, "uniform"))
            rpt_stat_group(c, &c->groups[pg->groups[i]], ppl, 1.0, &uni);
    double r0, r1;
    int paper_rows = 0; /* Table 1's ratio pairs */
    while (!rpt_paper_table1_ratio((size_t)paper_rows, &r0, &r1))
        paper_rows++;
    pt *pts = malloc(sizeof *pts * (size_t)(pg->n_groups + 1 + paper_rows));
    if (!pts)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    int paper = c->o.paper && !strcmp(pg->arch, RPT_PAPER_440M_ARCH) && !strcmp(pg->scale, RPT_PAPER_440M_SCALE);
    const char *sched;
    for (int k = 0; (sched = rpt_paper_table1_schedule((size_t)k)) && !rc; k++) {
        int n = 0;
        if (uni.n)
            pts[n++] = (pt){0, uni.mean, uni.std};
        for (int i = 0; i < pg->n_groups; i++) {
            const rpt_group *g = &c->groups[pg->groups[i]];
            if (strcmp(g->schedule, sched))
                continue;
            rpt_stat s;
            rpt_stat_group(c, g, ppl, 1.0, &s);
            if (s.n)
                pts[n++] = (pt){g->ratio_start - g->ratio_end, s.mean, s.std};
        }
        if (n > (uni.n ? 1 : 0)) {
            qsort(pts, (size_t)n, sizeof *pts, cmp_pt);
            rpt_series *s = rpt_figure_series(f, sched, n, 1);
            if (!s) {
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                break;
            }
            for (int i = 0; i < n; i++) {
                s->x[i] = pts[i].x;
                s->y[i] = pts[i].y;
                s->err[i] = pts[i].err;
            }
            s->color = k;
            s->points = 1;
        }
        if (!paper)
            continue;
        char label[64];
        snprintf(label, sizeof label, "paper %s", sched);
        rpt_series *s = rpt_figure_series(f, label, 1 + paper_rows, 0);
        if (!s) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        s->x[0] = 0;
        s->y[0] = rpt_paper_table1_uniform();
        for (int i = 0; i < paper_rows; i++) {
            rpt_paper_table1_ratio((size_t)i, &r0, &r1);
            s->x[i + 1] = r0 - r1;
            s->y[i + 1] = rpt_paper_table1(sched, r0, r1);
        }
        s->color = k;
        s->dashed = 1;
    }
    free(pts);
    if (!rc && c->o.paper && !paper)
        f->note = "ppl_ratio: the paper's Table 1 is for the 440M Transformer++; not drawn over this scale";
    return rc;
}
