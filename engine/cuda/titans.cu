/* titans.cu: the Titans op group on device pointers (dconv, silu_norm,
 * sliding-window attention with persistent keys); the chunked memory is in
 * titans_mem.cu.  Contracts: engine/model/ops.h; references:
 * engine/cpu/dconv.c, silu_norm.c, swa.c; per-element arithmetic in
 * elem.h (checked against the CPU in test_cuda_elem).
 *
 * Written for correctness first, as attention.cu: a thread per output
 * element (dconv), a warp per (row, group) (silu_norm), a warp per query
 * or key row (swa).  Every sum has one owner that adds in a fixed order
 * (no atomics), so runs repeat bit for bit.
 *
 * swa's backward needs D_i = dO_i . O_i per (sequence, head, row) and
 * swa_workspace is not told the head count, so D is parked in dq's first
 * element of the row's head (dq is written, never read, by the op) until
 * the last pass overwrites it with dQ. */
#include <math.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

#define SWA_PER_LANE 8 /* hd <= 32 * 8 */

__device__ static float warp_sum(float x)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

/* ---- dconv */

__global__ static void k_dconv_fwd(float *y, int ldy, const float *x, int ldx, const float *w, int N, int T, int C,
                                   int K)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)N * C;
         i += (size_t)gridDim.x * blockDim.x) {
        const int n = (int)(i / C), c = (int)(i % C), t = n % T;
        float acc = 0;
        for (int j = 0; j < K; j++) {
            const int s = eng_cu_dconv_src(t, j, K);
            if (s >= 0)
                acc += w[(size_t)c * K + j] * x[(size_t)(n - t + s) * ldx + c];
        }
        y[(size_t)n * ldy + c] = acc;
    }
}

__global__ static void k_dconv_bwd_x(float *dx, int lddx, const float *dy, int lddy, const float *w, int N, int T,
                                     int C, int K)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)N * C;
         i += (size_t)gridDim.x * blockDim.x) {
        const int n = (int)(i / C), c = (int)(i % C), s = n % T;
        float acc = 0;
        for (int j = 0; j < K; j++) {
            const int t = eng_cu_dconv_dst(s, j, K, T);
            if (t >= 0)
                acc += w[(size_t)c * K + j] * dy[(size_t)(n - s + t) * lddy + c];
        }
        dx[(size_t)n * lddx + c] = acc;
    }
}

/* dw[c, j] += sum over rows, a thread per (c, j), rows in order */
__global__ static void k_dconv_bwd_w(float *dw, const float *dy, int lddy, const float *x, int ldx, int N, int T,
                                     int C, int K)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)C * K)
        return;
    const int c = (int)(i / K), j = (int)(i % K);
    float acc = 0;
    for (int n = 0; n < N; n++) {
        const int t = n % T, s = eng_cu_dconv_src(t, j, K);
        if (s >= 0)
            acc += dy[(size_t)n * lddy + c] * x[(size_t)(n - t + s) * ldx + c];
    }
    dw[i] += acc;
}

void eng__cu_dconv_fwd(void *ctx, eng_act *y_a, int ldy, const eng_act *x_a, int ldx, const float *w, int N, int T,
                       int C,
                       int K)
{
    float *y = (float *)y_a;
    const float *x = (const float *)x_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0 || C <= 0)
        return;
    ENG__CU_LAUNCH(k_dconv_fwd, eng__cu_grid((size_t)N * C), ENG__CU_THREADS, 0, c->stream, y, ldy, x, ldx, w, N, T, C,
                   K);
    ENG__CU_LAUNCHED(c, "dconv_fwd");
}

void eng__cu_dconv_bwd(void *ctx, eng_act *dx_a, int lddx, float *dw, const eng_act *dy_a, int lddy, const eng_act *x_a,
                       int ldx,
                       const float *w, int N, int T, int C, int K)
{
    float *dx = (float *)dx_a;
    const float *dy = (const float *)dy_a;
    const float *x = (const float *)x_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0 || C <= 0)
        return;
    ENG__CU_LAUNCH(k_dconv_bwd_x, eng__cu_grid((size_t)N * C), ENG__CU_THREADS, 0, c->stream, dx, lddx, dy, lddy, w, N,
                   T, C, K);
    if (ENG__CU_LAUNCHED(c, "dconv_bwd (dx)"))
        return;
    const size_t ck = (size_t)C * K;
    ENG__CU_LAUNCH(k_dconv_bwd_w, (unsigned)((ck + ENG__CU_THREADS - 1) / ENG__CU_THREADS), ENG__CU_THREADS, 0,
                   c->stream, dw, dy, lddy, x, ldx, N, T, C, K);
    ENG__CU_LAUNCHED(c, "dconv_bwd (dw)");
}

