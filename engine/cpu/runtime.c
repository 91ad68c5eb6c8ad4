/* runtime.c: which BLAS and kernel run, OpenMP's default team and this
 * process's cores (see runtime.h).
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
 * this.  TLM_BLAS_PROBE=off disables it.  tests/engine/cpu/test_runtime.c drives
 * the whole chain (TLM_BLAS_PRETEND_DETECTED, a test hook). */
#include <config.h> /* autoconf, not engine/config/config.h */

#include "engine/cpu/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cpu/internal.h"

#ifdef HAVE_BLIS_CBLAS_H
#include <blis/cblas.h>
#else
#include <cblas.h>

#include "common/clock.h"
#endif

#ifndef TLM_BLAS_OPENBLAS
extern const char *bli_info_get_version_str(void) __attribute__((weak));
extern int bli_arch_query_id(void) __attribute__((weak));
extern const char *bli_arch_string(int id) __attribute__((weak));
#endif

static char blas_name[96] = "unknown";
static char blas_kernel[64] = "unknown";

/* ------------------------------------------------------------ sgemm probes */

#ifdef TLM_BLAS_OPENBLAS

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
        double t0 = tlm_clock_mono();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, S, S, 1.0f, A, S, B, S, 0.0f, C, S);
        double t = tlm_clock_mono() - t0;
        best = t < best ? t : best;
    }
    return 2.0 * S * S * S / best * 1e-9;
}

/* ------------------------------------------------------------ OpenBLAS kernel choice */

/* The OpenBLAS kernels TLM knows, best first: how capable each is (what
 * instructions it uses) and whether this CPU can execute it.  A kernel the
 * CPU cannot execute stops the program with SIGILL at its first product
 * (seen: SkylakeX on an AVX2-only EPYC), so a user's choice is checked
 * against this table too. */
enum { ISA_AVX = 1, ISA_AVX2 = 2, ISA_AVX512 = 4, ISA_BF16 = 8 };

static const struct kernel_info {
    const char *name; /* OPENBLAS_CORETYPE spelling */
    int rank;
    int needs;     /* ISA_* */
    int candidate; /* one TLM moves to or suggests */
} kernels[] = {
    {"SapphireRapids", 6, ISA_AVX512 | ISA_BF16, 0},
    {"Cooperlake", 5, ISA_AVX512 | ISA_BF16, 1},
    {"SkylakeX", 4, ISA_AVX512, 1},
    {"Haswell", 3, ISA_AVX2, 1},
    {"Zen", 3, ISA_AVX2, 0},
    {"Sandybridge", 2, ISA_AVX, 1},
    {"Bulldozer", 2, ISA_AVX, 0},
    {"Piledriver", 2, ISA_AVX, 0},
    {"Steamroller", 2, ISA_AVX, 0},
    {"Excavator", 2, ISA_AVX, 0},
};
enum { N_KERNELS = sizeof kernels / sizeof kernels[0] };

static const struct kernel_info *kernel_find(const char *core)
{
    for (int i = 0; i < N_KERNELS; i++)
        if (core && !strcasecmp(core, kernels[i].name))
            return &kernels[i];
    return NULL; /* Prescott, Core2, Nehalem, Atom, Opteron...: SSE only */
}

static int kernel_rank(const char *core)
{
    const struct kernel_info *k = kernel_find(core);
    return k ? k->rank : 0;
}

static int cpu_isa(void)
{
    __builtin_cpu_init();
    int isa = 0;
    if (__builtin_cpu_supports("avx"))
        isa |= ISA_AVX;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        isa |= ISA_AVX2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512cd"))
        isa |= ISA_AVX512;
#if defined(__GNUC__) && __GNUC__ >= 12
    if (__builtin_cpu_supports("avx512bf16"))
        isa |= ISA_BF16;
#endif
    return isa;
}

/* 1 when this CPU can execute the kernel (unknown names: SSE kernels, yes) */
static int kernel_runs_here(const char *core)
{
    const struct kernel_info *k = kernel_find(core);
    return !k || (k->needs & cpu_isa()) == k->needs;
}

