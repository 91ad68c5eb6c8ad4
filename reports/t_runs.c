/* t_runs.c: table runs: every job with its state, attempts, tokens, last
 * training loss, last validation perplexity and failure reason, in sweep
 * order (--sweep) or the order tlmd created them.  The one table without
 * seed aggregation.  Losses with three decimals, as everywhere in TLM's
 * output, perplexities with two.
 * Must not: hide a job (failed and pending ones are the point). */
#include "reports/rpt.h"

#include <math.h>
#include <string.h>

enum { C_JOB, C_SWEEP, C_LABEL, C_ARCH, C_SCALE, C_SEED, C_STATE, C_ATTEMPTS, C_TOKENS, C_TOTAL, C_DONE_PCT,
       C_LOSS, C_PPL, C_REASON, C_N };

static const rpt_col COLS[C_N] = {
    {"job", "job", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"sweep", "sweep", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"label", "label", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"arch", "arch", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"scale", "scale", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"seed", "seed", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"state", "state", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
    {"attempts", "attempts", RPT_COL_NUM, 0, 0, 0, RPT_OURS, 0},
    {"tokens", "tokens", RPT_COL_NUM, 0, 0, 0, RPT_OURS, 0},
    {"tokens_total", "of", RPT_COL_NUM, 0, 0, 0, RPT_OURS, 0},
    {"done_pct", "%", RPT_COL_NUM, 0, 0, 0, RPT_OURS, 0},
    {"last_loss", "last loss", RPT_COL_NUM, 0, 3, 0, RPT_OURS, 0},
    {"val_ppl", "val ppl", RPT_COL_NUM, 0, 2, 0, RPT_OURS, 0},
    {"reason", "failure", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
};

static const char *state_name(int s) { return db_job_status_name(s); }

int rpt_build_runs(rpt_ctx *c, rpt_table *t, tlm_err *e)
{
    const rpt_values *ppl;
    int rc = rpt_metric(c, "val", NULL, "ppl", &ppl, e);
    if (rc)
        return rc;
    rpt_panel *p = rpt_panel_add(t, "", COLS, C_N);
    for (int i = 0; i < c->n_jobs; i++) {
        const rpt_job *j = &c->jobs[i];
        int r = rpt_row_add(t, p, RPT_OURS);
        if (r < 0)
            break;
        rpt_set_text(t, p, r, C_JOB, "%.12s", j->key);
        rpt_set_text(t, p, r, C_SWEEP, "%s", j->sweep ? j->sweep : "");
        rpt_set_text(t, p, r, C_LABEL, "%s", j->label);
        rpt_set_text(t, p, r, C_ARCH, "%s", j->arch);
        rpt_set_text(t, p, r, C_SCALE, "%s", j->scale);
        rpt_set_text(t, p, r, C_SEED, "%lld", (long long)j->seed);
        rpt_set_text(t, p, r, C_STATE, "%s", state_name(j->status));
        rpt_set_num(p, r, C_ATTEMPTS, j->attempts);
        rpt_set_num(p, r, C_TOKENS, (double)j->tokens_done);
        rpt_set_num(p, r, C_TOTAL, (double)j->tokens_total);
        if (j->tokens_total > 0)
            rpt_set_num(p, r, C_DONE_PCT, 100.0 * (double)j->tokens_done / (double)j->tokens_total);
        double loss;
        rc = rpt_last_loss(c, i, &loss, e);
        if (rc < 0)
            return rc;
        if (rc == 0)
            rpt_set_missing(t, p, r, C_LOSS, j->status == RPT_RUNNING ? "no step yet" : state_name(j->status));
        else if (isnan(loss))
            rpt_set_missing(t, p, r, C_LOSS, "NaN");
        else
            rpt_set_num(p, r, C_LOSS, loss);
        /* the last evaluation, finished or not: this table shows where each job stands */
        switch (ppl->state[i]) {
        case RPT_V_OK: rpt_set_num(p, r, C_PPL, ppl->v[i]); break;
        case RPT_V_NAN: rpt_set_missing(t, p, r, C_PPL, "NaN"); break;
        case RPT_V_INF: rpt_set_missing(t, p, r, C_PPL, "inf"); break;
        default: rpt_set_missing(t, p, r, C_PPL, j->status == RPT_PENDING ? "pending" : "no eval"); break;
        }
        if (j->reason && j->reason[0])
            rpt_set_text(t, p, r, C_REASON, "%s%s%.200s", j->reason, j->message && j->message[0] ? ": " : "",
                         j->message ? j->message : "");
    }
    int n[5] = {0};
    for (int i = 0; i < c->n_jobs; i++)
        n[c->jobs[i].status]++;
    rpt_note(t, NULL, "%d job%s: %d done, %d running, %d pending, %d interrupted, %d failed.", c->n_jobs,
             c->n_jobs == 1 ? "" : "s", n[RPT_DONE], n[RPT_RUNNING], n[RPT_PENDING], n[RPT_INTERRUPTED],
             n[RPT_FAILED]);
    if (c->o.paper)
        rpt_note(t, NULL, "The paper has no per-run figures to compare with.");
    return 0;
}
