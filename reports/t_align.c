/* t_align.c: table alignment: per layer, rho_MLP (the MLP output against
 * the residual stream) and rho_block (the block's update against it), from
 * the layer statistics of the chosen jobs, seeds averaged; a last row gives
 * each column's Pearson correlation with depth (the paper reports 0.49-0.71
 * for MLP and 0.27-0.71 for the block on GPT-2).
 * Jobs are chosen with --job; without it, the groups that have the
 * statistics, uniform and the taper first, at most RPT_ALIGN_MAX of them.
 * Must not: average layers of models of different depth (panels split them). */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPT_ALIGN_MAX 6
static const char *const NAMES[2] = {"rho_mlp", "rho_block"};
static const char *const TITLES[2] = {"ρ_MLP", "ρ_block"};

typedef struct {
    int group;
    int layers;
    double *v[2]; /* per name: layers x n_jobs values, layer-major */
    int n_jobs;
    unsigned char has[2][64]; /* per name and job: the job has this statistic at all */
} agroup;

/* Reads a group's statistics; *has = 1 when any job has rho_mlp. */
static int load(rpt_ctx *c, agroup *a, int *has, tlm_err *e)
{
    const rpt_group *g = &c->groups[a->group];
    double *per[2][64];
    int n[2][64];
    int nj = g->n_jobs < 64 ? g->n_jobs : 64;
    int rc = 0;
    *has = 0;
    a->layers = 0;
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < nj; j++) {
            per[k][j] = NULL;
            n[k][j] = 0;
        }
    for (int k = 0; k < 2 && !rc; k++)
        for (int j = 0; j < nj && !rc; j++) {
            if (c->jobs[g->jobs[j]].status != RPT_DONE)
                continue; /* only finished jobs count (stats.c): no need to read the others */
            rc = rpt_layer_stat(c, c->jobs[g->jobs[j]].key, NAMES[k], &per[k][j], &n[k][j], e);
            if (n[k][j] > a->layers)
                a->layers = n[k][j];
            a->has[k][j] = n[k][j] > 0;
            *has |= k == 0 && n[k][j] > 0;
        }
    a->n_jobs = nj;
    for (int k = 0; k < 2 && !rc && *has; k++) {
        a->v[k] = malloc(sizeof(double) * (size_t)(a->layers * nj) + 1);
        if (!a->v[k]) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        for (int l = 0; l < a->layers; l++)
            for (int j = 0; j < nj; j++)
                a->v[k][l * nj + j] = l < n[k][j] ? per[k][j][l] : NAN;
    }
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < nj; j++)
            free(per[k][j]);
    return rc;
}

static void agroup_clear(agroup *a)
{
    free(a->v[0]);
    free(a->v[1]);
    a->v[0] = a->v[1] = NULL;
}

