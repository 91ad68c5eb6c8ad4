/* emu_kernels.cu: test-only kernels and calls that show each check of the
 * CUDA emulator (engine/cuda/emu/) fire when it should and stay quiet when
 * it should not, for tests/engine/backend/test_cuda_emu; and a
 * deliberately broken op (rmsnorm_fwd reading its gain with a wrong index)
 * that test_backend_ops must catch against the CPU.  Emulated build only
 * (clang++ -DENG_CUDA_EMU, instrumented like the .cu files of engine/cuda/).
 *
 * tlm_emu_run(name, report, cap) runs one scenario: 0 when it ran with no
 * error, else the CUDA (or cuBLASLt stand-in) error, its report in report;
 * -1 for an unknown name.
 *
 * Must not: be linked into the engine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

/* ------------------------------------------------------------ racecheck */
/* each thread writes its slot, then reads its neighbour's: with no barrier
 * between, a write and another thread's read of one word meet.  (The
 * slots are first set in an earlier barrier interval: otherwise the first
 * thread to run reads a slot nothing wrote yet, which initcheck reports
 * first.) */
__global__ static void k_missing_barrier(float *out, int barrier)
{
    __shared__ float sh[64];
    const int t = threadIdx.x;
    sh[t] = 0.0f;
    __syncthreads();
    sh[t] = (float)t;
    if (barrier)
        __syncthreads();
    out[t] = sh[(t + 1) % 64];
}

/* The two orders, between lanes 0 and 1 of a warp (the emulator runs a
 * warp's lanes in order, so lane 0's access comes first):
 * read-after-write (lane 0 writes sh[0], then lane 1 reads it) and
 * write-after-read (lane 0 reads sh[0], then lane 1 overwrites it).
 * Either is a race unless a barrier comes between.  (The slot is set in
 * an earlier interval, so the read is never of uninitialised memory.) */
__global__ static void k_raw_war(float *out, int war, int barrier)
{
    __shared__ float sh[1];
    const int t = threadIdx.x;
    if (t == 0)
        sh[0] = 1.0f;
    __syncthreads();
    if (t == 0) {
        if (war)
            out[0] = sh[0];
        else
            sh[0] = 2.0f;
    }
    if (barrier)
        __syncthreads();
    if (t == 1) {
        if (war)
            sh[0] = 3.0f;
        else
            out[1] = sh[0];
    }
}

/* A tiled loop, the shape of a kernel that stages tiles in shared memory:
 * each iteration loads a tile, waits, and reads a neighbour's element.
 * Without the barrier that ends an iteration, the next iteration's load
 * overwrites an element another thread read in the same interval
 * (write-after-read across iterations). */
__global__ static void k_tile_loop(float *out, const float *in, int barrier_at_end)
{
    __shared__ float tile[64];
    const int t = threadIdx.x;
    float acc = 0;
    for (int it = 0; it < 3; it++) {
        tile[t] = in[it * 64 + t];
        __syncthreads();
        acc += tile[(t + 1) % 64];
        if (barrier_at_end)
            __syncthreads();
    }
    out[t] = acc;
}

/* lane 0 writes, lane 1 reads: ordered only by __syncwarp */
__global__ static void k_warp_handoff(float *out, int sync)
{
    __shared__ float sh[32];
    const int lane = threadIdx.x & 31;
    if (lane == 0)
        sh[0] = 42.0f;
    if (sync)
        __syncwarp();
    if (lane == 1)
        out[0] = sh[0];
}

/* every block writes out[0] (same), or its own element */
__global__ static void k_blocks_write(float *out, int same)
{
    if (threadIdx.x == 0)
        out[same ? 0 : blockIdx.x] = (float)blockIdx.x;
}

/* ops.cu's block_sum pattern called twice on one shared array: without a
 * barrier between the calls, the second call's partial writes race with
 * the first call's reads of sh[0] (ops.cu relies on this being reported) */
