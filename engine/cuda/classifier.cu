/* classifier.cu: the CUDA backend's fused classifier (ops.h classifier_*):
 * the LM head and softmax cross-entropy over chunks of rows, so that the
 * (N, V) logits never exist whole: each chunk's logits are made by the
 * head's matmul into the workspace, turned into losses (forward) or into
 * their gradient in place (backward: recomputed, then dx = dl W and
 * dw += dl^T x), and dropped.  The mean loss is summed on the device into
 * the caller's accumulator; nothing is copied to the host.
 *
 * Determinism: the chunks are fixed by (N, V), the losses' sum is one
 * block's fixed tree, and dw sums the chunks in order (beta = 1), so a run
 * repeats bit for bit.  Must not: allocate, or wait on the stream.
 *
 * bf16 activations: the head's weight is the fp32 master here (ops.h
 * passes it as float, and the model passes params, not its bf16 copy
 * params_lp), and cuBLASLt takes
 * A and B of one type, so each chunk's rows of x are widened to fp32 in
 * the workspace and the products stay fp32; dx is made in fp32 there and
 * stored in bf16 (one rounding).  When the head reads a bf16 weight copy,
 * the logits become the {bf16, bf16, f32} product into this workspace. */
#include <math.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

/* the chunk's rows: engine/cuda/plan.h (tlm-worker --describe plans with it) */
size_t eng__cu_classifier_workspace(void *ctx, int N, int V, int C)
{
    return eng_cu_classifier_workspace_floats(((const eng__cu *)ctx)->act == ENG_BF16, N, V, C);
}

/* the widened rows' place in a bf16 workspace (plan.h) */
static float *wide_rows(float *ws, int N, int V)
{
    return ws + ((eng_cu_classifier_ws_floats(N, V) + 15) & ~(size_t)15);
}

/* n elements between bf16 activations and fp32 scratch */
__global__ static void k_widen(float *dst, const __nv_bfloat16 *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = eng__cu_ld(src[i]);
}
__global__ static void k_narrow(__nv_bfloat16 *dst, const float *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = eng__cu_st<__nv_bfloat16>(src[i]);
}
static void widen(eng__cu *c, float *dst, const __nv_bfloat16 *src, size_t n)
{
    if (c->status)
        return;
    ENG__CU_LAUNCH(k_widen, eng__cu_grid(n), ENG__CU_THREADS, 0, c->stream, dst, src, n);
    ENG__CU_LAUNCHED(c, "classifier (x to fp32)");
}

/* One block: the counted losses summed in double (each thread strided,
 * then a fixed tree) and counted; acc += sum / count. */
__global__ static void k_loss_mean(double *acc, const float *losses, const int32_t *targets, int N)
{
    __shared__ double shs[32];
    __shared__ int shc[32];
    double s = 0;
    int cnt = 0;
    for (int n = threadIdx.x; n < N; n += blockDim.x)
        if (targets[n] >= 0) {
            s += losses[n];
            cnt++;
        }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_down_sync(0xffffffffu, s, o);
        cnt += __shfl_down_sync(0xffffffffu, cnt, o);
    }
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (lane == 0)
        shs[w] = s, shc[w] = cnt;
    __syncthreads();
    if (w == 0) {
        s = lane < nw ? shs[lane] : 0.0;
        cnt = lane < nw ? shc[lane] : 0;
        for (int o = 16; o > 0; o >>= 1) {
            s += __shfl_down_sync(0xffffffffu, s, o);
            cnt += __shfl_down_sync(0xffffffffu, cnt, o);
        }
        if (lane == 0 && cnt)
            *acc += s / (double)cnt;
    }
}

void eng__cu_classifier_fwd(void *ctx, float *losses, double *loss_acc, const eng_act *xa, const float *w,
                            const int32_t *targets, int N, int V, int C, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    const int bf = c->act == ENG_BF16;
    if (c->status || N <= 0)
        return;
    const int R = eng_cu_classifier_rows(N, V);
    float *xw = wide_rows(ws, N, V);
    for (int r0 = 0; r0 < N && !c->status; r0 += R) {
        const int r = N - r0 < R ? N - r0 : R;
        const size_t at = (size_t)r0 * C;
        const float *xr = (const float *)xa + at;
        if (bf) {
            widen(c, xw, (const __nv_bfloat16 *)xa + at, (size_t)r * C);
            xr = xw;
        }
        eng__cu_matmul(ctx, 0, 1, r, V, C, 1.0f, xr, C, w, C, 0.0f, ws, V, eng_mm_f32());
        eng__cu_xent_fwd(ctx, losses + r0, ws, targets + r0, r, V);
    }
    if (!c->status) {
        ENG__CU_LAUNCH(k_loss_mean, 1, 1024, 0, c->stream, loss_acc, losses, targets, N);
        ENG__CU_LAUNCHED(c, "classifier_fwd (loss)");
    }
}

void eng__cu_classifier_bwd(void *ctx, eng_act *dxa, float *dw, const eng_act *xa, const float *w,
                            const int32_t *targets, int N, int V, int C, float dscale, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0)
        return;
    const int R = eng_cu_classifier_rows(N, V);
    if (c->act != ENG_BF16) {
        float *dx = (float *)dxa;
        const float *x = (const float *)xa;
        for (int r0 = 0; r0 < N && !c->status; r0 += R) {
            const int r = N - r0 < R ? N - r0 : R;
            const float *xr = x + (size_t)r0 * C;
            eng__cu_matmul(ctx, 0, 1, r, V, C, 1.0f, xr, C, w, C, 0.0f, ws, V, eng_mm_f32());
            eng__cu_xent_bwd(ctx, ws, targets + r0, r, V, dscale);
            eng__cu_matmul(ctx, 0, 0, r, C, V, 1.0f, ws, V, w, C, 0.0f, dx + (size_t)r0 * C, C, eng_mm_f32());
            eng__cu_matmul(ctx, 1, 0, V, C, r, 1.0f, ws, V, xr, C, 1.0f, dw, C, eng_mm_f32());
        }
        return;
    }
    /* bf16: dw first (it reads the widened x), then dx over it */
    float *xw = wide_rows(ws, N, V);
    for (int r0 = 0; r0 < N && !c->status; r0 += R) {
        const int r = N - r0 < R ? N - r0 : R;
        const size_t at = (size_t)r0 * C, n = (size_t)r * C;
        widen(c, xw, (const __nv_bfloat16 *)xa + at, n);
        eng__cu_matmul(ctx, 0, 1, r, V, C, 1.0f, xw, C, w, C, 0.0f, ws, V, eng_mm_f32());
        eng__cu_xent_bwd(ctx, ws, targets + r0, r, V, dscale);
        eng__cu_matmul(ctx, 1, 0, V, C, r, 1.0f, ws, V, xw, C, 1.0f, dw, C, eng_mm_f32());
        eng__cu_matmul(ctx, 0, 0, r, C, V, 1.0f, ws, V, w, C, 0.0f, xw, C, eng_mm_f32());
        if (c->status)
            return;
        ENG__CU_LAUNCH(k_narrow, eng__cu_grid(n), ENG__CU_THREADS, 0, c->stream,
                       (__nv_bfloat16 *)dxa + at, xw, n);
        ENG__CU_LAUNCHED(c, "classifier_bwd (dx to bf16)");
    }
}

ENG__CU_END
