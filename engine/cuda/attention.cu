/* attention.cu: causal softmax attention, forward and backward, fused
 * (flash-style: the scores and probabilities are never stored; the forward
 * keeps each row's log-sum-exp, the backward recomputes the probabilities
 * from it), so memory is O(T) per head.  Contract and reference:
 * engine/model/ops.h and engine/cpu/attention.c.
 *
 * This is the straightforward version, written for correctness first: a
 * warp per query row (forward, backward dQ) or per key row (backward dK,
 * dV), the head spread over the lanes (hd <= 256, 8 per lane), keys and
 * queries read from memory (L2) one row at a time, fp32 arithmetic on
 * fp32 or bf16 storage.  It reaches nowhere near the tensor cores: bf16
 * activations at head sizes 64 and 128 go to flash.cu's tensor-core
 * kernels instead (use_flash below), or to cuDNN's fused SDPA graph
 * (sdpa_cudnn.cu, the same arguments) when the backend is told so
 * (train.attention: cudnn); the default is to be chosen by measurement
 * on a GPU (docs/engine.md).
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

template <typename Ts> __device__ static float dot_row(const float *a, const Ts *row, int hd, int lane)
{
    float s = 0;
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            s += a[e] * eng__cu_ld(row[d]);
    }
    return warp_sum(s);
}

template <typename Ts> __device__ static void load_row(float *a, const Ts *row, int hd, int lane)
{
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++) {
        int d = lane + 32 * e;
        a[e] = d < hd ? eng__cu_ld(row[d]) : 0.0f;
    }
}

/* the lanes' elements of a row, stored */
template <typename Ts> __device__ static void store_row(Ts *row, const float *a, float scale, int hd, int lane)
{
#pragma unroll
    for (int e = 0; e < ATT_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            row[d] = eng__cu_st<Ts>(a[e] * scale);
    }
}

template <typename Ts>
__global__ static void k_attn_fwd(Ts *out, int ldo, float *lse, const Ts *q, int ldq, const Ts *k, const Ts *v, int ldkv,
                                  int B, int T, int H, int Hkv, int hd, float scale)
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
                acc[e] = acc[e] * resc + w * eng__cu_ld(v[at + d]);
        }
    }
    store_row(out + ((size_t)b * T + t) * ldo + (size_t)h * hd, acc, 1.0f / l, hd, lane);
    if (lane == 0)
        lse[((size_t)b * H + h) * T + t] = m + logf(l);
}

/* per query row: D_i, then dQ_i = scale sum_j P_ij (dP_ij - D_i) k_j */
template <typename Ts>
__global__ static void k_attn_bwd_q(Ts *dq, float *Dws, const float *lse, const Ts *dout, int ldo, const Ts *q, int ldq,
                                    const Ts *k, const Ts *v, int ldkv, int B, int T, int H, int Hkv, int hd,
                                    float scale)
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
                acc[e] += ds * eng__cu_ld(k[at + d]);
        }
    }
    store_row(dq + ((size_t)b * T + t) * ldq + (size_t)h * hd, acc, scale, hd, lane);
}

/* per key row and kv head: dV_j = sum P_ij dO_i, dK_j = scale sum dS_ij q_i
 * over the group's heads and i >= j */
template <typename Ts>
__global__ static void k_attn_bwd_kv(Ts *dk, Ts *dv, const float *Dws, const float *lse, const Ts *dout, int ldo,
                                     const Ts *q, int ldq, const Ts *k, const Ts *v, int ldkv, int B, int T, int H,
                                     int Hkv, int hd, float scale)
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
            const Ts *qi = q + ((size_t)b * T + i) * ldq + (size_t)h * hd;
            const Ts *di = dout + ((size_t)b * T + i) * ldo + (size_t)h * hd;
            const size_t li = ((size_t)b * H + h) * T + i;
            const float p = expf(dot_row(kv, qi, hd, lane) * scale - lse[li]);
            const float ds = p * (dot_row(vv, di, hd, lane) - Dws[li]);
#pragma unroll
            for (int e = 0; e < ATT_PER_LANE; e++) {
                int d = lane + 32 * e;
                if (d < hd) {
                    gv[e] += p * eng__cu_ld(di[d]);
                    gk[e] += ds * eng__cu_ld(qi[d]);
                }
            }
        }
    store_row(dk + at, gk, scale, hd, lane);
    store_row(dv + at, gv, 1.0f, hd, lane);
}

/* bf16 activations at head size 64 or 128 go to flash.cu's tensor-core
 * kernels; fp32 and other head sizes stay on the kernels above.  Also
 * the layouts flash takes (strides of 8 elements, 16-byte aligned
 * operands); anything else takes the kernels above in bf16 too. */
