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
 * bf16 activations: the products are bf16 x bf16 with fp32 accumulation
 * (tensor-core GEMMs on a GPU), as every other matmul of the model: the
 * head's weight comes as the model's bf16 copy (ops.h w_lp), x is read in
 * place, and each chunk's logits are made in fp32 into the workspace,
 * where the softmax and cross-entropy stay fp32.  The backward then
 * stores the fp32 dlogits in bf16 (one rounding) over themselves, each
 * row in its own row's first half (k_dl_bf16: a matrix of row stride 2V,
 * no more workspace), for its two products: dx = dl W written in bf16
 * (one rounding of the fp32 sum), dw += dl^T x into the fp32 gradient.
 * On fp32 every operand is fp32 and the calls are the ones they were, bit
 * for bit. */
#include <math.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

/* the chunk's rows: engine/cuda/plan.h (tlm-worker --describe plans with it) */
size_t eng__cu_classifier_workspace(void *ctx, int N, int V, int C)
{
    (void)ctx, (void)C;
    return eng_cu_classifier_ws_floats(N, V);
}

/* One block a row of dl (V floats at rows + blockIdx.x V): its elements
 * rounded to bf16 and stored at the row's start, in place.  Each tile of
 * blockDim elements is read, then written after the barrier: its bf16
 * land on the floats [t0 / 2, (t0 + blockDim) / 2), which this tile or an
 * earlier one has read, and no row reaches past its own. */
__global__ static void k_dl_bf16(float *rows, int V)
{
    float *row = rows + (size_t)blockIdx.x * V;
    __nv_bfloat16 *out = (__nv_bfloat16 *)row;
    for (int t0 = 0; t0 < V; t0 += blockDim.x) {
        const int i = t0 + threadIdx.x;
        const float v = i < V ? row[i] : 0.0f;
        __syncthreads();
        if (i < V)
            out[i] = eng__cu_st<__nv_bfloat16>(v);
    }
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

void eng__cu_classifier_fwd(void *ctx, float *losses, double *loss_acc, const eng_act *xa, const void *w_lp,
                            const int32_t *targets, int N, int V, int C, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0)
        return;
    const int R = eng_cu_classifier_rows(N, V);
    const eng_dtype t = c->act;
    for (int r0 = 0; r0 < N && !c->status; r0 += R) {
        const int r = N - r0 < R ? N - r0 : R;
        eng__cu_matmul(ctx, 0, 1, r, V, C, 1.0f, eng_act_off(t, xa, (size_t)r0 * C), C, w_lp, C, 0.0f, ws, V,
                       eng_mm_of(t, t, ENG_F32));
        eng__cu_xent_fwd(ctx, losses + r0, ws, targets + r0, r, V);
    }
    if (!c->status) {
        ENG__CU_LAUNCH(k_loss_mean, 1, 1024, 0, c->stream, loss_acc, losses, targets, N);
        ENG__CU_LAUNCHED(c, "classifier_fwd (loss)");
    }
}

void eng__cu_classifier_bwd(void *ctx, eng_act *dxa, float *dw, const eng_act *xa, const void *w_lp,
                            const int32_t *targets, int N, int V, int C, float dscale, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0)
        return;
    const int R = eng_cu_classifier_rows(N, V);
    const eng_dtype t = c->act;
    const int ldl = t == ENG_BF16 ? 2 * V : V; /* dl's row stride (k_dl_bf16) */
    for (int r0 = 0; r0 < N && !c->status; r0 += R) {
        const int r = N - r0 < R ? N - r0 : R;
        const eng_act *xr = eng_act_off(t, xa, (size_t)r0 * C);
        eng__cu_matmul(ctx, 0, 1, r, V, C, 1.0f, xr, C, w_lp, C, 0.0f, ws, V, eng_mm_of(t, t, ENG_F32));
        eng__cu_xent_bwd(ctx, ws, targets + r0, r, V, dscale);
        if (t == ENG_BF16 && !c->status) {
            ENG__CU_LAUNCH(k_dl_bf16, r, ENG__CU_THREADS, 0, c->stream, ws, V);
            ENG__CU_LAUNCHED(c, "classifier_bwd (dl to bf16)");
        }
        eng__cu_matmul(ctx, 0, 0, r, C, V, 1.0f, ws, ldl, w_lp, C, 0.0f, eng_act_off(t, dxa, (size_t)r0 * C), C,
                       eng_mm_of(t, t, t));
        eng__cu_matmul(ctx, 1, 0, V, C, r, 1.0f, ws, ldl, xr, C, 1.0f, dw, C, eng_mm_of(t, t, ENG_F32));
    }
}

ENG__CU_END
