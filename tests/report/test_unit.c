/* test_unit.c: the pieces of tlm-report that need no database:
 * seed statistics against hand-computed values (paired differences with
 * their t intervals for n = 1, 2, 3, missing pairs and no common seed), the words for missing
 * cells, the blocks-schedule classification, number formatting (no "-0.00",
 * exact round trips for CSV/JSON), best-value marking (our rows only,
 * ties all marked), the exact output of each renderer on a small table
 * (escaping in Markdown, CSV quoting, LaTeX specials), the Pearson
 * correlation, the paper's embedded numbers (each Table 2 average is
 * the mean of its eight accuracies, as the paper defines it), and the
 * figures' pieces: axis ranges with a margin (a loss down to 2.2 is not
 * cut off, widths start at 0), ticks, text measured and shortened, and SVG
 * that stays well-formed whatever a label from results.db holds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/plot_internal.h"
#include "reports/rpt.h"
#include "tests/lib/tap.h"

/* A context with jobs in given states, no database. */
static rpt_job JOBS[12];
static rpt_ctx CTX;

static void set_jobs(const int *status, int n)
{
    memset(JOBS, 0, sizeof JOBS);
    for (int i = 0; i < n; i++) {
        JOBS[i].status = status[i];
        JOBS[i].reason = status[i] == RPT_FAILED ? "oom" : NULL;
    }
    memset(&CTX, 0, sizeof CTX);
    CTX.jobs = JOBS;
    CTX.n_jobs = n;
}

