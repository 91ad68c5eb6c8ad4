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

/* Every kernel here is templated on Ts, the activations' storage (float or
 * __nv_bfloat16: eng__cu_ld / eng__cu_st, fp32 arithmetic); the conv's
 * taps, the persistent keys and values, rn and lse stay fp32. */

/* ---- dconv */

template <typename Ts>
__global__ static void k_dconv_fwd(Ts *y, int ldy, const Ts *x, int ldx, const float *w, int N, int T, int C, int K)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)N * C;
         i += (size_t)gridDim.x * blockDim.x) {
        const int n = (int)(i / C), c = (int)(i % C), t = n % T;
        float acc = 0;
        for (int j = 0; j < K; j++) {
            const int s = eng_cu_dconv_src(t, j, K);
            if (s >= 0)
                acc += w[(size_t)c * K + j] * eng__cu_ld(x[(size_t)(n - t + s) * ldx + c]);
        }
        y[(size_t)n * ldy + c] = eng__cu_st<Ts>(acc);
    }
}

template <typename Ts>
__global__ static void k_dconv_bwd_x(Ts *dx, int lddx, const Ts *dy, int lddy, const float *w, int N, int T, int C,
                                     int K)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)N * C;
         i += (size_t)gridDim.x * blockDim.x) {
        const int n = (int)(i / C), c = (int)(i % C), s = n % T;
        float acc = 0;
        for (int j = 0; j < K; j++) {
            const int t = eng_cu_dconv_dst(s, j, K, T);
            if (t >= 0)
                acc += w[(size_t)c * K + j] * eng__cu_ld(dy[(size_t)(n - s + t) * lddy + c]);
        }
        dx[(size_t)n * lddx + c] = eng__cu_st<Ts>(acc);
    }
}

/* dw[c, j] += sum over rows, a thread per (c, j), rows in order */
template <typename Ts>
__global__ static void k_dconv_bwd_w(float *dw, const Ts *dy, int lddy, const Ts *x, int ldx, int N, int T, int C,
                                     int K)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)C * K)
        return;
    const int c = (int)(i / K), j = (int)(i % K);
    float acc = 0;
    for (int n = 0; n < N; n++) {
        const int t = n % T, s = eng_cu_dconv_src(t, j, K);
        if (s >= 0)
            acc += eng__cu_ld(dy[(size_t)n * lddy + c]) * eng__cu_ld(x[(size_t)(n - t + s) * ldx + c]);
    }
    dw[i] += acc;
}

template <typename Ts>
static void dconv_fwd(eng__cu *c, eng_act *y, int ldy, const eng_act *x, int ldx, const float *w, int N, int T, int C,
                      int K)
{
    ENG__CU_LAUNCH(k_dconv_fwd<Ts>, eng__cu_grid((size_t)N * C), ENG__CU_THREADS, 0, c->stream, (Ts *)y, ldy,
                   (const Ts *)x, ldx, w, N, T, C, K);
    ENG__CU_LAUNCHED(c, "dconv_fwd");
}

void eng__cu_dconv_fwd(void *ctx, eng_act *y, int ldy, const eng_act *x, int ldx, const float *w, int N, int T, int C,
                       int K)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0 || C <= 0)
        return;
    ENG__CU_ACT(c, dconv_fwd, c, y, ldy, x, ldx, w, N, T, C, K);
}

template <typename Ts>
static void dconv_bwd(eng__cu *c, eng_act *dx_a, int lddx, float *dw, const eng_act *dy_a, int lddy, const eng_act *x_a,
                      int ldx, const float *w, int N, int T, int C, int K)
{
    Ts *dx = (Ts *)dx_a;
    const Ts *dy = (const Ts *)dy_a, *x = (const Ts *)x_a;
    ENG__CU_LAUNCH(k_dconv_bwd_x<Ts>, eng__cu_grid((size_t)N * C), ENG__CU_THREADS, 0, c->stream, dx, lddx, dy, lddy,
                   w, N, T, C, K);
    if (ENG__CU_LAUNCHED(c, "dconv_bwd (dx)"))
        return;
    const size_t ck = (size_t)C * K;
    ENG__CU_LAUNCH(k_dconv_bwd_w<Ts>, (unsigned)((ck + ENG__CU_THREADS - 1) / ENG__CU_THREADS), ENG__CU_THREADS, 0,
                   c->stream, dw, dy, lddy, x, ldx, N, T, C, K);
    ENG__CU_LAUNCHED(c, "dconv_bwd (dw)");
}

