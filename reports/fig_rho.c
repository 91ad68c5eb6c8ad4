/* fig_rho.c: figure rho: the alignment of updates with the residual
 * stream per layer (paper Section 5), rho_MLP and rho_block side by side,
 * per configuration the mean over seeds with the seeds' min-max shaded,
 * for the first setting that has the statistics: uniform and the taper
 * first, as the alignment table, at most MAX_CONFIGS of them (bands of
 * more overlap past reading; --job chooses others), and says in the caption
 * what it left out.  The caption gives each line's Pearson r
 * with depth beside the paper's range (pretrained GPT-2: it has no
 * per-layer values to draw).
 * Must not: mix models of different depth. */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const STAT[2] = {"rho_mlp", "rho_block"};
#define MAX_CONFIGS 6

/* One group's statistic k per layer: mean, min and max over seeds. */
static int load(rpt_ctx *c, const rpt_group *g, int k, double **mean, double **lo, double **hi, int *layers, int *seeds,
                tlm_err *e)
{
    *mean = *lo = *hi = NULL;
    *layers = *seeds = 0;
    int cap = 0, *cnt = NULL, rc = 0;
    for (int j = 0; j < g->n_jobs && !rc; j++) {
        double *v;
        int n;
        if ((rc = rpt_layer_stat(c, c->jobs[g->jobs[j]].key, STAT[k], &v, &n, e)))
            break;
        *seeds += n > 0;
        if (n > cap) {
            double *m = realloc(*mean, sizeof *m * (size_t)n);
            if (m)
                *mean = m;
            double *a = m ? realloc(*lo, sizeof *a * (size_t)n) : NULL;
            if (a)
                *lo = a;
            double *b = a ? realloc(*hi, sizeof *b * (size_t)n) : NULL;
            if (b)
                *hi = b;
            int *nc = b ? realloc(cnt, sizeof *nc * (size_t)n) : NULL;
            if (!nc) {
                free(v);
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                break;
            }
            cnt = nc;
            for (int l = cap; l < n; l++) {
                (*mean)[l] = 0;
                (*lo)[l] = INFINITY;
                (*hi)[l] = -INFINITY;
                cnt[l] = 0;
            }
            cap = n;
        }
        for (int l = 0; l < n; l++)
            if (isfinite(v[l])) {
                (*mean)[l] += v[l];
                (*lo)[l] = fmin((*lo)[l], v[l]);
                (*hi)[l] = fmax((*hi)[l], v[l]);
                cnt[l]++;
            }
        free(v);
    }
    for (int l = 0; l < cap && !rc; l++) {
        (*mean)[l] = cnt[l] ? (*mean)[l] / cnt[l] : NAN;
        if (cnt[l] < 2)
            (*lo)[l] = (*hi)[l] = NAN;
    }
    free(cnt);
    if (rc) {
        free(*mean);
        free(*lo);
        free(*hi);
        *mean = *lo = *hi = NULL;
        return rc;
    }
    *layers = cap;
    return 0;
}

/* What the lines, bands and r mean, and what was left out: the first
 * `most` configurations (0: all of the setting) and `others` settings after it. */
static void caption(rpt_figure *f, int seeds, const char *const rs[2], int most, int others)
{
    /* a reader must not take the lines drawn for all there is: say what was left out, and how to choose */
    const char *more = "";
    if (most || others) {
        const char *cfgs = "this setting", *sets = "";
        if (most)
            cfgs = rpt_printf(&f->a, "the first %d configurations of this setting", most);
        if (others)
            sets = rpt_printf(&f->a, "; %d other setting%s not drawn", others, others == 1 ? "" : "s");
        more = rpt_printf(&f->a, " Drawn: %s%s (choose others with --arch, --scale or --job).", cfgs, sets);
        f->note = rpt_printf(&f->a, "rho: drew %s%s; choose others with --arch, --scale or --job", cfgs, sets);
    }
    f->caption = rpt_printf(&f->a,
                            "Line: the mean over a configuration's seeds (up to %d); shaded: their min-max. Pearson r "
                            "with depth, MLP: %s; block: %s. The paper (pretrained GPT-2, 124M-1.5B, WikiText-2): "
                            "0.49 to 0.71 (MLP), 0.27 to 0.71 (block), both near 0 early and rising late.%s",
                            seeds, *rs[0] ? rs[0] : "-", *rs[1] ? rs[1] : "-", more);
}

