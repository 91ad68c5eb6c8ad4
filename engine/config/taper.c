/* taper.c: the width schedules and their exact rounding (see taper.h).
 * Every MLP width TLM trains, counts or reports comes from here. */
#include "engine/config/taper.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int is_taper(int s)
{
    return s == ENG_TAPER_LINEAR || s == ENG_TAPER_COSINE || s == ENG_TAPER_SIGMOID;
}

static int check_spec(int L, int d_base, const eng_taper_spec *s, tlm_err *e)
{
    if (L < 1 || L > ENG_MAX_LAYERS)
        return tlm_errf(e, TLM_ECONFIG, "taper: %d layers is out of range (1 to %d)", L, ENG_MAX_LAYERS);
    if (d_base < 1)
        return tlm_errf(e, TLM_ECONFIG, "taper: d_base %d must be positive", d_base);
    if (s->schedule == ENG_TAPER_UNIFORM)
        return 0;
    if (s->multiple < 1)
        return tlm_errf(e, TLM_ECONFIG, "taper.multiple %d must be positive", s->multiple);
    if (is_taper(s->schedule)) {
        if (L < 2)
            return tlm_errf(e, TLM_ECONFIG, "taper: a %s taper needs at least 2 layers (model has %d)",
                            eng_schedule_name(s->schedule), L);
        if (!(s->r_start > 0) || !(s->r_end > 0))
            return tlm_errf(e, TLM_ECONFIG, "taper.ratio [%g, %g]: both ratios must be above zero", s->r_start,
                            s->r_end);
        if (fabs(s->r_start + s->r_end - 2.0) > 1e-9)
            return tlm_errf(e, TLM_ECONFIG,
                            "taper.ratio [%g, %g]: the mean of start and end must be 1 to keep the parameter "
                            "budget (got %g)",
                            s->r_start, s->r_end, (s->r_start + s->r_end) / 2);
        if (s->schedule == ENG_TAPER_SIGMOID && !(s->k > 0))
            return tlm_errf(e, TLM_ECONFIG, "taper.k %g must be positive", s->k);
    } else if (s->schedule == ENG_TAPER_BLOCKS) {
        if (s->n_groups < 1 || !s->groups)
            return tlm_errf(e, TLM_ECONFIG, "taper.groups: at least one group is needed");
        if (L % s->n_groups)
            return tlm_errf(e, TLM_ECONFIG, "taper.groups: %d groups do not split %d layers into equal groups",
                            s->n_groups, L);
        double sum = 0;
        for (int j = 0; j < s->n_groups; j++) {
            if (!(s->groups[j] > 0))
                return tlm_errf(e, TLM_ECONFIG, "taper.groups: multiplier %g must be above zero", s->groups[j]);
            sum += s->groups[j];
        }
        if (fabs(sum / s->n_groups - 1.0) > 1e-9)
            return tlm_errf(e, TLM_ECONFIG,
                            "taper.groups: the multipliers must average 1 to keep the parameter budget (mean %g)",
                            sum / s->n_groups);
    } else {
        return tlm_errf(e, TLM_ECONFIG, "taper: unknown schedule %d", s->schedule);
    }
    return 0;
}

int eng_taper_ideal(int L, int d_base, const eng_taper_spec *s, double *ideal, tlm_err *e)
{
    int rc = check_spec(L, d_base, s, e);
    if (rc)
        return rc;
    double ds = s->r_start * d_base, de = s->r_end * d_base;
    for (int l = 0; l < L; l++) {
        double t = L > 1 ? (double)l / (L - 1) : 0.0;
        switch (s->schedule) {
        case ENG_TAPER_UNIFORM:
            ideal[l] = d_base;
            break;
        case ENG_TAPER_LINEAR:
            ideal[l] = ds - (ds - de) * t;
            break;
        case ENG_TAPER_COSINE:
            ideal[l] = de + (ds - de) / 2 * (1 + cos(M_PI * t));
            break;
        case ENG_TAPER_SIGMOID:
            ideal[l] = de + (ds - de) / (1 + exp(s->k * (t - 0.5)));
            break;
        case ENG_TAPER_BLOCKS:
            ideal[l] = s->groups[l / (L / s->n_groups)] * d_base;
            break;
        }
    }
    return 0;
}

/* Is x (a width in model units) an exact multiple of m, allowing for the
 * float error of ratio x d_base? */
static int exact_multiple(double x, int m, long *units)
{
    double u = x / m;
    long r = lround(u);
    if (fabs(u - (double)r) > 1e-6)
        return 0;
    *units = r;
    return 1;
}

/* blocks: each group's width (an exact multiple of m) for its L / n_groups
 * layers; the groups must sum to the budget S (in units of m) */
static int blocks_widths(int L, int d_base, const eng_taper_spec *s, long S, int *widths, tlm_err *e)
{
    const int m = s->multiple, per = L / s->n_groups;
    long sum = 0;
    for (int j = 0; j < s->n_groups; j++) {
        long u;
        if (!exact_multiple(s->groups[j] * d_base, m, &u))
            return tlm_errf(e, TLM_ECONFIG,
                            "taper.groups: group %d width %g x %d = %g is not a multiple of taper.multiple %d",
                            j + 1, s->groups[j], d_base, s->groups[j] * d_base, m);
        for (int l = j * per; l < (j + 1) * per; l++)
            widths[l] = (int)(u * m);
        sum += u * per;
    }
    if (sum != S)
        return tlm_errf(e, TLM_ECONFIG, "taper.groups: widths sum to %ld, not the budget %ld", sum * m,
                        (long)L * d_base);
    return 0;
}

