/* runtime.h: the process-wide compute set-up: which BLAS and kernel run,
 * and OpenMP's default team.  The threads of the ops are not set here but
 * in each backend's context (engine/cpu/backend.h).
 *
 * Debian's OpenBLAS picks its kernel from CPUID at load time and can pick a
 * slow generic one on CPUs it does not know (seen: "Prescott" on Sapphire
 * Rapids, ~20 GFLOP/s instead of ~150).  OpenBLAS only reads
 * OPENBLAS_CORETYPE at load, so eng_runtime_init re-executes the program
 * with it set when the detected kernel is weaker than what the CPU supports
 * (and the user did not choose one), after checking the faster kernel
 * computes correctly.  Programs call it first thing in main(). */
#ifndef TLM_ENGINE_RUNTIME_H
#define TLM_ENGINE_RUNTIME_H

/* May not return (re-exec, at most a few times, never in a loop): once to
 * make OpenMP's idle threads sleep instead of spin (OMP_WAIT_POLICY=passive,
 * unless the user set it or GOMP_SPINCOUNT), and for the OpenBLAS kernel
 * above.  Safe to call when the BLAS is not OpenBLAS. */
void eng_runtime_init(int argc, char **argv);

/* OpenMP's default team, n threads (<= 0: all cores), for the engine's
 * OpenMP code outside a backend (the shard hashing of engine/format), and
 * the BLAS on one thread.  tlm-worker sets it from --threads, as it makes
 * its backend. */
void eng_runtime_set_threads(int n);
/* The BLAS's own thread count, for a caller that calls the BLAS directly
 * (the benchmarks' reference sgemm rate); the engine itself keeps it at 1. */
void eng_runtime_set_blas_threads(int n);

/* For the `start` event and results.db: "OpenBLAS 0.3.21", "Cooperlake". */
const char *eng_runtime_blas(void);
const char *eng_runtime_kernel(void);
const char *eng_runtime_compiler(void);

/* When the user's OPENBLAS_CORETYPE is slower than a kernel this CPU runs
 * (both timed, the other in a short-lived child process, on the first call)
 * or could not run here at all (eng_runtime_init then moved to the best one
 * that can): one sentence saying so, with the measured rates and how to
 * change it; NULL otherwise.  tlm-worker prints it once and puts it in its
 * `start` event. */
const char *eng_runtime_kernel_advice(void);

/* The OpenBLAS kernels (OPENBLAS_CORETYPE spellings) this CPU can execute
 * that TLM chooses between, best first; 0 with another BLAS.  At most 16. */
int eng_runtime_kernels(const char **out);

#endif