/* ---- silu_norm: a warp per (row, segment); segments 0..G-1 are the
 * normalised groups, segment G the columns after them (activated only) */

__global__ static void k_silu_norm_fwd(float *y, int ldy, float *rn, const float *x, int ldx, int N, int C, int G,
                                       int gw, float eps)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)N * (G + 1))
        return;
    const int n = (int)(warp / (G + 1)), g = (int)(warp % (G + 1));
    const float *xn = x + (size_t)n * ldx;
    float *yn = y + (size_t)n * ldy;
    if (g == G) {
        for (int col = G * gw + lane; col < C; col += 32)
            yn[col] = eng_cu_silu(xn[col]);
        return;
    }
    const int c0 = g * gw;
    float ss = 0;
    for (int col = lane; col < gw; col += 32) {
        const float s = eng_cu_silu(xn[c0 + col]);
        ss += s * s;
    }
    const float r = eng_cu_silu_norm_r(warp_sum(ss), eps);
    for (int col = lane; col < gw; col += 32)
        yn[c0 + col] = eng_cu_silu(xn[c0 + col]) * r;
    if (lane == 0)
        rn[(size_t)n * G + g] = r;
}

/* dx may be dy: every lane reads its elements' dy before the warp's sum,
 * and writes only the elements it read */
__global__ static void k_silu_norm_bwd(float *dx, int lddx, const float *dy, int lddy, const float *y, int ldy,
                                       const float *rn, const float *x, int ldx, int N, int C, int G, int gw)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)N * (G + 1))
        return;
    const int n = (int)(warp / (G + 1)), g = (int)(warp % (G + 1));
    const float *xn = x + (size_t)n * ldx, *dyn = dy + (size_t)n * lddy, *yn = y + (size_t)n * ldy;
    float *dxn = dx + (size_t)n * lddx;
    if (g == G) {
        for (int col = G * gw + lane; col < C; col += 32)
            dxn[col] = dyn[col] * eng_cu_dsilu(xn[col], eng_cu_sigmoid(xn[col]));
        return;
    }
    const int c0 = g * gw;
    float dot = 0;
    for (int col = lane; col < gw; col += 32)
        dot += dyn[c0 + col] * yn[c0 + col];
    dot = warp_sum(dot);
    const float r = rn[(size_t)n * G + g];
    for (int col = lane; col < gw; col += 32)
        dxn[c0 + col] = eng_cu_silu_norm_dx(r, dyn[c0 + col], yn[c0 + col], dot, xn[c0 + col]);
}

static unsigned warps_grid(size_t warps)
{
    return (unsigned)((warps * 32 + ENG__CU_THREADS - 1) / ENG__CU_THREADS);
}

void eng__cu_silu_norm_fwd(void *ctx, eng_act *y_a, int ldy, float *rn, const eng_act *x_a, int ldx, int N, int C,
                           int G,
                           int gw, float eps)
{
    float *y = (float *)y_a;
    const float *x = (const float *)x_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0)
        return;
    ENG__CU_LAUNCH(k_silu_norm_fwd, warps_grid((size_t)N * (G + 1)), ENG__CU_THREADS, 0, c->stream, y, ldy, rn, x, ldx,
                   N, C, G, gw, eps);
    ENG__CU_LAUNCHED(c, "silu_norm_fwd");
}

void eng__cu_silu_norm_bwd(void *ctx, eng_act *dx_a, int lddx, const eng_act *dy_a, int lddy, const eng_act *y_a,
                           int ldy,
                           const float *rn, const eng_act *x_a, int ldx, int N, int C, int G, int gw)
{
    float *dx = (float *)dx_a;
    const float *dy = (const float *)dy_a;
    const float *y = (const float *)y_a;
    const float *x = (const float *)x_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0)
        return;
    ENG__CU_LAUNCH(k_silu_norm_bwd, warps_grid((size_t)N * (G + 1)), ENG__CU_THREADS, 0, c->stream, dx, lddx, dy, lddy,
                   y, ldy, rn, x, ldx, N, C, G, gw);
    ENG__CU_LAUNCHED(c, "silu_norm_bwd");
}

/* ---- swa: the visible set of query t is the Np persistent entries, then
 * keys lo(t)..t; index j < Np is persistent entry j, j >= Np key lo + j - Np */

