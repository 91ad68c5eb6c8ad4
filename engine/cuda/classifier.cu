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
 * repeats bit for bit.  Must not: allocate, or wait on the stream. */
#include <math.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

/* the chunk's rows: engine/cuda/plan.h (tlm-worker --describe plans with it) */
size_t eng__cu_classifier_workspace(void *ctx, int N, int V, int C)
{
    return eng_cu_classifier_ws_floats(N, V);
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
    const float *x = (const float *)xa; /* fp32 storage (the bf16 build casts here) */
    if (c->status || N <= 0)
        return;
    const int R = eng_cu_classifier_rows(N, V);
    for (int r0 = 0; r0 < N && !c->status; r0 += R) {
        const int r = N - r0 < R ? N - r0 : R;
        eng__cu_matmul(ctx, 0, 1, r, V, C, 1.0f, x + (size_t)r0 * C, C, w, C, 0.0f, ws, V, eng_mm_f32());
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
    float *dx = (float *)dxa;
    const float *x = (const float *)xa;
    if (c->status || N <= 0)
        return;
    const int R = eng_cu_classifier_rows(N, V);
    for (int r0 = 0; r0 < N && !c->status; r0 += R) {
        const int r = N - r0 < R ? N - r0 : R;
        const float *xr = x + (size_t)r0 * C;
        eng__cu_matmul(ctx, 0, 1, r, V, C, 1.0f, xr, C, w, C, 0.0f, ws, V, eng_mm_f32());
        eng__cu_xent_bwd(ctx, ws, targets + r0, r, V, dscale);
        eng__cu_matmul(ctx, 0, 0, r, C, V, 1.0f, ws, V, w, C, 0.0f, dx + (size_t)r0 * C, C, eng_mm_f32());
        eng__cu_matmul(ctx, 1, 0, V, C, r, 1.0f, ws, V, xr, C, 1.0f, dw, C, eng_mm_f32());
    }
}

ENG__CU_END
