/* matmul.cu: the op table's matmul on cuBLASLt, fp32 accumulate
 * (CUBLAS_COMPUTE_32F, no TF32: parity with the CPU comes first), each
 * operand stored as the call says (ops.h eng_mm: A and B fp32 or bf16
 * alike, C fp32 or bf16).  eng_backend_cuda_set_fast_matmul switches to
 * CUBLAS_COMPUTE_32F_FAST_16BF (fp32 storage, bf16 tensor-core products,
 * fp32 accumulation) for the benchmark's fp32 runs; a bf16 run's products
 * take bf16 operands instead (docs/engine.md, "Precision").
 *
 * Row-major to cuBLAS's column-major: a row-major (r, c) matrix of stride
 * ld is the column-major (c, r) one of the same ld, so C = op(A) op(B) is
 * computed as C^T = op(B)^T op(A)^T with the operands swapped and the
 * transposes kept.  Each shape's descriptors and the algorithm the
 * heuristic picked are kept in a small plan table (the model calls a few
 * dozen shapes, every step).  The plan also depends on how the pointers
 * are aligned: the model passes column slices of fused projections (q, k,
 * v at float offsets), and cuBLASLt's heuristics otherwise assume 256
 * bytes and may pick a kernel that refuses such a pointer.  matmul_add
 * is the same product with C and D apart (the residual add: ops.h).
 *
 * Strided batches (eng__cu_matmul_batched, for titans_mem.cu's chunk
 * products over every (sequence, head) unit): the same plan table, the key
 * with the batch count and the three strides; matrix i of an operand
 * starts i strides after the first, so the strides count in its alignment
 * as the pointer does. */
#include <string.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

void eng__cu_plans_clear(eng__cu *c)
{
    for (int i = 0; i < c->n_plans; i++) {
        eng__cu_plan *p = &c->plans[i];
        c->api.cublasLtMatrixLayoutDestroy(p->la);
        c->api.cublasLtMatrixLayoutDestroy(p->lb);
        c->api.cublasLtMatrixLayoutDestroy(p->lc);
        c->api.cublasLtMatmulDescDestroy(p->op);
    }
    c->n_plans = 0;
}

static int lt_fail(eng__cu *c, cublasStatus_t st, const char *what)
{
    return eng__cu_fail(c, st == CUBLAS_STATUS_ALLOC_FAILED ? TLM_ENOMEM : TLM_EINTERNAL, what,
                        c->api.cublasLtGetStatusString(st));
}

/* The plan for a shape: found, or made (and kept while there is room; a
 * plan made beyond the table's room is destroyed by the caller). */