int rpt_fig_rho(rpt_ctx *c, rpt_figure *f, tlm_err *e)
{
    f->title = "Alignment with the residual stream";
    int *color, rc = rpt_config_colors(c, &color, e);
    if (rc)
        return rc;
    const char *rs[2] = {"", ""}; /* "uniform 0.95, cosine 0.93" per statistic */
    int depth = -1, seeds = 0, left = 0, most = c->o.max_series < MAX_CONFIGS ? c->o.max_series : MAX_CONFIGS;
    int others = 0; /* settings after the one drawn: not looked at, so named in the caption */
    for (int pi = 0; pi < c->n_panels && !rc; pi++) {
        if (f->n) {
            others = c->n_panels - pi;
            break;
        }
        const rpt_pgroup *pg = &c->panels[pi];
        int drawn = 0, probed = 0, *order = malloc(sizeof *order * (size_t)pg->n_groups);
        if (!order) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        rpt_figure_order(pg, color, order);
        for (int i = 0; i < pg->n_groups && !rc; i++) {
            const rpt_group *g = &c->groups[order[i]];
            if (drawn >= most) {
                left += drawn > 0 && pg->n_groups - i > 0;
                break;
            }
            if (++probed > 200)
                break; /* a database of thousands of groups without rho: stop looking */
            double *m[2], *lo[2], *hi[2];
            int n[2], had[2];
            if ((rc = load(c, g, 0, &m[0], &lo[0], &hi[0], &n[0], &had[0], e)))
                break;
            if (n[0] == 0 || (depth >= 0 && n[0] != depth) ||
                (rc = load(c, g, 1, &m[1], &lo[1], &hi[1], &n[1], &had[1], e))) {
                free(m[0]);
                free(lo[0]);
                free(hi[0]);
                continue;
            }
            if (f->n_axes == 0) {
                rpt_axes *a0 = rpt_figure_axes(f, "MLP: \xcf\x81" RPT_SUB("MLP")),
                         *a1 = rpt_figure_axes(f, "whole block: \xcf\x81" RPT_SUB("block"));
                a0->ylabel = "cosine with the residual stream";
                for (int k = 0; k < 2; k++) {
                    f->ax[k].xlabel = "layer";
                    f->ax[k].xint = 1;
                    f->ax[k].yref = 0;
                }
                (void)a1;
                f->title = rpt_figure_panel_title(f, "Alignment with the residual stream", pg);
            }
            depth = n[0];
            for (int k = 0; k < 2 && !rc; k++) {
                rpt_series *s = n[k] ? rpt_figure_series(f, rpt_figure_label(f, g->label), k, n[k], 1) : NULL;
                if (n[k] && !s)
                    rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                for (int l = 0; s && l < n[k]; l++) {
                    s->x[l] = l;
                    s->y[l] = m[k][l];
                    s->lo[l] = lo[k][l];
                    s->hi[l] = hi[k][l];
                }
                if (s) {
                    s->color = color[order[i]];
                    s->band = 1;
                    s->marker = RPT_MARK_CIRCLE;
                    double pr = rpt_pearson_depth(m[k], n[k]);
                    if (!isnan(pr))
                        rs[k] = rpt_printf(&f->a, "%s%s%s %.2f", rs[k], *rs[k] ? ", " : "", s->label, pr);
                }
                free(m[k]);
                free(lo[k]);
                free(hi[k]);
            }
            seeds = had[0] > seeds ? had[0] : seeds;
            drawn++;
        }
        free(order);
    }
    free(color);
    if (rc)
        return rc;
    if (f->n == 0) {
        f->note = "rho: no job has rho_mlp layer statistics (the alignment evaluation suite)";
        return 0;
    }
    caption(f, seeds, rs, left ? most : 0, others);
    return 0;
}
