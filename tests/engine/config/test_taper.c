/* test_taper.c: property tests of the width schedules over thousands of
 * (L, d_base, schedule, ratio, multiple) combinations, against the paper's
 * formulas written out again here, plus the requests that must fail. */
#include <math.h>
#include <stdint.h>

#include "engine/config/taper.h"
#include "tests/lib/tap.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int randint(int lo, int hi) { return lo + (int)(next() % (uint64_t)(hi - lo + 1)); }

/* the paper's formulas, independently of engine/config/taper.c */
static double formula(int sched, int l, int L, double ds, double de, double k)
{
    double t = (double)l / (L - 1);
    switch (sched) {
    case ENG_TAPER_LINEAR: return ds - (ds - de) * t;
    case ENG_TAPER_COSINE: return de + (ds - de) / 2 * (1 + cos(M_PI * t));
    case ENG_TAPER_SIGMOID: return de + (ds - de) / (1 + exp(k * (t - 0.5)));
    }
    return NAN;
}

typedef struct {
    long cases, budget, mono, pinned, multiple, close, positive;
} tally;

static void check_one(int sched, int L, int d_base, int m, int a_units, double k, tally *t)
{
    double rs = (double)a_units * m / d_base, re = 2.0 - rs;
    eng_taper_spec s = {.schedule = sched, .r_start = rs, .r_end = re, .k = k, .multiple = m};
    int w[ENG_MAX_LAYERS];
    tlm_err e;
    t->cases++;
    if (eng_taper_compute(L, d_base, &s, w, &e)) {
        TAP_OK(0, "L=%d d=%d m=%d %s [%g, %g] k=%g: %s", L, d_base, m, eng_schedule_name(sched), rs, re, k, e.msg);
        return;
    }
    long sum = 0;
    int ok_mono = 1, ok_mult = 1, ok_close = 1, ok_pos = 1;
    double ds = rs * d_base, de = re * d_base;
    for (int l = 0; l < L; l++) {
        sum += w[l];
        if (w[l] % m)
            ok_mult = 0;
        if (w[l] <= 0)
            ok_pos = 0;
        if (l && ((rs >= re) ? w[l] > w[l - 1] : w[l] < w[l - 1]))
            ok_mono = 0;
        if (l > 0 && l < L - 1 && fabs(w[l] - formula(sched, l, L, ds, de, k)) > m + 1e-6)
            ok_close = 0;
    }
    int ok_pin = w[0] == (int)lround(ds) && w[L - 1] == (int)lround(de);
    t->budget += sum == (long)L * d_base;
    t->mono += ok_mono;
    t->multiple += ok_mult;
    t->close += ok_close;
    t->positive += ok_pos;
    t->pinned += ok_pin;
    if (!(sum == (long)L * d_base && ok_mono && ok_mult && ok_close && ok_pos && ok_pin)) {
        TAP_OK(0, "L=%d d=%d m=%d %s [%g, %g]: sum %ld (want %ld) mono %d mult %d close %d pos %d pin %d", L, d_base,
               m, eng_schedule_name(sched), rs, re, sum, (long)L * d_base, ok_mono, ok_mult, ok_close, ok_pos, ok_pin);
    }
}

static void properties(void)
{
    static const int mults[] = {8, 16, 32, 64, 128};
    static const int scheds[] = {ENG_TAPER_LINEAR, ENG_TAPER_COSINE, ENG_TAPER_SIGMOID};
    tally t = {0};
    int fails_before = tap_failed;
    for (int iter = 0; iter < 6000; iter++) {
        int m = mults[randint(0, 4)];
        int L = iter % 5 == 0 ? randint(2, 4) : randint(2, 96);
        int q = randint(2, 200);      /* d_base in units of m */
        int d_base = q * m;
        int a = randint(q + 1, 2 * q - 1); /* start units: ratio in (1, 2) */
        if (iter % 7 == 0)
            a = q; /* ratio 1 -> 1: a flat "taper" */
        if (iter % 11 == 0)
            a = randint(1, q - 1); /* increasing: wider late */
        int sched = scheds[iter % 3];
        double k = sched == ENG_TAPER_SIGMOID ? (double)randint(1, 40) / 2.0 : 10.0;
        check_one(sched, L, d_base, m, a, k, &t);
    }
    /* the paper's grid on the paper's shapes */
    static const double ratios[] = {1.25, 1.375, 1.5, 1.625, 1.75};
    static const int shapes[][2] = {{24, 2816}, {20, 4096}, {20, 5632}, {6, 256}, {6, 640}, {6, 768}, {6, 896},
                                    {6, 1408}, {12, 2048}, {32, 11008}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int r = 0; r < 5; r++)
            for (int s = 0; s < 3; s++) {
                int L = shapes[i][0], d = shapes[i][1];
                check_one(scheds[s], L, d, 16, (int)lround(ratios[r] * d / 16), 10.0, &t);
            }
    TAP_OK(tap_failed == fails_before, "%ld schedules: budget exact %ld, monotone %ld, ends pinned %ld, multiples %ld, "
           "within one multiple of the formula %ld, positive %ld",
           t.cases, t.budget, t.mono, t.pinned, t.multiple, t.close, t.positive);
    TAP_OK(t.cases > 6000 && t.budget == t.cases && t.mono == t.cases && t.pinned == t.cases &&
               t.multiple == t.cases && t.close == t.cases && t.positive == t.cases,
           "every property held in every case");
}

