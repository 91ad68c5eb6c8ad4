/* flash.cu: causal flash attention on the tensor cores, FlashAttention-2
 * style, for bf16 activations (issue 24's hand-written candidate; cuDNN's
 * fused SDPA is the other): forward, and a deterministic backward.  The
 * launchers (internal.h, eng__flash_*) take bf16 device pointers with the
 * strides of today's attention op (q, k, v may be column slices of a fused
 * projection); attention.cu routes the attention op to them for bf16
 * activations at head sizes 64 and 128.
 * Reference semantics: engine/cpu/attention.c (a plain causal softmax
 * attention); docs/engine.md ("Flash attention on the tensor cores") has
 * the tiling, shared memory per head size and occupancy.
 *
 * Layout: every tile of Q, K, V or dO lives in shared memory as rows of hd
 * bf16, its 16-byte chunks swizzled (chunk c of row r at c ^ (r % 8)) so
 * the 8 row addresses of an ldmatrix fall in different banks.  A block is
 * 4 warps; each warp owns 16 rows of the block's own tile (query rows in
 * the forward and dQ, key rows in dK/dV) and keeps their accumulators in
 * mma.sync's fp32 C fragments (engine/cuda/mma.h has the layouts); the
 * streamed tile's products go through ldmatrix + mma.sync m16n8k16 (bf16
 * in, fp32 accumulate); P and dS are rounded to bf16 only as an mma's A
 * operand.  Online softmax in the base-2 domain (scores times
 * scale * log2 e), exp2f, fp32.
 *
 *   - forward: a block per (64 query rows, head, batch); the K/V tiles of
 *     64 rows at or below the diagonal stream through shared memory (the
 *     tiles above it are never loaded); writes O (bf16) and the row's
 *     log-sum-exp (fp32, natural log, (B, H, T)) for the backward;
 *   - backward: D = rowsum(dO * O) first (a warp per row), then one kernel
 *     per key tile (64 keys of a kv head) for dK, dV, looping over the
 *     group's query heads in order and over the query tiles at or below the
 *     diagonal (P recomputed from Q, K and lse), and one per query tile for
 *     dQ (P recomputed again).  Every output element has one writer and a
 *     fixed order of sums: no atomics, a run repeats bit for bit.
 * Rows past T (any T: the last tile is partial) load as zeros and are
 * masked like the causal future; they are never written.
 *
 * Must not: use atomics or any order that depends on scheduling; read or
 * write past T rows; be launched with a head size other than 64 or 128,
 * pointers not 16-byte aligned, or strides not a multiple of 8 elements
 * (the launchers refuse them: 16-byte copies). */
#include <math.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

#define FL_WARPS 4
#define FL_THREADS (32 * FL_WARPS)
#define FL_ROWS (16 * FL_WARPS) /* a block's own tile: query rows (forward, dQ) or key rows (dK, dV) */
#define FL_LOG2E 1.4426950408889634f
#define FL_LN2 0.6931471805599453f
/* the query-tile rows of dK/dV's loop: 32 keeps the two 16 x hd fp32
 * accumulators, P^T and dS^T within the register file (64 spills at hd 64,
 * ptxas for sm_90; docs/engine.md) */
#define FL_BQ(hd) 32

/* the block's dynamic shared memory (every kernel here sizes its tiles by
 * the head size, up to 64 KiB: over the 48 KiB a static array may have) */
#ifdef ENG_CUDA_EMU
__device__ static inline uint16_t *fl_smem(void)
{
    return (uint16_t *)::eng_cu_emu::dynamic_smem();
}
#else
__device__ static inline uint16_t *fl_smem(void)
{
    extern __shared__ __align__(16) unsigned char fl_dyn[];
    return (uint16_t *)fl_dyn;
}
#endif

/* element (r, c) of a swizzled tile of rows of HD: 16-byte chunk c / 8 of
 * row r stored at chunk (c / 8) ^ (r % 8) (HD / 8 >= 8 chunks, so the
 * chunk stays in its row) */
