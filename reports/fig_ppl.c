/* fig_ppl.c: figure ppl_ratio, the paper's Table 1 drawn: validation
 * perplexity against the taper's strength (start ratio - end ratio), one
 * line per schedule, uniform as a line across with its seeds' min-max
 * shaded, per setting with ratio schedules (up to four), beside the
 * paper's Table 1 on axes of its own (its 440M token-level perplexities
 * share no scale with a small byte-level model's).  Ours: the mean over
 * finished seeds with a bar from the lowest to the highest seed; the
 * schedules are set a little apart along x so that bars at one strength do
 * not hide each other.
 * Must not: draw the paper's values on our axes. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OURS 4
#define N_SCHED 3
/* the schedules' colours: the palette's first three after black */
static const int SCHED_COLOR[N_SCHED] = {1, 2, 3};

typedef struct {
    double x, y, lo, hi;
} pt;

static int cmp_pt(const void *a, const void *b)
{
    double x = ((const pt *)a)->x, y = ((const pt *)b)->x;
    return (x > y) - (x < y);
}

static int has_ratio(const rpt_ctx *c, const rpt_group *g)
{
    return rpt_is_ratio_schedule(g->schedule) && rpt_group_done(c, g);
}

/* A group's mean over finished seeds, its lowest and highest seed. */
static int group_value(const rpt_ctx *c, const rpt_group *g, const rpt_values *v, pt *p)
{
    rpt_stat st;
    rpt_stat_group(c, g, v, 1.0, &st);
    if (!st.n)
        return 0;
    p->y = st.mean;
    p->lo = INFINITY;
    p->hi = -INFINITY;
    for (int j = 0; j < g->n_jobs; j++) {
        int job = g->jobs[j];
        if (c->jobs[job].status == RPT_DONE && v->state[job] == RPT_V_OK) {
            p->lo = fmin(p->lo, v->v[job]);
            p->hi = fmax(p->hi, v->v[job]);
        }
    }
    if (st.n < 2)
        p->lo = p->hi = NAN;
    return st.n;
}

/* The uniform line across [x0, x1] of axes a, its band the seeds' spread. */
static int uniform_line(rpt_figure *f, int a, double x0, double x1, const pt *u)
{
    rpt_series *s = rpt_figure_series(f, "uniform", a, 2, 1);
    if (!s)
        return -1;
    for (int k = 0; k < 2; k++) {
        s->x[k] = k ? x1 : x0;
        s->y[k] = u->y;
        s->lo[k] = u->lo;
        s->hi[k] = u->hi;
    }
    s->color = 0;
    s->dashed = 1;
    s->band = 1;
    return 0;
}

#define XLABEL "taper strength r" RPT_SUB("start") " \xe2\x88\x92 r" RPT_SUB("end")

/* A setting's axes: uniform across, each schedule's line over its
 * strengths.  *drawn counts the schedules drawn, *seeds the most seeds of
 * a point, *uni_band whether uniform had two or more. */
