/* blas.c: the CPU backend's matmul (row-major CBLAS sgemm) and the BLAS
 * thread count.  OpenBLAS and BLIS both work; which one is linked is a
 * configure choice (TLM_BLAS_OPENBLAS). */
#include <config.h> /* autoconf, not engine/config.h */

#include "engine/cpu/cpu.h"

#ifdef HAVE_BLIS_CBLAS_H
#include <blis/cblas.h>
#else
#include <cblas.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef TLM_BLAS_OPENBLAS
/* BLIS's thread knob, declared here because blis.h is not always installed;
 * weak, so that another CBLAS without it still links. */
extern void bli_thread_set_num_threads(long n) __attribute__((weak));
#endif

static int blas_threads; /* 0: not set yet, the library's own default */

void eng__blas_set_threads(int n)
{
    if (n < 1)
        n = 1;
    if (n == eng__blas_threads())
        return;
    blas_threads = n;
#ifdef TLM_BLAS_OPENBLAS
    openblas_set_num_threads(n);
#else
    if (bli_thread_set_num_threads)
        bli_thread_set_num_threads(n);
#endif
}

int eng__blas_threads(void)
{
    if (!blas_threads) {
#ifdef TLM_BLAS_OPENBLAS
        blas_threads = openblas_get_num_threads();
#else
        blas_threads = eng__cpu_threads();
#endif
    }
    return blas_threads;
}

int eng__cpu_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void eng__cpu_matmul(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                     float beta, float *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda,
                B, ldb, beta, C, ldc);
}