void eng__cu_dconv_bwd(void *ctx, eng_act *dx, int lddx, float *dw, const eng_act *dy, int lddy, const eng_act *x,
                       int ldx, const float *w, int N, int T, int C, int K)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0 || C <= 0)
        return;
    ENG__CU_ACT(c, dconv_bwd, c, dx, lddx, dw, dy, lddy, x, ldx, w, N, T, C, K);
}

/* ---- silu_norm: a warp per (row, segment); segments 0..G-1 are the
 * normalised groups, segment G the columns after them (activated only) */

template <typename Ts>
__global__ static void k_silu_norm_fwd(Ts *y, int ldy, float *rn, const Ts *x, int ldx, int N, int C, int G, int gw,
                                       float eps)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)N * (G + 1))
        return;
    const int n = (int)(warp / (G + 1)), g = (int)(warp % (G + 1));
    const Ts *xn = x + (size_t)n * ldx;
    Ts *yn = y + (size_t)n * ldy;
    if (g == G) {
        for (int col = G * gw + lane; col < C; col += 32)
            yn[col] = eng__cu_st<Ts>(eng_cu_silu(eng__cu_ld(xn[col])));
        return;
    }
    const int c0 = g * gw;
    float ss = 0;
    for (int col = lane; col < gw; col += 32) {
        const float s = eng_cu_silu(eng__cu_ld(xn[c0 + col]));
        ss += s * s;
    }
    const float r = eng_cu_silu_norm_r(warp_sum(ss), eps);
    for (int col = lane; col < gw; col += 32)
        yn[c0 + col] = eng__cu_st<Ts>(eng_cu_silu(eng__cu_ld(xn[c0 + col])) * r);
    if (lane == 0)
        rn[(size_t)n * G + g] = r;
}

/* dx may be dy: every lane reads its elements' dy before the warp's sum,
 * and writes only the elements it read */
template <typename Ts>
__global__ static void k_silu_norm_bwd(Ts *dx, int lddx, const Ts *dy, int lddy, const Ts *y, int ldy,
                                       const float *rn, const Ts *x, int ldx, int N, int C, int G, int gw)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)N * (G + 1))
        return;
    const int n = (int)(warp / (G + 1)), g = (int)(warp % (G + 1));
    const Ts *xn = x + (size_t)n * ldx, *dyn = dy + (size_t)n * lddy, *yn = y + (size_t)n * ldy;
    Ts *dxn = dx + (size_t)n * lddx;
    if (g == G) {
        for (int col = G * gw + lane; col < C; col += 32) {
            const float xv = eng__cu_ld(xn[col]);
            dxn[col] = eng__cu_st<Ts>(eng__cu_ld(dyn[col]) * eng_cu_dsilu(xv, eng_cu_sigmoid(xv)));
        }
        return;
    }
    const int c0 = g * gw;
    float dot = 0;
    for (int col = lane; col < gw; col += 32)
        dot += eng__cu_ld(dyn[c0 + col]) * eng__cu_ld(yn[c0 + col]);
    dot = warp_sum(dot);
    const float r = rn[(size_t)n * G + g];
    for (int col = lane; col < gw; col += 32)
        dxn[c0 + col] = eng__cu_st<Ts>(eng_cu_silu_norm_dx(r, eng__cu_ld(dyn[c0 + col]), eng__cu_ld(yn[c0 + col]),
                                                           dot, eng__cu_ld(xn[c0 + col])));
}

static unsigned warps_grid(size_t warps)
{
    return (unsigned)((warps * 32 + ENG__CU_THREADS - 1) / ENG__CU_THREADS);
}

