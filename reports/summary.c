/* summary.c: a table's comparisons in plain words, for the summary that
 * opens report.md: what the seeds support ("worse than uniform by 1.10
 * [0.85, 1.35] ppl, 3 seeds"), what they do not ("not distinguishable"),
 * and what cannot be said yet (one seed, no seed in common, no result).
 * Written from the numbers alone, never from the paper's claims.
 * Must not: round differently from the tables (rpt_fmt_num). */
#include "reports/rpt.h"

#include <math.h>
#include <string.h>

/* "3 seeds" or "2 seeds; seed 2 unpaired" */
static void seeds_text(const rpt_paired *d, char *out, size_t cap)
{
    snprintf(out, cap, "%d seed%s%s%s", d->n, d->n == 1 ? "" : "s", d->note[0] && d->n >= 2 ? "; " : "",
             d->n >= 2 ? d->note : "");
}

void rpt_finding_text(const rpt_finding *f, char *out, size_t cap)
{
    const rpt_paired *d = &f->d;
    char m[64], lo[64], hi[64], seeds[160];
    if (d->paired < 0) {
        snprintf(out, cap, "%s has no result to compare with %s (%s)", f->what, f->against,
                 f->why ? f->why : "no value");
        return;
    }
    rpt_fmt_num(m, sizeof m, d->mean, f->decimals, 1);
    if (d->paired == 0) {
        snprintf(out, cap, "%s against %s: %s %s as a difference of means (no seed in common); no interval", f->what,
                 f->against, m, f->unit);
        return;
    }
    if (d->n < 2) {
        const char *rest = strchr(d->note, ';'); /* "no interval; seed 2 unpaired" */
        snprintf(out, cap, "%s against %s: %s %s from one seed; no interval can be given%s%s", f->what, f->against, m,
                 f->unit, rest ? " (" : "", rest ? rest + 2 : "");
        if (rest && strlen(out) + 1 < cap)
            strcat(out, ")");
        return;
    }
    seeds_text(d, seeds, sizeof seeds);
    if (d->sig == RPT_SIG_YES) {
        /* the size of the difference and its interval, in the direction the words give */
        int up = d->mean > 0;
        double a = up ? d->lo : -d->hi, b = up ? d->hi : -d->lo;
        rpt_fmt_num(m, sizeof m, fabs(d->mean), f->decimals, 0);
        rpt_fmt_bound(lo, sizeof lo, a, f->decimals, 0);
        rpt_fmt_bound(hi, sizeof hi, b, f->decimals, 0);
        snprintf(out, cap, "%s is %s than %s by %s [%s, %s] %s, %s", f->what,
                 (up ? 1 : -1) == f->better ? "better" : "worse", f->against, m, lo, hi, f->unit, seeds);
        return;
    }
    rpt_fmt_bound(lo, sizeof lo, d->lo, f->decimals, 1);
    rpt_fmt_bound(hi, sizeof hi, d->hi, f->decimals, 1);
    snprintf(out, cap, "%s is not distinguishable from %s (%s [%s, %s] %s, %s)", f->what, f->against, m, lo, hi,
             f->unit, seeds);
}
