/* t_niah.c: table niah, the paper's Table 3: needle-in-a-haystack accuracy
 * per task (rows) and context length (columns), uniform against tapered.
 * Tasks come from the `niah` evaluation suite, named "<task>@<context>"
 * (s_niah_1@4096); metric exact_match (docs/evaluation.md), a fraction in
 * results.db, shown in percent.
 * Must not: mark a "best" (the comparison is uniform vs tapered per cell,
 * which the Δ column shows). */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NIAH_METRIC "exact_match"
#define MAX_CTX 16
#define MAX_TASKS 64

typedef struct {
    char name[64];
} task_name;

static void ctx_label(char *out, size_t cap, long ctx)
{
    if (ctx >= 1024 && ctx % 1024 == 0)
        snprintf(out, cap, "%ldK", ctx / 1024);
    else
        snprintf(out, cap, "%ld", ctx);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int find(const rpt_ctx *c, const rpt_pgroup *pg, int tapered)
{
    for (int i = 0; i < pg->n_groups; i++) {
        const rpt_group *g = &c->groups[pg->groups[i]];
        if (rpt_group_rank(c, g, 0) == (tapered ? 1 : 0))
            return pg->groups[i];
    }
    return -1;
}

/* "<task>@<context>" into the rows' task names and the columns' contexts
 * (sorted), each once */
static void split_tasks(const char **tasks, int n_tasks, task_name *names, int *nn_out, long *ctxs, int *nc_out)
{
    int nn = 0, nc = 0;
    for (int i = 0; i < n_tasks; i++) {
        const char *at = strrchr(tasks[i], '@');
        long ctx = at ? strtol(at + 1, NULL, 10) : 0;
        size_t len = at ? (size_t)(at - tasks[i]) : strlen(tasks[i]);
        if (len >= sizeof names[0].name)
            continue;
        int seen = 0;
        for (int k = 0; k < nn && !seen; k++)
            seen = strlen(names[k].name) == len && !strncmp(names[k].name, tasks[i], len);
        if (!seen && nn < MAX_TASKS) {
            memcpy(names[nn].name, tasks[i], len);
            names[nn++].name[len] = '\0';
        }
        seen = 0;
        for (int k = 0; k < nc && !seen; k++)
            seen = ctxs[k] == ctx;
        if (!seen && nc < MAX_CTX)
            ctxs[nc++] = ctx;
    }
    qsort(ctxs, (size_t)nc, sizeof *ctxs, cmp_long);
    *nn_out = nn;
    *nc_out = nc;
}

/* The values of task i at context k are vals[i * nc + k]. */
typedef struct niah_grid {
    const task_name *names;
    int nn;
    const long *ctxs;
    int nc;
    const rpt_values **vals;
    const rpt_col *cols;
    int n_cols;
} niah_grid;

/* One panel: a row per task, uniform, tapered and Δ per context; none
 * when neither model of the panel has a NIAH result. */
static void niah_panel(rpt_ctx *c, rpt_table *t, const rpt_pgroup *pg, const niah_grid *n)
{
    int g[2] = {find(c, pg, 0), find(c, pg, 1)};
    int any = 0;
    for (int m = 0; m < 2 && !any; m++)
        for (int x = 0; g[m] >= 0 && x < c->groups[g[m]].n_jobs && !any; x++)
            for (int v = 0; v < n->nn * n->nc && !any; v++)
                any = n->vals[v]->state[c->groups[g[m]].jobs[x]] != RPT_V_ABSENT;
    if (!any)
        return;
    rpt_panel *p = rpt_panel_add_setting(t, pg->arch, pg->scale, pg->tokens_total, 1, n->cols, n->n_cols);
    for (int i = 0; i < n->nn; i++) {
        int r = rpt_row_add(t, p, RPT_OURS);
        rpt_set_text(t, p, r, 0, "%s", n->names[i].name);
        for (int k = 0; k < n->nc; k++) {
            rpt_stat s[2];
            for (int m = 0; m < 2; m++) {
                memset(&s[m], 0, sizeof s[m]);
                if (g[m] >= 0)
                    rpt_stat_group(c, &c->groups[g[m]], n->vals[i * n->nc + k], 100, &s[m]);
                rpt_set_stat(t, p, r, 1 + 3 * k + m, &s[m]);
            }
            if (s[0].n && s[1].n)
                rpt_set_num(p, r, 3 + 3 * k, s[1].mean - s[0].mean);
            else
                rpt_set_missing(t, p, r, 3 + 3 * k, s[0].n ? "tapered missing" : "uniform missing");
        }
    }
    if (c->o.paper) {
        double u = rpt_paper_niah16k(pg->arch, 0), tp = rpt_paper_niah16k(pg->arch, 1);
        if (!isnan(u))
            rpt_note(t, p, "Paper, 16K context (the task is not named by our sources): %s %.1f -> %.1f tapered.",
                     rpt_arch_title(pg->arch), u, tp);
    }
}

int rpt_build_niah(rpt_ctx *c, rpt_table *t, tlm_err *e)
{
    const char **tasks;
    int n_tasks, rc = rpt_suite_tasks(c, "niah", NIAH_METRIC, &tasks, &n_tasks, e);
    if (rc)
        return rc;
    task_name names[MAX_TASKS];
    long ctxs[MAX_CTX];
    int nn, nc;
    split_tasks(tasks, n_tasks, names, &nn, ctxs, &nc);

    int n_cols = 1 + 3 * nc;
    rpt_col *cols = calloc((size_t)n_cols, sizeof *cols);
    const rpt_values **vals = calloc((size_t)(nn * nc) + 1, sizeof *vals);
    if (!cols || !vals) {
        free(cols);
        free(vals);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    cols[0] = (rpt_col){"task", "task", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0};
    for (int k = 0; k < nc; k++) {
        char l[32];
        ctx_label(l, sizeof l, ctxs[k]);
        cols[1 + 3 * k] = (rpt_col){rpt_printf(&t->a, "%ld_uniform", ctxs[k]), rpt_printf(&t->a, "%s uniform", l),
                                    RPT_COL_STAT, 0, 1, 0, RPT_OURS, 0};
        cols[2 + 3 * k] = (rpt_col){rpt_printf(&t->a, "%ld_tapered", ctxs[k]), rpt_printf(&t->a, "%s tapered", l),
                                    RPT_COL_STAT, 0, 1, 0, RPT_OURS, 0};
        cols[3 + 3 * k] = (rpt_col){rpt_printf(&t->a, "%ld_delta", ctxs[k]), rpt_printf(&t->a, "%s Δ", l),
                                    RPT_COL_NUM, 0, 1, 1, RPT_DERIVED, 0};
    }
    char task[128];
    for (int i = 0; i < nn && !rc; i++)
        for (int k = 0; k < nc && !rc; k++) {
            snprintf(task, sizeof task, "%s@%ld", names[i].name, ctxs[k]);
            rc = rpt_metric(c, "niah", task, NIAH_METRIC, &vals[i * nc + k], e);
        }
    niah_grid grid = {names, nn, ctxs, nc, vals, cols, n_cols};
    for (int pi = 0; pi < c->n_panels && !rc && nn; pi++)
        niah_panel(c, t, &c->panels[pi], &grid);
    free(cols);
    free(vals);
    if (rc)
        return rc;
    rpt_note(t, NULL, "Exact-match accuracy in percent at each job's last NIAH evaluation; tapered: %s %g -> %g; Δ = tapered - "
                      "uniform.",
             c->taper_schedule, c->taper_start, c->taper_end);
    if (c->o.paper)
        rpt_note(t, NULL, "Paper: Table 3 (partial in our sources): tapered models match or beat uniform ones; "
                          "quoted at 16K: Transformer++ 27.2 -> 27.6, Titans 11.8 -> 12.4.");
    return 0;
}