template <typename Ts>
static void silu_norm_fwd(eng__cu *c, eng_act *y, int ldy, float *rn, const eng_act *x, int ldx, int N, int C, int G,
                          int gw, float eps)
{
    ENG__CU_LAUNCH(k_silu_norm_fwd<Ts>, warps_grid((size_t)N * (G + 1)), ENG__CU_THREADS, 0, c->stream, (Ts *)y, ldy,
                   rn, (const Ts *)x, ldx, N, C, G, gw, eps);
    ENG__CU_LAUNCHED(c, "silu_norm_fwd");
}

void eng__cu_silu_norm_fwd(void *ctx, eng_act *y, int ldy, float *rn, const eng_act *x, int ldx, int N, int C, int G,
                           int gw, float eps)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0)
        return;
    ENG__CU_ACT(c, silu_norm_fwd, c, y, ldy, rn, x, ldx, N, C, G, gw, eps);
}

template <typename Ts>
static void silu_norm_bwd(eng__cu *c, eng_act *dx, int lddx, const eng_act *dy, int lddy, const eng_act *y, int ldy,
                          const float *rn, const eng_act *x, int ldx, int N, int C, int G, int gw)
{
    ENG__CU_LAUNCH(k_silu_norm_bwd<Ts>, warps_grid((size_t)N * (G + 1)), ENG__CU_THREADS, 0, c->stream, (Ts *)dx, lddx,
                   (const Ts *)dy, lddy, (const Ts *)y, ldy, rn, (const Ts *)x, ldx, N, C, G, gw);
    ENG__CU_LAUNCHED(c, "silu_norm_bwd");
}

void eng__cu_silu_norm_bwd(void *ctx, eng_act *dx, int lddx, const eng_act *dy, int lddy, const eng_act *y, int ldy,
                           const float *rn, const eng_act *x, int ldx, int N, int C, int G, int gw)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || N <= 0)
        return;
    ENG__CU_ACT(c, silu_norm_bwd, c, dx, lddx, dy, lddy, y, ldy, rn, x, ldx, N, C, G, gw);
}

/* ---- swa: the visible set of query t is the Np persistent entries, then
 * keys lo(t)..t; index j < Np is persistent entry j, j >= Np key lo + j - Np */

__device__ static int swa_lo(int t, int window)
{
    return t - window + 1 > 0 ? t - window + 1 : 0;
}

template <typename R> __device__ static float dot_lanes(const float *a, const R *row, int hd, int lane)
{
    float s = 0;
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            s += a[e] * eng__cu_ld(row[d]);
    }
    return warp_sum(s);
}

template <typename R> __device__ static void load_lanes(float *a, const R *row, int hd, int lane)
{
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        a[e] = d < hd ? eng__cu_ld(row[d]) : 0.0f;
    }
}

/* the lanes' elements of a row, times scale, stored (+= when add) */
template <typename R> __device__ static void store_lanes(R *row, const float *a, float scale, int add, int hd, int lane)
{
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd)
            row[d] = eng__cu_st<R>(add ? eng__cu_ld(row[d]) + a[e] * scale : a[e] * scale);
    }
}

/* The key and value rows of visible entry j of query t: a persistent
 * entry's (fp32 parameters) or the sequence's (activations, Ts); one of
 * the two pairs is set.  The branch is the warp's (j is). */
template <typename Ts> struct swa_rows {
    const float *pk, *pv;
    const Ts *k, *v;
};

template <typename Ts>
__device__ static swa_rows<Ts> swa_kv(const Ts *k, const Ts *v, int ldkv, const float *kp, const float *vp, int ldp,
                                      int Np, size_t row0, int kh, int hd, int lo, int j)
{
    swa_rows<Ts> r = {NULL, NULL, NULL, NULL};
    if (j < Np) {
        r.pk = kp + (size_t)j * ldp + (size_t)kh * hd;
        r.pv = vp + (size_t)j * ldp + (size_t)kh * hd;
    } else {
        const size_t at = (row0 + lo + (j - Np)) * ldkv + (size_t)kh * hd;
        r.k = k + at;
        r.v = v + at;
    }
    return r;
}

