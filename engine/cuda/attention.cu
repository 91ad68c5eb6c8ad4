/* attention.cu: causal softmax attention, forward and backward, fused
 * (flash-style: the scores and probabilities are never stored; the forward
 * keeps each row's log-sum-exp, the backward recomputes the probabilities
 * from it), so memory is O(T) per head.  Contract and reference:
 * engine/model/ops.h and engine/cpu/attention.c.
 *
 * This is the straightforward version, written for correctness first: a
 * warp per query row (forward, backward dQ) or per key row (backward dK,
 * dV), the head spread over the lanes (hd <= 256, 8 per lane), keys and
 * queries read from memory (L2) one row at a time, fp32.  It reaches
 * nowhere near the tensor cores; the tiled bf16 kernel (or cuDNN's fused
 * SDPA graph) replaces it by measurement (docs/engine.md, "CUDA").
 *
 * Backward, per head: D_i = sum_j P_ij dP_ij (= dO_i . O_i) first, one
 * warp per query row, which also gives dQ; then one warp per key row and
 * kv head sums dK, dV over the group's query heads and the rows that see
 * it, in order, so no two writers meet (no atomics: runs repeat bit for
 * bit).  D lives in the workspace, (B, H, T) floats. */
#include <math.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

#define ATT_PER_LANE 8 /* hd <= 32 * 8 */

/* sum over the warp; every lane gets the same bits (x + y == y + x) */
__device__ static float warp_sum(float x)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

__device__ static float dot_row(const float *a, const float *row, int hd, int lane)
{
    float s = 0;
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            s += a[e] * row[d];
    }
    return warp_sum(s);
}

__device__ static void load_row(float *a, const float *row, int hd, int lane)
{
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++) {
        int d = lane + 32 * e;
        a[e] = d < hd ? row[d] : 0.0f;
    }
}

__global__ static void k_attn_fwd(float *out, int ldo, float *lse, const float *q, int ldq, const float *k,
                                  const float *v, int ldkv, int B, int T, int H, int Hkv, int hd, float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)B * H * T)
        return;
    const int t = (int)(warp % T), h = (int)(warp / T % H), b = (int)(warp / T / H), kh = h / (H / Hkv);
    float qv[ATT_PER_LANE], acc[ATT_PER_LANE];
    load_row(qv, q + ((size_t)b * T + t) * ldq + (size_t)h * hd, hd, lane);
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++)
        acc[e] = 0;
    float m = -INFINITY, l = 0;
    for (int j = 0; j <= t; j++) {
        const size_t at = ((size_t)b * T + j) * ldkv + (size_t)kh * hd;
        float resc, w;
        eng_cu_flash_step(&m, &l, dot_row(qv, k + at, hd, lane) * scale, &resc, &w);
#pragma unroll
        for (int e = 0; e < ATT_PER_LANE; e++) {
            int d = lane + 32 * e;
            if (d < hd)
                acc[e] = acc[e] * resc + w * v[at + d];
        }
    }
    float *o = out + ((size_t)b * T + t) * ldo + (size_t)h * hd;
    const float rl = 1.0f / l;
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            o[d] = acc[e] * rl;
    }
    if (lane == 0)
        lse[((size_t)b * H + h) * T + t] = m + logf(l);
}

/* per query row: D_i, then dQ_i = scale sum_j P_ij (dP_ij - D_i) k_j */
__global__ static void k_attn_bwd_q(float *dq, float *Dws, const float *lse, const float *dout, int ldo,
                                    const float *q, int ldq, const float *k, const float *v, int ldkv, int B, int T,
                                    int H, int Hkv, int hd, float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)B * H * T)
        return;
    const int t = (int)(warp % T), h = (int)(warp / T % H), b = (int)(warp / T / H), kh = h / (H / Hkv);
    float qv[ATT_PER_LANE], dov[ATT_PER_LANE], acc[ATT_PER_LANE];
    load_row(qv, q + ((size_t)b * T + t) * ldq + (size_t)h * hd, hd, lane);
    load_row(dov, dout + ((size_t)b * T + t) * ldo + (size_t)h * hd, hd, lane);
    const size_t li = ((size_t)b * H + h) * T + t;
    const float L = lse[li];
    float D = 0;
    for (int j = 0; j <= t; j++) {
        const size_t at = ((size_t)b * T + j) * ldkv + (size_t)kh * hd;
        const float p = expf(dot_row(qv, k + at, hd, lane) * scale - L);
        D += p * dot_row(dov, v + at, hd, lane);
    }
    if (lane == 0)
        Dws[li] = D;
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++)
        acc[e] = 0;
    for (int j = 0; j <= t; j++) {
        const size_t at = ((size_t)b * T + j) * ldkv + (size_t)kh * hd;
        const float p = expf(dot_row(qv, k + at, hd, lane) * scale - L);
        const float ds = p * (dot_row(dov, v + at, hd, lane) - D);
#pragma unroll
        for (int e = 0; e < ATT_PER_LANE; e++) {
            int d = lane + 32 * e;
            if (d < hd)
                acc[e] += ds * k[at + d];
        }
    }
    float *o = dq + ((size_t)b * T + t) * ldq + (size_t)h * hd;
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            o[d] = acc[e] * scale;
    }
}

