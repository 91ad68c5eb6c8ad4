/* runtime.c: which BLAS and kernel run, and on how many threads (see
 * runtime.h).
 *
 * The OpenBLAS fast path.  Debian builds OpenBLAS with DYNAMIC_ARCH: it
 * picks a kernel from CPUID when it is loaded, and on a CPU it does not know
 * it may pick a generic one many times slower.  It reads OPENBLAS_CORETYPE
 * only at load, so a better kernel needs a fresh process:
 *
 *   1. parent: the loaded kernel ranks below what the CPU supports
 *      (__builtin_cpu_supports) and the user set no OPENBLAS_CORETYPE:
 *      time sgemm here, then execv(/proc/self/exe, argv) with
 *      OPENBLAS_CORETYPE = the best candidate and TLM_BLAS_PROBE =
 *      "<original kernel>:<its GFLOP/s>:<candidate index>";
 *   2. child: the candidate must have loaded, compute a small sgemm right
 *      (against a double-precision reference, both transposes) and be
 *      faster than the original; if so it stays (TLM_BLAS_PROBE=done),
 *      else the next candidate is tried the same way, and when none is left
 *      the original kernel is restored by one last exec (TLM_BLAS_PROBE=done).
 *
 * Every exec advances the candidate index, so the chain ends (at most one
 * exec per candidate plus one).  A user's own OPENBLAS_CORETYPE is never
 * touched; "done" is inherited by child processes, which then skip all of
 * this.  TLM_BLAS_PROBE=off disables it.  tests/test_ops_runtime.c drives
 * the whole chain (TLM_BLAS_PRETEND_DETECTED, a test hook). */
#include <config.h> /* autoconf, not engine/config.h */

#include "engine/runtime.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/cpu/cpu.h"

#ifdef HAVE_BLIS_CBLAS_H
#include <blis/cblas.h>
#else
#include <cblas.h>
#endif

#ifndef TLM_BLAS_OPENBLAS
extern const char *bli_info_get_version_str(void) __attribute__((weak));
extern int bli_arch_query_id(void) __attribute__((weak));
extern const char *bli_arch_string(int id) __attribute__((weak));
#endif

static char blas_name[96] = "unknown";
static char blas_kernel[64] = "unknown";
static int n_threads = 1;

/* ------------------------------------------------------------ sgemm probes */

#ifdef TLM_BLAS_OPENBLAS

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Small odd-sized products in all four transpose combinations against a
 * double reference: 1 when the loaded kernel computes right. */
static int sgemm_correct(void)
{
    enum { M = 37, N = 53, K = 71 };
    static float A[M * K], B[K * N], C[M * N];
    unsigned s = 12345;
    for (int i = 0; i < M * K; i++)
        A[i] = (float)((s = s * 1103515245u + 12345u) >> 16) / 65536.0f - 0.5f;
    for (int i = 0; i < K * N; i++)
        B[i] = (float)((s = s * 1103515245u + 12345u) >> 16) / 65536.0f - 0.5f;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            /* the same numbers, read as op(A) (M, K) and op(B) (K, N) */
            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f,
                        A, ta ? M : K, B, tb ? K : N, 0.0f, C, N);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double ref = 0;
                    for (int k = 0; k < K; k++)
                        ref += (double)(ta ? A[k * M + i] : A[i * K + k]) * (tb ? B[j * K + k] : B[k * N + j]);
                    if (fabs(ref - C[i * N + j]) > 1e-4 * (1 + fabs(ref)))
                        return 0;
                }
        }
    return 1;
}

/* Best of a few 384^3 products, GFLOP/s. */
static double sgemm_rate(void)
{
    enum { S = 384 };
    static float A[S * S], B[S * S], C[S * S];
    for (int i = 0; i < S * S; i++) {
        A[i] = (float)(i % 7) * 0.1f;
        B[i] = (float)(i % 5) * 0.1f;
    }
    double best = 1e30;
    for (int r = 0; r < 6; r++) {
        double t0 = now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, S, S, 1.0f, A, S, B, S, 0.0f, C, S);
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return 2.0 * S * S * S / best * 1e-9;
}

/* ------------------------------------------------------------ OpenBLAS kernel choice */

/* How capable a kernel is (what instructions it uses). */
static int kernel_rank(const char *core)
{
    static const struct {
        const char *name;
        int rank;
    } ranks[] = {
        {"Sandybridge", 2}, {"Bulldozer", 2}, {"Piledriver", 2}, {"Steamroller", 2}, {"Excavator", 2},
        {"Haswell", 3},     {"Zen", 3},       {"SkylakeX", 4},   {"Cooperlake", 5}, {"SapphireRapids", 6},
    };
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
        if (!strcasecmp(core, ranks[i].name))
            return ranks[i].rank;
    return 0; /* Prescott, Core2, Nehalem, Atom, Opteron...: SSE only */
}

/* Kernels this CPU can run, best first (OPENBLAS_CORETYPE spellings). */
static int candidates(const char **out)
{
    int n = 0;
    __builtin_cpu_init();
    int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512cd");
#if defined(__GNUC__) && __GNUC__ >= 12
    if (avx512 && __builtin_cpu_supports("avx512bf16"))
        out[n++] = "Cooperlake";
#endif
    if (avx512)
        out[n++] = "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        out[n++] = "Haswell";
    if (__builtin_cpu_supports("avx"))
        out[n++] = "Sandybridge";
    return n;
}