static void paper_example(void)
{
    /* 440m: L=24, d_base=2816, cosine 1.5 -> 0.5 */
    eng_taper_spec s = {.schedule = ENG_TAPER_COSINE, .r_start = 1.5, .r_end = 0.5, .k = 10, .multiple = 16};
    int w[24];
    tlm_err e;
    TAP_OK(eng_taper_compute(24, 2816, &s, w, &e) == 0, "440m cosine 1.5 -> 0.5 computes");
    long sum = 0;
    for (int l = 0; l < 24; l++)
        sum += w[l];
    TAP_OK(w[0] == 4224 && w[23] == 1408, "ends pinned at 4224 and 1408 (got %d, %d)", w[0], w[23]);
    TAP_OK(sum == 24L * 2816, "sum %ld == 24 x 2816", sum);
    /* symmetric schedule: w[l] + w[L-1-l] == 2 d_base */
    int sym = 1;
    for (int l = 0; l < 24; l++)
        sym &= w[l] + w[23 - l] == 2 * 2816;
    TAP_OK(sym, "cosine widths are symmetric about d_base");

    /* sigmoid pins ends that the formula misses by ~0.7%% of the range */
    s.schedule = ENG_TAPER_SIGMOID;
    double ideal[24];
    TAP_OK(eng_taper_ideal(24, 2816, &s, ideal, &e) == 0 && ideal[0] < 4224 && ideal[0] > 4224 - 0.01 * 2816,
           "sigmoid formula at t=0 is %.1f, short of 4224", ideal[0]);
    TAP_OK(eng_taper_compute(24, 2816, &s, w, &e) == 0 && w[0] == 4224 && w[23] == 1408, "sigmoid ends pinned");

    /* uniform ignores multiples */
    s.schedule = ENG_TAPER_UNIFORM;
    TAP_OK(eng_taper_compute(5, 1000, &s, w, &e) == 0 && w[0] == 1000 && w[4] == 1000, "uniform: d_base everywhere");

    /* blocks: wider-early / middle / late on 24 layers */
    static const double early[] = {1.5, 1.0, 0.5}, middle[] = {0.75, 1.5, 0.75}, late[] = {0.5, 1.0, 1.5};
    const double *g[] = {early, middle, late};
    for (int i = 0; i < 3; i++) {
        eng_taper_spec b = {.schedule = ENG_TAPER_BLOCKS, .groups = g[i], .n_groups = 3, .multiple = 16};
        int ok = eng_taper_compute(24, 2816, &b, w, &e) == 0;
        long tot = 0;
        for (int l = 0; l < 24; l++)
            tot += w[l];
        TAP_OK(ok && tot == 24L * 2816 && w[0] == (int)(g[i][0] * 2816) && w[8] == (int)(g[i][1] * 2816) &&
                   w[23] == (int)(g[i][2] * 2816),
               "blocks [%g, %g, %g]: %d %d %d, sum exact", g[i][0], g[i][1], g[i][2], w[0], w[8], w[23]);
    }
}

static void expect_error(const char *what, int L, int d, eng_taper_spec s, const char *needle)
{
    int w[ENG_MAX_LAYERS];
    tlm_err e = {0};
    int rc = eng_taper_compute(L, d, &s, w, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, needle), "rejects %s: %s", what, rc ? e.msg : "(accepted)");
}

static void impossible(void)
{
    eng_taper_spec base = {.schedule = ENG_TAPER_COSINE, .r_start = 1.5, .r_end = 0.5, .k = 10, .multiple = 16};
    eng_taper_spec s = base;
    s.r_start = 1.5, s.r_end = 0.75;
    expect_error("ratios whose mean is not 1", 24, 2816, s, "mean of start and end must be 1");
    expect_error("a taper on one layer", 1, 2816, base, "at least 2 layers");
    s = base;
    s.r_start = 2.0, s.r_end = 0.0;
    expect_error("an end width of zero", 24, 2816, s, "above zero");
    s = base;
    s.r_start = 1.99, s.r_end = 0.01;
    expect_error("an end width that is not a multiple", 24, 2816, s, "not a multiple of taper.multiple");
    expect_error("a budget that is not a multiple", 3, 1000, base, "budget");
    s = base;
    s.multiple = 0;
    expect_error("multiple 0", 24, 2816, s, "must be positive");
    static const double g3[] = {1.5, 1.0, 0.5}, bad[] = {1.5, 1.0, 1.0}, zero[] = {2.0, 1.0, 0.0};
    eng_taper_spec b = {.schedule = ENG_TAPER_BLOCKS, .groups = g3, .n_groups = 3, .multiple = 16};
    expect_error("groups that do not divide the layers", 20, 2816, b, "equal groups");
    b.groups = bad;
    expect_error("group multipliers whose mean is not 1", 24, 2816, b, "average 1");
    b.groups = zero;
    expect_error("a zero group", 24, 2816, b, "above zero");
    b.groups = g3;
    expect_error("group widths that are not multiples", 24, 1000, b, "not a multiple");
    s = base;
    s.schedule = ENG_TAPER_SIGMOID;
    s.k = 0;
    expect_error("sigmoid k = 0", 24, 2816, s, "taper.k");
}

int main(void)
{
    properties();
    paper_example();
    impossible();
    return tap_done();
}