template <typename Ts> __device__ static float swa_dot_k(const float *a, const swa_rows<Ts> &r, int hd, int lane)
{
    return r.pk ? dot_lanes(a, r.pk, hd, lane) : dot_lanes(a, r.k, hd, lane);
}
template <typename Ts> __device__ static float swa_dot_v(const float *a, const swa_rows<Ts> &r, int hd, int lane)
{
    return r.pv ? dot_lanes(a, r.pv, hd, lane) : dot_lanes(a, r.v, hd, lane);
}
/* element d of the row's key (value) */
template <typename Ts> __device__ static float swa_k(const swa_rows<Ts> &r, int d)
{
    return r.pk ? r.pk[d] : eng__cu_ld(r.k[d]);
}
template <typename Ts> __device__ static float swa_v(const swa_rows<Ts> &r, int d)
{
    return r.pv ? r.pv[d] : eng__cu_ld(r.v[d]);
}

/* D_i parked in the head's first elements of dq: a float in fp32, its
 * two 16-bit halves in elements 0 and 1 in bf16 (exact: a bf16 store of D
 * would round it, and dS = P (dP - D) would carry that error) */
__device__ static void swa_park(float *o, float D)
{
    o[0] = D;
}
__device__ static void swa_park(__nv_bfloat16 *o, float D)
{
    const unsigned u = __float_as_uint(D);
    o[0] = __ushort_as_bfloat16((unsigned short)(u >> 16));
    o[1] = __ushort_as_bfloat16((unsigned short)(u & 0xffffu));
}
__device__ static float swa_parked(const float *o)
{
    return o[0];
}
__device__ static float swa_parked(const __nv_bfloat16 *o)
{
    return __uint_as_float(((unsigned)__bfloat16_as_ushort(o[0]) << 16) | __bfloat16_as_ushort(o[1]));
}

/* The query row a warp owns in the forward and dQ kernels (one warp per
 * (b, h, t)): its kv head, first row of its sequence, first window key
 * and the number of keys it sees (Np persistent first).  false: past the
 * last row. */
struct swa_query {
    int t, h, b, kh, lo, nv;
    size_t row0;
};
__device__ static bool swa_query_of(swa_query *r, int B, int T, int H, int Hkv, int Np, int window)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    if (warp >= (size_t)B * H * T)
        return false;
    r->t = (int)(warp % T), r->h = (int)(warp / T % H), r->b = (int)(warp / T / H), r->kh = r->h / (H / Hkv);
    r->row0 = (size_t)r->b * T;
    r->lo = swa_lo(r->t, window), r->nv = Np + r->t - r->lo + 1;
    return true;
}

template <typename Ts>
__global__ static void k_swa_fwd(Ts *out, int ldo, float *lse, const Ts *q, int ldq, const Ts *k, const Ts *v,
                                 int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T, int H,
                                 int Hkv, int hd, int window, float scale)
{
    swa_query r;
    if (!swa_query_of(&r, B, T, H, Hkv, Np, window))
        return;
    const int lane = threadIdx.x & 31, t = r.t, h = r.h, b = r.b, kh = r.kh, lo = r.lo, nv = r.nv;
    const size_t row0 = r.row0;
    float qv[SWA_PER_LANE], acc[SWA_PER_LANE];
    load_lanes(qv, q + (row0 + t) * ldq + (size_t)h * hd, hd, lane);
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++)
        acc[e] = 0;
    float m = -INFINITY, l = 0;
    for (int j = 0; j < nv; j++) {
        const swa_rows<Ts> r = swa_kv(k, v, ldkv, kp, vp, ldp, Np, row0, kh, hd, lo, j);
        float resc, w;
        eng_cu_flash_step(&m, &l, swa_dot_k(qv, r, hd, lane) * scale, &resc, &w);
#pragma unroll
        for (int e = 0; e < SWA_PER_LANE; e++) {
            int d = lane + 32 * e;
            if (d < hd)
                acc[e] = acc[e] * resc + w * swa_v(r, d);
        }
    }
    store_lanes(out + (row0 + t) * ldo + (size_t)h * hd, acc, 1.0f / l, 0, hd, lane);
    if (lane == 0)
        lse[((size_t)b * H + h) * T + t] = m + logf(l);
}

