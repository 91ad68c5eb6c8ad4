/* stats.c: seeds into one number (mean, sample standard deviation, n) and
 * the words for what is missing: a cell says "pending", "running",
 * "failed (diverged)" or "not in sweep" rather than staying blank.
 * Only finished jobs count: a running job's last evaluation is not its result.
 * Differences between two configurations are paired by seed (the same seed
 * means the same initialisation and data order, so the seed's own luck
 * cancels) and given with a 95% Student-t interval over the pairs.
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

/* ------------------------------------------------------------ paired differences */

double rpt_t975(int df)
{
    if (df < 1)
        return NAN;
    /* P(|T| < t) for integer df in closed form (Abramowitz & Stegun 26.7.3-4,
     * with theta = atan(t / sqrt(df))), inverted by bisection: exact to the
     * last bits for any df, and no table to mistype */
    double lo = 0, hi = 64;
    while (1) {
        double t = 0.5 * (lo + hi);
        if (t <= lo || t >= hi)
            break;
        double th = atan(t / sqrt((double)df)), c2 = cos(th) * cos(th), sum = 1, term = 1, a;
        if (df % 2) {
            for (int k = 2; k <= df - 3; k += 2) { /* 2·4···k / 3·5···(k+1) cos^k */
                term *= c2 * k / (k + 1);
                sum += term;
            }
            a = df == 1 ? 2 * th / M_PI : 2 / M_PI * (th + sin(th) * cos(th) * sum);
        } else {
            for (int k = 1; k <= df - 3; k += 2) { /* 1·3···k / 2·4···(k+1) cos^(k+1) */
                term *= c2 * k / (k + 1);
                sum += term;
            }
            a = sin(th) * sum;
        }
        if (a < 0.95)
            lo = t;
        else
            hi = t;
    }
    return 0.5 * (lo + hi);
}

/* A job's value when it counts (done, finite); 0 otherwise. */
static int usable(const rpt_ctx *c, int job, const double *v, const unsigned char *state, int at, double scale,
                  double *out)
{
    if (c->jobs[job].status != RPT_DONE || state[at] != RPT_V_OK)
        return 0;
    *out = v[at] * scale;
    return 1;
}

/* The unpaired seeds a note names: the smallest few, in order. */
#define NOTE_SEEDS 4
typedef struct {
    int64_t seed[NOTE_SEEDS + 1];
    int n, total;
} seed_list;

static void seed_add(seed_list *l, int64_t seed)
{
    l->total++;
    int at = l->n < NOTE_SEEDS + 1 ? l->n++ : NOTE_SEEDS + 1;
    if (at > NOTE_SEEDS) {
        if (seed >= l->seed[NOTE_SEEDS])
            return;
        at = NOTE_SEEDS; /* replaces the largest kept */
    }
    while (at > 0 && l->seed[at - 1] > seed) {
        l->seed[at] = l->seed[at - 1];
        at--;
    }
    l->seed[at] = seed;
}

static void seed_text(const seed_list *l, char *out, size_t cap)
{
    size_t at = (size_t)snprintf(out, cap, "%s ", l->total > 1 ? "seeds" : "seed");
    for (int i = 0; i < l->n && i < NOTE_SEEDS && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%lld", i ? ", " : "", (long long)l->seed[i]);
    if (l->total > NOTE_SEEDS && at < cap)
        snprintf(out + at, cap - at, " and %d more", l->total - NOTE_SEEDS);
}

/* The value of the job of `jobs` with job's seed, when it counts. */
static int partner(const rpt_ctx *c, int job, const int *jobs, int n, const double *v, const unsigned char *state,
                   int global, double scale, double *out)
{
    for (int k = 0; k < n; k++)
        if (c->jobs[jobs[k]].seed == c->jobs[job].seed)
            return usable(c, jobs[k], v, state, global ? jobs[k] : k, scale, out);
    return 0;
}

static void paired_core(const rpt_ctx *c, const int *ja, int na, const double *va, const unsigned char *sa,
                        const int *jb, int nb, const double *vb, const unsigned char *sb, int global, double scale,
                        rpt_paired *p)
{
    memset(p, 0, sizeof *p);
    p->mean = p->sd = p->lo = p->hi = NAN;
    p->sig = RPT_SIG_NONE;
    p->paired = -1;
    double sum = 0, sum_a = 0, sum_b = 0, ss = 0, x, y;
    int n_a = 0, n_b = 0;
    seed_list un = {{0}, 0, 0};
    for (int i = 0; i < na; i++) {
        if (!usable(c, ja[i], va, sa, global ? ja[i] : i, scale, &x))
            continue;
        sum_a += x;
        n_a++;
        if (partner(c, ja[i], jb, nb, vb, sb, global, scale, &y)) {
            sum += x - y;
            p->n++;
        } else {
            p->only_a++;
            seed_add(&un, c->jobs[ja[i]].seed);
        }
    }
    for (int k = 0; k < nb; k++) {
        if (!usable(c, jb[k], vb, sb, global ? jb[k] : k, scale, &y))
            continue;
        sum_b += y;
        n_b++;
        if (!partner(c, jb[k], ja, na, va, sa, global, scale, &x)) {
            p->only_b++;
            seed_add(&un, c->jobs[jb[k]].seed);
        }
    }
    if (p->n) {
        p->mean = sum / p->n;
        /* a second pass for the spread: the differences are small against the values */
        for (int i = 0; i < na; i++)
            if (usable(c, ja[i], va, sa, global ? ja[i] : i, scale, &x) &&
                partner(c, ja[i], jb, nb, vb, sb, global, scale, &y))
                ss += (x - y - p->mean) * (x - y - p->mean);
    }
    if (!n_a || !n_b)
        return;
    if (!p->n) {
        /* no seed in common: the difference of the means, which the seeds'
         * own spread blurs; no interval is claimed for it */
        p->paired = 0;
        p->mean = sum_a / n_a - sum_b / n_b;
        snprintf(p->note, sizeof p->note, "no seed in common: no interval");
        return;
    }
    p->paired = 1;
    if (p->n >= 2) {
        p->sd = sqrt(ss / (p->n - 1));
        double half = rpt_t975(p->n - 1) * p->sd / sqrt((double)p->n);
        p->lo = p->mean - half;
        p->hi = p->mean + half;
        p->sig = p->lo > 0 || p->hi < 0 ? RPT_SIG_YES : RPT_SIG_NO;
    }
    size_t at = 0;
    if (p->n < 2)
        at += (size_t)snprintf(p->note, sizeof p->note, "no interval");
    if (un.total && at < sizeof p->note) {
        char seeds[80];
        seed_text(&un, seeds, sizeof seeds);
        snprintf(p->note + at, sizeof p->note - at, "%s%s unpaired", at ? "; " : "", seeds);
    }
}

void rpt_paired_jobs(const rpt_ctx *c, const int *ja, int na, const double *va, const unsigned char *sa,
                     const int *jb, int nb, const double *vb, const unsigned char *sb, double scale, rpt_paired *p)
{
    paired_core(c, ja, na, va, sa, jb, nb, vb, sb, 0, scale, p);
}

void rpt_paired_groups(const rpt_ctx *c, const rpt_group *a, const rpt_group *b, const rpt_values *v, double scale,
                       rpt_paired *p)
{
    paired_core(c, a->jobs, a->n_jobs, v->v, v->state, b->jobs, b->n_jobs, v->v, v->state, 1, scale, p);
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