/* The n interior layers' widths (widths[0..n-1]) from their ideal widths,
 * summing to exactly T units of m: targets shifted by the (float-sized)
 * gap so their sum is T; floor, then hand out the remaining units to the
 * largest remainders.  Ties go to the layer nearer the wide end, which
 * keeps the result monotone. */
static int round_interior(const double *ideal, int n, long T, int m, int decreasing, int *widths, tlm_err *e)
{
    double y[ENG_MAX_LAYERS], sumx = 0;
    for (int i = 0; i < n; i++)
        sumx += ideal[i] / m;
    double shift = ((double)T - sumx) / n;
    long f[ENG_MAX_LAYERS], R = T;
    double frac[ENG_MAX_LAYERS];
    for (int i = 0; i < n; i++) {
        y[i] = ideal[i] / m + shift;
        f[i] = (long)floor(y[i] + 1e-9);
        frac[i] = y[i] - (double)f[i];
        if (frac[i] < 0)
            frac[i] = 0;
        R -= f[i];
    }
    if (R < 0 || R > n)
        return tlm_errf(e, TLM_ECONFIG, "taper: cannot round %d interior layers to the budget (remainder %ld)", n,
                        R);
    unsigned char chosen[ENG_MAX_LAYERS] = {0};
    for (long r = 0; r < R; r++) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            int idx = decreasing ? i : n - 1 - i; /* scan from the wide end */
            if (chosen[idx])
                continue;
            if (best < 0 || frac[idx] > frac[best] + 1e-12)
                best = idx;
        }
        chosen[best] = 1;
    }
    for (int i = 0; i < n; i++)
        widths[i] = (int)((f[i] + chosen[i]) * m);
    return 0;
}

/* The promises: every width positive, monotone, summing to the budget; a
 * failure here is a request we cannot honour */
static int verify_widths(int L, const int *widths, int decreasing, long budget, tlm_err *e)
{
    long total = 0;
    for (int l = 0; l < L; l++) {
        if (widths[l] <= 0)
            return tlm_errf(e, TLM_ECONFIG, "taper: layer %d width %d is at or below zero after rounding", l,
                            widths[l]);
        total += widths[l];
        if (l > 0 && (decreasing ? widths[l] > widths[l - 1] : widths[l] < widths[l - 1]))
            return tlm_errf(e, TLM_ECONFIG, "taper: rounding cannot keep layer %d (%d) and %d (%d) monotone", l - 1,
                            widths[l - 1], l, widths[l]);
    }
    if (total != budget)
        return tlm_errf(e, TLM_EINTERNAL, "taper: widths sum to %ld, not %ld", total, budget);
    return 0;
}

int eng_taper_compute(int L, int d_base, const eng_taper_spec *s, int *widths, tlm_err *e)
{
    double ideal[ENG_MAX_LAYERS];
    int rc = eng_taper_ideal(L, d_base, s, ideal, e);
    if (rc)
        return rc;
    if (s->schedule == ENG_TAPER_UNIFORM) {
        for (int l = 0; l < L; l++)
            widths[l] = d_base;
        return 0;
    }
    const int m = s->multiple;
    const long budget = (long)L * d_base;
    if (budget % m)
        return tlm_errf(e, TLM_ECONFIG,
                        "taper: the budget L x d_base = %d x %d = %ld is not a multiple of taper.multiple %d, so no "
                        "rounding can keep it exactly",
                        L, d_base, budget, m);
    const long S = budget / m;
    if (s->schedule == ENG_TAPER_BLOCKS)
        return blocks_widths(L, d_base, s, S, widths, e);

    /* linear / cosine / sigmoid: pinned ends */
    long a, b;
    if (!exact_multiple(s->r_start * d_base, m, &a))
        return tlm_errf(e, TLM_ECONFIG,
                        "taper: start width %g x %d = %g is not a multiple of taper.multiple %d (choose d_ff so "
                        "that ratio x d_ff is a multiple of %d)",
                        s->r_start, d_base, s->r_start * d_base, m, m);
    if (!exact_multiple(s->r_end * d_base, m, &b))
        return tlm_errf(e, TLM_ECONFIG,
                        "taper: end width %g x %d = %g is not a multiple of taper.multiple %d (choose d_ff so that "
                        "ratio x d_ff is a multiple of %d)",
                        s->r_end, d_base, s->r_end * d_base, m, m);
    if (a <= 0 || b <= 0)
        return tlm_errf(e, TLM_ECONFIG, "taper: a pinned end width is at or below zero (start %ld, end %ld)", a * m,
                        b * m);
    widths[0] = (int)(a * m);
    widths[L - 1] = (int)(b * m);
    const int n = L - 2;
    const long T = S - a - b;
    if (n == 0) {
        if (T != 0)
            return tlm_errf(e, TLM_ECONFIG, "taper: two layers of %ld and %ld do not sum to the budget %ld", a * m,
                            b * m, budget);
        return 0;
    }
    const int decreasing = a >= b;
    if ((rc = round_interior(ideal + 1, n, T, m, decreasing, widths + 1, e)))
        return rc;
    return verify_widths(L, widths, decreasing, budget, e);
}

int eng_taper_widths(const eng_config *c, int *widths, tlm_err *e)
{
    eng_taper_spec s = {
        .schedule = c->taper.schedule,
        .r_start = c->taper.ratio[0],
        .r_end = c->taper.ratio[1],
        .k = c->taper.k,
        .groups = c->taper.groups,
        .n_groups = c->taper.n_groups,
        .multiple = c->taper.multiple,
    };
    return eng_taper_compute(c->model.layers, c->model.d_ff, &s, widths, e);
}