template <int HD> __device__ static __forceinline__ int fl_sw(int r, int c)
{
    return r * HD + ((((c >> 3) ^ (r & 7))) << 3) + (c & 7);
}

/* 16 bytes from src (NULL: zeros) to dst, both 16-byte aligned: one
 * 128-bit access each on the GPU; in the emulated build two 8-byte ones
 * (clang makes a 16-byte struct copy a memcpy, which the emulator's
 * load and store hooks would not see) */
__device__ static __forceinline__ void fl_copy16(uint16_t *dst, const __nv_bfloat16 *src)
{
#ifdef ENG_CUDA_EMU
    uint64_t *d = (uint64_t *)dst;
    const uint64_t *g = (const uint64_t *)src;
    d[0] = g ? g[0] : 0;
    d[1] = g ? g[1] : 0;
#else
    uint4 v = make_uint4(0, 0, 0, 0);
    if (src)
        v = *(const uint4 *)src;
    *(uint4 *)dst = v;
#endif
}

/* rows [r0, r0 + rows) of g (row stride ld elements) into the tile s, 16
 * bytes per thread and step; rows at or past T are zeros */
template <int HD>
__device__ static void fl_load(uint16_t *s, const __nv_bfloat16 *g, int ld, int r0, int rows, int T)
{
    const int cpr = HD / 8;
    for (int i = threadIdx.x; i < rows * cpr; i += FL_THREADS) {
        const int r = i / cpr, c = (i % cpr) * 8;
        fl_copy16(s + fl_sw<HD>(r, c), r0 + r < T ? g + (size_t)(r0 + r) * ld + c : NULL);
    }
}

/* acc[j] (16 x 8, j < NB / 8) = A B^T over HD: A the 16 rows ra.. of the
 * tile sa, B the NB rows rb.. of sb (both rows of HD: B's rows are the
 * mma's columns, stored k-contiguous, so plain ldmatrix gives its
 * fragment; .x4 loads two k-steps at once) */
template <int HD, int NB>
__device__ static __forceinline__ void fl_abt(float acc[][4], const uint16_t *sa, int ra, const uint16_t *sb, int rb)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int j = 0; j < NB / 8; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk += 2) {
        uint32_t a0[4], a1[4];
        eng_cu_ldmatrix_x4(a0, sa + fl_sw<HD>(ra + (lane & 15), kk * 16 + (lane >> 4) * 8));
        eng_cu_ldmatrix_x4(a1, sa + fl_sw<HD>(ra + (lane & 15), (kk + 1) * 16 + (lane >> 4) * 8));
#pragma unroll
        for (int j = 0; j < NB / 8; j++) {
            uint32_t b[4];
            eng_cu_ldmatrix_x4(b, sb + fl_sw<HD>(rb + j * 8 + (lane & 7), kk * 16 + (lane >> 3) * 8));
            eng_cu_mma_16816_bf16(acc[j], a0, b, acc[j]);
            eng_cu_mma_16816_bf16(acc[j], a1, b + 2, acc[j]);
        }
    }
}

/* acc (16 x HD, HD / 8 C fragments) += P B: P (16 x NB) in C fragments,
 * rounded to bf16 as the A operand (n-tiles 2kc, 2kc + 1 are A's k-chunk
 * kc), B the NB rows rb.. of sb (rows are the mma's k: ldmatrix .trans) */
template <int HD, int NB>
__device__ static __forceinline__ void fl_pb(float acc[][4], const float p[][4], const uint16_t *sb, int rb)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int kc = 0; kc < NB / 16; kc++) {
        uint32_t a[4];
        a[0] = eng_cu_pack_bf16x2(p[2 * kc][0], p[2 * kc][1]);
        a[1] = eng_cu_pack_bf16x2(p[2 * kc][2], p[2 * kc][3]);
        a[2] = eng_cu_pack_bf16x2(p[2 * kc + 1][0], p[2 * kc + 1][1]);
        a[3] = eng_cu_pack_bf16x2(p[2 * kc + 1][2], p[2 * kc + 1][3]);
#pragma unroll
        for (int dt = 0; dt < HD / 8; dt += 2) {
            uint32_t b[4];
            eng_cu_ldmatrix_x4_trans(b, sb + fl_sw<HD>(rb + kc * 16 + (lane & 15), dt * 8 + (lane >> 4) * 8));
            eng_cu_mma_16816_bf16(acc[dt], a, b, acc[dt]);
            eng_cu_mma_16816_bf16(acc[dt + 1], a, b + 2, acc[dt + 1]);
        }
    }
}

