/* figures.c: the registry of figures (--plot NAME), and what figure
 * builders share: which panels a figure draws, their titles, the colour of
 * each configuration (the same in every figure of a report), figure
 * labels.
 * Must not: draw (plot.c does). */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const rpt_figure_def rpt_figure_defs[] = {
    {"loss", "training loss against tokens: per configuration the mean over seeds, shaded min-max", rpt_fig_loss,
     RPT_USES_SERIES},
    {"dff", "MLP width d_ff per layer, one line per configuration (the paper's schedules)", rpt_fig_dff,
     RPT_USES_TAPER | RPT_USES_SERIES},
    {"rho", "rho_MLP and rho_block per layer, mean over seeds with min-max, and r with depth beside the paper's",
     rpt_fig_rho, RPT_USES_TAPER | RPT_USES_SERIES},
    {"wider", "val ppl of uniform and wider-early/middle/late, min-max over seeds, beside the paper's Figure 2",
     rpt_fig_wider, 0},
    {"ppl_ratio", "val ppl against taper strength per schedule, min-max over seeds, beside the paper's Table 1",
     rpt_fig_ppl_ratio, 0},
    {"delta", "change against uniform per configuration with its 95% interval, beside the paper's", rpt_fig_delta, 0},
};
const int rpt_n_figure_defs = (int)(sizeof rpt_figure_defs / sizeof rpt_figure_defs[0]);

const rpt_figure_def *rpt_figure_find(const char *name)
{
    for (int i = 0; i < rpt_n_figure_defs; i++)
        if (!strcmp(rpt_figure_defs[i].name, name))
            return &rpt_figure_defs[i];
    return NULL;
}

static int figure_panels(const rpt_ctx *c, int (*counts)(const rpt_ctx *c, const rpt_group *g), int max, int *out)
{
    /* the panels' counts, then the max largest kept in panel order */
    int n = 0;
    int *cnt = calloc((size_t)(c->n_panels ? c->n_panels : 1), sizeof *cnt);
    if (!cnt)
        return 0;
    for (int pi = 0; pi < c->n_panels; pi++)
        for (int i = 0; i < c->panels[pi].n_groups; i++)
            cnt[pi] += counts(c, &c->groups[c->panels[pi].groups[i]]) != 0;
    for (int pi = 0; pi < c->n_panels; pi++) {
        if (!cnt[pi])
            continue;
        int better = 0; /* panels that beat this one: more, or as many and earlier */
        for (int q = 0; q < c->n_panels; q++)
            better += cnt[q] > cnt[pi] || (cnt[q] == cnt[pi] && q < pi);
        if (better < max)
            out[n++] = pi;
    }
    free(cnt);
    return n;
}

int rpt_figure_begin(rpt_figure *f, const char *title, const char *none, const rpt_ctx *c,
                     int (*counts)(const rpt_ctx *c, const rpt_group *g), int max, int *out)
{
    f->title = title;
    int n = figure_panels(c, counts, max, out);
    if (!n)
        f->note = none;
    return n;
}

const char *rpt_figure_panel_title(rpt_figure *f, const char *what, const rpt_pgroup *pg)
{
    const char *t = rpt_panel_title(&f->a, pg->arch, pg->scale, pg->tokens_total);
    if (t && pg->variant[0])
        t = rpt_printf(&f->a, "%s, %s", t, pg->variant);
    return what ? rpt_printf(&f->a, "%s: %s", what, t ? t : "") : t;
}

const char *rpt_figure_label(rpt_figure *f, const char *label)
{
    const char *arrow = label ? strstr(label, "->") : NULL;
    if (!arrow)
        return rpt_strdup(&f->a, label);
    return rpt_printf(&f->a, "%.*s\xe2\x86\x92%s", (int)(arrow - label), label, arrow + 2);
}

/* ------------------------------------------------------------ colours */
static const char *const BLOCK_ORDER[] = {"wider-early", "wider-middle", "wider-late", "flat"};

static int config_rank(const rpt_ctx *c, const rpt_group *g)
{
    int r = rpt_group_rank(c, g, 1);
    if (r == 2) { /* blocks: early, middle, late, then the rest */
        const char *k = rpt_blocks_kind(g->groups);
        int i = 0;
        while (i < 4 && (!k || strcmp(k, BLOCK_ORDER[i])))
            i++;
        return 10 + i;
    }
    return r < 2 ? r : 20;
}

static int cmp_num(double a, double b)
{
    if (isnan(a) || isnan(b))
        return !isnan(a) - !isnan(b);
    return (a > b) - (a < b);
}

static int cmp_config(const void *pa, const void *pb, void *ctx)
{
    const rpt_ctx *c = ctx;
    const rpt_group *a = &c->groups[*(const int *)pa], *b = &c->groups[*(const int *)pb];
    int r = config_rank(c, a) - config_rank(c, b);
    if (!r)
        r = strcmp(a->schedule, b->schedule);
    if (!r)
        r = cmp_num(b->ratio_start - b->ratio_end, a->ratio_start - a->ratio_end); /* strongest first */
    if (!r)
        r = cmp_num(a->ratio_start, b->ratio_start);
    if (!r)
        r = strcmp(a->groups ? a->groups : "", b->groups ? b->groups : "");
    return r;
}

int rpt_config_colors(const rpt_ctx *c, int **colors, tlm_err *e)
{
    size_t n = c->n_groups ? (size_t)c->n_groups : 1;
    int *order = malloc(n * sizeof *order);
    *colors = calloc(n, sizeof **colors);
    if (!order || !*colors) {
        free(order);
        free(*colors);
        *colors = NULL;
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    for (int i = 0; i < c->n_groups; i++)
        order[i] = i;
    qsort_r(order, (size_t)c->n_groups, sizeof *order, cmp_config, (void *)c);
    int next = 1;
    for (int i = 0; i < c->n_groups; i++) {
        const rpt_group *g = &c->groups[order[i]];
        if (!strcmp(g->schedule, "uniform"))
            (*colors)[order[i]] = 0;
        else if (i > 0 && !cmp_config(&order[i - 1], &order[i], (void *)c))
            (*colors)[order[i]] = (*colors)[order[i - 1]];
        else
            (*colors)[order[i]] = next++;
    }
    free(order);
    return 0;
}

void rpt_figure_order(const rpt_pgroup *pg, const int *colors, int *out)
{
    /* insertion sort: a panel holds a few dozen configurations */
    for (int i = 0; i < pg->n_groups; i++) {
        int g = pg->groups[i], at = i;
        while (at > 0 && colors[out[at - 1]] > colors[g]) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = g;
    }
}

int rpt_group_done(const rpt_ctx *c, const rpt_group *g)
{
    for (int i = 0; i < g->n_jobs; i++)
        if (c->jobs[g->jobs[i]].status == RPT_DONE)
            return 1;
    return 0;
}