__device__ static float twice_sum(float x, float *sh)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_down_sync(0xffffffffu, x, o);
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (lane == 0)
        sh[w] = x;
    __syncthreads();
    if (w == 0) {
        x = lane < nw ? sh[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1)
            x += __shfl_down_sync(0xffffffffu, x, o);
        if (lane == 0)
            sh[0] = x;
    }
    __syncthreads();
    return sh[0];
}

__global__ static void k_sum_twice(float *out, int barrier)
{
    __shared__ float sh[32];
    const float a = twice_sum((float)threadIdx.x, sh);
    if (barrier)
        __syncthreads();
    const float b = twice_sum(1.0f, sh);
    if (threadIdx.x == 0)
        out[0] = a, out[1] = b;
}

/* every thread adds 1 to out[0] */
__global__ static void k_atomic_count(float *out)
{
    atomicAdd(out, 1.0f);
}

/* ------------------------------------------------------------ synccheck */
__global__ static void k_barrier_after_exit(float *out)
{
    if (threadIdx.x >= 16)
        return;
    __syncthreads();
    out[threadIdx.x] = 1.0f;
}

__global__ static void k_divergent_barriers(float *out)
{
    if (threadIdx.x < 32)
        __syncthreads();
    else
        __syncthreads();
    out[threadIdx.x] = 1.0f;
}

__global__ static void k_shfl_exited_lane(float *out)
{
    const int lane = threadIdx.x & 31;
    if (lane == 5)
        return;
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (float)lane, 1);
}

__global__ static void k_shfl_mask_without_caller(float *out)
{
    out[threadIdx.x] = __shfl_sync(0x1u, (float)threadIdx.x, 0);
}

__global__ static void k_shfl_masks_differ(float *out)
{
    const int lane = threadIdx.x & 31;
    out[threadIdx.x] = __shfl_sync(lane < 16 ? 0xffffffffu : 0xffff0000u, (float)lane, 0);
}

/* the primitives' values: shfl_down with its edge, shfl_up, xor, ballot */
__global__ static void k_warp_values(int *out)
{
    const int lane = threadIdx.x;
    out[lane] = __shfl_down_sync(0xffffffffu, lane, 3);
    out[32 + lane] = __shfl_up_sync(0xffffffffu, lane, 2);
    out[64 + lane] = __shfl_xor_sync(0xffffffffu, lane, 5);
    out[96 + lane] = (int)__ballot_sync(0xffffffffu, lane % 3 == 0);
    out[128 + lane] = __shfl_sync(0xffffffffu, lane * 10, 7, 8);
    out[160 + lane] = __any_sync(0xffffffffu, lane == 31) + 2 * __all_sync(0xffffffffu, lane < 31);
}

/* ------------------------------------------------------------ memcheck, initcheck */
__global__ static void k_read_at(float *out, const float *in, int at)
{
    out[threadIdx.x] = in[at + (int)threadIdx.x];
}

__global__ static void k_read_misaligned(float *out, const char *in)
{
    out[0] = *(const float *)(in + 2);
}

/* thread 0 shares the address of one of its locals; thread 1 reads it */
__global__ static void k_other_stack(float *out)
{
    __shared__ float *p;
    float mine = 3.0f;
    if (threadIdx.x == 0)
        p = &mine;
    __syncthreads();
    if (threadIdx.x == 1)
        out[0] = *p;
    __syncthreads();
}

/* ------------------------------------------------------------ scenarios */
static cudaError_t finish(char *report, size_t cap)
{
    const cudaError_t rc = cudaGetLastError();
    snprintf(report, cap, "%s", rc == cudaSuccess ? "" : cudaGetErrorString(rc));
    return rc;
}

static float *dev_floats(size_t n, int zero)
{
    void *p = NULL;
    if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess)
        return NULL;
    if (zero)
        cudaMemset(p, 0, n * sizeof(float));
    return (float *)p;
}