__device__ static int swa_lo(int t, int window)
{
    return t - window + 1 > 0 ? t - window + 1 : 0;
}

__device__ static float dot_lanes(const float *a, const float *row, int hd, int lane)
{
    float s = 0;
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            s += a[e] * row[d];
    }
    return warp_sum(s);
}

__device__ static void load_lanes(float *a, const float *row, int hd, int lane)
{
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        a[e] = d < hd ? row[d] : 0.0f;
    }
}

/* the key and value rows of visible entry j of query t */
__device__ static void swa_kv(const float *k, const float *v, int ldkv, const float *kp, const float *vp, int ldp,
                              int Np, size_t row0, int kh, int hd, int lo, int j, const float **kr, const float **vr)
{
    if (j < Np) {
        *kr = kp + (size_t)j * ldp + (size_t)kh * hd;
        *vr = vp + (size_t)j * ldp + (size_t)kh * hd;
    } else {
        const size_t at = (row0 + lo + (j - Np)) * ldkv + (size_t)kh * hd;
        *kr = k + at;
        *vr = v + at;
    }
}

__global__ static void k_swa_fwd(float *out, int ldo, float *lse, const float *q, int ldq, const float *k,
                                 const float *v, int ldkv, const float *kp, const float *vp, int ldp, int Np, int B,
                                 int T, int H, int Hkv, int hd, int window, float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)B * H * T)
        return;
    const int t = (int)(warp % T), h = (int)(warp / T % H), b = (int)(warp / T / H), kh = h / (H / Hkv);
    const size_t row0 = (size_t)b * T;
    const int lo = swa_lo(t, window), nv = Np + t - lo + 1;
    float qv[SWA_PER_LANE], acc[SWA_PER_LANE];
    load_lanes(qv, q + (row0 + t) * ldq + (size_t)h * hd, hd, lane);
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++)
        acc[e] = 0;
    float m = -INFINITY, l = 0;
    for (int j = 0; j < nv; j++) {
        const float *kr, *vr;
        swa_kv(k, v, ldkv, kp, vp, ldp, Np, row0, kh, hd, lo, j, &kr, &vr);
        float resc, w;
        eng_cu_flash_step(&m, &l, dot_lanes(qv, kr, hd, lane) * scale, &resc, &w);
#pragma unroll
        for (int e = 0; e < SWA_PER_LANE; e++) {
            int d = lane + 32 * e;
            if (d < hd)
                acc[e] = acc[e] * resc + w * vr[d];
        }
    }
    float *o = out + (row0 + t) * ldo + (size_t)h * hd;
    const float rl = 1.0f / l;
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            o[d] = acc[e] * rl;
    }
    if (lane == 0)
        lse[((size_t)b * H + h) * T + t] = m + logf(l);
}

/* per query row: pass 0 parks D_i in dq's first element of the head;
 * pass 1 reads it back and writes dQ_i = scale sum_j P_ij (dP_ij - D_i) k_j */
__global__ static void k_swa_bwd_q(float *dq, int pass, const float *lse, const float *dout, int ldo, const float *q,
                                   int ldq, const float *k, const float *v, int ldkv, const float *kp,
                                   const float *vp, int ldp, int Np, int B, int T, int H, int Hkv, int hd, int window,
                                   float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)B * H * T)
        return;
    const int t = (int)(warp % T), h = (int)(warp / T % H), b = (int)(warp / T / H), kh = h / (H / Hkv);
    const size_t row0 = (size_t)b * T;
    const int lo = swa_lo(t, window), nv = Np + t - lo + 1;
    float qv[SWA_PER_LANE], dov[SWA_PER_LANE], acc[SWA_PER_LANE];
    load_lanes(qv, q + (row0 + t) * ldq + (size_t)h * hd, hd, lane);
    load_lanes(dov, dout + (row0 + t) * ldo + (size_t)h * hd, hd, lane);
    const float L = lse[((size_t)b * H + h) * T + t];
    float *o = dq + (row0 + t) * ldq + (size_t)h * hd;
    if (pass == 0) {
        float D = 0;
        for (int j = 0; j < nv; j++) {
            const float *kr, *vr;
            swa_kv(k, v, ldkv, kp, vp, ldp, Np, row0, kh, hd, lo, j, &kr, &vr);
            D += expf(dot_lanes(qv, kr, hd, lane) * scale - L) * dot_lanes(dov, vr, hd, lane);
        }
        if (lane == 0)
            o[0] = D;
        return;
    }
    const float D = __shfl_sync(0xffffffffu, lane == 0 ? o[0] : 0.0f, 0);
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++)
        acc[e] = 0;
    for (int j = 0; j < nv; j++) {
        const float *kr, *vr;
        swa_kv(k, v, ldkv, kp, vp, ldp, Np, row0, kh, hd, lo, j, &kr, &vr);
        const float p = expf(dot_lanes(qv, kr, hd, lane) * scale - L);
        const float ds = p * (dot_lanes(dov, vr, hd, lane) - D);
#pragma unroll
        for (int e = 0; e < SWA_PER_LANE; e++) {
            int d = lane + 32 * e;
            if (d < hd)
                acc[e] += ds * kr[d];
        }
    }
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            o[d] = acc[e] * scale;
    }
}