static eng__cu_plan *plan_for(eng__cu *c, eng__cu_plan *tmp, int ta, int tb, int M, int N, int K, int lda, int ldb,
                              int ldc, int align, eng_dtype dab, eng_dtype dc, int batch, long long sa,
                              long long sb, long long sc)
{
    for (int i = 0; i < c->n_plans; i++) {
        eng__cu_plan *p = &c->plans[i];
        if (p->ta == ta && p->tb == tb && p->M == M && p->N == N && p->K == K && p->lda == lda && p->ldb == ldb &&
            p->ldc == ldc && p->align == align && p->fast == c->fast_matmul && p->dab == dab && p->dc == dc &&
            p->batch == batch && p->sa == sa && p->sb == sb && p->sc == sc)
            return p;
    }
    eng__cu_plan *p = c->n_plans < ENG__CU_PLANS ? &c->plans[c->n_plans] : tmp;
    memset(p, 0, sizeof *p);
    p->ta = ta, p->tb = tb, p->M = M, p->N = N, p->K = K, p->lda = lda, p->ldb = ldb, p->ldc = ldc;
    p->align = align;
    p->fast = c->fast_matmul;
    p->dab = dab, p->dc = dc;
    p->batch = batch, p->sa = sa, p->sb = sb, p->sc = sc;
    const cudaDataType_t tab = dab == ENG_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const cudaDataType_t tc = dc == ENG_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    /* the first operand is B (column-major (N, K) as op(B)^T), the second A */
    cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t st = c->api.cublasLtMatmulDescCreate(
        &p->op, c->fast_matmul ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = c->api.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof opb);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = c->api.cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof opa);
    if (st == CUBLAS_STATUS_SUCCESS) /* stored B: (N, K) when not transposed, else (K, N) */
        st = c->api.cublasLtMatrixLayoutCreate(&p->lb, tab, tb ? K : N, tb ? N : K, ldb);
    if (st == CUBLAS_STATUS_SUCCESS) /* stored A: (K, M) when not transposed, else (M, K) */
        st = c->api.cublasLtMatrixLayoutCreate(&p->la, tab, ta ? M : K, ta ? K : M, lda);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = c->api.cublasLtMatrixLayoutCreate(&p->lc, tc, N, M, ldc);
    if (batch > 1) { /* the layouts of a single product say nothing of batches */
        const cublasLtMatrixLayout_t lay[3] = {p->la, p->lb, p->lc};
        const int64_t stride[3] = {sa, sb, sc};
        for (int i = 0; i < 3 && st == CUBLAS_STATUS_SUCCESS; i++) {
            st = c->api.cublasLtMatrixLayoutSetAttribute(lay[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                         sizeof batch);
            if (st == CUBLAS_STATUS_SUCCESS)
                st = c->api.cublasLtMatrixLayoutSetAttribute(lay[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                             &stride[i], sizeof stride[i]);
        }
    }
    cublasLtMatmulPreference_t pref = NULL;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = c->api.cublasLtMatmulPreferenceCreate(&pref);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = c->api.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &c->lt_ws_bytes,
                                                  sizeof c->lt_ws_bytes);
    const uint32_t al = (uint32_t)align;
    const cublasLtMatmulPreferenceAttributes_t aligns[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; i++)
        st = c->api.cublasLtMatmulPreferenceSetAttribute(pref, aligns[i], &al, sizeof al);
    cublasLtMatmulHeuristicResult_t h;
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = c->api.cublasLtMatmulAlgoGetHeuristic(c->lt, p->op, p->lb, p->la, p->lc, p->lc, pref, 1, &h, &found);
    if (pref)
        c->api.cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_SUCCESS && !found)
        st = CUBLAS_STATUS_NOT_SUPPORTED;
    if (st != CUBLAS_STATUS_SUCCESS) {
        lt_fail(c, st, "matmul: cuBLASLt plan");
        c->api.cublasLtMatrixLayoutDestroy(p->la);
        c->api.cublasLtMatrixLayoutDestroy(p->lb);
        c->api.cublasLtMatrixLayoutDestroy(p->lc);
        c->api.cublasLtMatmulDescDestroy(p->op);
        return NULL;
    }
    p->algo = h.algo;
    p->used = 1;
    if (p != tmp)
        c->n_plans++;
    return p;
}

/* D (M, N) rows of ld = beta X (beta 0: zeroed, whatever X held); X may be D */
template <typename T> __global__ static void k_scale(T *D, const T *X, int ld, int M, int N, float beta)
{
    const size_t total = (size_t)M * N;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const size_t at = i / N * ld + i % N;
        D[at] = eng__cu_st<T>(beta == 0.0f ? 0.0f : eng__cu_ld(X[at]) * beta);
    }
}

/* D = alpha op(A) op(B) + beta C, C and D of one layout (D may be C):
 * matmul and matmul_add; `batch` of them, the operands' matrix i at
 * A + i sa, B + i sb, C and D + i sc (elements): matmul_batched */