/* Kernels this CPU can run that TLM moves to or suggests, best first. */
static int candidates(const char **out)
{
    int n = 0, isa = cpu_isa();
    for (int i = 0; i < N_KERNELS; i++)
        if (kernels[i].candidate && (kernels[i].needs & isa) == kernels[i].needs)
            out[n++] = kernels[i].name;
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
        const char *user = getenv("OPENBLAS_CORETYPE");
        if (user && !pretend) {
            /* the user's choice, unless this CPU cannot execute it */
            if (!kernel_runs_here(user) && nc > 0) {
                setenv("TLM_BLAS_REPLACED", user, 1);
                reexec(argv, cand[0], "done");
            }
            return;
        }
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

/* ------------------------------------------------------------ advice on a user's kernel */

/* Child mode (TLM_BLAS_PROBE=rate): this process was started only to time
 * the kernel OpenBLAS loaded for it; it writes "<kernel> <GFLOP/s>" to fd 3
 * and exits.  One core, like the engine's own use of the BLAS. */
static void rate_child(void)
{
    openblas_set_num_threads(1);
    char line[128];
    int n = snprintf(line, sizeof line, "%s %.3f\n", openblas_get_corename(), sgemm_correct() ? sgemm_rate() : 0.0);
    if (write(3, line, (size_t)n) != n)
        _exit(1);
    _exit(0);
}

/* Times OPENBLAS_CORETYPE=core in a child process (OpenBLAS picks its
 * kernel only when it is loaded): its GFLOP/s on one core, or -1. */
static double rate_elsewhere(const char *core)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + 3, sizeof *envp);
    char corev[96];
    int fd[2] = {-1, -1};
    double rate = -1;
    if (!envp || snprintf(corev, sizeof corev, "OPENBLAS_CORETYPE=%s", core) >= (int)sizeof corev ||
        pipe2(fd, O_CLOEXEC)) {
        free(envp);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "OPENBLAS_CORETYPE=", 18) && strncmp(environ[i], "TLM_BLAS_PROBE=", 15))
            envp[k++] = environ[i];
    envp[k++] = corev;
    envp[k++] = "TLM_BLAS_PROBE=rate";
    envp[k] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 3);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"tlm-blas-probe", NULL};
    pid_t pid;
    int sp = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    close(fd[1]);
    if (sp == 0) {
        char out[128] = "", name[64];
        size_t got = 0;
        struct pollfd p = {fd[0], POLLIN, 0};
        /* a few milliseconds of work; 10 s covers a loaded machine */
        while (got < sizeof out - 1 && poll(&p, 1, 10000) > 0) {
            ssize_t r = read(fd[0], out + got, sizeof out - 1 - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        out[got] = 0;
        double v;
        if (sscanf(out, "%63s %lf", name, &v) == 2 && !strcasecmp(name, core) && v > 0)
            rate = v;
        kill(pid, SIGKILL); /* harmless once it has exited; ends a stuck one */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    close(fd[0]);
    return rate;
}

static char advice[512];
static int advice_done;

static void compute_advice(void)
{
    const char *replaced = getenv("TLM_BLAS_REPLACED");
    const char *user = getenv("OPENBLAS_CORETYPE");
    const char *probe = getenv("TLM_BLAS_PROBE");
    const char *loaded = openblas_get_corename();
    if (replaced) {
        const struct kernel_info *k = kernel_find(replaced);
        int missing = k ? k->needs & ~cpu_isa() : 0;
        snprintf(advice, sizeof advice,
                 "OPENBLAS_CORETYPE=%s needs %s, which this CPU lacks (that kernel would stop the program with "
                 "SIGILL); running OpenBLAS's %s kernel instead: set OPENBLAS_CORETYPE=%s or unset it",
                 replaced,
                 missing & ISA_AVX512 ? "AVX-512" : missing & ISA_BF16 ? "AVX-512 BF16" : missing & ISA_AVX2 ? "AVX2 and FMA" : "AVX",
                 loaded, loaded);
        return;
    }
    if (!user || (probe && !strcmp(probe, "off")))
        return;
    const char *cand[N_KERNELS];
    int nc = candidates(cand), best = -1;
    for (int i = 0; i < nc && best < 0; i++)
        if (kernel_rank(cand[i]) > kernel_rank(loaded))
            best = i;
    if (best < 0)
        return; /* nothing this CPU runs uses wider instructions */
    int th = openblas_get_num_threads();
    openblas_set_num_threads(1);
    double mine = sgemm_rate();
    openblas_set_num_threads(th);
    double other = rate_elsewhere(cand[best]);
    if (!(other > 1.2 * mine))
        return;
    snprintf(advice, sizeof advice,
             "OPENBLAS_CORETYPE=%s: OpenBLAS's %s kernel runs sgemm at %.0f GFLOP/s on one core of this CPU, its "
             "%s kernel at %.0f (%.1fx); unset OPENBLAS_CORETYPE (TLM then picks the fastest kernel that computes "
             "correctly) or set OPENBLAS_CORETYPE=%s",
             user, loaded, mine, cand[best], other, other / mine, cand[best]);
}
#endif

int eng_runtime_kernels(const char **out)
{
#ifdef TLM_BLAS_OPENBLAS
    return candidates(out);
#else
    (void)out;
    return 0;
#endif
}

const char *eng_runtime_kernel_advice(void)
{
#ifdef TLM_BLAS_OPENBLAS
    if (!advice_done) {
        advice_done = 1;
        compute_advice();
    }
    return advice[0] ? advice : NULL;
#else
    return NULL;
#endif
}

/* ------------------------------------------------------------ OpenMP wait policy */

/* libgomp's idle threads spin-wait for a while after each parallel region
 * (GOMP_SPINCOUNT, 300k iterations by default).  On a machine whose cores
 * are shared (make -j check, several workers, other users) the spinning
 * threads take the CPU from the ones doing the work: measured on 2 shared
 * cores, tests/engine/model/test_model took 25 s with the default and 4.8 s with
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
#ifdef TLM_BLAS_OPENBLAS
    const char *probe = getenv("TLM_BLAS_PROBE");
    if (probe && !strcmp(probe, "rate"))
        rate_child();
#endif
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

int eng__cpu_cores(void)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n;
}

void eng_runtime_set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n > 0 ? n : eng__cpu_cores());
#else
    (void)n;
#endif
    /* the BLAS runs single-threaded inside the engine's OpenMP threads
     * (engine/cpu/blas.c says why) */
    eng__blas_set_threads(1);
}

void eng_runtime_set_blas_threads(int n) { eng__blas_set_threads(n); }

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