/* max over the 4 lanes of a quad (they hold one row's columns) */
__device__ static __forceinline__ float fl_quad_max(float x)
{
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ static __forceinline__ float fl_quad_sum(float x)
{
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* rows (lo, hi) of a thread's C fragments; element e of a fragment is row
 * e < 2 ? lo : hi, column tig * 2 + (e & 1) of its n-tile */
#define FL_ROW(e, lo) ((e) < 2 ? (lo) : (lo) + 8)

/* stores a thread's 16 x HD accumulator rows (lo, lo + 8) scaled by mul[]
 * as bf16 pairs, rows at or past T skipped */
template <int HD>
__device__ static __forceinline__ void fl_store(__nv_bfloat16 *g, int ld, const float acc[][4], int lo, int T,
                                                const float mul[2])
{
    const int tig = threadIdx.x & 3;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int r = lo + 8 * half;
        if (r >= T)
            continue;
#pragma unroll
        for (int dt = 0; dt < HD / 8; dt++)
            *(uint32_t *)(g + (size_t)r * ld + dt * 8 + tig * 2) =
                eng_cu_pack_bf16x2(acc[dt][2 * half] * mul[half], acc[dt][2 * half + 1] * mul[half]);
    }
}

/* ------------------------------------------------------------ forward */
template <int HD>
__global__ static void __launch_bounds__(FL_THREADS)
    k_flash_fwd(__nv_bfloat16 *out, int ldo, float *lse, const __nv_bfloat16 *q, int ldq, const __nv_bfloat16 *k,
                const __nv_bfloat16 *v, int ldkv, int T, int H, int Hkv, float scale_log2)
{
    uint16_t *sq = fl_smem(), *sk = sq + FL_ROWS * HD, *sv = sk + FL_ROWS * HD;
    const int h = blockIdx.y, b = blockIdx.z, kh = h / (H / Hkv), q0 = blockIdx.x * FL_ROWS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, tig = lane & 3;
    const int lo = q0 + warp * 16 + (lane >> 2); /* this thread's rows: lo, lo + 8 */
    const __nv_bfloat16 *kb = k + (size_t)b * T * ldkv + (size_t)kh * HD, *vb = v + (size_t)b * T * ldkv + (size_t)kh * HD;
    fl_load<HD>(sq, q + (size_t)b * T * ldq + (size_t)h * HD, ldq, q0, FL_ROWS, T);
    float o[HD / 8][4];
#pragma unroll
    for (int dt = 0; dt < HD / 8; dt++)
        o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    const int last = (q0 + FL_ROWS < T ? q0 + FL_ROWS : T) - 1; /* the block's last query row */
    for (int k0 = 0; k0 <= last; k0 += FL_ROWS) {
        __syncthreads(); /* every warp is done with the last tile */
        fl_load<HD>(sk, kb, ldkv, k0, FL_ROWS, T);
        fl_load<HD>(sv, vb, ldkv, k0, FL_ROWS, T);
        __syncthreads();
        float s[FL_ROWS / 8][4];
        fl_abt<HD, FL_ROWS>(s, sq, warp * 16, sk, 0);
        float mx[2] = {m[0], m[1]};
#pragma unroll
        for (int j = 0; j < FL_ROWS / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int c = k0 + j * 8 + tig * 2 + (e & 1);
                s[j][e] = c <= FL_ROW(e, lo) && c < T ? s[j][e] * scale_log2 : -INFINITY;
                mx[e >> 1] = fmaxf(mx[e >> 1], s[j][e]);
            }
        float base[2], resc[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
        for (int i = 0; i < 2; i++) {
            mx[i] = fl_quad_max(mx[i]);
            base[i] = mx[i] == -INFINITY ? 0.0f : mx[i]; /* a row with no key yet */
            resc[i] = exp2f(m[i] - base[i]);
            m[i] = mx[i];
        }
#pragma unroll
        for (int j = 0; j < FL_ROWS / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[j][e] = exp2f(s[j][e] - base[e >> 1]);
                sum[e >> 1] += s[j][e];
            }
#pragma unroll
        for (int i = 0; i < 2; i++)
            l[i] = l[i] * resc[i] + sum[i]; /* this lane's columns; the quad's sum at the end */
#pragma unroll
        for (int dt = 0; dt < HD / 8; dt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                o[dt][e] *= resc[e >> 1];
        fl_pb<HD, FL_ROWS>(o, s, sv, 0);
    }
    float inv[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        l[i] = fl_quad_sum(l[i]);
        inv[i] = 1.0f / l[i];
    }
    fl_store<HD>(out + (size_t)b * T * ldo + (size_t)h * HD, ldo, o, lo, T, inv);
    if (tig == 0)
#pragma unroll
        for (int i = 0; i < 2; i++)
            if (lo + 8 * i < T)
                lse[((size_t)b * H + h) * T + lo + 8 * i] = (m[i] + log2f(l[i])) * FL_LN2;
}

/* ------------------------------------------------------------ backward */
/* D = rowsum(dO * O), (B, H, T): a warp per row, lanes over the head in a
 * fixed order */
__global__ static void k_flash_bwd_d(float *D, const __nv_bfloat16 *dout, const __nv_bfloat16 *out, int ldo, int B,
                                     int T, int H, int hd)
{
    const size_t row = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (row >= (size_t)B * H * T)
        return;
    const int t = (int)(row % T), h = (int)(row / T % H), b = (int)(row / T / H);
    const size_t at = ((size_t)b * T + t) * ldo + (size_t)h * hd;
    float s = 0.0f;
    for (int d = lane; d < hd; d += 32)
        s += __bfloat162float(dout[at + d]) * __bfloat162float(out[at + d]);
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0)
        D[row] = s;
}

/* dK, dV of 64 keys of kv head blockIdx.y: over the group's query heads in
 * order, and the query tiles of BQ rows at or below the diagonal.  The
 * warp's 16 keys are the rows of S^T = K Q^T, P^T, dP^T = V dO^T, dS^T;
 * dV += P^T dO, dK += dS^T Q. */
template <int HD, int BQ = FL_BQ(HD)>
__global__ static void __launch_bounds__(FL_THREADS)
    k_flash_bwd_kv(__nv_bfloat16 *dk, __nv_bfloat16 *dv, const float *lse, const float *D,
                   const __nv_bfloat16 *dout, int ldo, const __nv_bfloat16 *q, int ldq, const __nv_bfloat16 *k,
                   const __nv_bfloat16 *v, int ldkv, int T, int H, int Hkv, float scale, float scale_log2)
{
    uint16_t *sk = fl_smem(), *sv = sk + FL_ROWS * HD, *sq = sv + FL_ROWS * HD, *sdo = sq + BQ * HD;
    float *sl = (float *)(sdo + BQ * HD), *sd = sl + BQ;
    const int kh = blockIdx.y, b = blockIdx.z, G = H / Hkv, k0 = blockIdx.x * FL_ROWS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, tig = lane & 3;
    const int lo = k0 + warp * 16 + (lane >> 2); /* this thread's keys: lo, lo + 8 */
    const size_t kvat = (size_t)b * T * ldkv + (size_t)kh * HD;
    fl_load<HD>(sk, k + kvat, ldkv, k0, FL_ROWS, T);
    fl_load<HD>(sv, v + kvat, ldkv, k0, FL_ROWS, T);
    float gk[HD / 8][4], gv[HD / 8][4];
#pragma unroll
    for (int dt = 0; dt < HD / 8; dt++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            gk[dt][e] = gv[dt][e] = 0.0f;
    for (int h = kh * G; h < (kh + 1) * G; h++) {
        const __nv_bfloat16 *qb = q + (size_t)b * T * ldq + (size_t)h * HD;
        const __nv_bfloat16 *dob = dout + (size_t)b * T * ldo + (size_t)h * HD;
        const size_t lrow = ((size_t)b * H + h) * T;
        for (int q0 = k0; q0 < T; q0 += BQ) {
            __syncthreads(); /* every warp is done with the last query tile */
            fl_load<HD>(sq, qb, ldq, q0, BQ, T);
            fl_load<HD>(sdo, dob, ldo, q0, BQ, T);
            for (int i = threadIdx.x; i < BQ; i += FL_THREADS) {
                sl[i] = q0 + i < T ? lse[lrow + q0 + i] * FL_LOG2E : 0.0f;
                sd[i] = q0 + i < T ? D[lrow + q0 + i] : 0.0f;
            }
            __syncthreads();
            float p[BQ / 8][4], ds[BQ / 8][4];
            fl_abt<HD, BQ>(p, sk, warp * 16, sq, 0);
#pragma unroll
            for (int j = 0; j < BQ / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int c = j * 8 + tig * 2 + (e & 1); /* the query, in the tile */
                    p[j][e] = q0 + c >= FL_ROW(e, lo) && q0 + c < T ? exp2f(p[j][e] * scale_log2 - sl[c]) : 0.0f;
                }
            fl_pb<HD, BQ>(gv, p, sdo, 0);
            fl_abt<HD, BQ>(ds, sv, warp * 16, sdo, 0);
#pragma unroll
            for (int j = 0; j < BQ / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    ds[j][e] = p[j][e] * (ds[j][e] - sd[j * 8 + tig * 2 + (e & 1)]);
            fl_pb<HD, BQ>(gk, ds, sq, 0);
        }
    }
    const float mk[2] = {scale, scale}, one[2] = {1.0f, 1.0f};
    fl_store<HD>(dk + kvat, ldkv, gk, lo, T, mk);
    fl_store<HD>(dv + kvat, ldkv, gv, lo, T, one);
}

/* dQ of 64 query rows of head blockIdx.y: over the key tiles of BK rows at
 * or below the diagonal, dQ += dS K with dS = P (dO V^T - D) */
template <int HD, int BK = FL_ROWS>
__global__ static void __launch_bounds__(FL_THREADS)
    k_flash_bwd_q(__nv_bfloat16 *dq, const float *lse, const float *D, const __nv_bfloat16 *dout, int ldo,
                  const __nv_bfloat16 *q, int ldq, const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int T,
                  int H, int Hkv, float scale, float scale_log2)
{
    uint16_t *sq = fl_smem(), *sdo = sq + FL_ROWS * HD, *sk = sdo + FL_ROWS * HD, *sv = sk + BK * HD;
    const int h = blockIdx.y, b = blockIdx.z, kh = h / (H / Hkv), q0 = blockIdx.x * FL_ROWS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, tig = lane & 3;
    const int lo = q0 + warp * 16 + (lane >> 2);
    const size_t qat = (size_t)b * T * ldq + (size_t)h * HD, kvat = (size_t)b * T * ldkv + (size_t)kh * HD;
    fl_load<HD>(sq, q + qat, ldq, q0, FL_ROWS, T);
    fl_load<HD>(sdo, dout + (size_t)b * T * ldo + (size_t)h * HD, ldo, q0, FL_ROWS, T);
    float L[2], Dr[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int r = lo + 8 * i;
        L[i] = r < T ? lse[((size_t)b * H + h) * T + r] * FL_LOG2E : 0.0f;
        Dr[i] = r < T ? D[((size_t)b * H + h) * T + r] : 0.0f;
    }
    float g[HD / 8][4];
#pragma unroll
    for (int dt = 0; dt < HD / 8; dt++)
        g[dt][0] = g[dt][1] = g[dt][2] = g[dt][3] = 0.0f;
    const int last = (q0 + FL_ROWS < T ? q0 + FL_ROWS : T) - 1;
    for (int k0 = 0; k0 <= last; k0 += BK) {
        __syncthreads();
        fl_load<HD>(sk, k + kvat, ldkv, k0, BK, T);
        fl_load<HD>(sv, v + kvat, ldkv, k0, BK, T);
        __syncthreads();
        float p[BK / 8][4], ds[BK / 8][4];
        fl_abt<HD, BK>(p, sq, warp * 16, sk, 0);
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int c = k0 + j * 8 + tig * 2 + (e & 1);
                p[j][e] = c <= FL_ROW(e, lo) && c < T ? exp2f(p[j][e] * scale_log2 - L[e >> 1]) : 0.0f;
            }
        fl_abt<HD, BK>(ds, sdo, warp * 16, sv, 0);
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                ds[j][e] = p[j][e] * (ds[j][e] - Dr[e >> 1]);
        fl_pb<HD, BK>(g, ds, sk, 0);
    }
    const float mq[2] = {scale, scale};
    fl_store<HD>(dq + qat, ldq, g, lo, T, mq);
}

/* ------------------------------------------------------------ launchers */
#define FL_SMEM_FWD(hd) ((size_t)3 * FL_ROWS * (hd) * 2)
#define FL_SMEM_KV(hd) ((size_t)2 * (FL_ROWS + FL_BQ(hd)) * (hd) * 2 + 2 * FL_BQ(hd) * sizeof(float))
#define FL_SMEM_Q(hd) ((size_t)4 * FL_ROWS * (hd) * 2)

size_t eng__flash_workspace_floats(int B, int T, int H)
{
    return (size_t)B * T * H;
}

/* the shapes and layouts the kernels take (internal.h); else the context's error */
int eng__attn_shape_ok(eng__cu *c, const char *what, int hd, int H, int Hkv, int ldo, int ldq, int ldkv)
{
    if ((hd != 64 && hd != 128) || Hkv <= 0 || H % Hkv)
        return !eng__cu_fail(c, TLM_ECONFIG, what, "head size not 64 or 128, or heads not a multiple of kv heads");
    if (ldo % 8 || ldq % 8 || ldkv % 8)
        return !eng__cu_fail(c, TLM_ECONFIG, what, "a row stride not a multiple of 8 elements (16-byte loads)");
    return 1;
}

/* dynamic shared memory over the default 48 KiB needs the kernel's opt-in */
template <typename K> static int fl_smem_optin(eng__cu *c, K *kernel, size_t bytes, const char *what)
{
    if (bytes <= 48 * 1024)
        return 1;
    return !eng__cu_check(c, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes),
                          what);
}

template <int HD>
static void fl_fwd(eng__cu *c, __nv_bfloat16 *out, int ldo, float *lse, const __nv_bfloat16 *q, int ldq,
                   const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv,
                   float scale)
{
    const size_t smem = FL_SMEM_FWD(HD);
    if (!fl_smem_optin(c, k_flash_fwd<HD>, smem, "flash_fwd"))
        return;
    const dim3 grid((unsigned)((T + FL_ROWS - 1) / FL_ROWS), (unsigned)H, (unsigned)B);
    ENG__CU_LAUNCH(k_flash_fwd<HD>, grid, FL_THREADS, smem, c->stream, out, ldo, lse, q, ldq, k, v, ldkv, T, H, Hkv,
                   scale * FL_LOG2E);
    ENG__CU_LAUNCHED(c, "flash_fwd");
}

void eng__flash_fwd(void *ctx, __nv_bfloat16 *out, int ldo, float *lse, const __nv_bfloat16 *q, int ldq,
                    const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv, int hd,
                    float scale)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !eng__attn_shape_ok(c, "flash_fwd", hd, H, Hkv, ldo, ldq, ldkv) || B <= 0 || T <= 0)
        return;
    if (!eng__cu_aligned16(out) || !eng__cu_aligned16(q) || !eng__cu_aligned16(k) || !eng__cu_aligned16(v)) {
        eng__cu_fail(c, TLM_ECONFIG, "flash_fwd", "a bf16 operand not 16-byte aligned");
        return;
    }
    if (hd == 64)
        fl_fwd<64>(c, out, ldo, lse, q, ldq, k, v, ldkv, B, T, H, Hkv, scale);
    else
        fl_fwd<128>(c, out, ldo, lse, q, ldq, k, v, ldkv, B, T, H, Hkv, scale);
}