/* per key row and kv head: dV_j = sum P_ij dO_i, dK_j = scale sum dS_ij q_i
 * over the group's heads and i >= j */
__global__ static void k_attn_bwd_kv(float *dk, float *dv, const float *Dws, const float *lse, const float *dout,
                                     int ldo, const float *q, int ldq, const float *k, const float *v, int ldkv, int B,
                                     int T, int H, int Hkv, int hd, float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)B * Hkv * T)
        return;
    const int j = (int)(warp % T), kh = (int)(warp / T % Hkv), b = (int)(warp / T / Hkv), G = H / Hkv;
    const size_t at = ((size_t)b * T + j) * ldkv + (size_t)kh * hd;
    float kv[ATT_PER_LANE], vv[ATT_PER_LANE], gk[ATT_PER_LANE], gv[ATT_PER_LANE];
    load_row(kv, k + at, hd, lane);
    load_row(vv, v + at, hd, lane);
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++)
        gk[e] = gv[e] = 0;
    for (int h = kh * G; h < (kh + 1) * G; h++)
        for (int i = j; i < T; i++) {
            const float *qi = q + ((size_t)b * T + i) * ldq + (size_t)h * hd;
            const float *di = dout + ((size_t)b * T + i) * ldo + (size_t)h * hd;
            const size_t li = ((size_t)b * H + h) * T + i;
            const float p = expf(dot_row(kv, qi, hd, lane) * scale - lse[li]);
            const float ds = p * (dot_row(vv, di, hd, lane) - Dws[li]);
#pragma unroll
            for (int e = 0; e < ATT_PER_LANE; e++) {
                int d = lane + 32 * e;
                if (d < hd) {
                    gv[e] += p * di[d];
                    gk[e] += ds * qi[d];
                }
            }
        }
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd) {
            dk[at + d] = gk[e] * scale;
            dv[at + d] = gv[e];
        }
    }
}

size_t eng__cu_attention_workspace(void *ctx, int B, int T, int H, int hd)
{
    return eng_cu_attention_ws_floats(B, T, H); /* D of the backward */
}

static unsigned warps_grid(size_t warps)
{
    return (unsigned)((warps * 32 + ENG__CU_THREADS - 1) / ENG__CU_THREADS);
}

static int shape_ok(eng__cu *c, int hd, int H, int Hkv)
{
    if (hd > 32 * ATT_PER_LANE || hd <= 0 || Hkv <= 0 || H % Hkv)
        return !eng__cu_fail(c, TLM_ECONFIG, "attention", "head size over 256, or heads not a multiple of kv heads");
    return 1;
}

void eng__cu_attention_fwd(void *ctx, eng_act *out_a, int ldo, float *lse, const eng_act *q_a, int ldq,
                           const eng_act *k_a,
                           const eng_act *v_a, int ldkv, int B, int T, int H, int Hkv, int hd, float *ws)
{
    float *out = (float *)out_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !shape_ok(c, hd, H, Hkv) || B * T <= 0)
        return;
    ENG__CU_LAUNCH(k_attn_fwd, warps_grid((size_t)B * H * T), ENG__CU_THREADS, 0, c->stream, out, ldo, lse, q, ldq, k,
                   v, ldkv, B, T, H, Hkv, hd, 1.0f / sqrtf((float)hd));
    ENG__CU_LAUNCHED(c, "attention_fwd");
}

void eng__cu_attention_bwd(void *ctx, eng_act *dq_a, eng_act *dk_a, eng_act *dv_a, const float *lse,
                           const eng_act *dout_a, int ldo,
                           const eng_act *q_a, int ldq, const eng_act *k_a, const eng_act *v_a, int ldkv, int B, int T,
                           int H,
                           int Hkv, int hd, float *ws)
{
    float *dq = (float *)dq_a;
    float *dk = (float *)dk_a;
    float *dv = (float *)dv_a;
    const float *dout = (const float *)dout_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !shape_ok(c, hd, H, Hkv) || B * T <= 0)
        return;
    const float scale = 1.0f / sqrtf((float)hd);
    ENG__CU_LAUNCH(k_attn_bwd_q, warps_grid((size_t)B * H * T), ENG__CU_THREADS, 0, c->stream, dq, ws, lse, dout, ldo,
                   q, ldq, k, v, ldkv, B, T, H, Hkv, hd, scale);
    if (ENG__CU_LAUNCHED(c, "attention_bwd (dq)"))
        return;
    ENG__CU_LAUNCH(k_attn_bwd_kv, warps_grid((size_t)B * Hkv * T), ENG__CU_THREADS, 0, c->stream, dk, dv, ws, lse, dout,
                   ldo, q, ldq, k, v, ldkv, B, T, H, Hkv, hd, scale);
    ENG__CU_LAUNCHED(c, "attention_bwd (dk, dv)");
}

ENG__CU_END
