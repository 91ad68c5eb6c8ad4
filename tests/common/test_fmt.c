/* test_fmt.c: common/fmt.c with each program's own parameters, so that
 * the lines people and scripts read stay as they were: tlm-worker's
 * counts and durations (cut down), tlmd's (rounded), the plan's SI
 * numbers, tlm-data's sizes, tlm-report's token counts, and the exact
 * numbers of configs, CSV and JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"
#include "tests/lib/tap.h"

static const tlm_fmt_step WORKER[] = {
    {1e9, 1e9, "%.2fG", NULL}, {1e6, 1e6, "%.2fM", NULL}, {1e3, 1e3, "%.1fk", NULL}, {0, 1, "%.0f", NULL}};
static const tlm_fmt_step DATA[] = {{1e9, 1e9, "%.2f GB", NULL}, {1e6, 1e6, "%.1f MB", NULL}, {0, 1e3, "%.0f kB", NULL}};
static const tlm_fmt_step TOKENS[] = {
    {1e12, 1e12, "%.3gT", "%.0fT"}, {1e9, 1e9, "%.3gB", "%.0fB"}, {1e6, 1e6, "%.3gM", "%.0fM"}, {1e3, 1e3, "%.3gK", "%.0fK"}};

static int steps_are(const tlm_fmt_step *s, size_t n, double v, const char *want)
{
    char b[64];
    tlm_fmt_steps(b, sizeof b, v, s, n);
    if (strcmp(b, want))
        TAP_DIAG("%.17g: got '%s', want '%s'", v, b, want);
    return !strcmp(b, want);
}

static int si_is(double v, int max_unit, const char *scaled, const char *want)
{
    char b[64];
    tlm_fmt_si(b, sizeof b, v, max_unit, scaled, "%.0f%s");
    if (strcmp(b, want))
        TAP_DIAG("%.17g: got '%s', want '%s'", v, b, want);
    return !strcmp(b, want);
}

static int dur_is(double s, tlm_dur_round how, const char *want)
{
    char b[32];
    tlm_fmt_duration(b, sizeof b, s, how);
    if (strcmp(b, want))
        TAP_DIAG("%.17g s: got '%s', want '%s'", s, b, want);
    return !strcmp(b, want);
}

static void test_steps(void)
{
    TAP_OK(steps_are(WORKER, 4, 1234567, "1.23M") && steps_are(WORKER, 4, 2.5e9, "2.50G") &&
               steps_are(WORKER, 4, 19701.95, "19.7k") && steps_are(WORKER, 4, 999, "999") &&
               steps_are(WORKER, 4, -1500, "-1500"),
           "tlm-worker's counts: 1.23M, 2.50G, 19.7k; below 1000 and negative ones unscaled");
    TAP_OK(steps_are(DATA, 3, 1.25e9, "1.25 GB") && steps_are(DATA, 3, 3.44e6, "3.4 MB") &&
               steps_are(DATA, 3, 12345, "12 kB") && steps_are(DATA, 3, 0, "0 kB"),
           "tlm-data's sizes: the last step divides too (0 kB)");
    TAP_OK(steps_are(TOKENS, 4, 30e9, "30B") && steps_are(TOKENS, 4, 1.5e9, "1.5B") &&
               steps_are(TOKENS, 4, 1234, "1.23K") && steps_are(TOKENS, 4, 2e12, "2T"),
           "tlm-report's token counts: whole numbers without decimals");
    TAP_OK(steps_are(WORKER, 4, NAN, "nan"), "NaN takes the last step");
}

static void test_si(void)
{
    TAP_OK(si_is(1234567, 4, "%.1f%s", "1.2M") && si_is(999.96, 4, "%.0f%s", "1000") &&
               si_is(1e15, 4, "%.1f%s", "1000.0T") && si_is(-1500, 4, "%.1f%s", "-1.5k"),
           "tlmd's numbers: at most T, |v| decides, 999.96 is not scaled");
    TAP_OK(si_is(124e6, 8, "%.3g%s", "124M") && si_is(7.52e20, 8, "%.3g%s", "752E") &&
               si_is(1e30, 8, "%.3g%s", "1e+06Y") && si_is(42, 8, "%.3g%s", "42"),
           "the plan's parameters and FLOPs: up to Y");
}

static void test_duration(void)
{
    TAP_OK(dur_is(119.6, TLM_DUR_NEAREST, "2m00s") && dur_is(59.7, TLM_DUR_NEAREST, "1m00s") &&
               dur_is(7325, TLM_DUR_NEAREST, "2h02m") && dur_is(42.4, TLM_DUR_NEAREST, "42s") &&
               dur_is(1e12, TLM_DUR_NEAREST, "277777h46m"),
           "tlmd: rounded to the second first, capped at 999999999 s");
    TAP_OK(dur_is(119.6, TLM_DUR_DOWN, "1m59s") && dur_is(59.7, TLM_DUR_DOWN, "60s") &&
               dur_is(7325, TLM_DUR_DOWN, "2h02m") && dur_is(3599.9, TLM_DUR_DOWN, "59m59s") &&
               dur_is(2.5, TLM_DUR_DOWN, "2s") && dur_is(-0.0, TLM_DUR_DOWN, "-0s"),
           "tlm-worker: each unit cut down, seconds under a minute by %%.0f");
    TAP_OK(dur_is(-1, TLM_DUR_NEAREST, "?") && dur_is(NAN, TLM_DUR_DOWN, "?") && dur_is(INFINITY, TLM_DUR_DOWN, "?"),
           "negative or not finite: ?");
}

static void test_exact(void)
{
    char b[TLM_NUMBER_TEXT];
    double xs[] = {0.1, 1.0 / 3, 21.334199053798205, 1e-300, 30000000000.0, -2.5, 5e-324, 1.7976931348623157e308};
    int exact = 1;
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        tlm_fmt_exact(b, sizeof b, xs[i]);
        exact &= strtod(b, NULL) == xs[i];
    }
    tlm_fmt_exact(b, sizeof b, 30000000000.0);
    TAP_OK(exact && !strcmp(b, "30000000000"), "exact numbers read back bit for bit; integers as integers");
    tlm_fmt_exact(b, sizeof b, 0.1);
    TAP_OK(!strcmp(b, "0.1"), "shortest form: %s", b);
    tlm_fmt_exact(b, sizeof b, 9007199254740994.0);
    TAP_OK(!strcmp(b, "9007199254740994"), "past 2^53, the shortest %%g that reads back: %s", b);
    tlm_fmt_exact(b, sizeof b, 1e17);
    TAP_OK(!strcmp(b, "1e+17"), "1e17: %s", b);
    /* tlm-worker's event numbers: shortest, integers included */
    tlm_fmt_shortest(b, sizeof b, 30000000000.0);
    TAP_OK(!strcmp(b, "3e+10"), "shortest: 3e10 is %s", b);
    tlm_fmt_shortest(b, sizeof b, 1e-05);
    int tiny = !strcmp(b, "1e-05");
    tlm_fmt_shortest(b, sizeof b, 0.30000000000000004);
    TAP_OK(tiny && !strcmp(b, "0.30000000000000004"), "shortest: 1e-05, and 17 digits when it takes them (%s)", b);
}

int main(void)
{
    test_steps();
    test_si();
    test_duration();
    test_exact();
    return tap_done();
}
