/* t_main.c: table main, the paper's Table 2: per scale (and token budget),
 * rows are architecture x {uniform, tapered}, columns validation
 * perplexity (our addition: the paper has no such column, and it is what a
 * run without the benchmark files still measures), WikiText perplexity,
 * LAMBADA perplexity and accuracy, the seven commonsense accuracies and the
 * average of the eight accuracies.  "Tapered" is the paper's cosine
 * 1.5 -> 0.5 unless --taper names another.
 * Evaluation names as docs/evaluation.md defines them (suite, task, metric).
 * Accuracies: results.db holds fractions (lm-eval convention); the table
 * shows percent, like the paper.  The average is taken per job (all eight
 * needed), then over seeds.
 * Must not: average accuracies of different jobs into one "avg". */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *key, *title;
    const char *suite, *task, *metric;
    int better, decimals;
    double scale;
} mcol;

#define N_ACC 8
static const mcol METRICS[] = {
    {"val_ppl", "Val. ppl", "val", "val", "ppl", -1, 2, 1},
    {"wikitext_ppl", "Wiki. ppl", "wikitext", NULL, "word_perplexity", -1, 2, 1},
    {"lambada_ppl", "LMB. ppl", "lambada", NULL, "perplexity", -1, 2, 1},
    {"lambada_acc", "LMB. acc", "lambada", NULL, "acc", 1, 1, 100},
    {"piqa", "PIQA acc", NULL, "piqa", "acc", 1, 1, 100},
    {"hellaswag", "Hella. acc_n", NULL, "hellaswag", "acc_norm", 1, 1, 100},
    {"winogrande", "Wino. acc", NULL, "winogrande", "acc", 1, 1, 100},
    {"arc_easy", "ARC-e acc", NULL, "arc_easy", "acc", 1, 1, 100},
    {"arc_challenge", "ARC-c acc_n", NULL, "arc_challenge", "acc_norm", 1, 1, 100},
    {"siqa", "SIQA acc", NULL, "siqa", "acc", 1, 1, 100},
    {"boolq", "BoolQ acc", NULL, "boolq", "acc", 1, 1, 100},
};
#define N_M (sizeof METRICS / sizeof METRICS[0])
#define FIRST_ACC 3 /* METRICS[3 .. 10] are the eight accuracies of "avg" */
#define C_MODEL 0
#define C_AVG (1 + (int)N_M)
#define C_N (2 + (int)N_M)

typedef struct {
    const char *scale;
    int64_t tokens;
} scale_key;

static void make_cols(rpt_col *cols)
{
    cols[C_MODEL] = (rpt_col){"model", "model", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0};
    for (size_t m = 0; m < N_M; m++)
        cols[1 + m] = (rpt_col){METRICS[m].key, METRICS[m].title, RPT_COL_STAT, METRICS[m].better,
                                METRICS[m].decimals, 0, RPT_OURS, 1};
    cols[C_AVG] = (rpt_col){"avg", "Avg.", RPT_COL_STAT, 1, 2, 0, RPT_OURS, 1};
}

static int find(const rpt_ctx *c, const char *arch, const char *scale, int64_t tokens, int tapered)
{
    for (int i = 0; i < c->n_groups; i++) {
        const rpt_group *g = &c->groups[i];
        if (strcmp(g->arch, arch) || strcmp(g->scale, scale) || g->tokens_total != tokens)
            continue;
        if (rpt_group_rank(c, g, 0) == (tapered ? 1 : 0))
            return i;
    }
    return -1;
}

/* One row of ours (and, with --paper, the paper's and the difference). */
static void row(rpt_ctx *c, rpt_table *t, rpt_panel *p, const char *arch, const char *scale, int64_t tokens,
               int tapered, const rpt_values *const *vals, const rpt_values *avg)
{
    int g = find(c, arch, scale, tokens, tapered);
    const rpt_group *grp = g >= 0 ? &c->groups[g] : NULL;
    int r = rpt_row_add(t, p, RPT_OURS);
    const char *name = tapered ? "+ tapered" : rpt_arch_title(arch);
    rpt_set_text(t, p, r, C_MODEL, "%s", name);
    double mean[C_N];
    for (int k = 0; k < C_N; k++)
        mean[k] = NAN;
    for (size_t m = 0; m < N_M; m++) {
        rpt_stat s;
        memset(&s, 0, sizeof s);
        if (grp)
            rpt_stat_group(c, grp, vals[m], METRICS[m].scale, &s);
        rpt_set_stat(t, p, r, (int)(1 + m), &s);
        mean[1 + m] = s.n ? s.mean : NAN;
    }
    rpt_stat s;
    memset(&s, 0, sizeof s);
    if (grp)
        rpt_stat_group(c, grp, avg, 100, &s);
    rpt_set_stat(t, p, r, C_AVG, &s);
    mean[C_AVG] = s.n ? s.mean : NAN;

    if (!c->o.paper)
        return;
    int have = 0;
    for (int k = 1; k < C_N; k++)
        have |= !isnan(rpt_paper_table2(scale, arch, tapered, k == C_AVG ? "avg" : METRICS[k - 1].key));
    if (!have)
        return;
    int pr = rpt_row_add(t, p, RPT_PAPER), dr = rpt_row_add(t, p, RPT_DIFF);
    rpt_set_text(t, p, pr, C_MODEL, "%s", name);
    rpt_set_text(t, p, dr, C_MODEL, "%s", name);
    for (int k = 1; k < C_N; k++) {
        double pv = rpt_paper_table2(scale, arch, tapered, k == C_AVG ? "avg" : METRICS[k - 1].key);
        if (isnan(pv)) {
            rpt_set_missing(t, p, pr, k, "not in paper");
            continue;
        }
        rpt_set_num(p, pr, k, pv);
        rpt_set_num(p, dr, k, mean[k] - pv);
    }
}