/* per query row: pass 0 parks D_i in dq's first elements of the head;
 * pass 1 reads it back and writes dQ_i = scale sum_j P_ij (dP_ij - D_i) k_j */
template <typename Ts>
__global__ static void k_swa_bwd_q(Ts *dq, int pass, const float *lse, const Ts *dout, int ldo, const Ts *q, int ldq,
                                   const Ts *k, const Ts *v, int ldkv, const float *kp, const float *vp, int ldp,
                                   int Np, int B, int T, int H, int Hkv, int hd, int window, float scale)
{
    swa_query r;
    if (!swa_query_of(&r, B, T, H, Hkv, Np, window))
        return;
    const int lane = threadIdx.x & 31, t = r.t, h = r.h, b = r.b, kh = r.kh, lo = r.lo, nv = r.nv;
    const size_t row0 = r.row0;
    float qv[SWA_PER_LANE], dov[SWA_PER_LANE], acc[SWA_PER_LANE];
    load_lanes(qv, q + (row0 + t) * ldq + (size_t)h * hd, hd, lane);
    load_lanes(dov, dout + (row0 + t) * ldo + (size_t)h * hd, hd, lane);
    const float L = lse[((size_t)b * H + h) * T + t];
    Ts *o = dq + (row0 + t) * ldq + (size_t)h * hd;
    if (pass == 0) {
        float D = 0;
        for (int j = 0; j < nv; j++) {
            const swa_rows<Ts> r = swa_kv(k, v, ldkv, kp, vp, ldp, Np, row0, kh, hd, lo, j);
            D += expf(swa_dot_k(qv, r, hd, lane) * scale - L) * swa_dot_v(dov, r, hd, lane);
        }
        if (lane == 0)
            swa_park(o, D);
        return;
    }
    const float D = __shfl_sync(0xffffffffu, lane == 0 ? swa_parked(o) : 0.0f, 0);
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++)
        acc[e] = 0;
    for (int j = 0; j < nv; j++) {
        const swa_rows<Ts> r = swa_kv(k, v, ldkv, kp, vp, ldp, Np, row0, kh, hd, lo, j);
        const float p = expf(swa_dot_k(qv, r, hd, lane) * scale - L);
        const float ds = p * (swa_dot_v(dov, r, hd, lane) - D);
#pragma unroll
        for (int e = 0; e < SWA_PER_LANE; e++) {
            int d = lane + 32 * e;
            if (d < hd)
                acc[e] += ds * swa_k(r, d);
        }
    }
    store_lanes(o, acc, scale, 0, hd, lane);
}

/* A key row's gradient pass begins: its k and v in the lanes, its dK, dV
 * accumulators at zero (window keys: R = Ts; persistent entries: float) */
template <typename R>
__device__ static void swa_key_begin(float *kv, float *vv, float *gk, float *gv, const R *krow, const R *vrow, int hd,
                                     int lane)
{
    load_lanes(kv, krow, hd, lane);
    load_lanes(vv, vrow, hd, lane);
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++)
        gk[e] = gv[e] = 0;
}

/* Query i (sequence b, head h) against a key row (kv, vv in the lanes):
 * its P and dS, added into the row's gradients gv += P dO_i and
 * gk += dS q_i (dK's scale is applied at the store) */
