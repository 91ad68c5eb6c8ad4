/* tap.h: a few macros for test programs that print TAP to their log and
 * exit 0 only when every check passed (the automake harness reads the exit
 * status; the TAP lines are for people reading tests/...log files). */
#ifndef TLM_TESTS_TAP_H
#define TLM_TESTS_TAP_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

#define TAP_OK(cond, ...)                                                                                      \
    do {                                                                                                       \
        int tap_c_ = !!(cond);                                                                                 \
        printf("%sok %d - ", tap_c_ ? "" : "not ", ++tap_n);                                                   \
        printf(__VA_ARGS__);                                                                                   \
        printf("\n");                                                                                          \
        if (!tap_c_) {                                                                                         \
            tap_failed++;                                                                                      \
            printf("# failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);                                     \
        }                                                                                                      \
        fflush(stdout);                                                                                        \
    } while (0)

#define TAP_DIAG(...)                                                                                          \
    do {                                                                                                       \
        printf("# ");                                                                                          \
        printf(__VA_ARGS__);                                                                                   \
        printf("\n");                                                                                          \
    } while (0)

/* What the engine promises across thread counts and BLAS kernels
 * (docs/engine.md, "What is reproducible"): a short training run's losses
 * agree within this relative error; within one thread count and kernel they
 * are bit-identical. */
#define TAP_CROSS_RUN_TOL 1e-5

/* max_i |a_i - b_i| / max(1, |a_i|) */
static inline double tap_max_rel(const double *a, const double *b, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) / fmax(1.0, fabs(a[i]));
        if (!(d <= worst))
            worst = d; /* NaN wins */
    }
    return worst;
}

/* Ends the program: prints the plan and exits 1 if anything failed. */
/* A fresh folder NAME-XXXXXX under $TMPDIR (else /tmp) into out; NULL
 * if it cannot be made. */
static inline char *tap_tmpdir(char *out, size_t cap, const char *name)
{
    const char *t = getenv("TMPDIR");
    if (snprintf(out, cap, "%s/%s-XXXXXX", t && *t ? t : "/tmp", name) >= (int)cap)
        return NULL;
    return mkdtemp(out);
}

/* A test that cannot run here: the plan TAP reads as a skip, and the
 * exit status automake's driver takes as one (77). */
static inline int tap_skip(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    return 77;
}

static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    if (tap_failed)
        printf("# %d of %d checks failed\n", tap_failed, tap_n);
    return tap_failed ? 1 : 0;
}

#endif