static void test_stats(void)
{
    int st[] = {RPT_DONE, RPT_DONE, RPT_DONE, RPT_PENDING, RPT_DONE, RPT_FAILED};
    set_jobs(st, 6);
    int idx[] = {0, 1, 2, 3, 4, 5};
    double v[] = {10, 12, 14, 99, NAN, 77};
    unsigned char s[] = {RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_NAN, RPT_V_OK};
    rpt_stat a;
    rpt_stat_jobs(&CTX, idx, 6, v, s, 1.0, &a);
    TAP_OK(a.n == 3 && a.mean == 12 && fabs(a.std - 2) < 1e-12,
           "mean 12, sample std 2 over the finished seeds (n=%d, mean %.17g, std %.17g)", a.n, a.mean, a.std);
    TAP_OK(a.pending == 1 && a.failed == 1 && a.nonfinite == 1, "pending, failed and NaN seeds are counted apart");
    char buf[128];
    rpt_stat_note(&a, buf, sizeof buf);
    TAP_OK(!strcmp(buf, "1 pending, 1 failed, 1 NaN/inf"), "note: '%s'", buf);
    rpt_stat_jobs(&CTX, idx, 3, v, s, 100, &a);
    TAP_OK(a.mean == 1200 && fabs(a.std - 200) < 1e-9, "scale (percent) applies to mean and std");
    rpt_stat_note(&a, buf, sizeof buf);
    TAP_OK(buf[0] == '\0', "no note when every seed counts");
    rpt_stat_jobs(&CTX, idx, 1, v, s, 1.0, &a);
    TAP_OK(a.n == 1 && isnan(a.std), "one seed: no std");

    struct {
        int status[3], n;
        unsigned char state[3];
        const char *why;
    } cases[] = {
        {{RPT_RUNNING, RPT_PENDING, RPT_FAILED}, 3, {0, 0, 0}, "running"},
        {{RPT_PENDING, RPT_FAILED, 0}, 2, {0, 0, 0}, "pending"},
        {{RPT_INTERRUPTED, RPT_PENDING, 0}, 2, {0, 0, 0}, "interrupted"},
        {{RPT_FAILED, RPT_FAILED, 0}, 2, {0, 0, 0}, "failed (oom)"},
        {{RPT_DONE, 0, 0}, 1, {RPT_V_NAN, 0, 0}, "not finite (NaN/inf)"},
        {{RPT_DONE, 0, 0}, 1, {RPT_V_ABSENT, 0, 0}, "no eval"},
        {{0, 0, 0}, 0, {0, 0, 0}, "not in sweep"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set_jobs(cases[i].status, cases[i].n);
        double vv[3] = {1, 2, 3};
        rpt_stat_jobs(&CTX, idx, cases[i].n, vv, cases[i].state, 1.0, &a);
        rpt_stat_why(&a, buf, sizeof buf);
        TAP_OK(a.n == 0 && !strcmp(buf, cases[i].why), "why: '%s' (want '%s')", buf, cases[i].why);
    }
    /* a running job's intermediate evaluation is not its result */
    int run[] = {RPT_RUNNING};
    set_jobs(run, 1);
    unsigned char ok1[] = {RPT_V_OK};
    double one[] = {5};
    rpt_stat_jobs(&CTX, idx, 1, one, ok1, 1.0, &a);
    TAP_OK(a.n == 0 && a.running == 1, "a running job's last evaluation does not count");
}

/* Renders t in fmt into a malloc'd string. */
static char *render(const rpt_table *t, int fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tlm_err e;
    if (!f || rpt_render(t, fmt, f, &e)) {
        if (f)
            fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    return buf;
}

/* Jobs 0..n-1 done with these seeds (a job with seed < 0 failed). */
static void set_seeded(const int *seed, int n)
{
    int st[12];
    for (int i = 0; i < n; i++)
        st[i] = seed[i] < 0 ? RPT_FAILED : RPT_DONE;
    set_jobs(st, n);
    for (int i = 0; i < n; i++)
        JOBS[i].seed = seed[i] < 0 ? -seed[i] - 1 : seed[i];
}

static int near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

static void test_paired(void)
{
    /* the 0.975 quantiles of Student's t (any table: 12.7062, 4.3027, 2.2281, 2.0423, 1.9623) */
    TAP_OK(near(rpt_t975(1), 12.706204736174707, 1e-9) && near(rpt_t975(2), 4.302652729749464, 1e-9) &&
               near(rpt_t975(3), 3.182446305284263, 1e-9) && near(rpt_t975(10), 2.228138851986274, 1e-9) &&
               near(rpt_t975(30), 2.042272456301238, 1e-9) && near(rpt_t975(1000), 1.962339081, 1e-8),
           "t quantiles: df 1 %.12g, 2 %.12g, 10 %.12g, 1000 %.12g", rpt_t975(1), rpt_t975(2), rpt_t975(10),
           rpt_t975(1000));
    TAP_OK(isnan(rpt_t975(0)), "no t quantile for df 0");

    /* three seeds: a = 11, 12, 13 against b = 10, 10.5, 11.2: differences 1, 1.5, 1.8,
     * mean 4.3/3, sd 0.7/sqrt(3), half-width t(2) * 0.7/3 */
    int seeds3[] = {0, 1, 2, 0, 1, 2};
    set_seeded(seeds3, 6);
    int ja[] = {0, 1, 2}, jb[] = {3, 4, 5};
    double va[] = {11, 12, 13}, vb[] = {10, 10.5, 11.2};
    unsigned char ok3[] = {RPT_V_OK, RPT_V_OK, RPT_V_OK};
    rpt_paired d;
    rpt_paired_jobs(&CTX, ja, 3, va, ok3, jb, 3, vb, ok3, 1.0, &d);
    double half = 4.302652729749464 * 0.7 / 3;
    TAP_OK(d.paired == 1 && d.n == 3 && near(d.mean, 4.3 / 3, 1e-12) && near(d.sd, 0.7 / sqrt(3), 1e-12) &&
               near(d.lo, 4.3 / 3 - half, 1e-9) && near(d.hi, 4.3 / 3 + half, 1e-9) && d.sig == RPT_SIG_YES &&
               d.note[0] == '\0',
           "n=3: mean 1.4333, [0.4294, 2.4373], excludes 0 (got %.6g [%.6g, %.6g] sig %d '%s')", d.mean, d.lo, d.hi,
           d.sig, d.note);
    /* pairing is by seed, not by position: b in another order gives the same */
    int jb_rev[] = {5, 4, 3};
    double vb_rev[] = {11.2, 10.5, 10};
    rpt_paired r;
    rpt_paired_jobs(&CTX, ja, 3, va, ok3, jb_rev, 3, vb_rev, ok3, 1.0, &r);
    TAP_OK(r.n == 3 && near(r.mean, d.mean, 1e-12) && near(r.lo, d.lo, 1e-12), "pairs are matched by seed");
    /* scale (percent) applies to the differences */
    rpt_paired_jobs(&CTX, ja, 3, va, ok3, jb, 3, vb, ok3, 100, &r);
    TAP_OK(near(r.mean, 430.0 / 3, 1e-9) && near(r.hi, 100 * d.hi, 1e-7), "scale applies to mean and interval");

    /* two seeds: differences 1 and 3: mean 2, sd sqrt(2), half-width t(1) = 12.7062 */
    int seeds2[] = {0, 1, 0, 1};
    set_seeded(seeds2, 4);
    int ja2[] = {0, 1}, jb2[] = {2, 3};
    double va2[] = {10, 12}, vb2[] = {9, 9};
    rpt_paired_jobs(&CTX, ja2, 2, va2, ok3, jb2, 2, vb2, ok3, 1.0, &d);
    TAP_OK(d.n == 2 && d.mean == 2 && near(d.lo, 2 - 12.706204736174707, 1e-9) &&
               near(d.hi, 2 + 12.706204736174707, 1e-9) && d.sig == RPT_SIG_NO,
           "n=2: mean 2, [-10.71, +14.71], includes 0 (got %.6g [%.6g, %.6g])", d.mean, d.lo, d.hi);

    /* one seed: a difference, no interval */
    rpt_paired_jobs(&CTX, ja2, 1, va2, ok3, jb2, 1, vb2, ok3, 1.0, &d);
    TAP_OK(d.paired == 1 && d.n == 1 && d.mean == 1 && isnan(d.lo) && isnan(d.hi) && isnan(d.sd) &&
               d.sig == RPT_SIG_NONE && !strcmp(d.note, "no interval"),
           "n=1: the difference, no interval ('%s')", d.note);

    /* missing pairs: a has seeds 0, 1, 2; b's seed 2 failed and b has a seed 3 a lacks */
    int seeds_m[] = {0, 1, 2, 0, 1, -3, 3};
    set_seeded(seeds_m, 7);
    int jbm[] = {3, 4, 5, 6};
    double vbm[] = {10, 10.5, 0, 50};
    unsigned char okm[] = {RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_OK};
    rpt_paired_jobs(&CTX, ja, 3, va, ok3, jbm, 4, vbm, okm, 1.0, &d);
    TAP_OK(d.n == 2 && near(d.mean, 1.25, 1e-12) && d.only_a == 1 && d.only_b == 1 &&
               near(d.lo, 1.25 - 12.706204736174707 * 0.25, 1e-9) && !strcmp(d.note, "seeds 2, 3 unpaired"),
           "missing pairs: seeds 0, 1 paired (mean 1.25), seeds 2 and 3 left out and named ('%s')", d.note);
    /* a NaN evaluation counts as no value */
    unsigned char nan_a[] = {RPT_V_OK, RPT_V_NAN, RPT_V_OK};
    rpt_paired_jobs(&CTX, ja, 3, va, nan_a, jb, 3, vb, ok3, 1.0, &d);
    TAP_OK(d.n == 1 && d.mean == 1 && !strcmp(d.note, "no interval; seeds 1, 2 unpaired"),
           "a NaN seed is unpaired ('%s')", d.note);

    /* many unpaired seeds: the smallest four named, then how many (b has seeds 9, 8, 7, 6, 5, 4 and 0) */
    int seeds_many[] = {0, 9, 8, 7, 6, 5, 4, 0};
    set_seeded(seeds_many, 8);
    int jam[] = {0}, jbmany[] = {1, 2, 3, 4, 5, 6, 7};
    double vam[] = {3}, vbmany[] = {1, 1, 1, 1, 1, 1, 2};
    unsigned char ok7[] = {RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_OK};
    rpt_paired_jobs(&CTX, jam, 1, vam, ok7, jbmany, 7, vbmany, ok7, 1.0, &d);
    TAP_OK(d.n == 1 && d.mean == 1 && d.only_b == 6 && !strcmp(d.note, "no interval; seeds 4, 5, 6, 7 and 2 more unpaired"),
           "six unpaired seeds: '%s'", d.note);

    /* no seed in common: the difference of the means, no interval */
    int seeds_x[] = {0, 1, 5, 6};
    set_seeded(seeds_x, 4);
    rpt_paired_jobs(&CTX, ja2, 2, va2, ok3, jb2, 2, vb2, ok3, 1.0, &d);
    TAP_OK(d.paired == 0 && d.n == 0 && d.mean == 2 && isnan(d.lo) && d.sig == RPT_SIG_NONE &&
               !strcmp(d.note, "no seed in common: no interval"),
           "no seed in common: difference of means 2, no interval ('%s')", d.note);
    /* one side without a value */
    rpt_paired_jobs(&CTX, ja2, 2, va2, ok3, jb2, 0, vb2, ok3, 1.0, &d);
    TAP_OK(d.paired == -1 && isnan(d.mean), "b without a value: no difference");

    /* the cells: Markdown, CSV, JSON, LaTeX */
    rpt_table t;
    rpt_table_init(&t, "d", "Deltas");
    const rpt_col cols[] = {
        {"name", "name", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
        {"delta", "Δ", RPT_COL_DELTA, 0, 2, 1, RPT_DERIVED, 0},
    };
    rpt_panel *p = rpt_panel_add(&t, "", cols, 2);
    rpt_paired s3 = {.mean = 4.3 / 3, .lo = 4.3 / 3 - half, .hi = 4.3 / 3 + half, .n = 3, .paired = 1,
                     .sig = RPT_SIG_YES};
    rpt_paired s1 = {.mean = -0.5, .lo = NAN, .hi = NAN, .n = 1, .paired = 1, .sig = RPT_SIG_NONE,
                     .note = "no interval"};
    rpt_paired s2 = {.mean = 2, .lo = 2 - 12.706204736174707, .hi = 2 + 12.706204736174707, .n = 2, .paired = 1,
                     .sig = RPT_SIG_NO, .note = "seed 2 unpaired"};
    rpt_paired none = {.paired = -1, .mean = NAN};
    rpt_stat have = {.n = 1, .jobs = 1}, pending = {.jobs = 1, .pending = 1};
    int rows[4];
    for (int i = 0; i < 4; i++) {
        rows[i] = rpt_row_add(&t, p, RPT_OURS);
        rpt_set_text(&t, p, rows[i], 0, "r%d", i);
    }
    rpt_set_delta(&t, p, rows[0], 1, &s3, &have, &have, "uniform");
    rpt_set_delta(&t, p, rows[1], 1, &s1, &have, &have, "uniform");
    rpt_set_delta(&t, p, rows[2], 1, &s2, &have, &have, "uniform");
    rpt_set_delta(&t, p, rows[3], 1, &none, &have, &pending, "uniform");
    char *md = render(&t, RPT_FMT_MD);
    const char *want_md = "| r0 | +1.43 [+0.43, +2.44] (n=3) † |\n"
                          "| r1 | -0.50 (n=1; no interval) |\n"
                          "| r2 | +2.00 [-10.71, +14.71] (n=2; seed 2 unpaired) |\n"
                          "| r3 | _uniform pending_ |\n";
    TAP_OK(md && strstr(md, want_md), "Markdown: interval, n, the dagger where it excludes 0, why when empty");
    if (md && !strstr(md, want_md))
        printf("# got:\n%s\n", md);
    char *csv = render(&t, RPT_FMT_CSV);
    TAP_OK(csv && strstr(csv, "name,delta,delta_lo,delta_hi,delta_n,delta_sig,delta_note\r\n") &&
               strstr(csv, "r1,-0.5,,,1,,no interval\r\n") && strstr(csv, ",3,1,\r\n") &&
               strstr(csv, ",2,0,seed 2 unpaired\r\n") && strstr(csv, "r3,,,,,,uniform pending\r\n"),
           "CSV: X, X_lo, X_hi, X_n, X_sig (1, 0, empty), X_note");
    if (csv && !strstr(csv, ",2,0,seed 2 unpaired\r\n"))
        printf("# got:\n%s", csv);
    char *json = render(&t, RPT_FMT_JSON);
    TAP_OK(json && strstr(json, "\"lo\": null, \"hi\": null, \"n\": 1, \"paired\": true, \"significant\": null, "
                                "\"note\": \"no interval\"") &&
               strstr(json, "\"n\": 3, \"paired\": true, \"significant\": true, \"note\": null") &&
               strstr(json, "\"kind\": \"delta\""),
           "JSON: lo, hi, n, paired, significant (null without an interval)");
    char *tex = render(&t, RPT_FMT_LATEX);
    TAP_OK(tex && strstr(tex, "r0 & +1.43 [+0.43, +2.44] (n=3)$^{\\dagger}$ \\\\") &&
               strstr(tex, "r1 & -0.50 (n=1; no interval) \\\\") &&
               strstr(tex, "$^{\\dagger}$ the 95\\% interval of the paired difference excludes 0."),
           "LaTeX: the same text, a dagger in math, and a footnote saying what it means");
    free(md);
    free(csv);
    free(json);
    free(tex);

    /* the summary's words, from the numbers */
    rpt_finding_add(&t, p, rows[0], 1, "wider-late", "uniform", "ppl", -1, &s3, NAN);
    rpt_finding_add(&t, p, rows[1], 1, "wider-middle", "uniform", "ppl", -1, &s1, NAN);
    rpt_finding_add(&t, p, rows[2], 1, "wider-early", "uniform", "ppl", -1, &s2, NAN);
    rpt_finding_add(&t, p, rows[3], 1, "cosine", "uniform", "ppl", -1, &none, NAN);
    rpt_paired neg = {.mean = -0.9, .lo = -1.3, .hi = -0.5, .n = 4, .paired = 1, .sig = RPT_SIG_YES};
    rpt_finding_add(&t, p, rows[0], 1, "tapered", "uniform", "ppl", -1, &neg, NAN);
    rpt_finding_add(&t, p, rows[0], 1, "tapered (acc)", "uniform", "points", 1, &neg, NAN);
    rpt_paired apart = {.mean = 0.2, .lo = NAN, .hi = NAN, .paired = 0, .sig = RPT_SIG_NONE};
    rpt_finding_add(&t, p, rows[0], 1, "linear", "uniform", "ppl", -1, &apart, NAN);
    static const char *const want[] = {
        "wider-late is worse than uniform by 1.43 [0.43, 2.44] ppl, 3 seeds",
        "wider-middle against uniform: -0.50 ppl from one seed; no interval can be given",
        "wider-early is not distinguishable from uniform (+2.00 [-10.71, +14.71] ppl, 2 seeds; seed 2 unpaired)",
        "cosine has no result to compare with uniform (uniform pending)",
        "tapered is better than uniform by 0.90 [0.50, 1.30] ppl, 4 seeds",
        "tapered (acc) is worse than uniform by 0.90 [0.50, 1.30] points, 4 seeds",
        "linear against uniform: +0.20 ppl as a difference of means (no seed in common); no interval",
    };
    int good = t.n_findings == 7;
    for (int i = 0; good && i < 7; i++) {
        char text[512];
        rpt_finding_text(&t.findings[i], text, sizeof text);
        if (strcmp(text, want[i])) {
            printf("# got  '%s'\n# want '%s'\n", text, want[i]);
            good = 0;
        }
    }
    TAP_OK(good, "summary sentences: worse/better by the interval, not distinguishable, one seed, no result, "
                 "no seed in common");
    rpt_table_clear(&t);
}

static void test_axes(void)
{
    TAP_OK(!strcmp(rpt_blocks_kind("1.5,1,0.5"), "wider-early"), "1.5,1,0.5 is wider-early");
    TAP_OK(!strcmp(rpt_blocks_kind("0.75,1.5,0.75"), "wider-middle"), "0.75,1.5,0.75 is wider-middle");
    TAP_OK(!strcmp(rpt_blocks_kind("0.5, 1, 1.5"), "wider-late"), "0.5, 1, 1.5 is wider-late");
    TAP_OK(!strcmp(rpt_blocks_kind("2,0.5,0.5,1"), "wider-early"), "four groups, widest first: wider-early");
    TAP_OK(!strcmp(rpt_blocks_kind("0.5,0.5,2,1"), "wider-middle"), "four groups, widest third: wider-middle");
    TAP_OK(!strcmp(rpt_blocks_kind("1,1,1"), "flat"), "equal groups: flat");
    TAP_OK(rpt_blocks_kind("1.5;x") == NULL && rpt_blocks_kind(NULL) == NULL, "unparsable groups: NULL");
    char b[32];
    rpt_fmt_tokens(b, sizeof b, 30000000000LL);
    TAP_OK(!strcmp(b, "30B"), "30e9 tokens: %s", b);
    rpt_fmt_tokens(b, sizeof b, 2500000);
    TAP_OK(!strcmp(b, "2.5M"), "2.5e6 tokens: %s", b);
}

static void test_format(void)
{
    char b[64];
    rpt_fmt_num(b, sizeof b, -0.001, 2, 1);
    TAP_OK(!strcmp(b, "0.00"), "a difference rounding to zero prints 0.00, not -0.00 (%s)", b);
    rpt_fmt_bound(b, sizeof b, -0.0018, 2, 1);
    TAP_OK(!strcmp(b, "-0.002"), "an interval end rounding to zero keeps its sign (%s)", b);
    rpt_fmt_bound(b, sizeof b, 0.00004, 2, 1);
    TAP_OK(!strcmp(b, "+0.00004"), "... with up to three more decimals (%s)", b);
    rpt_fmt_bound(b, sizeof b, -0.000001, 2, 1);
    TAP_OK(!strcmp(b, "0.00"), "... and is 0 below that (%s)", b);
    rpt_fmt_bound(b, sizeof b, 0.05, 2, 1);
    TAP_OK(!strcmp(b, "+0.05"), "an end that does not round to zero is printed as any number (%s)", b);
    rpt_fmt_num(b, sizeof b, 0.33, 2, 1);
    TAP_OK(!strcmp(b, "+0.33"), "signed: %s", b);
    rpt_fmt_num(b, sizeof b, 16.275, 1, 0);
    TAP_OK(!strcmp(b, "16.3"), "one decimal: %s", b);
    rpt_fmt_num(b, sizeof b, INFINITY, 2, 0);
    TAP_OK(!strcmp(b, "inf"), "inf: %s", b);
    /* the exact numbers of CSV and JSON (tlm_fmt_exact): tests/common/test_fmt.c */
    TAP_OK(rpt_format_parse("latex") == RPT_FMT_LATEX && rpt_format_parse("tex") == RPT_FMT_LATEX &&
               rpt_format_parse("xls") < 0,
           "format names");
}

static void test_pearson(void)
{
    double up[] = {1, 2, 3, 4, 5}, down[] = {5, 4, 3, 2, 1}, gap[] = {0, NAN, 2, 3, 4}, few[] = {1, 2};
    TAP_OK(fabs(rpt_pearson_depth(up, 5) - 1) < 1e-12 && fabs(rpt_pearson_depth(down, 5) + 1) < 1e-12,
           "Pearson r of a line with depth: +-1");
    TAP_OK(fabs(rpt_pearson_depth(gap, 5) - 1) < 1e-12, "NaN layers are skipped");
    TAP_OK(isnan(rpt_pearson_depth(few, 2)), "fewer than three points: NaN");
}

static void test_render(void)
{
    rpt_table t;
    rpt_table_init(&t, "demo", "Demo table");
    const rpt_col cols[] = {
        {"name", "name", RPT_COL_TEXT, 0, 0, 0, RPT_OURS, 0},
        {"ppl", "val ppl", RPT_COL_STAT, -1, 2, 0, RPT_OURS, 0},
        {"delta", "Δ", RPT_COL_NUM, 0, 2, 1, RPT_DERIVED, 0},
    };
    rpt_panel *p = rpt_panel_add(&t, "A & B", cols, 3);
    rpt_panel_key(&t, p, "arch", "transformer");
    int r0 = rpt_row_add(&t, p, RPT_OURS), r1 = rpt_row_add(&t, p, RPT_OURS), r2 = rpt_row_add(&t, p, RPT_OURS),
        r3 = rpt_row_add(&t, p, RPT_PAPER);
    rpt_set_text(&t, p, r0, 0, "a|b, \"c\"");
    rpt_stat s = {.mean = 16.28, .std = 0.125, .n = 3, .jobs = 3};
    rpt_set_stat(&t, p, r0, 1, &s);
    rpt_set_text(&t, p, r1, 0, "x_y 50%%");
    rpt_stat s1 = {.mean = 15.5, .std = NAN, .n = 1, .jobs = 2, .pending = 1};
    rpt_set_stat(&t, p, r1, 1, &s1);
    rpt_set_num(p, r1, 2, -0.78);
    rpt_set_text(&t, p, r2, 0, "late");
    rpt_stat s2 = {.jobs = 1, .failed = 1, .fail_reason = "diverged"};
    rpt_set_stat(&t, p, r2, 1, &s2);
    rpt_set_text(&t, p, r3, 0, "x_y 50%%");
    rpt_set_num(p, r3, 1, 14.0); /* the paper's row: better, but not ours, so never "best" */
    rpt_mark_best(&t);
    TAP_OK(p->rows[r1].cells[1].best && !p->rows[r0].cells[1].best && !p->rows[r3].cells[1].best,
           "best: lowest of our rows, paper rows ignored");
    int filled, total;
    rpt_table_count(&t, &filled, &total);
    TAP_OK(filled == 2 && total == 3, "count: 2 of 3 cells filled");

    char *md = render(&t, RPT_FMT_MD);
    const char *want_md = "## Demo table\n\n### A & B\n\n| name | val ppl | Δ |\n|---|---:|---:|\n"
                          "| a\\|b, \"c\" | 16.28 ± 0.12 (n=3) | - |\n"
                          "| x_y 50% | **15.50** (n=1; 1 pending) | -0.78 |\n"
                          "| late | _failed (diverged)_ | - |\n"
                          "| _paper_ | 14.00 | - |\n\n";
    TAP_OK(md && !strcmp(md, want_md), "Markdown exactly");
    if (md && strcmp(md, want_md))
        printf("# got:\n%s\n", md);
    char *csv = render(&t, RPT_FMT_CSV);
    const char *want_csv = "arch,source,name,ppl,ppl_std,ppl_n,ppl_note,delta,delta_note\r\n"
                           "transformer,ours,\"a|b, \"\"c\"\"\",16.28,0.125,3,,,\r\n"
                           "transformer,ours,x_y 50%,15.5,,1,1 pending,-0.78,\r\n"
                           "transformer,ours,late,,,,failed (diverged),,\r\n"
                           "transformer,paper,x_y 50%,14,,,,,\r\n";
    TAP_OK(csv && !strcmp(csv, want_csv), "CSV exactly (quoting, full precision, notes)");
    if (csv && strcmp(csv, want_csv))
        printf("# got:\n%s\n", csv);
    char *tex = render(&t, RPT_FMT_LATEX);
    TAP_OK(tex && strstr(tex, "x\\_y 50\\% & \\textbf{15.50} (n=1)\\textsuperscript{*} & -0.78 \\\\") &&
               strstr(tex, "\\begin{tabular}{lrr}") && strstr(tex, "A \\& B") &&
               strstr(tex, "name & val ppl & $\\Delta$ \\\\") && strstr(tex, "\\textit{failed (diverged)}") &&
               strstr(tex, "16.28 $\\pm$ 0.12 (n=3)"),
           "LaTeX: specials escaped, bold best, $\\pm$, Δ as math");
    char *json = render(&t, RPT_FMT_JSON);
    TAP_OK(json && strstr(json, "\"name\": \"a|b, \\\"c\\\"\"") &&
               strstr(json, "{\"value\": 15.5, \"std\": null, \"n\": 1, \"note\": \"1 pending\", \"best\": true}") &&
               strstr(json, "{\"value\": null, \"missing\": \"failed (diverged)\"}"),
           "JSON: escaped strings, null std, missing with why");
    free(md);
    free(csv);
    free(tex);
    free(json);
    rpt_table_clear(&t);
}

static void test_paper(void)
{
    TAP_OK(rpt_paper_fig2("wider-early") == 15.96 && rpt_paper_fig2("uniform") == 16.28 &&
               isnan(rpt_paper_fig2("flat")),
           "Figure 2 values");
    TAP_OK(rpt_paper_table1("cosine", 1.5, 0.5) == 14.44 && rpt_paper_table1("sigmoid", 1.75, 0.25) == 17.12 &&
               isnan(rpt_paper_table1("cosine", 1.1, 0.9)),
           "Table 1 values");
    static const char *const acc[] = {"lambada_acc", "piqa", "hellaswag", "winogrande",
                                      "arc_easy",    "arc_challenge", "siqa", "boolq"};
    static const char *const arch[] = {"transformer", "gated_attn", "hope_attn", "titans"};
    int consistent = 1;
    for (int a = 0; a < 4; a++)
        for (int tp = 0; tp < 2; tp++) {
            double sum = 0;
            for (int m = 0; m < 8; m++)
                sum += rpt_paper_table2("760m", arch[a], tp, acc[m]);
            double avg = rpt_paper_table2("760m", arch[a], tp, "avg");
            if (fabs(sum / 8 - avg) > 0.006) {
                consistent = 0;
                printf("# %s tapered=%d: mean of eight %.4f, avg %.2f\n", arch[a], tp, sum / 8, avg);
            }
        }
    TAP_OK(consistent, "Table 2 (760M): every avg is the mean of its eight accuracies");
    TAP_OK(rpt_paper_table2("1.3b", "titans", 1, "wikitext_ppl") == 15.76 &&
               isnan(rpt_paper_table2("1.3b", "titans", 1, "piqa")),
           "Table 2 (1.3B): WikiText given, per-task columns absent");
    TAP_OK(rpt_paper_niah16k("transformer", 1) == 27.6 && isnan(rpt_paper_niah16k("gated_attn", 0)),
           "Table 3: the two quoted cells");
    TAP_OK(rpt_paper_round(16.28 - 15.18) == 1.1, "paper differences without binary noise");
}

static void test_plot(void)
{
    rpt__scale sc;
    /* the loss axis: the first steps near 5.5 stay inside, log ticks plain */
    rpt__scale_fit(&sc, 2.2, 5.55, 1, NAN, 300, 40, 0);
    int inside = pow(10, sc.lo) < 2.2 && pow(10, sc.hi) > 5.55;
    for (int i = 0; i < sc.n_ticks; i++)
        inside &= sc.tick[i] >= sc.lo && sc.tick[i] <= sc.hi;
    TAP_OK(inside && sc.n_ticks >= 3,
           "log axis 2.2..5.55: range [%.3f, %.3f] holds the data, %d ticks inside, first '%s'", pow(10, sc.lo),
           pow(10, sc.hi), sc.n_ticks, sc.label[0]);
    double p0 = rpt__scale_pos(&sc, 2.2), p1 = rpt__scale_pos(&sc, 5.55);
    TAP_OK(p0 > 0.02 && p1 < 0.98, "no point on the frame: 2.2 at %.3f, 5.55 at %.3f of the axis", p0, p1);
    rpt__scale_fit(&sc, 128, 384, 0, 0, 300, 40, 0);
    TAP_OK(sc.lo == 0 && sc.hi > 384 && rpt__scale_pos(&sc, 384) < 0.97,
           "widths from 0: range [%g, %g]", sc.lo, sc.hi);
    rpt__scale_fit(&sc, -1.84, 1.03, 0, NAN, 350, 45, 0);
    int nice = sc.n_ticks >= 4;
    for (int i = 0; i < sc.n_ticks; i++)
        nice &= fabs(sc.tick[i] * 2 - round(sc.tick[i] * 2)) < 1e-9;
    TAP_OK(nice && !strcmp(sc.label[0], "\xe2\x88\x92" "1.5"), "ticks every 0.5 with a true minus: '%s' first",
           sc.label[0]);
    rpt__scale_fit(&sc, 0, 5, 0, NAN, 400, 45, 1);
    int whole = 1;
    for (int i = 0; i < sc.n_ticks; i++)
        whole &= sc.tick[i] == floor(sc.tick[i]);
    TAP_OK(whole, "layers: integer ticks only");

    double w = rpt__text_width("validation perplexity", 12.5);
    TAP_OK(fabs(w - 128.6) < 1.5, "text width from DejaVu Sans' advances: %.1f px (rsvg-convert draws 128)", w);
    rpt_arena a = {0};
    const char *fit = rpt__text_fit(&a, "cosine 1.75->0.25 with a label far too long", 11, 80);
    TAP_OK(fit && rpt__text_width(fit, 11) <= 80 && strstr(fit, "\xe2\x80\xa6") && !strncmp(fit, "cosine", 6),
           "a long label shortened to fit with an ellipsis: '%s'", fit ? fit : "(null)");
    rpt_arena_clear(&a);

    /* a hostile label: markup, control characters, invalid UTF-8 */
    rpt_figure f;
    rpt_figure_init(&f);
    f.title = "t";
    rpt_axes *ax = rpt_figure_axes(&f, "a<b>&\x01c\x02\x1b");
    rpt_series *s = rpt_figure_series(&f, "x</text>\xff\xfe&y", 0, 2, 0);
    TAP_OK(ax && s, "a figure with one series");
    s->x[0] = 0;
    s->x[1] = 1;
    s->y[0] = 1;
    s->y[1] = 2;
    char *svg = NULL;
    size_t len = 0;
    tlm_err e = {0};
    int rc = rpt_plot_svg(&f, &svg, &len, &e);
    TAP_OK(rc == 0 && svg && strstr(svg, "x&lt;/text&gt;&amp;y") && strstr(svg, "a&lt;b&gt;&amp;") &&
               !strchr(svg, '\x1b') && !strstr(svg, "\xff") && !strstr(svg, "</text>\xff") &&
               strlen(svg) == len,
           "labels escaped for XML, control bytes and invalid UTF-8 dropped");
    free(svg);
    rpt_figure_clear(&f);

    /* sharex (the delta figure's panels): both axes span both series' x, so 0..1 and 5..10 give each a tick 10 */
    int tens[2];
    for (int share = 0; share < 2; share++) {
        rpt_figure_init(&f);
        f.title = "t";
        f.sharex = share;
        for (int k = 0; k < 2; k++) {
            rpt_figure_axes(&f, k ? "b" : "a");
            s = rpt_figure_series(&f, k ? "b" : "a", k, 2, 0);
            if (!s)
                break;
            s->x[0] = k ? 5 : 0;
            s->x[1] = k ? 10 : 1;
            s->y[0] = s->y[1] = 1;
        }
        svg = NULL;
        tens[share] = -1; /* not drawn */
        if (s && rpt_plot_svg(&f, &svg, &len, &e) == 0) {
            tens[share] = 0;
            for (const char *p = svg, *t; (t = strstr(p, ">10</text>")); p = t + 1)
                tens[share]++;
        }
        free(svg);
        rpt_figure_clear(&f);
    }
    TAP_OK(tens[0] == 1 && tens[1] == 2, "sharex: a tick 10 on one axes alone, on both shared (%d, %d)", tens[0],
           tens[1]);
}

int main(void)
{
    test_stats();
    test_paired();
    test_axes();
    test_format();
    test_pearson();
    test_render();
    test_paper();
    test_plot();
    return tap_done();
}
