/* plot_axis.c: an axis fitted to its data: the visible range with a
 * margin of 5% each side (so no point sits on the frame, as matplotlib's
 * default margins do), ticks at 1, 2, 2.5 or 5 times a power of ten about
 * every min_gap pixels, log axes with decades, or with plain ticks when the
 * data span less than a decade (a loss from 5.5 to 2.2 reads 2, 3, 4, 5).
 * Must not: know about series or pixels beyond the length it is given. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/plot_internal.h"

/* The smallest of 1, 2, 2.5, 5 (1, 2, 5 for integers) x 10^k at least raw. */
static double nice_step(double raw, int integer)
{
    double p = pow(10, floor(log10(raw)));
    static const double M[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++) {
        if (integer && M[i] == 2.5)
            continue;
        if (M[i] * p >= raw * (1 - 1e-9))
            return M[i] * p;
    }
    return 10 * p;
}

/* Decimals that show a step: 0.25 -> 2, 0.5 -> 1, 2 -> 0. */
static int step_decimals(double step)
{
    int d = 0;
    while (d < 8 && fabs(step * pow(10, d) - round(step * pow(10, d))) > 1e-6 * step * pow(10, d))
        d++;
    return d;
}

/* v with d decimals, a true minus sign (U+2212) for negatives, no "-0". */
static void fmt_tick(char *out, size_t cap, double v, int d)
{
    if (fabs(v) < 0.5 * pow(10, -d))
        v = 0;
    char num[32];
    snprintf(num, sizeof num, "%.*f", d, fabs(v));
    snprintf(out, cap, "%s%.20s", v < 0 ? "\xe2\x88\x92" : "", num);
}

/* 10^k as "10" with a superscript exponent for large and small powers,
 * plain digits between 0.001 and 100000. */
static void fmt_decade(char *out, size_t cap, int k)
{
    if (k >= -3 && k <= 5) {
        fmt_tick(out, cap, pow(10, k), k < 0 ? -k : 0);
        return;
    }
    static const char *const SUP[] = {"\xe2\x81\xb0", "\xc2\xb9",     "\xc2\xb2",     "\xc2\xb3",     "\xe2\x81\xb4",
                                      "\xe2\x81\xb5", "\xe2\x81\xb6", "\xe2\x81\xb7", "\xe2\x81\xb8", "\xe2\x81\xb9"};
    char digits[12];
    snprintf(digits, sizeof digits, "%d", k < 0 ? -k : k);
    size_t at = (size_t)snprintf(out, cap, "10%s", k < 0 ? "\xe2\x81\xbb" : "");
    for (const char *p = digits; *p && at < cap; p++)
        at += (size_t)snprintf(out + at, cap - at, "%s", SUP[*p - '0']);
}

/* Linear ticks over [lo, hi] (values) into s, at positions f(v). */
static void linear_ticks(rpt__scale *s, double lo, double hi, double target, int integer, int log)
{
    double step = nice_step((hi - lo) / (target > 1 ? target : 1), integer);
    if (integer && step < 1)
        step = 1;
    int d = step_decimals(step);
    s->n_ticks = 0;
    for (double t = ceil(lo / step - 1e-9) * step; t <= hi * (1 + 1e-12) + 1e-12 && s->n_ticks < RPT__MAX_TICKS;
         t += step) {
        if (log && t <= 0)
            continue;
        s->tick[s->n_ticks] = log ? log10(t) : t;
        fmt_tick(s->label[s->n_ticks], sizeof s->label[0], t, d);
        s->n_ticks++;
    }
}

void rpt__scale_fit(rpt__scale *s, double dmin, double dmax, int log, double hint, double len, double min_gap,
                    int integer)
{
    memset(s, 0, sizeof *s);
    s->log = log;
    if (log) {
        if (!(dmin > 0))
            dmin = dmax > 0 ? dmax / 10 : 1;
        if (!(dmax > 0))
            dmax = dmin * 10;
    }
    if (isnan(dmin) || isnan(dmax)) {
        dmin = 0;
        dmax = 1;
    }
    double data_min = dmin;
    if (!isnan(hint) && (!log || hint > 0)) {
        dmin = fmin(dmin, hint);
        dmax = fmax(dmax, hint);
    }
    double a = log ? log10(dmin) : dmin, b = log ? log10(dmax) : dmax;
    if (!(b > a)) {
        double w = log ? 0.05 : (a != 0 ? fabs(a) * 0.05 : 0.5);
        a -= w;
        b += w;
    }
    double m = 0.05 * (b - a);
    s->lo = a - m;
    s->hi = b + m;
    /* widths start at 0: a bar chart's baseline, not a margin below it */
    if (!log && hint == 0 && data_min > 0 && s->lo < 0)
        s->lo = 0;
    double target = len / (min_gap > 1 ? min_gap : 1);
    if (target < 2)
        target = 2;
    if (log && s->hi - s->lo >= 1.0) {
        /* decades, thinned to fit */
        int k0 = (int)ceil(s->lo - 1e-9), k1 = (int)floor(s->hi + 1e-9), every = 1;
        while ((k1 - k0) / every + 1 > target + 1)
            every++;
        for (int k = k0; k <= k1 && s->n_ticks < RPT__MAX_TICKS; k++)
            if ((k - k0) % every == 0) {
                s->tick[s->n_ticks] = k;
                fmt_decade(s->label[s->n_ticks], sizeof s->label[0], k);
                s->n_ticks++;
            }
        return;
    }
    if (!log) {
        linear_ticks(s, s->lo, s->hi, target, integer, 0);
        return;
    }
    /* plain ticks on a log axis are closest at the top: the finest step
     * whose closest two ticks are still min_gap * 0.6 apart */
    double a0 = pow(10, s->lo), b0 = pow(10, s->hi);
    for (double t = 2 * target; t >= 2; t /= 1.25) {
        linear_ticks(s, a0, b0, t, integer, 1);
        double closest = INFINITY;
        for (int i = 1; i < s->n_ticks; i++)
            closest = fmin(closest, (s->tick[i] - s->tick[i - 1]) / (s->hi - s->lo) * len);
        if (s->n_ticks <= 2 || closest >= 0.6 * min_gap)
            return;
    }
}

void rpt__scale_cats(rpt__scale *s, int n, const char **names, int inverted)
{
    memset(s, 0, sizeof *s);
    s->lo = 0.5;
    s->hi = n + 0.5;
    s->inverted = inverted;
    s->cats = names;
    for (int i = 0; i < n && i < RPT__MAX_TICKS; i++) {
        s->tick[i] = i + 1;
        s->n_ticks++;
    }
}

double rpt__scale_upos(const rpt__scale *s, double u)
{
    double p = (u - s->lo) / (s->hi - s->lo);
    return s->inverted ? 1 - p : p;
}

double rpt__scale_pos(const rpt__scale *s, double v)
{
    if (s->log) {
        if (!(v > 0))
            return NAN;
        v = log10(v);
    }
    return rpt__scale_upos(s, v);
}