/* Under an architecture's two rows: tapered - uniform per column, paired by seed. */
static void delta_row(rpt_ctx *c, rpt_table *t, rpt_panel *p, const char *arch, const char *scale, int64_t tokens,
                      const rpt_values *const *vals, const rpt_values *avg)
{
    int gu = find(c, arch, scale, tokens, 0), gt = find(c, arch, scale, tokens, 1);
    int r = rpt_row_add(t, p, RPT_DERIVED);
    rpt_set_text(t, p, r, C_MODEL, "Δ tapered − uniform");
    for (int k = 1; k < C_N; k++) {
        const rpt_values *v = k == C_AVG ? avg : vals[k - 1];
        double scale_k = k == C_AVG ? 100 : METRICS[k - 1].scale;
        rpt_stat su, st;
        rpt_paired d;
        memset(&su, 0, sizeof su);
        memset(&st, 0, sizeof st);
        memset(&d, 0, sizeof d);
        d.paired = -1;
        if (gu >= 0)
            rpt_stat_group(c, &c->groups[gu], v, scale_k, &su);
        if (gt >= 0)
            rpt_stat_group(c, &c->groups[gt], v, scale_k, &st);
        if (gu >= 0 && gt >= 0)
            rpt_paired_groups(c, &c->groups[gt], &c->groups[gu], v, scale_k, &d);
        rpt_set_delta(t, p, r, k, &d, &st, &su, "uniform");
        /* the summary speaks of the validation perplexity and the average accuracy */
        if ((k == 1 || (k == C_AVG && (su.n || st.n))) && gt >= 0 && gu >= 0) {
            const char *key = k == C_AVG ? "avg" : METRICS[k - 1].key;
            rpt_finding_add(t, p, r, k,
                            rpt_printf(&t->a, "tapered %s (%s)", rpt_arch_title(arch),
                                       k == C_AVG ? "average accuracy" : "val ppl"),
                            "uniform", k == C_AVG ? "points" : "ppl", k == C_AVG ? 1 : METRICS[k - 1].better, &d,
                            rpt_paper_round(rpt_paper_table2(scale, arch, 1, key) - rpt_paper_table2(scale, arch, 0, key)));
        }
    }
}

/* The average of the eight accuracies per job: a value only when all eight are. */
static int avg_values(const rpt_ctx *c, const rpt_values *const *vals, rpt_values *avg, tlm_err *e)
{
    size_t n = c->n_jobs ? (size_t)c->n_jobs : 1;
    avg->v = calloc(n, sizeof *avg->v);
    avg->state = calloc(n, 1);
    if (!avg->v || !avg->state)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (int j = 0; j < c->n_jobs; j++) {
        double sum = 0;
        int ok = 1, nonfinite = 0;
        for (int m = FIRST_ACC; m < FIRST_ACC + N_ACC; m++) {
            unsigned char x = vals[m]->state[j];
            ok &= x == RPT_V_OK;
            nonfinite |= x == RPT_V_NAN || x == RPT_V_INF;
            sum += vals[m]->v[j];
        }
        avg->state[j] = ok ? RPT_V_OK : nonfinite ? RPT_V_NAN : RPT_V_ABSENT;
        avg->v[j] = ok ? sum / N_ACC : NAN;
    }
    return 0;
}

