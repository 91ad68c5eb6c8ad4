/* fmt.c: number and duration text (fmt.h).  Must not: allocate, or write
 * past cap. */
#include "common/fmt.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void tlm_fmt_exact(char *out, size_t cap, double v)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        snprintf(out, cap, "%.0f", v);
    else
        tlm_fmt_shortest(out, cap, v);
}

void tlm_fmt_shortest(char *out, size_t cap, double v)
{
    /* the shortest %.*g that reads back as v; reading back exactly is
     * monotone in the precision (p digits are also p + 1 digits), so a
     * binary search finds it */
    int lo = 1, hi = 17;
    snprintf(out, cap, "%.15g", v);
    if (strtod(out, NULL) == v)
        hi = 15;
    else
        lo = 16;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(out, cap, "%.*g", mid, v);
        if (strtod(out, NULL) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(out, cap, "%.*g", lo, v);
}

void tlm_fmt_steps(char *out, size_t cap, double v, const tlm_fmt_step *steps, size_t n)
{
    size_t i = 0;
    while (i + 1 < n && !(v >= steps[i].at))
        i++;
    double x = v / steps[i].div;
    snprintf(out, cap, steps[i].fmt_whole && x == floor(x) ? steps[i].fmt_whole : steps[i].fmt, x);
}

void tlm_fmt_si(char *out, size_t cap, double v, int max_unit, const char *fmt_scaled, const char *fmt_plain)
{
    static const char *const unit[] = {"", "k", "M", "G", "T", "P", "E", "Z", "Y"};
    if (max_unit > 8)
        max_unit = 8;
    int u = 0;
    while (fabs(v) >= 1000 && u < max_unit) {
        v /= 1000; /* step by step, not v / 1e6: the digits shown depend on it */
        u++;
    }
    snprintf(out, cap, u ? fmt_scaled : fmt_plain, v, unit[u]);
}

void tlm_fmt_duration(char *out, size_t cap, double s, tlm_dur_round how)
{
    if (!isfinite(s) || s < 0) {
        snprintf(out, cap, "?");
        return;
    }
    int level, a = 0, b = 0; /* 2: a hours, b minutes; 1: a minutes, b seconds; 0: secs */
    double secs = s;
    if (how == TLM_DUR_NEAREST) {
        int t = s < 1e9 ? (int)(s + 0.5) : 999999999;
        level = t >= 3600 ? 2 : t >= 60 ? 1 : 0;
        a = level == 2 ? t / 3600 : t / 60;
        b = level == 2 ? t / 60 % 60 : t % 60;
        secs = t;
    } else {
        level = s >= 3600 ? 2 : s >= 60 ? 1 : 0;
        if (level == 2) {
            a = s / 3600 < INT_MAX ? (int)(s / 3600) : INT_MAX;
            b = (int)fmod(s / 60, 60);
        } else if (level == 1) {
            a = (int)(s / 60);
            b = (int)fmod(s, 60);
        }
    }
    if (level == 2)
        snprintf(out, cap, "%dh%02dm", a, b);
    else if (level == 1)
        snprintf(out, cap, "%dm%02ds", a, b);
    else
        snprintf(out, cap, "%.0fs", secs); /* TLM_DUR_DOWN: 59.7 s reads 60s */
}