/* dP, P of query i (sequence b, head h) against a key row kr, vr */
__device__ static void swa_pds(const float *kv, const float *vv, const float *q, int ldq, const float *dout, int ldo,
                               const float *dq, const float *lse, size_t row, int h, size_t li, int hd, int lane,
                               float scale, const float **qi, const float **di, float *p, float *ds)
{
    *qi = q + row * ldq + (size_t)h * hd;
    *di = dout + row * ldo + (size_t)h * hd;
    const float D = dq[row * ldq + (size_t)h * hd]; /* parked by pass 0 */
    *p = expf(dot_lanes(kv, *qi, hd, lane) * scale - lse[li]);
    *ds = *p * (dot_lanes(vv, *di, hd, lane) - D);
}

/* per key row and kv head: dV_j, dK_j (=) over the group's heads and the
 * queries j..j+window-1 that see it */
__global__ static void k_swa_bwd_kv(float *dk, float *dv, const float *dq, const float *lse, const float *dout,
                                    int ldo, const float *q, int ldq, const float *k, const float *v, int ldkv, int B,
                                    int T, int H, int Hkv, int hd, int window, float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)B * Hkv * T)
        return;
    const int j = (int)(warp % T), kh = (int)(warp / T % Hkv), b = (int)(warp / T / Hkv), G = H / Hkv;
    const size_t row0 = (size_t)b * T, at = (row0 + j) * ldkv + (size_t)kh * hd;
    const int iend = (long)j + window < T ? j + window : T;
    float kv[SWA_PER_LANE], vv[SWA_PER_LANE], gk[SWA_PER_LANE], gv[SWA_PER_LANE];
    load_lanes(kv, k + at, hd, lane);
    load_lanes(vv, v + at, hd, lane);
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++)
        gk[e] = gv[e] = 0;
    for (int h = kh * G; h < (kh + 1) * G; h++)
        for (int i = j; i < iend; i++) {
            const float *qi, *di;
            float p, ds;
            swa_pds(kv, vv, q, ldq, dout, ldo, dq, lse, row0 + i, h, ((size_t)b * H + h) * T + i, hd, lane, scale,
                    &qi, &di, &p, &ds);
#pragma unroll
            for (int e = 0; e < SWA_PER_LANE; e++) {
                int d = lane + 32 * e;
                if (d < hd) {
                    gv[e] += p * di[d];
                    gk[e] += ds * qi[d];
                }
            }
        }
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd) {
            dk[at + d] = gk[e] * scale;
            dv[at + d] = gv[e];
        }
    }
}

/* per persistent entry and kv head: dkp, dvp (+=) over every sequence (in
 * order), the group's heads and every query */
__global__ static void k_swa_bwd_p(float *dkp, float *dvp, const float *dq, const float *lse, const float *dout,
                                   int ldo, const float *q, int ldq, const float *kp, const float *vp, int ldp,
                                   int Np, int B, int T, int H, int Hkv, int hd, float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)Np * Hkv)
        return;
    const int j = (int)(warp % Np), kh = (int)(warp / Np), G = H / Hkv;
    const size_t at = (size_t)j * ldp + (size_t)kh * hd;
    float kv[SWA_PER_LANE], vv[SWA_PER_LANE], gk[SWA_PER_LANE], gv[SWA_PER_LANE];
    load_lanes(kv, kp + at, hd, lane);
    load_lanes(vv, vp + at, hd, lane);
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++)
        gk[e] = gv[e] = 0;
    for (int b = 0; b < B; b++)
        for (int h = kh * G; h < (kh + 1) * G; h++)
            for (int i = 0; i < T; i++) {
                const float *qi, *di;
                float p, ds;
                swa_pds(kv, vv, q, ldq, dout, ldo, dq, lse, (size_t)b * T + i, h, ((size_t)b * H + h) * T + i, hd,
                        lane, scale, &qi, &di, &p, &ds);
#pragma unroll
                for (int e = 0; e < SWA_PER_LANE; e++) {
                    int d = lane + 32 * e;
                    if (d < hd) {
                        gv[e] += p * di[d];
                        gk[e] += ds * qi[d];
                    }
                }
            }
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd) {
            dkp[at + d] += gk[e] * scale;
            dvp[at + d] += gv[e];
        }
    }
}