static int use_flash(const eng__cu *c, int hd, int H, int Hkv, int ldo, int ldq, int ldkv, const void *const *p,
                     int np)
{
    if (c->act != ENG_BF16 || (hd != 64 && hd != 128) || H % Hkv || ldo % 8 || ldq % 8 || ldkv % 8)
        return 0;
    for (int i = 0; i < np; i++)
        if (!eng__cu_aligned16(p[i]))
            return 0;
    return 1;
}

size_t eng__cu_attention_workspace(void *ctx, int B, int T, int H, int hd)
{
    (void)ctx, (void)hd;
    return eng_cu_attention_ws_floats(B, T, H); /* D of the backward, flash's or the scalar kernels' */
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

template <typename Ts>
static void attn_fwd(eng__cu *c, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                     const eng_act *v, int ldkv, int B, int T, int H, int Hkv, int hd)
{
    ENG__CU_LAUNCH(k_attn_fwd<Ts>, warps_grid((size_t)B * H * T), ENG__CU_THREADS, 0, c->stream, (Ts *)out, ldo, lse,
                   (const Ts *)q, ldq, (const Ts *)k, (const Ts *)v, ldkv, B, T, H, Hkv, hd, 1.0f / sqrtf((float)hd));
    ENG__CU_LAUNCHED(c, "attention_fwd");
}

void eng__cu_attention_fwd(void *ctx, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                           const eng_act *v, int ldkv, int B, int T, int H, int Hkv, int hd, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !shape_ok(c, hd, H, Hkv) || B * T <= 0)
        return;
    typedef __nv_bfloat16 bf;
    const void *p[] = {out, q, k, v};
    if (use_flash(c, hd, H, Hkv, ldo, ldq, ldkv, p, 4))
        (c->attn_cudnn ? eng__sdpa_cudnn_fwd : eng__flash_fwd)(ctx, (bf *)out, ldo, lse, (const bf *)q, ldq,
                                                               (const bf *)k, (const bf *)v, ldkv, B, T, H, Hkv, hd,
                                                               1.0f / sqrtf((float)hd));
    else
        ENG__CU_ACT(c, attn_fwd, c, out, ldo, lse, q, ldq, k, v, ldkv, B, T, H, Hkv, hd);
}

template <typename Ts>
static void attn_bwd(eng__cu *c, eng_act *dq, eng_act *dk, eng_act *dv, const float *lse, const eng_act *dout,
                     int ldo, const eng_act *q, int ldq, const eng_act *k, const eng_act *v, int ldkv, int B, int T,
                     int H, int Hkv, int hd, float *ws)
{
    const float scale = 1.0f / sqrtf((float)hd);
    ENG__CU_LAUNCH(k_attn_bwd_q<Ts>, warps_grid((size_t)B * H * T), ENG__CU_THREADS, 0, c->stream, (Ts *)dq, ws, lse,
                   (const Ts *)dout, ldo, (const Ts *)q, ldq, (const Ts *)k, (const Ts *)v, ldkv, B, T, H, Hkv, hd,
                   scale);
    if (ENG__CU_LAUNCHED(c, "attention_bwd (dq)"))
        return;
    ENG__CU_LAUNCH(k_attn_bwd_kv<Ts>, warps_grid((size_t)B * Hkv * T), ENG__CU_THREADS, 0, c->stream, (Ts *)dk,
                   (Ts *)dv, ws, lse, (const Ts *)dout, ldo, (const Ts *)q, ldq, (const Ts *)k, (const Ts *)v, ldkv,
                   B, T, H, Hkv, hd, scale);
    ENG__CU_LAUNCHED(c, "attention_bwd (dk, dv)");
}

/* flash's backward takes D = dO . O from the forward's O (ops.h: the
 * model keeps it), into the workspace */
void eng__cu_attention_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, const float *lse, const eng_act *dout,
                           const eng_act *out, int ldo, const eng_act *q, int ldq, const eng_act *k, const eng_act *v,
                           int ldkv, int B, int T, int H, int Hkv, int hd, float *ws)
{
    typedef __nv_bfloat16 bf;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !shape_ok(c, hd, H, Hkv) || B * T <= 0)
        return;
    const void *p[] = {dq, dk, dv, dout, out, q, k, v, ws};
    if (use_flash(c, hd, H, Hkv, ldo, ldq, ldkv, p, 9))
        (c->attn_cudnn ? eng__sdpa_cudnn_bwd : eng__flash_bwd)(c, (bf *)dq, (bf *)dk, (bf *)dv, lse, (const bf *)dout,
                                                               (const bf *)out, ldo, (const bf *)q, ldq, (const bf *)k,
                                                               (const bf *)v, ldkv, B, T, H, Hkv, hd,
                                                               1.0f / sqrtf((float)hd), ws);
    else
        ENG__CU_ACT(c, attn_bwd, c, dq, dk, dv, lse, dout, ldo, q, ldq, k, v, ldkv, B, T, H, Hkv, hd, ws);
}

ENG__CU_END