template <int HD>
static void fl_bwd(eng__cu *c, __nv_bfloat16 *dq, __nv_bfloat16 *dk, __nv_bfloat16 *dv, const float *lse,
                   const __nv_bfloat16 *dout, int ldo, const __nv_bfloat16 *q, int ldq, const __nv_bfloat16 *k,
                   const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv, float scale, const float *D)
{
    const size_t skv = FL_SMEM_KV(HD), sq = FL_SMEM_Q(HD);
    if (!fl_smem_optin(c, k_flash_bwd_kv<HD>, skv, "flash_bwd (dk, dv)") ||
        !fl_smem_optin(c, k_flash_bwd_q<HD>, sq, "flash_bwd (dq)"))
        return;
    const unsigned tiles = (unsigned)((T + FL_ROWS - 1) / FL_ROWS);
    ENG__CU_LAUNCH(k_flash_bwd_kv<HD>, dim3(tiles, (unsigned)Hkv, (unsigned)B), FL_THREADS, skv,
                   c->stream, dk, dv, lse, D, dout, ldo, q, ldq, k, v, ldkv, T, H, Hkv, scale, scale * FL_LOG2E);
    if (ENG__CU_LAUNCHED(c, "flash_bwd (dk, dv)"))
        return;
    ENG__CU_LAUNCH(k_flash_bwd_q<HD>, dim3(tiles, (unsigned)H, (unsigned)B), FL_THREADS, sq, c->stream,
                   dq, lse, D, dout, ldo, q, ldq, k, v, ldkv, T, H, Hkv, scale, scale * FL_LOG2E);
    ENG__CU_LAUNCHED(c, "flash_bwd (dq)");
}