template <typename Ts>
__device__ static void swa_acc_query(float *gk, float *gv, const float *kv, const float *vv, const Ts *q, int ldq,
                                     const Ts *dout, int ldo, const Ts *dq, const float *lse, size_t row, int h,
                                     size_t li, int hd, int lane, float scale)
{
    const Ts *qi = q + row * ldq + (size_t)h * hd, *di = dout + row * ldo + (size_t)h * hd;
    const float D = swa_parked(dq + row * ldq + (size_t)h * hd); /* parked by pass 0 */
    const float p = expf(dot_lanes(kv, qi, hd, lane) * scale - lse[li]);
    const float ds = p * (dot_lanes(vv, di, hd, lane) - D);
#pragma unroll
    for (int e = 0; e < SWA_PER_LANE; e++) {
        int d = lane + 32 * e;
        if (d < hd) {
            gv[e] += p * eng__cu_ld(di[d]);
            gk[e] += ds * eng__cu_ld(qi[d]);
        }
    }
}

/* per key row and kv head: dV_j, dK_j (=) over the group's heads and the
 * queries j..j+window-1 that see it */
template <typename Ts>
__global__ static void k_swa_bwd_kv(Ts *dk, Ts *dv, const Ts *dq, const float *lse, const Ts *dout, int ldo,
                                    const Ts *q, int ldq, const Ts *k, const Ts *v, int ldkv, int B, int T, int H,
                                    int Hkv, int hd, int window, float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)B * Hkv * T)
        return;
    const int j = (int)(warp % T), kh = (int)(warp / T % Hkv), b = (int)(warp / T / Hkv), G = H / Hkv;
    const size_t row0 = (size_t)b * T, at = (row0 + j) * ldkv + (size_t)kh * hd;
    const int iend = (long)j + window < T ? j + window : T;
    float kv[SWA_PER_LANE], vv[SWA_PER_LANE], gk[SWA_PER_LANE], gv[SWA_PER_LANE];
    swa_key_begin(kv, vv, gk, gv, k + at, v + at, hd, lane);
    for (int h = kh * G; h < (kh + 1) * G; h++)
        for (int i = j; i < iend; i++)
            swa_acc_query(gk, gv, kv, vv, q, ldq, dout, ldo, dq, lse, row0 + i, h, ((size_t)b * H + h) * T + i, hd,
                          lane, scale);
    store_lanes(dk + at, gk, scale, 0, hd, lane);
    store_lanes(dv + at, gv, 1.0f, 0, hd, lane);
}

/* per persistent entry and kv head: dkp, dvp (+=) over every sequence (in
 * order), the group's heads and every query */
template <typename Ts>
__global__ static void k_swa_bwd_p(float *dkp, float *dvp, const Ts *dq, const float *lse, const Ts *dout, int ldo,
                                   const Ts *q, int ldq, const float *kp, const float *vp, int ldp, int Np, int B,
                                   int T, int H, int Hkv, int hd, float scale)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)Np * Hkv)
        return;
    const int j = (int)(warp % Np), kh = (int)(warp / Np), G = H / Hkv;
    const size_t at = (size_t)j * ldp + (size_t)kh * hd;
    float kv[SWA_PER_LANE], vv[SWA_PER_LANE], gk[SWA_PER_LANE], gv[SWA_PER_LANE];
    swa_key_begin(kv, vv, gk, gv, kp + at, vp + at, hd, lane);
    for (int b = 0; b < B; b++)
        for (int h = kh * G; h < (kh + 1) * G; h++)
            for (int i = 0; i < T; i++)
                swa_acc_query(gk, gv, kv, vv, q, ldq, dout, ldo, dq, lse, (size_t)b * T + i, h,
                              ((size_t)b * H + h) * T + i, hd, lane, scale);
    store_lanes(dkp + at, gk, scale, 1, hd, lane);
    store_lanes(dvp + at, gv, 1.0f, 1, hd, lane);
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
    if (c->act == ENG_BF16 && hd < 2) /* D's two halves (swa_park) */
        return !eng__cu_fail(c, TLM_ECONFIG, "swa", "head size 1 with bf16 activations");
    return 1;
}