size_t eng__cu_swa_workspace(void *ctx, int B, int T, int Hkv, int hd, int window, int Np)
{
    return 0; /* D rides in dq (above) */
}

static int swa_shape_ok(eng__cu *c, int hd, int H, int Hkv, int window)
{
    if (hd > 32 * SWA_PER_LANE || hd <= 0 || Hkv <= 0 || H % Hkv || window < 1)
        return !eng__cu_fail(c, TLM_ECONFIG, "swa",
                             "head size over 256, heads not a multiple of kv heads, or a window under 1");
    return 1;
}

void eng__cu_swa_fwd(void *ctx, eng_act *out_a, int ldo, float *lse, const eng_act *q_a, int ldq, const eng_act *k_a,
                     const eng_act *v_a, int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T,
                     int H,
                     int Hkv, int hd, int window, float *ws)
{
    float *out = (float *)out_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !swa_shape_ok(c, hd, H, Hkv, window) || B * T <= 0)
        return;
    ENG__CU_LAUNCH(k_swa_fwd, warps_grid((size_t)B * H * T), ENG__CU_THREADS, 0, c->stream, out, ldo, lse, q, ldq, k, v,
                   ldkv, kp, vp, ldp, Np, B, T, H, Hkv, hd, window, 1.0f / sqrtf((float)hd));
    ENG__CU_LAUNCHED(c, "swa_fwd");
}

void eng__cu_swa_bwd(void *ctx, eng_act *dq_a, eng_act *dk_a, eng_act *dv_a, float *dkp, float *dvp, const float *lse,
                     const eng_act *dout_a, int ldo, const eng_act *q_a, int ldq, const eng_act *k_a,
                     const eng_act *v_a, int ldkv,
                     const float *kp, const float *vp, int ldp, int Np, int B, int T, int H, int Hkv, int hd,
                     int window, float *ws)
{
    float *dq = (float *)dq_a;
    float *dk = (float *)dk_a;
    float *dv = (float *)dv_a;
    const float *dout = (const float *)dout_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !swa_shape_ok(c, hd, H, Hkv, window) || B * T <= 0)
        return;
    const float scale = 1.0f / sqrtf((float)hd);
    const unsigned gq = warps_grid((size_t)B * H * T);
    ENG__CU_LAUNCH(k_swa_bwd_q, gq, ENG__CU_THREADS, 0, c->stream, dq, 0, lse, dout, ldo, q, ldq, k, v, ldkv, kp, vp,
                   ldp, Np, B, T, H, Hkv, hd, window, scale);
    if (ENG__CU_LAUNCHED(c, "swa_bwd (D)"))
        return;
    ENG__CU_LAUNCH(k_swa_bwd_kv, warps_grid((size_t)B * Hkv * T), ENG__CU_THREADS, 0, c->stream, dk, dv, dq, lse, dout,
                   ldo, q, ldq, k, v, ldkv, B, T, H, Hkv, hd, window, scale);
    if (ENG__CU_LAUNCHED(c, "swa_bwd (dk, dv)"))
        return;
    if (Np > 0) {
        ENG__CU_LAUNCH(k_swa_bwd_p, warps_grid((size_t)Np * Hkv), ENG__CU_THREADS, 0, c->stream, dkp, dvp, dq, lse,
                       dout, ldo, q, ldq, kp, vp, ldp, Np, B, T, H, Hkv, hd, scale);
        if (ENG__CU_LAUNCHED(c, "swa_bwd (dkp, dvp)"))
            return;
    }
    ENG__CU_LAUNCH(k_swa_bwd_q, gq, ENG__CU_THREADS, 0, c->stream, dq, 1, lse, dout, ldo, q, ldq, k, v, ldkv, kp, vp,
                   ldp, Np, B, T, H, Hkv, hd, window, scale);
    ENG__CU_LAUNCHED(c, "swa_bwd (dq)");
}

ENG__CU_END