static void reexec(char **argv, const char *core, const char *probe)
{
    setenv("OPENBLAS_CORETYPE", core, 1);
    setenv("TLM_BLAS_PROBE", probe, 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* exec failed: carry on with the kernel we have */
    fprintf(stderr, "tlm: could not re-execute to select the OpenBLAS kernel %s; staying on %s\n", core,
            openblas_get_corename());
    setenv("TLM_BLAS_PROBE", "done", 1);
}

static void choose_kernel(int argc, char **argv)
{
    (void)argc;
    const char *probe = getenv("TLM_BLAS_PROBE");
    if (probe && (!strcmp(probe, "done") || !strcmp(probe, "off")))
        return;
    const char *cand[8];
    int nc = candidates(cand);
    const char *loaded = openblas_get_corename();
    char buf[160];
    /* tests only: treat an OPENBLAS_CORETYPE set by the test as what
     * OpenBLAS detected ("1"), optionally claiming it is unbeatable ("fast") */
    const char *pretend = getenv("TLM_BLAS_PRETEND_DETECTED");
    if (!probe) {
        if (getenv("OPENBLAS_CORETYPE") && !pretend)
            return; /* the user's choice */
        int r = kernel_rank(loaded), first = -1;
        for (int i = 0; i < nc && first < 0; i++)
            if (kernel_rank(cand[i]) > r)
                first = i;
        if (first < 0)
            return; /* already the best this CPU supports */
        double rate = pretend && !strcmp(pretend, "fast") ? 1e9 : sgemm_rate();
        snprintf(buf, sizeof buf, "%s:%.3f:%d", loaded, rate, first);
        reexec(argv, cand[first], buf);
        return;
    }
    /* a probe: "<original>:<rate>:<index>" */
    char orig[64];
    double orig_rate;
    int idx;
    if (sscanf(probe, "%63[^:]:%lf:%d", orig, &orig_rate, &idx) != 3 || idx < 0 || idx >= nc) {
        setenv("TLM_BLAS_PROBE", "done", 1);
        return;
    }
    if (!strcasecmp(loaded, cand[idx]) && sgemm_correct() && sgemm_rate() > orig_rate * 1.1) {
        setenv("TLM_BLAS_PROBE", "done", 1);
        return;
    }
    for (int i = idx + 1; i < nc; i++)
        if (kernel_rank(cand[i]) > kernel_rank(orig)) {
            snprintf(buf, sizeof buf, "%s:%.3f:%d", orig, orig_rate, i);
            reexec(argv, cand[i], buf);
            return;
        }
    reexec(argv, orig, "done");
}
#endif

/* ------------------------------------------------------------ OpenMP wait policy */

/* libgomp's idle threads spin-wait for a while after each parallel region
 * (GOMP_SPINCOUNT, 300k iterations by default).  On a machine whose cores
 * are shared (make -j check, several workers, other users) the spinning
 * threads take the CPU from the ones doing the work: measured on 2 shared
 * cores, tests/test_model took 25 s with the default and 4.8 s with
 * OMP_WAIT_POLICY=passive; on a quiet machine passive costs a futex wake
 * per region, ~100 regions per step, well under 1%.  libgomp reads the
 * variable only when it is loaded, so it is set here and the program
 * re-executed once (same argv), unless the user chose a policy or a spin
 * count.  TLM_RUNTIME_ENV marks the second start so there is no loop. */
static void choose_wait_policy(char **argv)
{
#ifdef _OPENMP
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("TLM_RUNTIME_ENV"))
        return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("TLM_RUNTIME_ENV", "1", 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* exec failed: carry on with the default policy */
#else
    (void)argv;
#endif
}

/* ------------------------------------------------------------ public */

void eng_runtime_init(int argc, char **argv)
{
    if (argv && argv[0])
        choose_wait_policy(argv);
#ifdef TLM_BLAS_OPENBLAS
    if (argv && argv[0])
        choose_kernel(argc, argv);
    /* "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64" */
    const char *cfgs = openblas_get_config();
    char w1[32] = "", w2[32] = "";
    if (cfgs && sscanf(cfgs, "%31s %31s", w1, w2) == 2)
        snprintf(blas_name, sizeof blas_name, "%s %s", w1, w2);
    else
        snprintf(blas_name, sizeof blas_name, "OpenBLAS");
    snprintf(blas_kernel, sizeof blas_kernel, "%s", openblas_get_corename());
#else
    (void)argc;
    (void)argv;
    if (bli_info_get_version_str)
        snprintf(blas_name, sizeof blas_name, "BLIS %s", bli_info_get_version_str());
    else
        snprintf(blas_name, sizeof blas_name, "%s", TLM_BLAS_NAME);
    if (bli_arch_query_id && bli_arch_string)
        snprintf(blas_kernel, sizeof blas_kernel, "%s", bli_arch_string(bli_arch_query_id()));
#endif
    eng_runtime_set_threads(0);
}

void eng_runtime_set_threads(int n)
{
    if (n <= 0) {
        cpu_set_t set;
        n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1)
            n = 1;
    }
    n_threads = n;
#ifdef _OPENMP
    omp_set_num_threads(n);
#endif
    /* the BLAS runs single-threaded inside the engine's OpenMP threads
     * (engine/cpu/blas.c says why) */
    eng__blas_set_threads(1);
}

int eng_runtime_threads(void)
{
    return n_threads;
}

const char *eng_runtime_blas(void)
{
    return blas_name;
}

const char *eng_runtime_kernel(void)
{
    return blas_kernel;
}

const char *eng_runtime_compiler(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown";
#endif
}
