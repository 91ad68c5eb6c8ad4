/* stats.c: seeds into one number (mean, sample standard deviation, n) and
 * the words for what is missing: a cell says "pending", "running",
 * "failed (diverged)" or "not in sweep" rather than staying blank.
 * Only finished jobs count: a running job's last evaluation is not its result.
 * Must not: read the database (values come in as arrays). */
#include "reports/rpt.h"

#include <math.h>
#include <string.h>

/* v and state are indexed by job index (global) or by position in jobs. */
static void stat_core(const rpt_ctx *c, const int *jobs, int n_jobs, const double *v, const unsigned char *state,
                      int global, double scale, rpt_stat *s)
{
    memset(s, 0, sizeof *s);
    s->jobs = n_jobs;
    double sum = 0;
    for (int i = 0; i < n_jobs; i++) {
        const rpt_job *j = &c->jobs[jobs[i]];
        int at = global ? jobs[i] : i;
        unsigned char st = state[at];
        /* only finished jobs count: the last evaluation of a run still
         * going (or stopped) is not its result */
        switch (j->status) {
        case RPT_RUNNING: s->running++; continue;
        case RPT_PENDING: s->pending++; continue;
        case RPT_INTERRUPTED: s->interrupted++; continue;
        case RPT_FAILED:
            if (!s->failed++)
                s->fail_reason = j->reason;
            continue;
        default: break;
        }
        if (st == RPT_V_OK) {
            sum += v[at] * scale;
            s->n++;
        } else if (st == RPT_V_NAN || st == RPT_V_INF) {
            s->nonfinite++;
        } else {
            s->absent++;
        }
    }
    s->mean = s->n ? sum / s->n : NAN;
    s->std = NAN;
    if (s->n >= 2) {
        /* two passes: the spread of perplexities is tiny against their size */
        double ss = 0;
        for (int i = 0; i < n_jobs; i++)
            if (c->jobs[jobs[i]].status == RPT_DONE && state[global ? jobs[i] : i] == RPT_V_OK) {
                double d = v[global ? jobs[i] : i] * scale - s->mean;
                ss += d * d;
            }
        s->std = sqrt(ss / (s->n - 1));
    }
}

void rpt_stat_jobs(const rpt_ctx *c, const int *jobs, int n_jobs, const double *v, const unsigned char *state,
                   double scale, rpt_stat *s)
{
    stat_core(c, jobs, n_jobs, v, state, 0, scale, s);
}

void rpt_stat_group(const rpt_ctx *c, const rpt_group *g, const rpt_values *v, double scale, rpt_stat *s)
{
    stat_core(c, g->jobs, g->n_jobs, v->v, v->state, 1, scale, s);
}

void rpt_stat_why(const rpt_stat *s, char *out, size_t cap)
{
    if (s->jobs == 0)
        snprintf(out, cap, "not in sweep");
    else if (s->running)
        snprintf(out, cap, "running");
    else if (s->interrupted)
        snprintf(out, cap, "interrupted");
    else if (s->pending)
        snprintf(out, cap, "pending");
    else if (s->failed)
        snprintf(out, cap, "failed%s%s%s", s->fail_reason ? " (" : "", s->fail_reason ? s->fail_reason : "",
                 s->fail_reason ? ")" : "");
    else if (s->nonfinite)
        snprintf(out, cap, "not finite (NaN/inf)");
    else
        snprintf(out, cap, "no eval");
}

void rpt_stat_note(const rpt_stat *s, char *out, size_t cap)
{
    out[0] = '\0';
    if (s->n == 0 || s->n == s->jobs)
        return;
    size_t at = 0;
    const struct {
        int n;
        const char *what;
    } parts[] = {{s->running, "running"},   {s->pending, "pending"},    {s->interrupted, "interrupted"},
                 {s->failed, "failed"},     {s->nonfinite, "NaN/inf"}, {s->absent, "no eval"}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].n && at < cap)
            at += (size_t)snprintf(out + at, cap - at, "%s%d %s", at ? ", " : "", parts[i].n, parts[i].what);
}

double rpt_pearson_depth(const double *y, int n)
{
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(y[i]))
            continue;
        sx += i;
        sy += y[i];
        m++;
    }
    if (m < 3)
        return NAN;
    double mx = sx / m, my = sy / m;
    for (int i = 0; i < n; i++) {
        if (!isfinite(y[i]))
            continue;
        double dx = i - mx, dy = y[i] - my;
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    if (sxx <= 0 || syy <= 0)
        return NAN;
    return sxy / sqrt(sxx * syy);
}