template <typename Ts>
static void swa_fwd(eng__cu *c, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                    const eng_act *v, int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T, int H,
                    int Hkv, int hd, int window)
{
    ENG__CU_LAUNCH(k_swa_fwd<Ts>, warps_grid((size_t)B * H * T), ENG__CU_THREADS, 0, c->stream, (Ts *)out, ldo, lse,
                   (const Ts *)q, ldq, (const Ts *)k, (const Ts *)v, ldkv, kp, vp, ldp, Np, B, T, H, Hkv, hd, window,
                   1.0f / sqrtf((float)hd));
    ENG__CU_LAUNCHED(c, "swa_fwd");
}

void eng__cu_swa_fwd(void *ctx, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                     const eng_act *v, int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T, int H,
                     int Hkv, int hd, int window, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !swa_shape_ok(c, hd, H, Hkv, window) || B * T <= 0)
        return;
    ENG__CU_ACT(c, swa_fwd, c, out, ldo, lse, q, ldq, k, v, ldkv, kp, vp, ldp, Np, B, T, H, Hkv, hd, window);
}

template <typename Ts>
static void swa_bwd(eng__cu *c, eng_act *dq_a, eng_act *dk_a, eng_act *dv_a, float *dkp, float *dvp, const float *lse,
                    const eng_act *dout_a, int ldo, const eng_act *q_a, int ldq, const eng_act *k_a,
                    const eng_act *v_a, int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T,
                    int H, int Hkv, int hd, int window)
{
    Ts *dq = (Ts *)dq_a, *dk = (Ts *)dk_a, *dv = (Ts *)dv_a;
    const Ts *dout = (const Ts *)dout_a, *q = (const Ts *)q_a, *k = (const Ts *)k_a, *v = (const Ts *)v_a;
    const float scale = 1.0f / sqrtf((float)hd);
    const unsigned gq = warps_grid((size_t)B * H * T);
    ENG__CU_LAUNCH(k_swa_bwd_q<Ts>, gq, ENG__CU_THREADS, 0, c->stream, dq, 0, lse, dout, ldo, q, ldq, k, v, ldkv, kp,
                   vp, ldp, Np, B, T, H, Hkv, hd, window, scale);
    if (ENG__CU_LAUNCHED(c, "swa_bwd (D)"))
        return;
    ENG__CU_LAUNCH(k_swa_bwd_kv<Ts>, warps_grid((size_t)B * Hkv * T), ENG__CU_THREADS, 0, c->stream, dk, dv, dq, lse,
                   dout, ldo, q, ldq, k, v, ldkv, B, T, H, Hkv, hd, window, scale);
    if (ENG__CU_LAUNCHED(c, "swa_bwd (dk, dv)"))
        return;
    if (Np > 0) {
        ENG__CU_LAUNCH(k_swa_bwd_p<Ts>, warps_grid((size_t)Np * Hkv), ENG__CU_THREADS, 0, c->stream, dkp, dvp, dq, lse,
                       dout, ldo, q, ldq, kp, vp, ldp, Np, B, T, H, Hkv, hd, scale);
        if (ENG__CU_LAUNCHED(c, "swa_bwd (dkp, dvp)"))
            return;
    }
    ENG__CU_LAUNCH(k_swa_bwd_q<Ts>, gq, ENG__CU_THREADS, 0, c->stream, dq, 1, lse, dout, ldo, q, ldq, k, v, ldkv, kp,
                   vp, ldp, Np, B, T, H, Hkv, hd, window, scale);
    ENG__CU_LAUNCHED(c, "swa_bwd (dq)");
}

void eng__cu_swa_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, float *dkp, float *dvp, const float *lse,
                     const eng_act *dout, int ldo, const eng_act *q, int ldq, const eng_act *k, const eng_act *v,
                     int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T, int H, int Hkv, int hd,
                     int window, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !swa_shape_ok(c, hd, H, Hkv, window) || B * T <= 0)
        return;
    ENG__CU_ACT(c, swa_bwd, c, dq, dk, dv, dkp, dvp, lse, dout, ldo, q, ldq, k, v, ldkv, kp, vp, ldp, Np, B, T, H, Hkv,
                hd, window);
}

ENG__CU_END