static void product(eng__cu *c, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda, long long sa,
                    const void *B, int ldb, long long sb, float beta, const void *C, void *D, int ldc, long long sc,
                    int batch, eng_mm dt)
{
    if (c->status || M <= 0 || N <= 0 || batch <= 0)
        return;
    if (dt.a != dt.b) { /* cuBLASLt's A and B share a type: a caller's slip, not a run's condition */
        eng__cu_fail(c, TLM_EINTERNAL, "matmul", "A and B of different storage types");
        return;
    }
    if (batch > 1 && K <= 0) { /* titans_mem's products have K >= 1: a caller's slip */
        eng__cu_fail(c, TLM_EINTERNAL, "matmul", "a strided batch with K = 0");
        return;
    }
    if (batch == 1)
        sa = sb = sc = 0; /* one product: the strides are not read, nor keyed */
    if (K <= 0) { /* D = beta C: cuBLASLt refuses k = 0 */
        if (beta != 1.0f || C != D) {
            if (dt.c == ENG_BF16)
                ENG__CU_LAUNCH(k_scale<__nv_bfloat16>, eng__cu_grid((size_t)M * N), ENG__CU_THREADS, 0, c->stream,
                               (__nv_bfloat16 *)D, (const __nv_bfloat16 *)C, ldc, M, N, beta);
            else
                ENG__CU_LAUNCH(k_scale<float>, eng__cu_grid((size_t)M * N), ENG__CU_THREADS, 0, c->stream, (float *)D,
                               (const float *)C, ldc, M, N, beta);
            ENG__CU_LAUNCHED(c, "matmul (k = 0)");
        }
        return;
    }
    /* the lowest set bit of the four addresses and of the strides' bytes, at most 256 */
    const uintptr_t bits = (uintptr_t)A | (uintptr_t)B | (uintptr_t)C | (uintptr_t)D |
                           (uintptr_t)(sa * eng_dtype_size(dt.a)) | (uintptr_t)(sb * eng_dtype_size(dt.b)) |
                           (uintptr_t)(sc * eng_dtype_size(dt.c)) | 256;
    const int align = (int)(bits & (~bits + 1));
    eng__cu_plan tmp, *p = plan_for(c, &tmp, ta, tb, M, N, K, lda, ldb, ldc, align, dt.a, dt.c, batch, sa, sb, sc);
    if (!p)
        return;
    cublasStatus_t st = c->api.cublasLtMatmul(c->lt, p->op, &alpha, B, p->lb, A, p->la, &beta, C, p->lc, D, p->lc,
                                              &p->algo, c->lt_ws, c->lt_ws_bytes, c->stream);
    if (st != CUBLAS_STATUS_SUCCESS)
        lt_fail(c, st, "matmul: cublasLtMatmul");
    if (p == &tmp) {
        c->api.cublasLtMatrixLayoutDestroy(p->la);
        c->api.cublasLtMatrixLayoutDestroy(p->lb);
        c->api.cublasLtMatrixLayoutDestroy(p->lc);
        c->api.cublasLtMatmulDescDestroy(p->op);
    }
}

void eng__cu_matmul(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda, const void *B,
                    int ldb, float beta, void *C, int ldc, eng_mm dt)
{
    product((eng__cu *)ctx, ta, tb, M, N, K, alpha, A, lda, 0, B, ldb, 0, beta, C, C, ldc, 0, 1, dt);
}

/* X goes to cuBLASLt as C, D as D: the residual add in the product's
 * epilogue, one read of X and one write of D */
void eng__cu_matmul_add(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                        const void *B, int ldb, const void *X, void *D, int ldd, eng_mm dt)
{
    product((eng__cu *)ctx, ta, tb, M, N, K, alpha, A, lda, 0, B, ldb, 0, 1.0f, X, D, ldd, 0, 1, dt);
}

void eng__cu_matmul_batched(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                            long long sa, const void *B, int ldb, long long sb, float beta, void *C, int ldc,
                            long long sc, int batch, eng_mm dt)
{
    product((eng__cu *)ctx, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, C, ldc, sc, batch, dt);
}

ENG__CU_END