static int panel(rpt_ctx *c, rpt_table *t, const rpt_pgroup *pg, tlm_err *e)
{
    /* candidates: uniform, the taper, then the rest */
    int *order = malloc(sizeof *order * (size_t)pg->n_groups);
    if (!order)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    int n = 0;
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < pg->n_groups; i++)
            if (rpt_group_rank(c, &c->groups[pg->groups[i]], 0) == r)
                order[n++] = pg->groups[i];
    agroup chosen[RPT_ALIGN_MAX];
    int nc = 0, more = 0, rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        agroup a;
        memset(&a, 0, sizeof a);
        a.group = order[i];
        int has;
        if (nc == RPT_ALIGN_MAX) {
            /* only count the rest */
            rc = load(c, &a, &has, e);
            more += has;
            agroup_clear(&a);
            if (c->n_jobs > 1000)
                break; /* counting thousands of groups is not worth a slow report */
            continue;
        }
        rc = load(c, &a, &has, e);
        if (has && !rc)
            chosen[nc++] = a;
        else
            agroup_clear(&a);
    }
    free(order);
    if (rc || nc == 0) {
        for (int i = 0; i < nc; i++)
            agroup_clear(&chosen[i]);
        return rc;
    }

    int layers = 0;
    for (int i = 0; i < nc; i++)
        if (chosen[i].layers > layers)
            layers = chosen[i].layers;
    int n_cols = 1 + 2 * nc;
    rpt_col cols[1 + 2 * RPT_ALIGN_MAX];
    cols[0] = (rpt_col){"layer", "layer", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0};
    for (int i = 0; i < nc; i++)
        for (int k = 0; k < 2; k++) {
            const char *label = c->groups[chosen[i].group].label;
            cols[1 + 2 * i + k] = (rpt_col){rpt_printf(&t->a, "%s[%s]", NAMES[k], label),
                                            rpt_printf(&t->a, "%s %s", label, TITLES[k]), RPT_COL_STAT, 0, 3, 0,
                                            RPT_OURS, 0};
        }
    rpt_panel *p = rpt_panel_add_setting(t, pg->arch, pg->scale, pg->tokens_total, 1, cols, n_cols);

    double *means = malloc(sizeof *means * (size_t)(2 * nc * layers) + 1);
    unsigned char st[64];
    if (!means) {
        for (int i = 0; i < nc; i++)
            agroup_clear(&chosen[i]);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    for (int l = 0; l < layers; l++) {
        int r = rpt_row_add(t, p, RPT_OURS);
        rpt_set_text(t, p, r, 0, "%d", l);
        for (int i = 0; i < nc; i++)
            for (int k = 0; k < 2; k++) {
                const agroup *a = &chosen[i];
                const double *v = l < a->layers ? a->v[k] + l * a->n_jobs : NULL;
                rpt_stat s;
                memset(&s, 0, sizeof s);
                if (v) {
                    /* a job with the statistic but not a finite value here: NaN, not "no eval" */
                    for (int j = 0; j < a->n_jobs; j++)
                        st[j] = isfinite(v[j]) ? RPT_V_OK : a->has[k][j] ? RPT_V_NAN : RPT_V_ABSENT;
                    rpt_stat_jobs(c, c->groups[a->group].jobs, a->n_jobs, v, st, 1.0, &s);
                }
                rpt_set_stat(t, p, r, 1 + 2 * i + k, &s);
                means[(2 * i + k) * layers + l] = s.n ? s.mean : NAN;
            }
    }
    int r = rpt_row_add(t, p, RPT_DERIVED);
    rpt_set_text(t, p, r, 0, "r (depth)");
    for (int x = 0; x < 2 * nc; x++)
        rpt_set_num(p, r, 1 + x, rpt_pearson_depth(means + x * layers, layers));
    free(means);
    for (int i = 0; i < nc; i++)
        agroup_clear(&chosen[i]);
    if (more)
        rpt_note(t, p, "%d more group%s with these statistics%s; choose with --job KEY|LABEL.", more,
                 more == 1 ? "" : "s", c->n_jobs > 1000 ? " (at least)" : "");
    return 0;
}

int rpt_build_alignment(rpt_ctx *c, rpt_table *t, tlm_err *e)
{
    int rc = 0;
    for (int pi = 0; pi < c->n_panels && !rc; pi++)
        rc = panel(c, t, &c->panels[pi], e);
    if (rc)
        return rc;
    rpt_note(t, NULL,
             "ρ_MLP(l) = cos(F_l(z_l), h_l) and ρ_block(l) = cos(h_{l+1} - h_l, h_l) at each job's last "
             "measurement; r (depth): Pearson correlation of the column with the layer index.");
    if (c->o.paper)
        rpt_note(t, NULL, "Paper (pretrained GPT-2, 124M-1.5B, 2048 WikiText-2 tokens): both near zero or negative "
                          "early, rising through the second half; r with depth 0.49-0.71 (MLP), 0.27-0.71 (block).");
    return 0;
}