static int ours_axes(rpt_ctx *c, rpt_figure *f, const rpt_pgroup *pg, int a, const rpt_values *ppl, int *drawn,
                     int *seeds, int *uni_band, int *dodged, tlm_err *e)
{
    rpt_axes *ax = rpt_figure_axes(f, rpt_figure_panel_title(f, "ours", pg));
    pt *pts = malloc(sizeof *pts * (size_t)(pg->n_groups + 1));
    if (!ax || !pts) {
        free(pts);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    ax->xlabel = XLABEL;
    ax->ylabel = "validation perplexity";
    double x0 = INFINITY, x1 = -INFINITY;
    for (int i = 0; i < pg->n_groups; i++) {
        const rpt_group *g = &c->groups[pg->groups[i]];
        if (rpt_is_ratio_schedule(g->schedule)) {
            x0 = fmin(x0, g->ratio_start - g->ratio_end);
            x1 = fmax(x1, g->ratio_start - g->ratio_end);
        }
    }
    int schedules = 0; /* set apart only when there are several */
    for (int k = 0; k < N_SCHED; k++)
        for (int i = 0; i < pg->n_groups; i++)
            if (!strcmp(c->groups[pg->groups[i]].schedule, rpt_paper_table1_schedule((size_t)k))) {
                schedules++;
                break;
            }
    double dodge = schedules > 1 ? 0.025 * (x1 > x0 ? x1 - x0 : 1) : 0;
    *dodged |= schedules > 1;
    /* uniform across the strengths of ours and of Table 1: both axes span the same x */
    double r0, r1, p0 = x0, p1 = x1;
    for (size_t i = 0; !rpt_paper_table1_ratio(i, &r0, &r1); i++) {
        p0 = fmin(p0, r0 - r1);
        p1 = fmax(p1, r0 - r1);
    }
    int rc = 0, got;
    for (int i = 0; i < pg->n_groups && !rc; i++) {
        const rpt_group *g = &c->groups[pg->groups[i]];
        pt u;
        if (!strcmp(g->schedule, "uniform") && (got = group_value(c, g, ppl, &u))) {
            if (uniform_line(f, a, p0, p1, &u))
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            *uni_band |= got >= 2;
            break;
        }
    }
    for (int k = 0; k < N_SCHED && !rc; k++) {
        const char *sched = rpt_paper_table1_schedule((size_t)k);
        int n = 0;
        for (int i = 0; i < pg->n_groups; i++) {
            const rpt_group *g = &c->groups[pg->groups[i]];
            if (strcmp(g->schedule, sched) || !(got = group_value(c, g, ppl, &pts[n])))
                continue;
            pts[n++].x = g->ratio_start - g->ratio_end + (k - 1) * dodge;
            *seeds = got > *seeds ? got : *seeds;
        }
        if (!n)
            continue;
        qsort(pts, (size_t)n, sizeof *pts, cmp_pt);
        rpt_series *s = rpt_figure_series(f, sched, a, n, 1);
        if (!s) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        for (int i = 0; i < n; i++) {
            s->x[i] = pts[i].x;
            s->y[i] = pts[i].y;
            s->lo[i] = pts[i].lo;
            s->hi[i] = pts[i].hi;
        }
        s->color = SCHED_COLOR[k];
        s->marker = RPT_MARK_CIRCLE;
        s->bars = RPT_BAR_Y;
        (*drawn)++;
    }
    free(pts);
    return rc;
}

/* Table 1 on axes of its own. */
static int paper_axes(rpt_figure *f, tlm_err *e)
{
    rpt_axes *ax = rpt_figure_axes(f, "the paper: 440M Transformer++, 30B tokens");
    int rows = 0;
    double r0, r1;
    while (!rpt_paper_table1_ratio((size_t)rows, &r0, &r1))
        rows++;
    if (!ax || !rows)
        return 0;
    int a = f->n_axes - 1;
    ax->xlabel = XLABEL;
    ax->ylabel = "validation perplexity";
    for (int k = 0; k < N_SCHED; k++) {
        rpt_series *s = rpt_figure_series(f, rpt_paper_table1_schedule((size_t)k), a, rows, 0);
        if (!s)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        for (int i = 0; i < rows; i++) {
            rpt_paper_table1_ratio((size_t)i, &r0, &r1);
            s->x[i] = r0 - r1;
            s->y[i] = rpt_paper_table1(rpt_paper_table1_schedule((size_t)k), r0, r1);
        }
        s->color = SCHED_COLOR[k];
        s->marker = RPT_MARK_DIAMOND;
        s->hollow = 1;
    }
    rpt_paper_table1_ratio(0, &r0, &r1);
    double lo = r0 - r1;
    rpt_paper_table1_ratio((size_t)rows - 1, &r0, &r1);
    pt u = {0, rpt_paper_table1_uniform(), NAN, NAN};
    if (uniform_line(f, a, lo, r0 - r1, &u))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    f->s[f->n - 1].band = 0;
    return 0;
}

int rpt_fig_ppl_ratio(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    int panels[MAX_OURS], np = rpt_figure_begin(f, "Validation perplexity against taper strength (paper Table 1)",
                                          "ppl_ratio: no linear, cosine or sigmoid jobs", c,
                                          has_ratio, MAX_OURS, panels);
    if (!np)
        return 0;
    const rpt_values *ppl;
    int rc = rpt_metric(c, "val", NULL, "ppl", &ppl, e);
    int drawn = 0, seeds = 0, uni_band = 0, dodged = 0;
    for (int a = 0; a < np && !rc; a++)
        rc = ours_axes(c, f, &c->panels[panels[a]], a, ppl, &drawn, &seeds, &uni_band, &dodged, e);
    if (rc)
        return rc;
    if (!drawn) {
        f->n = f->n_axes = 0;
        f->note = "ppl_ratio: no ratio schedule has a validation perplexity yet";
        return 0;
    }
    if ((rc = paper_axes(f, e)))
        return rc;
    f->caption = rpt_printf(&f->a,
                            "Dots: the mean validation perplexity over finished seeds (up to %d); bars: the lowest to "
                            "the highest seed%s. Dashed: uniform%s. Open diamonds: the paper's Table 1 on its own "
                            "scale (token-level perplexity of a 440M model): compare the shapes, not the values.",
                            seeds, dodged ? "; schedules set slightly apart along x" : "",
                            uni_band ? " (shaded: its lowest to highest seed)" : "");
    return 0;
}