static int run_kernel_case(const char *name, char *report, size_t cap)
{
    float *out = dev_floats(1024, 1), *in = NULL;
    int rc = -1;
    (void)cudaGetLastError();
    if (!strcmp(name, "race_missing_barrier") || !strcmp(name, "race_with_barrier")) {
        ENG__CU_LAUNCH(k_missing_barrier, 1, 64, 0, (cudaStream_t)0, out, name[5] == 'w');
        rc = finish(report, cap);
    } else if (!strcmp(name, "race_raw") || !strcmp(name, "race_raw_barrier") || !strcmp(name, "race_war") ||
               !strcmp(name, "race_war_barrier")) {
        ENG__CU_LAUNCH(k_raw_war, 1, 32, 0, (cudaStream_t)0, out, name[7] == 'r', strstr(name, "barrier") != NULL);
        rc = finish(report, cap);
    } else if (!strncmp(name, "race_tile_loop", 14)) {
        in = dev_floats(3 * 64, 0);
        float h[3 * 64];
        for (int i = 0; i < 3 * 64; i++)
            h[i] = (float)i;
        cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
        ENG__CU_LAUNCH(k_tile_loop, 1, 64, 0, (cudaStream_t)0, out, (const float *)in, strstr(name, "barrier") != NULL);
        rc = finish(report, cap);
        float v[64];
        cudaMemcpy(v, out, sizeof v, cudaMemcpyDeviceToHost);
        for (int t = 0; t < 64 && !rc; t++) {
            const int j = (t + 1) % 64;
            if (v[t] != (float)(j + (64 + j) + (128 + j)))
                rc = 1, snprintf(report, cap, "thread %d summed %g, not %d", t, v[t], j + (64 + j) + (128 + j));
        }
    } else if (!strcmp(name, "race_warp_unsynced") || !strcmp(name, "race_warp_synced")) {
        ENG__CU_LAUNCH(k_warp_handoff, 1, 32, 0, (cudaStream_t)0, out, name[10] == 's');
        rc = finish(report, cap);
    } else if (!strcmp(name, "race_blocks_same_word") || !strcmp(name, "race_blocks_own_words")) {
        ENG__CU_LAUNCH(k_blocks_write, 4, 32, 0, (cudaStream_t)0, out, name[12] == 's');
        rc = finish(report, cap);
    } else if (!strcmp(name, "race_reduction_twice") || !strcmp(name, "race_reduction_twice_barrier")) {
        ENG__CU_LAUNCH(k_sum_twice, 1, 128, 0, (cudaStream_t)0, out, name[20] == '_');
        rc = finish(report, cap);
        float v[2] = {0, 0};
        cudaMemcpy(v, out, sizeof v, cudaMemcpyDeviceToHost);
        if (!rc && (v[0] != 8128.0f || v[1] != 128.0f))
            rc = 1, snprintf(report, cap, "the sums are %g and %g, not 8128 and 128", v[0], v[1]);
    } else if (!strcmp(name, "atomic_count")) {
        ENG__CU_LAUNCH(k_atomic_count, 3, 64, 0, (cudaStream_t)0, out);
        rc = finish(report, cap);
        float v = 0;
        cudaMemcpy(&v, out, sizeof v, cudaMemcpyDeviceToHost);
        if (!rc && v != 192.0f)
            rc = 1, snprintf(report, cap, "atomicAdd counted %g of 192", v);
    } else if (!strcmp(name, "sync_barrier_after_exit")) {
        ENG__CU_LAUNCH(k_barrier_after_exit, 1, 64, 0, (cudaStream_t)0, out);
        rc = finish(report, cap);
    } else if (!strcmp(name, "sync_divergent_barriers")) {
        ENG__CU_LAUNCH(k_divergent_barriers, 1, 64, 0, (cudaStream_t)0, out);
        rc = finish(report, cap);
    } else if (!strcmp(name, "shfl_exited_lane")) {
        ENG__CU_LAUNCH(k_shfl_exited_lane, 1, 32, 0, (cudaStream_t)0, out);
        rc = finish(report, cap);
    } else if (!strcmp(name, "shfl_mask_without_caller")) {
        ENG__CU_LAUNCH(k_shfl_mask_without_caller, 1, 32, 0, (cudaStream_t)0, out);
        rc = finish(report, cap);
    } else if (!strcmp(name, "shfl_masks_differ")) {
        ENG__CU_LAUNCH(k_shfl_masks_differ, 1, 32, 0, (cudaStream_t)0, out);
        rc = finish(report, cap);
    } else if (!strcmp(name, "warp_values")) {
        ENG__CU_LAUNCH(k_warp_values, 1, 32, 0, (cudaStream_t)0, (int *)out);
        rc = finish(report, cap);
        int v[192];
        cudaMemcpy(v, out, sizeof v, cudaMemcpyDeviceToHost);
        for (int l = 0; l < 32 && !rc; l++) {
            const int want[6] = {l + 3 < 32 ? l + 3 : l, l >= 2 ? l - 2 : l, l ^ 5, (int)0x49249249u,
                                 ((l & ~7) + 7) * 10, 1};
            for (int k = 0; k < 6; k++)
                if (v[32 * k + l] != want[k]) {
                    rc = 1;
                    snprintf(report, cap, "primitive %d, lane %d: %d, not %d", k, l, v[32 * k + l], want[k]);
                    break;
                }
        }
    } else if (!strcmp(name, "mem_out_of_bounds")) {
        in = dev_floats(64, 1);
        ENG__CU_LAUNCH(k_read_at, 1, 32, 0, (cudaStream_t)0, out, in, 40); /* threads 24..31 read past 64 */
        rc = finish(report, cap);
    } else if (!strcmp(name, "mem_in_bounds")) {
        in = dev_floats(64, 1);
        ENG__CU_LAUNCH(k_read_at, 1, 32, 0, (cudaStream_t)0, out, in, 32);
        rc = finish(report, cap);
    } else if (!strcmp(name, "mem_host_pointer_argument")) {
        float *host = (float *)calloc(64, sizeof *host);
        ENG__CU_LAUNCH(k_read_at, 1, 32, 0, (cudaStream_t)0, out, host, 0);
        rc = finish(report, cap);
        free(host);
    } else if (!strcmp(name, "mem_uninitialised")) {
        in = dev_floats(64, 0); /* cudaMalloc'd, never written */
        ENG__CU_LAUNCH(k_read_at, 1, 32, 0, (cudaStream_t)0, out, in, 0);
        rc = finish(report, cap);
    } else if (!strcmp(name, "mem_misaligned")) {
        in = dev_floats(64, 1);
        ENG__CU_LAUNCH(k_read_misaligned, 1, 1, 0, (cudaStream_t)0, out, (const char *)in);
        rc = finish(report, cap);
    } else if (!strcmp(name, "mem_other_thread_stack")) {
        ENG__CU_LAUNCH(k_other_stack, 1, 32, 0, (cudaStream_t)0, out);
        rc = finish(report, cap);
    }
    cudaFree(in);
    cudaFree(out);
    return rc;
}

