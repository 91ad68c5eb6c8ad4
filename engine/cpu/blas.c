/* blas.c: the CPU backend's matmul (row-major CBLAS sgemm) and the BLAS
 * thread count.  OpenBLAS and BLIS both work; which one is linked is a
 * configure choice (TLM_BLAS_OPENBLAS). */
#include <config.h> /* autoconf, not engine/config/config.h */

#include <assert.h>
#include <string.h>

#include "engine/cpu/internal.h"

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
#elif defined(_OPENMP)
        /* BLIS does not say: its OpenMP flavour follows OpenMP's default */
        blas_threads = omp_get_max_threads();
#else
        blas_threads = 1;
#endif
    }
    return blas_threads;
}

/* One product on the calling thread. */
static void gemm1(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                  float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda,
                B, ldb, beta, C, ldc);
}

/* The engine splits a large product into one block of C per OpenMP thread
 * and runs the BLAS single-threaded inside: the BLAS's own thread pool and
 * OpenMP's would otherwise take turns spinning on the same cores (measured:
 * a third of the step in libgomp's spin-wait on 2 cores).  Rows of C are
 * split when there are more rows than columns, else columns; blocks are
 * multiples of 16 so every thread's panel stays vector-aligned. */
void eng__cpu_matmul(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float beta, float *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return;
    int nt = eng__cpu_nt(ctx);
    double work = (double)M * N * K;
#ifdef _OPENMP
    if (omp_in_parallel())
        nt = 1;
#endif
    if (nt <= 1 || work < 4e6 || eng__blas_threads() > 1) {
        gemm1(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    const int by_rows = M >= N;
    const int len = by_rows ? M : N;
#pragma omp parallel num_threads(nt)
    {
        int t = eng__omp_id(), n = eng__omp_nt();
        int chunk = ((len + n - 1) / n + 15) & ~15;
        int i0 = t * chunk, i1 = i0 + chunk < len ? i0 + chunk : len;
        if (i0 < i1) {
            if (by_rows)
                gemm1(ta, tb, i1 - i0, N, K, alpha, ta ? A + i0 : A + (size_t)i0 * lda, lda, B, ldb, beta,
                      C + (size_t)i0 * ldc, ldc);
            else
                gemm1(ta, tb, M, i1 - i0, K, alpha, A, lda, tb ? B + (size_t)i0 * ldb : B + i0, ldb, beta, C + i0,
                      ldc);
        }
    }
}

/* The table's matmul: the CPU stores fp32 only (its act_dtype is ENG_F32,
 * so a model never plans anything else on it). */
void eng__cpu_matmul_op(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                        const void *B, int ldb, float beta, void *C, int ldc, eng_mm dt)
{
    assert(dt.a == ENG_F32 && dt.b == ENG_F32 && dt.c == ENG_F32);
    (void)dt;
    eng__cpu_matmul(ctx, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The table's matmul_add: X's rows into D, then the beta-1 product: the
 * bits of the copy and matmul the model made before it had this op */
void eng__cpu_matmul_add_op(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                            const void *B, int ldb, const void *X, void *D, int ldd, eng_mm dt)
{
    assert(dt.a == ENG_F32 && dt.b == ENG_F32 && dt.c == ENG_F32);
    (void)dt;
    if (M <= 0 || N <= 0)
        return;
    if (X != D)
        for (int i = 0; i < M; i++)
            memcpy((float *)D + (size_t)i * ldd, (const float *)X + (size_t)i * ldd, (size_t)N * sizeof(float));
    eng__cpu_matmul(ctx, ta, tb, M, N, K, alpha, A, lda, B, ldb, 1.0f, D, ldd);
}