int rpt_build_main(rpt_ctx *c, rpt_table *t, tlm_err *e)
{
    const rpt_values *vals[N_M];
    int rc;
    for (size_t m = 0; m < N_M; m++)
        if ((rc = rpt_metric(c, METRICS[m].suite, METRICS[m].task, METRICS[m].metric, &vals[m], e)))
            return rc;
    rpt_values avg = {NULL, NULL};
    if ((rc = avg_values(c, vals, &avg, e))) {
        free(avg.v);
        free(avg.state);
        return rc;
    }
    rpt_col cols[C_N];
    make_cols(cols);

    /* scales (with token budgets) in the order of the panels: by size */
    scale_key *keys = calloc((size_t)c->n_panels + 2, sizeof *keys);
    if (!keys) {
        free(avg.v);
        free(avg.state);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    int nk = 0;
    for (int pi = 0; pi < c->n_panels; pi++) {
        const rpt_pgroup *pg = &c->panels[pi];
        if (find(c, pg->arch, pg->scale, pg->tokens_total, 0) < 0 && find(c, pg->arch, pg->scale, pg->tokens_total, 1) < 0)
            continue;
        int seen = 0;
        for (int k = 0; k < nk && !seen; k++)
            seen = !strcmp(keys[k].scale, pg->scale) && keys[k].tokens == pg->tokens_total;
        if (!seen)
            keys[nk++] = (scale_key){pg->scale, pg->tokens_total};
    }
    if (nk == 0 && c->o.paper) {
        keys[nk++] = (scale_key){"760m", rpt_paper_table2_tokens("760m")};
        keys[nk++] = (scale_key){"1.3b", rpt_paper_table2_tokens("1.3b")};
    }
    for (int k = 0; k < nk; k++) {
        int have = 0;
        for (int i = 0; i < c->n_groups && !have; i++)
            have = !strcmp(c->groups[i].scale, keys[k].scale) && c->groups[i].tokens_total == keys[k].tokens;
        rpt_panel *p = rpt_panel_add_setting(t, NULL, keys[k].scale, keys[k].tokens, have, cols, C_N);
        /* the paper's four architectures, then any other found at this scale */
        const char *archs[64];
        int na = 0;
        const char *arch;
        for (size_t a = 0; (arch = rpt_paper_arch(a)); a++) {
            int found = 0;
            for (int i = 0; i < c->n_groups && !found; i++)
                found = !strcmp(c->groups[i].arch, arch) && !strcmp(c->groups[i].scale, keys[k].scale) &&
                        c->groups[i].tokens_total == keys[k].tokens;
            /* with --paper, the paper's rows even where we have none (unless --arch says otherwise) */
            if (found || (c->o.paper && (!c->o.arch || !strcmp(c->o.arch, arch)) &&
                          !isnan(rpt_paper_table2(keys[k].scale, arch, 0, "avg"))))
                archs[na++] = arch;
        }
        for (int i = 0; i < c->n_groups && na < 64; i++) {
            const rpt_group *g = &c->groups[i];
            if (strcmp(g->scale, keys[k].scale) || g->tokens_total != keys[k].tokens)
                continue;
            int seen = 0;
            for (int a = 0; a < na && !seen; a++)
                seen = !strcmp(archs[a], g->arch);
            if (!seen)
                archs[na++] = g->arch;
        }
        for (int a = 0; a < na; a++) {
            row(c, t, p, archs[a], keys[k].scale, keys[k].tokens, 0, vals, &avg);
            row(c, t, p, archs[a], keys[k].scale, keys[k].tokens, 1, vals, &avg);
            delta_row(c, t, p, archs[a], keys[k].scale, keys[k].tokens, vals, &avg);
        }
        int64_t ptok = rpt_paper_table2_tokens(keys[k].scale);
        if (c->o.paper && !ptok)
            rpt_note(t, p, "The paper reports Table 2 at 760m (50B tokens) and 1.3b (100B tokens) only.");
        else if (c->o.paper && ptok != keys[k].tokens) {
            char tok[32];
            rpt_fmt_tokens(tok, sizeof tok, keys[k].tokens);
            rpt_note(t, p, "The paper's %s figures are at %s tokens, these runs at %s: compare the change from "
                           "uniform to tapered, not the values.",
                     keys[k].scale, ptok == 50000000000LL ? "50B" : "100B", tok);
        }
    }
    free(keys);
    free(avg.v);
    free(avg.state);
    rpt_note(t, NULL,
             "+ tapered: %s %g -> %g.  Perplexities lower is better; accuracies in percent (acc_n: length-"
             "normalised), higher is better; Avg. is the mean of the eight accuracies per job, then over seeds.  "
             "Val. ppl (validation perplexity on the job's own held-out data) is ours: the paper has no such column.",
             c->taper_schedule, c->taper_start, c->taper_end);
    rpt_note(t, NULL, "%s", RPT_DELTA_NOTE);
    if (c->o.paper)
        rpt_note(t, NULL, "Paper: Table 2 of Tapered Language Models (1.3B: per-task columns not available).");
    return 0;
}