void eng__flash_bwd(void *ctx, __nv_bfloat16 *dq, __nv_bfloat16 *dk, __nv_bfloat16 *dv, const float *lse,
                    const __nv_bfloat16 *dout, const __nv_bfloat16 *out, int ldo, const __nv_bfloat16 *q, int ldq,
                    const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv, int hd,
                    float scale, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !eng__attn_shape_ok(c, "flash_bwd", hd, H, Hkv, ldo, ldq, ldkv) || B <= 0 || T <= 0)
        return;
    if (!eng__cu_aligned16(dq) || !eng__cu_aligned16(dk) || !eng__cu_aligned16(dv) || !eng__cu_aligned16(dout) || !eng__cu_aligned16(q) ||
        !eng__cu_aligned16(k) || !eng__cu_aligned16(v)) {
        eng__cu_fail(c, TLM_ECONFIG, "flash_bwd", "a bf16 operand not 16-byte aligned");
        return;
    }
    const size_t rows = (size_t)B * H * T;
    ENG__CU_LAUNCH(k_flash_bwd_d, (unsigned)((rows * 32 + ENG__CU_THREADS - 1) / ENG__CU_THREADS), ENG__CU_THREADS, 0,
                   c->stream, ws, dout, out, ldo, B, T, H, hd);
    if (ENG__CU_LAUNCHED(c, "flash_bwd (D)"))
        return;
    if (hd == 64)
        fl_bwd<64>(c, dq, dk, dv, lse, dout, ldo, q, ldq, k, v, ldkv, B, T, H, Hkv, scale, ws);
    else
        fl_bwd<128>(c, dq, dk, dv, lse, dout, ldo, q, ldq, k, v, ldkv, B, T, H, Hkv, scale, ws);
}

ENG__CU_END