/* ------------------------------------------------------------ the cuBLASLt stand-ins */
/* a column-major m x n fp32 matrix, ld rows, at p; `batch` of them,
 * each operand's `stride` elements apart */
static cublasStatus_t lt_gemm(const void *A, int lda, const void *B, int ldb, float *C, int ldc, int m, int n, int k,
                              uint32_t pref_align, cudaDataType_t tab, cudaDataType_t tcd, int32_t batch = 1,
                              int64_t stride = 0)
{
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
    eng_lt_standin_cublasLtCreate(&h);
    eng_lt_standin_cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    eng_lt_standin_cublasLtMatrixLayoutCreate(&la, tab, m, k, lda);
    eng_lt_standin_cublasLtMatrixLayoutCreate(&lb, tab, k, n, ldb);
    eng_lt_standin_cublasLtMatrixLayoutCreate(&lc, tcd, m, n, ldc);
    const cublasLtMatrixLayout_t lay[3] = {la, lb, lc};
    for (int i = 0; i < 3 && batch > 1; i++) {
        eng_lt_standin_cublasLtMatrixLayoutSetAttribute(lay[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
        eng_lt_standin_cublasLtMatrixLayoutSetAttribute(lay[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                        sizeof stride);
    }
    eng_lt_standin_cublasLtMatmulPreferenceCreate(&pref);
    for (int i = 0; i < 4; i++)
        eng_lt_standin_cublasLtMatmulPreferenceSetAttribute(
            pref, (cublasLtMatmulPreferenceAttributes_t)(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + i), &pref_align,
            sizeof pref_align);
    cublasLtMatmulHeuristicResult_t r;
    int found = 0;
    cublasStatus_t st = eng_lt_standin_cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 1, &r, &found);
    const float alpha = 1.0f, beta = 0.0f;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = eng_lt_standin_cublasLtMatmul(h, op, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &r.algo, NULL, 0, 0);
    eng_lt_standin_cublasLtMatmulPreferenceDestroy(pref);
    eng_lt_standin_cublasLtMatrixLayoutDestroy(la);
    eng_lt_standin_cublasLtMatrixLayoutDestroy(lb);
    eng_lt_standin_cublasLtMatrixLayoutDestroy(lc);
    eng_lt_standin_cublasLtMatmulDescDestroy(op);
    eng_lt_standin_cublasLtDestroy(h);
    return st;
}

/* bf16 A (m x k) and B (k x n), fp32 C = D, bias, 2 batches: the product
 * checked against one computed here from the same bits */
static int lt_bf16_bias_batch(char *report, size_t cap)
{
    enum { m = 5, n = 3, k = 7, batch = 2, lda = 6, ldb = 8, ldc = 5 };
    const int64_t sa = lda * k, sb = ldb * n, sc = ldc * n;
    uint16_t ha[batch * sa], hb[batch * sb];
    float hc[batch * sc], bias[batch * m], want[batch * sc];
    for (int i = 0; i < batch * sa; i++)
        ha[i] = __float2bfloat16_rn(0.25f * (float)((i * 7) % 11 - 5)).__x;
    for (int i = 0; i < batch * sb; i++)
        hb[i] = __float2bfloat16_rn(0.5f * (float)((i * 5) % 9 - 4)).__x;
    for (int i = 0; i < batch * sc; i++)
        hc[i] = (float)(i % 4);
    for (int i = 0; i < batch * m; i++)
        bias[i] = 0.125f * (float)i;
    const float alpha = 2.0f, beta = 0.5f;
    for (int b = 0; b < batch; b++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int q = 0; q < k; q++)
                    s += (double)bf16_bits_f32((uint32_t)ha[b * sa + q * lda + i] << 16) *
                         bf16_bits_f32((uint32_t)hb[b * sb + j * ldb + q] << 16);
                want[b * sc + j * ldc + i] = (float)(alpha * s + beta * hc[b * sc + j * ldc + i] + bias[b * m + i]);
            }
    void *dev = NULL;
    cudaMalloc(&dev, 4096);
    uint16_t *da = (uint16_t *)dev, *db = da + batch * sa;
    float *dc = (float *)(db + batch * sb + 2), *dbias = dc + batch * sc;
    cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, hc, sizeof hc, cudaMemcpyHostToDevice);
    cudaMemcpy(dbias, bias, sizeof bias, cudaMemcpyHostToDevice);
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t L[3];
    cublasLtMatmulPreference_t pref;
    eng_lt_standin_cublasLtCreate(&h);
    eng_lt_standin_cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const int32_t epi = CUBLASLT_EPILOGUE_BIAS;
    const int64_t bstride = m;
    eng_lt_standin_cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    eng_lt_standin_cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias);
    eng_lt_standin_cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bstride,
                                                  sizeof bstride);
    const int rows[3] = {m, k, m}, cols[3] = {k, n, n}, lds[3] = {lda, ldb, ldc};
    const int64_t strides[3] = {sa, sb, sc};
    const cudaDataType_t types[3] = {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F};
    const int32_t nb = batch;
    for (int i = 0; i < 3; i++) {
        eng_lt_standin_cublasLtMatrixLayoutCreate(&L[i], types[i], rows[i], cols[i], lds[i]);
        eng_lt_standin_cublasLtMatrixLayoutSetAttribute(L[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &nb, sizeof nb);
        eng_lt_standin_cublasLtMatrixLayoutSetAttribute(L[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                        &strides[i], sizeof strides[i]);
    }
    eng_lt_standin_cublasLtMatmulPreferenceCreate(&pref);
    const uint32_t al = 4; /* dc sits at byte 244: 4-byte aligned */
    for (int i = 0; i < 4; i++)
        eng_lt_standin_cublasLtMatmulPreferenceSetAttribute(
            pref, (cublasLtMatmulPreferenceAttributes_t)(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + i), &al,
            sizeof al);
    cublasLtMatmulHeuristicResult_t r;
    int found = 0;
    cublasStatus_t st = eng_lt_standin_cublasLtMatmulAlgoGetHeuristic(h, op, L[0], L[1], L[2], L[2], pref, 1, &r,
                                                                     &found);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = eng_lt_standin_cublasLtMatmul(h, op, &alpha, da, L[0], db, L[1], &beta, dc, L[2], dc, L[2], &r.algo,
                                           NULL, 0, 0);
    float got[batch * sc];
    cudaMemcpy(got, dc, sizeof got, cudaMemcpyDeviceToHost);
    int rc = st;
    if (st == CUBLAS_STATUS_SUCCESS)
        for (int b = 0; b < batch && !rc; b++)
            for (int i = 0; i < m && !rc; i++)
                for (int j = 0; j < n && !rc; j++) {
                    const int at = b * (int)sc + j * ldc + i;
                    if (got[at] != want[at]) {
                        rc = 1;
                        snprintf(report, cap, "batch %d element (%d, %d): %g, not %g", b, i, j, got[at], want[at]);
                    }
                }
    else
        snprintf(report, cap, "%s", eng_lt_standin_cublasLtGetStatusString(st));
    eng_lt_standin_cublasLtMatmulPreferenceDestroy(pref);
    for (int i = 0; i < 3; i++)
        eng_lt_standin_cublasLtMatrixLayoutDestroy(L[i]);
    eng_lt_standin_cublasLtMatmulDescDestroy(op);
    eng_lt_standin_cublasLtDestroy(h);
    cudaFree(dev);
    return rc;
}

static int run_standin_case(const char *name, char *report, size_t cap)
{
    void *dev = NULL;
    if (cudaMalloc(&dev, 4096) != cudaSuccess)
        return 1;
    cudaMemset(dev, 0, 4096);
    float *f = (float *)dev;
    cublasStatus_t st;
    int rc = -1;
    if (!strcmp(name, "lt_aligned_as_promised")) /* 4-byte pointers, the preference says 4 */
        st = lt_gemm(f + 1, 4, f + 65, 4, f + 129, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_32F), rc = st;
    else if (!strcmp(name, "lt_less_aligned_than_promised")) /* 4-byte A, the preference promised 16 */
        st = lt_gemm(f + 1, 4, f + 64, 4, f + 128, 4, 4, 4, 4, 16, CUDA_R_32F, CUDA_R_32F), rc = st;
    else if (!strcmp(name, "lt_ld_below_rows"))
        st = lt_gemm(f, 3, f + 64, 4, f + 128, 4, 4, 4, 4, 16, CUDA_R_32F, CUDA_R_32F), rc = st;
    else if (!strcmp(name, "lt_fp32_inputs_bf16_output"))
        st = lt_gemm(f, 4, f + 64, 4, f + 128, 4, 4, 4, 4, 16, CUDA_R_32F, CUDA_R_16BF), rc = st;
    else if (!strcmp(name, "lt_matrix_leaves_allocation")) /* C's 4 x 4 at f + 1020 ends past 4096 bytes */
        st = lt_gemm(f, 4, f + 64, 4, f + 1020, 4, 4, 4, 4, 16, CUDA_R_32F, CUDA_R_32F), rc = st;
    else if (!strcmp(name, "lt_element_misaligned")) /* bf16 A at an odd byte */
        st = lt_gemm((char *)dev + 1, 4, f + 64, 4, f + 128, 4, 4, 4, 4, 1, CUDA_R_16BF, CUDA_R_32F), rc = st;
    else if (!strcmp(name, "lt_batch_aligned_as_promised")) /* 16-byte pointers, 2 batches 16 floats apart */
        st = lt_gemm(f, 4, f + 64, 4, f + 128, 4, 4, 4, 4, 16, CUDA_R_32F, CUDA_R_32F, 2, 16), rc = st;
    else if (!strcmp(name, "lt_batch_stride_less_aligned")) /* the same, 17 floats apart: batch 1 is 4-byte aligned */
        st = lt_gemm(f, 4, f + 64, 4, f + 128, 4, 4, 4, 4, 16, CUDA_R_32F, CUDA_R_32F, 2, 17), rc = st;
    else if (!strcmp(name, "lt_bf16_bias_batch"))
        return cudaFree(dev), lt_bf16_bias_batch(report, cap);
    else
        st = CUBLAS_STATUS_SUCCESS;
    if (rc > 0)
        snprintf(report, cap, "%s", eng_lt_standin_cublasLtGetStatusString(st));
    else if (!rc)
        report[0] = 0;
    cudaFree(dev);
    return rc;
}

/* ------------------------------------------------------------ a broken op */
/* rmsnorm_fwd with the gain read at a wrong index (reversed): one thread
 * per row, no reduction tree, so only the index is wrong */
__global__ static void k_rmsnorm_wrong_index(float *out, float *rstd, const float *x, const float *w, int N, int C,
                                             float eps)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N)
        return;
    float ss = 0;
    for (int c = 0; c < C; c++)
        ss += x[(size_t)n * C + c] * x[(size_t)n * C + c];
    const float r = eng_cu_rmsnorm_rstd(ss, C, eps);
    rstd[n] = r;
    for (int c = 0; c < C; c++)
        out[(size_t)n * C + c] = x[(size_t)n * C + c] * r * w[C - 1 - c];
}

ENG__CU_END

using namespace eng_cu_emu;

extern "C" int tlm_emu_run(const char *name, char *report, size_t cap)
{
    report[0] = 0;
    const int rc = run_kernel_case(name, report, cap);
    return rc >= 0 ? rc : run_standin_case(name, report, cap);
}

/* the eng_ops signature of rmsnorm_fwd, on the emulated backend's context */
extern "C" void tlm_emu_rmsnorm_fwd_wrong_index(void *ctx, eng_act *out_a, float *rstd, const eng_act *x_a,
                                                const float *w,
                                                int N, int C, float eps)
{
    float *out = (float *)out_a;
    const float *x = (const float *)x_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0)
        return;
    ENG__CU_LAUNCH(k_rmsnorm_wrong_index, (unsigned)(N + 31) / 32, 32, 0, c->stream, out, rstd, x, w, N, C, eps);
    ENG__CU_LAUNCHED(c, "rmsnorm_fwd (wrong index)");
}

/* the most recent stand-in matmul's alignments: the pointers' and the
 * algorithm's, A B C D; 0 when none ran */
extern "C" int tlm_emu_last_matmul_align(unsigned ptr_align[4], unsigned algo_align[4])
{
    const lt_call_record *r = lt_last_call();
    for (int i = 0; i < 4; i++)
        ptr_align[i] = r->ptr_align[i], algo_align[i] = r->algo_align[i];
    return r->algo_align[0] != 0;
}

/* the emulator's bf16 conversions (emu/bf16.h), for the table of edge cases */
extern "C" unsigned tlm_emu_bf16_rn(uint32_t f32_bits)
{
    return bf16_rn_bits(bf16_bits_f32(f32_bits));
}
extern "C" unsigned tlm_emu_bf16_rz(uint32_t f32_bits)
{
    return bf16_rz_bits(bf16_bits_f32(f32_bits));
}
extern "C" uint32_t tlm_emu_bf16_to_f32(unsigned b)
{
    return bf16_f32_bits(__bfloat162float(bf16_from_bits((unsigned short)b)));
}
extern "C" unsigned tlm_emu_bf16_from_f64(double d)
{
    return __double2bfloat16(d).__x;
}
