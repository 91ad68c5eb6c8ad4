/* titans_mem.cu: the Titans neural memory on device pointers, forward and
 * backward through its chunked online training (the second-order terms
 * included).  Contract: engine/model/ops.h; the derivation and the CPU
 * reference: docs/titans.md, engine/cpu/titans_mem.c, whose structure this
 * file follows step for step so the two can be read side by side.
 *
 * Every (sequence, head) unit goes through its chunks at the same time:
 * the host walks the chunks in order (the backward in reverse), and each
 * product of a chunk is one cuBLASLt strided-batched GEMM over all B x H
 * units (eng__cu_matmul_batched: fp32 storage, CUBLAS_COMPUTE_32F, as the
 * CPU's sgemm).  A strided batch needs one stride between units, so the op
 * first copies q, k, v (the backward: and dy) once into unit-major fp32
 * buffers of its workspace (unit u's token t at (u T + t) hd), and the
 * forward's reads go to a fourth, copied out to y at the end.  A unit's
 * scratch (its slot, plan.h) holds the chunk's matrices at the same
 * offsets in every unit's slot, and `states` (engine/model/titans_mem.h)
 * is unit-major already.  The steps between products are small kernels
 * over all units: a thread per element where the step is element-wise,
 * and a block per unit where it needs the scalar recursions over the
 * chunk's tokens (thread 0, in double), row dots (a warp per token, in
 * double) or dots over a state (block-wide, a fixed tree).  The initial
 * weights' gradient of every unit is its last P, added in sequence order
 * by a last kernel (no atomics: runs repeat bit for bit).
 *
 * Launches a chunk, GEMMs + kernels (the sequence's last chunk in
 * brackets: the forward's has no update, the backward's no P, Q):
 *   forward:  depth 2  9 + 3 = 12 (2 + 1),   depth 1  4 + 2 = 6 (1 + 0);
 *   backward: depth 2 22 + 6 = 28 (5 + 4),   depth 1  9 + 4 = 13 (2 + 2);
 * and a call's own: the forward 5 (q, k, v in, w0 into the first state,
 * y out), the backward 5 (q, k, v, dy in, dw0). */
#include <math.h>

#include "engine/cuda/internal.h"
#include "engine/cuda/plan.h"

ENG__CU_BEGIN

#define MEM_THREADS 256
#define MEM_WARPS (MEM_THREADS / 32)

/* the unit's sizes and its scratch's shape, shared with the CPU */
#include "engine/model/titans_mem.h"
typedef eng_tmem_dims mdims;

static mdims dims(int hd, int hm, int depth, int chunk, int T)
{
    return eng_tmem_dims_of(hd, hm, depth, chunk, T);
}

/* the CPU's scratch, plus the per-token arrays it keeps on its stack and
 * the unit's aW, aS, eS (plan.h sizes it: N_SCAL arrays, N_UNIT values) */
enum { N_H = ENG_TMEM_N_H, N_D = ENG_TMEM_N_D, N_SCAL = 16, N_UNIT = 8 };

/* the chunk's matrices in a slot: (n, Hm) ones, h[] */
enum { H_Z, H_ZQ, H_A, H_AQ, H_SZ, H_SZQ, H_G, H_DL, H_SP1, H_SQ1, H_TP2, H_TQ2, H_ZB, H_DAQ };
/* (n, D) ones, dd[]; dd[D_RP2] ends as Pb (depth 2) or is Pb (depth 1) */
enum { D_E2, D_RP2, D_RQ2, D_UP1, D_UQ1, D_DQ };
/* the forward's update rows scaled by theta ps and theta qs (the CPU's
 * two update() calls), in matrices its backward half uses */
enum { H_TG = H_SP1, H_TM = H_SQ1, D_TG = D_RP2, D_TM = D_RQ2 };

static size_t slot_floats(const mdims *m)
{
    return eng_cu_mem_slot_floats(m->D, m->Hm, m->depth, m->b, m->b);
}

typedef struct scratch {
    double *th, *et, *aa, *ps, *pw, *qs, *sg[3];
    double *pg, *qg, *c1, *c2, *dth, *det, *da;
    double *coef; /* the chunk's aW, aS, eS */
    float *h[N_H];
    float *dd[N_D];
    float *P, *Q, *Pn;
} scratch;

/* a unit's scratch in its slot (the host carves unit 0's for the
 * products); flip: the backward's P and Pn swapped (every chunk) */
__host__ __device__ static scratch scratch_carve(float *slot, const mdims *m, int flip)
{
    scratch s;
    double *dp = (double *)slot;
    const size_t b = (size_t)m->b;
    s.th = dp, s.et = dp + b, s.aa = dp + 2 * b, s.ps = dp + 3 * b, s.pw = dp + 4 * b, s.qs = dp + 5 * b;
    s.sg[0] = dp + 6 * b, s.sg[1] = dp + 7 * b, s.sg[2] = dp + 8 * b;
    s.pg = dp + 9 * b, s.qg = dp + 10 * b, s.c1 = dp + 11 * b, s.c2 = dp + 12 * b;
    s.dth = dp + 13 * b, s.det = dp + 14 * b, s.da = dp + 15 * b;
    s.coef = dp + N_SCAL * b;
    float *f = slot + 2 * (N_SCAL * b + N_UNIT);
    for (int i = 0; i < N_H; i++, f += m->nH)
        s.h[i] = f;
    for (int i = 0; i < N_D; i++, f += m->nD)
        s.dd[i] = f;
    s.P = f + (flip ? 2 * m->Pm : 0);
    s.Q = f + m->Pm;
    s.Pn = f + (flip ? 0 : 2 * m->Pm);
    return s;
}

/* ------------------------------------------------------------ element-wise kernels */

/* element i of every unit's (len)-element matrix, the units st apart */
__device__ static size_t unit_el(size_t i, size_t len, size_t st)
{
    return i / len * st + i % len;
}

/* element i of the unit-major copy (u T + t) D + j, u = b H + h, in a
 * (B T, ld) activation whose head h is columns h D .. */
__device__ static size_t act_el(size_t i, int ld, int T, int H, int D)
{
    const size_t j = i % D, r = i / D, t = r % T, u = r / T;
    return (u / H * T + t) * ld + u % H * (size_t)D + j;
}

template <typename Ts> __global__ static void k_units_in(float *dst, const Ts *src, int ld, int T, int H, int D, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = eng__cu_ld(src[act_el(i, ld, T, H, D)]);
}

template <typename Ts> __global__ static void k_units_out(Ts *dst, int ld, const float *src, int T, int H, int D, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[act_el(i, ld, T, H, D)] = eng__cu_st<Ts>(src[i]);
}

/* element e of head h's state in w0 (depth 2: W1 (H, Hm, D) then W2 (H, D, Hm); 1: (H, D, D)) */
__device__ static size_t w0_el(const mdims *m, int H, int h, size_t e)
{
    const size_t D = (size_t)m->D, Hm = (size_t)m->Hm;
    if (m->depth == 2)
        return e < Hm * D ? (size_t)h * Hm * D + e : (size_t)H * Hm * D + (size_t)h * D * Hm + (e - Hm * D);
    return (size_t)h * D * D + e;
}

/* every unit's first state: W = its head's w0, S = 0 (load_w0 of the CPU) */
__global__ static void k_mem_w0(float *states, const float *w0, int H, mdims m, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int u = (int)(i / m.Pm);
        const size_t e = i % m.Pm;
        float *st = states + eng_tmem_states_offset(&m, u);
        st[e] = w0[w0_el(&m, H, u % H, e)];
        st[m.Pm + e] = 0;
    }
}

/* a = silu(z), sz = sigmoid(z) (kept for the derivatives) in `sets`
 * matrices of every unit, len elements each, gap floats apart */
__global__ static void k_silu(float *a, float *sz, const float *z, size_t len, int sets, size_t gap, size_t slot,
                              size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const size_t k = i / len, at = k / sets * slot + k % sets * gap + i % len;
        sz[at] = eng_cu_sigmoid(z[at]);
        a[at] = z[at] * sz[at];
    }
}

/* E2 = 2 (E2 - V) for every unit (inner()'s loop): len = n D elements of
 * a slot's E2 and of the unit-major V's chunk rows */
__global__ static void k_e2(float *E2, size_t slot, const float *V, size_t vst, size_t len, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float *e = E2 + unit_el(i, len, slot);
        *e = 2.0f * (*e - V[unit_el(i, len, vst)]);
    }
}

/* depth 2, the backward's d/dz through the reads' and the update's silu:
 * Zb += silu'(Z) TP2 (have_pq), dAq *= silu'(Zq); len = n Hm */
__global__ static void k_bwd_silu(float *ws, size_t slot, mdims m, int have_pq, size_t len, size_t n)
{
    const scratch s = scratch_carve(ws, &m, 0);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const size_t at = unit_el(i, len, slot);
        if (have_pq)
            s.h[H_ZB][at] += eng_cu_dsilu(s.h[H_Z][at], s.h[H_SZ][at]) * s.h[H_TP2][at];
        s.h[H_DAQ][at] *= eng_cu_dsilu(s.h[H_ZQ][at], s.h[H_SZQ][at]);
    }
}

/* ------------------------------------------------------------ a block per unit */

/* sum_i a_i b_i in double, every thread gets it; a fixed tree */
__device__ static double bdot(const float *a, const float *b, size_t n)
{
    __shared__ double part[MEM_THREADS];
    double s = 0;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        s += (double)a[i] * b[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = (int)blockDim.x / 2; w > 0; w >>= 1) { /* blockDim.x: a power of 2 */
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    const double r = part[0];
    __syncthreads();
    return r;
}

/* the same over one warp's lanes, every lane gets it; a fixed tree */
__device__ static double wdot(const float *a, const float *b, int n)
{
    double s = 0;
    for (int i = threadIdx.x % 32; i < n; i += 32)
        s += (double)a[i] * b[i];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
}

/* the chunk's gates and the closed form's coefficients (thread 0), then
 * s->coef = aW, aS, eS for the whole block */
template <typename Ts>
__device__ static void coefficients(scratch *s, const Ts *gates, int ldg, int H, int h, int n, float max_lr)
{
    if (threadIdx.x == 0) {
        for (int t = 0; t < n; t++) {
            const Ts *g = gates + (size_t)t * ldg;
            double s0 = eng_cu_sigmoid(eng__cu_ld(g[h])), s1 = eng_cu_sigmoid(eng__cu_ld(g[H + h])),
                   s2 = eng_cu_sigmoid(eng__cu_ld(g[2 * H + h]));
            s->sg[0][t] = s0;
            s->sg[1][t] = s1;
            s->sg[2][t] = s2;
            s->th[t] = (double)max_lr * s0;
            s->et[t] = s1;
            s->aa[t] = 1.0 - s2;
        }
        double pw = 1.0, ps = 1.0, qs = 1.0;
        s->pw[n - 1] = pw, s->ps[n - 1] = ps, s->qs[n - 1] = qs;
        for (int t = n - 1; t > 0; t--) {
            eng_cu_mem_coef_back(&pw, &ps, &qs, s->aa[t], s->et[t]);
            s->pw[t - 1] = pw, s->ps[t - 1] = ps, s->qs[t - 1] = qs;
        }
        s->coef[0] = s->aa[0] * s->pw[0];
        s->coef[1] = s->et[0] * s->ps[0];
        s->coef[2] = s->et[0] * s->qs[0];
    }
    __syncthreads();
}

/* cw W + cs S, one element of the update's first term */
__device__ static float mix(double cw, float w, double cs, float s)
{
    return (float)(cw * w + cs * s);
}

/* The forward's update of chunk c (update() of the CPU, both calls, up to
 * the products): the gates' coefficients, the next state's first terms
 * Wn = aW W + aS S and Sn = eS S, and the rows the products take, E2 (and
 * depth 2's Dl = silu'(Z) G) scaled by theta ps and by theta qs. */
template <typename Ts>
__global__ static void __launch_bounds__(MEM_THREADS)
    k_fwd_update(float *ws, size_t slot, mdims m, float *states, int c, const Ts *gates, int ldg, int T, int H, int n,
                 float max_lr)
{
    const int u = blockIdx.x, D = m.D, Hm = m.Hm;
    scratch s = scratch_carve(ws + (size_t)u * slot, &m, 0);
    coefficients(&s, gates + ((size_t)u / H * T + (size_t)c * m.b) * ldg, ldg, H, u % H, n, max_lr);
    const double aW = s.coef[0], aS = s.coef[1], eS = s.coef[2];
    float *W = states + eng_tmem_states_offset(&m, u) + (size_t)c * 2 * m.Pm, *S = W + m.Pm;
    float *Wn = W + 2 * m.Pm, *Sn = Wn + m.Pm;
    for (size_t i = threadIdx.x; i < m.Pm; i += blockDim.x) {
        Wn[i] = mix(aW, W[i], aS, S[i]);
        Sn[i] = mix(0.0, W[i], eS, S[i]);
    }
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
        const int t = i / D;
        s.dd[D_TG][i] = s.dd[D_E2][i] * (float)(s.th[t] * s.ps[t]);
        s.dd[D_TM][i] = s.dd[D_E2][i] * (float)(s.th[t] * s.qs[t]);
    }
    if (m.depth == 2)
        for (int i = threadIdx.x; i < n * Hm; i += blockDim.x) {
            const int t = i / Hm;
            const float dl = eng_cu_dsilu(s.h[H_Z][i], s.h[H_SZ][i]) * s.h[H_G][i];
            s.h[H_TG][i] = dl * (float)(s.th[t] * s.ps[t]);
            s.h[H_TM][i] = dl * (float)(s.th[t] * s.qs[t]);
        }
}

/* The backward of a chunk begins: with P, Q (have_pq) the gates'
 * coefficients and depth 2's Dl = silu'(Z) G; dL/dW starts as aW P (zero
 * without P). */
template <typename Ts>
__global__ static void __launch_bounds__(MEM_THREADS)
    k_bwd_begin(float *ws, size_t slot, mdims m, int flip, int have_pq, const Ts *gates, int ldg, int T, int H, int t0,
                int n, float max_lr)
{
    const int u = blockIdx.x;
    scratch s = scratch_carve(ws + (size_t)u * slot, &m, flip);
    if (have_pq) {
        coefficients(&s, gates + ((size_t)u / H * T + t0) * ldg, ldg, H, u % H, n, max_lr);
        if (m.depth == 2)
            for (int i = threadIdx.x; i < n * m.Hm; i += blockDim.x)
                s.h[H_DL][i] = eng_cu_dsilu(s.h[H_Z][i], s.h[H_SZ][i]) * s.h[H_G][i];
    }
    const double aW = have_pq ? s.coef[0] : 0.0;
    for (size_t i = threadIdx.x; i < m.Pm; i += blockDim.x)
        s.Pn[i] = have_pq ? (float)(aW * s.P[i]) : 0.0f;
}

/* The gates through the scalar recursions of <P, S_t>, <Q, S_t>, <P, W_t>
 * (thread 0; sP, sQ, wP: their values at the chunk start; pg, qg: <P,
 * G_t>, <Q, G_t>), and the update's coefficients on G_t, c1 = -theta ps,
 * c2 = -theta qs. */
__device__ static void gate_adjoints(const scratch *s, int n, double sP, double sQ, double wP)
{
    for (int t = 0; t < n; t++) {
        eng_cu_mem_gate_adj(s->ps[t], s->qs[t], s->pw[t], s->th[t], s->et[t], s->aa[t], s->pg[t], s->qg[t], &sP,
                            &sQ, &wP, &s->dth[t], &s->det[t], &s->da[t]);
        s->c1[t] = -s->th[t] * s->ps[t];
        s->c2[t] = -s->th[t] * s->qs[t];
    }
}

/* the gates' pre-activation gradients (=) from the adjoints of theta =
 * max_lr s0, eta = s1, a = 1 - s2 */
template <typename Ts>
__device__ static void gates_bwd(const scratch *s, Ts *dgates, int lddg, int H, int h, int n, float max_lr)
{
    for (int t = threadIdx.x; t < n; t += blockDim.x) {
        Ts *dg = dgates + (size_t)t * lddg;
        const double s0 = s->sg[0][t], s1 = s->sg[1][t], s2 = s->sg[2][t];
        dg[h] = eng__cu_st<Ts>((float)(s->dth[t] * max_lr * s0 * (1 - s0)));
        dg[H + h] = eng__cu_st<Ts>((float)(s->det[t] * s1 * (1 - s1)));
        dg[2 * H + h] = eng__cu_st<Ts>((float)(-s->da[t] * s2 * (1 - s2)));
    }
}

/* The backward through the update of chunk c, with P, Q, between its
 * products (update_bwd_deep/linear of the CPU): the tokens' <P, G_t> and
 * <Q, G_t> (row dots, a warp per token), the gates' adjoints and
 * gradients, then the rows the next products take:
 *   Pb's term 2 (c1 RP + c2 RQ) (depth 2: r_t = C2_t a_t, doubled, the
 *   product that adds W2 gs is scaled by 2 to match; depth 1: Pb),
 *   UP = c1 UP + c2 UQ (dk's direct term),
 *   depth 2: s_t = C1_t k_t, Zb = silu''(z) g s, gs = silu'(z) s in SP1,
 *   TP2 = c1 TP2 + c2 TQ2 (d/da, direct). */
template <typename Ts>
__global__ static void __launch_bounds__(MEM_THREADS)
    k_bwd_gates(float *ws, size_t slot, mdims m, int flip, const float *states, int c, Ts *dgates, int lddg, int T,
                int H, int n, float max_lr)
{
    const int u = blockIdx.x, D = m.D, Hm = m.Hm;
    scratch s = scratch_carve(ws + (size_t)u * slot, &m, flip);
    const float *W = states + eng_tmem_states_offset(&m, u) + (size_t)c * 2 * m.Pm, *S = W + m.Pm;
    const float *E2 = s.dd[D_E2], *Dl = s.h[H_DL];
    for (int t = threadIdx.x / 32; t < n; t += MEM_WARPS) {
        double pg = wdot(E2 + (size_t)t * D, s.dd[D_RP2] + (size_t)t * D, D);
        double qg = wdot(E2 + (size_t)t * D, s.dd[D_RQ2] + (size_t)t * D, D);
        if (m.depth == 2) {
            pg += wdot(Dl + (size_t)t * Hm, s.h[H_SP1] + (size_t)t * Hm, Hm);
            qg += wdot(Dl + (size_t)t * Hm, s.h[H_SQ1] + (size_t)t * Hm, Hm);
        }
        if (threadIdx.x % 32 == 0)
            s.pg[t] = pg, s.qg[t] = qg;
    }
    /* bdot's barriers order those stores before thread 0's reads */
    const double sP = bdot(s.P, S, m.Pm), sQ = bdot(s.Q, S, m.Pm), wP = bdot(s.P, W, m.Pm);
    if (threadIdx.x == 0)
        gate_adjoints(&s, n, sP, sQ, wP);
    __syncthreads();
    gates_bwd(&s, dgates + ((size_t)u / H * T + (size_t)c * m.b) * lddg, lddg, H, u % H, n, max_lr);
    float *RP = s.dd[D_RP2], *UP = s.dd[D_UP1];
    const float *RQ = s.dd[D_RQ2], *UQ = s.dd[D_UQ1];
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
        const float a1 = (float)s.c1[i / D], a2 = (float)s.c2[i / D];
        RP[i] = 2.0f * (a1 * RP[i] + a2 * RQ[i]);
        UP[i] = a1 * UP[i] + a2 * UQ[i];
    }
    if (m.depth == 2)
        for (int i = threadIdx.x; i < n * Hm; i += blockDim.x) {
            const float a1 = (float)s.c1[i / Hm], a2 = (float)s.c2[i / Hm];
            const float z = s.h[H_Z][i], sz = s.h[H_SZ][i];
            const float sv = a1 * s.h[H_SP1][i] + a2 * s.h[H_SQ1][i];
            s.h[H_ZB][i] = eng_cu_d2silu(z, sz) * s.h[H_G][i] * sv;
            s.h[H_SP1][i] = eng_cu_dsilu(z, sz) * sv;
            s.h[H_TP2][i] = a1 * s.h[H_TP2][i] + a2 * s.h[H_TQ2][i];
        }
}

/* The backward of a chunk ends: dq, dk, dv rows (=; without P, Q dk, dv
 * and the gates' gradients are 0), and dL/dS at the chunk start,
 * Q = aS P + eS Q (0 without P, Q). */
template <typename Ts>
__global__ static void __launch_bounds__(MEM_THREADS)
    k_bwd_end(float *ws, size_t slot, mdims m, int flip, int have_pq, Ts *dq, Ts *dk, Ts *dv, int ldd, Ts *dgates,
              int lddg, int T, int H, int t0, int n)
{
    const int u = blockIdx.x, D = m.D, h = u % H;
    scratch s = scratch_carve(ws + (size_t)u * slot, &m, flip);
    const size_t r0 = (size_t)u / H * T + t0;
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
        const size_t at = (r0 + i / D) * ldd + (size_t)h * D + i % D;
        dq[at] = eng__cu_st<Ts>(s.dd[D_DQ][i]);
        dk[at] = eng__cu_st<Ts>(have_pq ? s.dd[D_UP1][i] : 0.0f);
        dv[at] = eng__cu_st<Ts>(have_pq ? -s.dd[D_RP2][i] : 0.0f);
    }
    if (!have_pq)
        for (int t = threadIdx.x; t < n; t += blockDim.x) {
            Ts *dg = dgates + (r0 + t) * lddg;
            dg[h] = dg[H + h] = dg[2 * H + h] = eng__cu_st<Ts>(0.0f);
        }
    const double aS = have_pq ? s.coef[1] : 0.0, eS = have_pq ? s.coef[2] : 0.0;
    for (size_t i = threadIdx.x; i < m.Pm; i += blockDim.x)
        s.Q[i] = have_pq ? mix(aS, s.P[i], eS, s.Q[i]) : 0.0f;
}

/* dw0 += every unit's P (its gradient of the initial weights), sequences
 * in order; a thread per element of one head's state */
__global__ static void k_mem_dw0(float *dw0, const float *P, size_t slot, int B, int H, mdims m)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)H * m.Pm)
        return;
    const int h = (int)(i / m.Pm);
    const size_t e = i % m.Pm;
    float acc = 0;
    for (int b = 0; b < B; b++)
        acc += P[((size_t)b * H + h) * slot + e];
    dw0[w0_el(&m, H, h, e)] += acc;
}

/* ------------------------------------------------------------ the host's steps */

/* What the steps of one call share: the sizes, the units' scratch (unit
 * 0's; unit u's is u slots further) and their unit-major copies. */
typedef struct run {
    eng__cu *c;
    mdims m;
    int B, T, H, U; /* U = B H units */
    size_t slot;
    float *ws;
    int flip;  /* the backward's P and Pn swapped */
    scratch s; /* unit 0's, as flip has it */
    float *qu, *ku, *vu, *xu; /* q, k, v and y or dy: unit u's token t at (u T + t) D */
    float *states;
} run;

/* one operand of a chunk's product: unit 0's matrix, its row stride, the
 * stride between units */
typedef struct mat {
    const float *p;
    int ld;
    long long st;
} mat;

/* a matrix of the units' scratch */
static mat sm(const run *r, const float *p, int ld)
{
    const mat x = {p, ld, (long long)r->slot};
    return x;
}

/* rows t0.. of a unit-major copy */
static mat um(const run *r, const float *p, int t0)
{
    const mat x = {p + (size_t)t0 * r->m.D, r->m.D, (long long)r->T * r->m.D};
    return x;
}

/* the state at chunk c's start, at off floats into it (W1 or W 0, W2 Hm D, S Pm) */
static mat stm(const run *r, int c, size_t off, int ld)
{
    const mat x = {r->states + (size_t)c * 2 * r->m.Pm + off, ld, (long long)eng_tmem_states_offset(&r->m, 1)};
    return x;
}

/* C (M, N) = alpha op(A) op(B) + beta C, row major as the CPU's BLAS, for
 * every unit at once (beta 0: C not read) */
static void mm(const run *r, int ta, int tb, int M, int N, int K, float alpha, mat A, mat B, float beta, mat C)
{
    eng__cu_matmul_batched(r->c, ta, tb, M, N, K, alpha, A.p, A.ld, A.st, B.p, B.ld, B.st, beta, (float *)C.p, C.ld,
                           C.st, r->U, eng_mm_f32());
}

/* an element-wise kernel's launch over n elements */
#define MEM_EACH(r, k, n, what, ...)                                                                              \
    do {                                                                                                      \
        ENG__CU_LAUNCH(k, eng__cu_grid(n), ENG__CU_THREADS, 0, (r)->c->stream, __VA_ARGS__, (size_t)(n));     \
        ENG__CU_LAUNCHED((r)->c, what);                                                                       \
    } while (0)
/* a block per unit */
#define MEM_UNITS(r, k, what, ...)                                                                               \
    do {                                                                                                      \
        ENG__CU_LAUNCH(k, (unsigned)(r)->U, MEM_THREADS, 0, (r)->c->stream, __VA_ARGS__);                      \
        ENG__CU_LAUNCHED((r)->c, what);                                                                       \
    } while (0)

static run run_of(eng__cu *c, const mdims *m, int B, int T, int H, float *ws, float *states)
{
    run r;
    r.c = c, r.m = *m, r.B = B, r.T = T, r.H = H, r.U = B * H;
    r.slot = slot_floats(m);
    r.ws = ws;
    r.flip = 0;
    r.s = scratch_carve(ws, m, 0);
    const size_t n = (size_t)r.U * T * m->D;
    r.qu = ws + (size_t)r.U * r.slot, r.ku = r.qu + n, r.vu = r.ku + n, r.xu = r.vu + n;
    r.states = states;
    return r;
}

/* an activation (B T, ld) into its unit-major copy */
template <typename Ts> static void units_in(const run *r, float *dst, const eng_act *src, int ld)
{
    MEM_EACH(r, k_units_in<Ts>, (size_t)r->U * r->T * r->m.D, "titans_mem (unit copy)", dst, (const Ts *)src, ld,
             r->T, r->H, r->m.D);
}

/* depth 2's hidden layers of chunk c at its state: Zq = Q W1^T (the
 * reads'), Z = K W1^T (the update's, when `both`), and their silu */
static void hidden(const run *r, int c, int t0, int n, int both)
{
    const int D = r->m.D, Hm = r->m.Hm;
    mm(r, 0, 1, n, Hm, D, 1.0f, um(r, r->qu, t0), stm(r, c, 0, D), 0.0f, sm(r, r->s.h[H_ZQ], Hm));
    if (both)
        mm(r, 0, 1, n, Hm, D, 1.0f, um(r, r->ku, t0), stm(r, c, 0, D), 0.0f, sm(r, r->s.h[H_Z], Hm));
    const int k = both ? H_Z : H_ZQ, sets = both ? 2 : 1;
    MEM_EACH(r, k_silu, (size_t)r->U * sets * n * Hm, "titans_mem (silu)", r->s.h[k + H_A - H_Z],
             r->s.h[k + H_SZ - H_Z], r->s.h[k], (size_t)n * Hm, sets, r->m.nH, r->slot);
}

/* Reads of chunk c: Y = M_W(Q), rows of the unit-major y; depth 2 makes
 * the hidden layers first (Z too when the chunk has an update) */
static void reads(const run *r, int c, int t0, int n, int both)
{
    const int D = r->m.D, Hm = r->m.Hm;
    if (r->m.depth == 2) {
        hidden(r, c, t0, n, both);
        mm(r, 0, 1, n, D, Hm, 1.0f, sm(r, r->s.h[H_AQ], Hm), stm(r, c, (size_t)Hm * D, Hm), 0.0f, um(r, r->xu, t0));
    } else {
        mm(r, 0, 1, n, D, D, 1.0f, um(r, r->qu, t0), stm(r, c, 0, D), 0.0f, um(r, r->xu, t0));
    }
}

/* Inner-loss quantities of chunk c at its state W (inner() of the CPU),
 * Z and A already made for depth 2: E2 = 2 (A W2^T - V) (depth 1: 2 (K
 * W^T - V)), and depth 2's G = E2 W2 (Dl = silu'(Z) G: the next kernel) */
static void inner(const run *r, int c, int t0, int n)
{
    const int D = r->m.D, Hm = r->m.Hm;
    const scratch *s = &r->s;
    if (r->m.depth == 2)
        mm(r, 0, 1, n, D, Hm, 1.0f, sm(r, s->h[H_A], Hm), stm(r, c, (size_t)Hm * D, Hm), 0.0f, sm(r, s->dd[D_E2], D));
    else
        mm(r, 0, 1, n, D, D, 1.0f, um(r, r->ku, t0), stm(r, c, 0, D), 0.0f, sm(r, s->dd[D_E2], D));
    MEM_EACH(r, k_e2, (size_t)r->U * n * D, "titans_mem (E2)", s->dd[D_E2], r->slot, r->vu + (size_t)t0 * D,
             (size_t)r->T * D, (size_t)n * D);
    if (r->m.depth == 2)
        mm(r, 0, 0, n, Hm, D, 1.0f, sm(r, s->dd[D_E2], D), stm(r, c, (size_t)Hm * D, Hm), 0.0f, sm(r, s->h[H_G], Hm));
}

/* The update's products: Wout -= sum_t c_t G_t with the rows scaled by
 * c_t (tmpH, tmpD), G1_t = Dl_t k_t^T (Hm, D), G2_t = E2_t a_t^T (D, Hm);
 * depth 1: G_t = E2_t k_t^T (D, D); out: the state c + 1 at off (W or S). */
static void update(const run *r, int c, int t0, int n, size_t off, const float *tmpH, const float *tmpD)
{
    const int D = r->m.D, Hm = r->m.Hm;
    if (r->m.depth == 2) {
        mm(r, 1, 0, Hm, D, n, -1.0f, sm(r, tmpH, Hm), um(r, r->ku, t0), 1.0f, stm(r, c + 1, off, D));
        mm(r, 1, 0, D, Hm, n, -1.0f, sm(r, tmpD, D), sm(r, r->s.h[H_A], Hm), 1.0f,
           stm(r, c + 1, off + (size_t)Hm * D, Hm));
    } else {
        mm(r, 1, 0, D, D, n, -1.0f, sm(r, tmpD, D), um(r, r->ku, t0), 1.0f, stm(r, c + 1, off, D));
    }
}

template <typename Ts>
static void mem_fwd(eng__cu *c, eng_act *y, int ldy, float *states, const eng_act *q, const eng_act *k,
                    const eng_act *v, int ldqkv, const eng_act *gates, int ldg, const float *w0, int B, int T, int H,
                    const mdims *m, float max_lr, float *ws)
{
    const run r = run_of(c, m, B, T, H, ws, states);
    units_in<Ts>(&r, r.qu, q, ldqkv);
    units_in<Ts>(&r, r.ku, k, ldqkv);
    units_in<Ts>(&r, r.vu, v, ldqkv);
    MEM_EACH(&r, k_mem_w0, (size_t)r.U * m->Pm, "titans_mem (w0)", states, w0, H, *m);
    for (int ci = 0; ci < m->nc && !c->status; ci++) {
        const int t0 = ci * m->b, n = t0 + m->b < T ? m->b : T - t0;
        const int last = ci == m->nc - 1; /* the final state is never read */
        reads(&r, ci, t0, n, !last);
        if (last)
            break;
        inner(&r, ci, t0, n);
        MEM_UNITS(&r, k_fwd_update<Ts>, "titans_mem_fwd (update)", ws, r.slot, *m, states, ci, (const Ts *)gates, ldg,
                  T, H, n, max_lr);
        update(&r, ci, t0, n, 0, r.s.h[H_TG], r.s.dd[D_TG]);
        update(&r, ci, t0, n, m->Pm, r.s.h[H_TM], r.s.dd[D_TM]);
    }
    if (c->status)
        return;
    MEM_EACH(&r, k_units_out<Ts>, (size_t)r.U * T * m->D, "titans_mem_fwd (y)", (Ts *)y, ldy, r.xu, T, H, m->D);
}

/* the backward's gates and outputs, as the op is given them */
typedef struct bwd_io {
    eng_act *dq, *dk, *dv, *dgates;
    int ldd, lddg;
    const eng_act *gates;
    int ldg;
    float max_lr;
} bwd_io;

template <typename Ts> static void gates_adjoints(const run *r, const bwd_io *io, int c, int n)
{
    MEM_UNITS(r, k_bwd_gates<Ts>, "titans_mem_bwd (gates)", r->ws, r->slot, r->m, r->flip, r->states, c,
              (Ts *)io->dgates, io->lddg, r->T, r->H, n, io->max_lr);
}

/* Backward through the update of a depth-2 memory, given P, Q, up to its
 * silu'(z) term (reads_bwd's kernel) and its products through z = W1 k
 * (reads_bwd's, after it): the gates' adjoints and gradients, the
 * cotangents of the inner gradients added to Pn (dL/dW), dk and dv's rows. */
template <typename Ts> static void update_bwd_deep(const run *r, const bwd_io *io, int c, int t0, int n)
{
    const int D = r->m.D, Hm = r->m.Hm;
    const size_t HD = (size_t)Hm * D;
    const scratch *s = &r->s;
    const mat P1 = sm(r, s->P, D), P2 = sm(r, s->P + HD, Hm), Q1 = sm(r, s->Q, D), Q2 = sm(r, s->Q + HD, Hm);
    const mat Pn2 = sm(r, s->Pn + HD, Hm), W2 = stm(r, c, HD, Hm), K = um(r, r->ku, t0);
    const mat A = sm(r, s->h[H_A], Hm), E2 = sm(r, s->dd[D_E2], D), Dl = sm(r, s->h[H_DL], Hm);
    const mat RP2 = sm(r, s->dd[D_RP2], D), GS = sm(r, s->h[H_SP1], Hm), TP2 = sm(r, s->h[H_TP2], Hm);
    /* P2 a_t, Q2 a_t, P1 k_t, Q1 k_t */
    mm(r, 0, 1, n, D, Hm, 1.0f, A, P2, 0.0f, RP2);
    mm(r, 0, 1, n, D, Hm, 1.0f, A, Q2, 0.0f, sm(r, s->dd[D_RQ2], D));
    mm(r, 0, 1, n, Hm, D, 1.0f, K, P1, 0.0f, GS);
    mm(r, 0, 1, n, Hm, D, 1.0f, K, Q1, 0.0f, sm(r, s->h[H_SQ1], Hm));
    /* E2 P2, E2 Q2 (rows: P2^T e2_t), Dl P1, Dl Q1 (rows: P1^T dl_t) */
    mm(r, 0, 0, n, Hm, D, 1.0f, E2, P2, 0.0f, TP2);
    mm(r, 0, 0, n, Hm, D, 1.0f, E2, Q2, 0.0f, sm(r, s->h[H_TQ2], Hm));
    mm(r, 0, 0, n, D, Hm, 1.0f, Dl, P1, 0.0f, sm(r, s->dd[D_UP1], D));
    mm(r, 0, 0, n, D, Hm, 1.0f, Dl, Q1, 0.0f, sm(r, s->dd[D_UQ1], D));
    /* the gates; RP2 = 2 r_t, UP1, Zb, gs (in SP1), TP2 */
    gates_adjoints<Ts>(r, io, c, n);
    /* Pb = d/dp = 2 d/dE2 = 2 (r + W2 gs) */
    mm(r, 0, 1, n, D, Hm, 2.0f, GS, W2, 1.0f, RP2);
    /* W2 from g = W2^T E2, and from p = W2 a */
    mm(r, 1, 0, D, Hm, n, 1.0f, E2, GS, 1.0f, Pn2);
    mm(r, 1, 0, D, Hm, n, 1.0f, RP2, A, 1.0f, Pn2);
    /* d/da = direct + W2^T Pb (silu'(z) d/da joins Zb in reads_bwd's kernel) */
    mm(r, 0, 0, n, Hm, D, 1.0f, RP2, W2, 1.0f, TP2);
}

/* The same for a depth-1 (linear) memory, whole. */
template <typename Ts> static void update_bwd_linear(const run *r, const bwd_io *io, int c, int t0, int n)
{
    const int D = r->m.D;
    const scratch *s = &r->s;
    const mat P = sm(r, s->P, D), Q = sm(r, s->Q, D), Pn = sm(r, s->Pn, D), W = stm(r, c, 0, D), K = um(r, r->ku, t0);
    const mat E2 = sm(r, s->dd[D_E2], D), RP = sm(r, s->dd[D_RP2], D), UP = sm(r, s->dd[D_UP1], D);
    mm(r, 0, 1, n, D, D, 1.0f, K, P, 0.0f, RP);
    mm(r, 0, 1, n, D, D, 1.0f, K, Q, 0.0f, sm(r, s->dd[D_RQ2], D));
    mm(r, 0, 0, n, D, D, 1.0f, E2, P, 0.0f, UP);
    mm(r, 0, 0, n, D, D, 1.0f, E2, Q, 0.0f, sm(r, s->dd[D_UQ1], D));
    /* the gates; Pb = 2 C_t k_t (in RP), UP = C_t^T e2_t */
    gates_adjoints<Ts>(r, io, c, n);
    mm(r, 1, 0, D, D, n, 1.0f, RP, K, 1.0f, Pn);
    mm(r, 0, 0, n, D, D, 1.0f, RP, W, 1.0f, UP);
}

/* Backward of the reads y = M_W(q): dL/dW added to Pn, dq's rows (the
 * chunk's last kernel stores them); depth 2 also ends the update's
 * backward (have_pq): Zb += silu'(z) d/da beside dAq *= silu'(Zq), then
 * z = W1 k's products. */
static void reads_bwd(const run *r, int c, int t0, int n, int have_pq)
{
    const int D = r->m.D, Hm = r->m.Hm;
    const size_t HD = (size_t)Hm * D;
    const scratch *s = &r->s;
    const mat dY = um(r, r->xu, t0), Qc = um(r, r->qu, t0), dQ = sm(r, s->dd[D_DQ], D);
    if (r->m.depth == 2) {
        const mat W1 = stm(r, c, 0, D), Pn1 = sm(r, s->Pn, D), dAq = sm(r, s->h[H_DAQ], Hm);
        mm(r, 1, 0, D, Hm, n, 1.0f, dY, sm(r, s->h[H_AQ], Hm), 1.0f, sm(r, s->Pn + HD, Hm));
        mm(r, 0, 0, n, Hm, D, 1.0f, dY, stm(r, c, HD, Hm), 0.0f, dAq);
        MEM_EACH(r, k_bwd_silu, (size_t)r->U * n * Hm, "titans_mem_bwd (silu')", r->ws, r->slot, r->m, have_pq,
                 (size_t)n * Hm);
        if (have_pq) { /* the update's z = W1 k */
            const mat Zb = sm(r, s->h[H_ZB], Hm);
            mm(r, 1, 0, Hm, D, n, 1.0f, Zb, um(r, r->ku, t0), 1.0f, Pn1);
            mm(r, 0, 0, n, D, Hm, 1.0f, Zb, W1, 1.0f, sm(r, s->dd[D_UP1], D));
        }
        mm(r, 1, 0, Hm, D, n, 1.0f, dAq, Qc, 1.0f, Pn1);
        mm(r, 0, 0, n, D, Hm, 1.0f, dAq, W1, 0.0f, dQ);
    } else {
        mm(r, 1, 0, D, D, n, 1.0f, dY, Qc, 1.0f, sm(r, s->Pn, D));
        mm(r, 0, 0, n, D, D, 1.0f, dY, stm(r, c, 0, D), 0.0f, dQ);
    }
}

/* Backward of chunk c.  In: P, Q = dL/d(state after the chunk) (have_pq =
 * 0: zero).  Out: Pn, Q = dL/d(state at the chunk start) (the caller
 * swaps P and Pn); dq, dk, dv rows (=) and the gates' gradients (=).  The
 * chunk is first recomputed from its start state, then taken back in
 * reverse: the update (its inner gradients and gates), then the reads. */
template <typename Ts> static void chunk_bwd(const run *r, const bwd_io *io, int c, int have_pq)
{
    const int t0 = c * r->m.b, n = t0 + r->m.b < r->T ? r->m.b : r->T - t0;
    if (r->m.depth == 2)
        hidden(r, c, t0, n, have_pq);
    if (have_pq)
        inner(r, c, t0, n);
    MEM_UNITS(r, k_bwd_begin<Ts>, "titans_mem_bwd (begin)", r->ws, r->slot, r->m, r->flip, have_pq,
              (const Ts *)io->gates, io->ldg, r->T, r->H, t0, n, io->max_lr);
    if (have_pq && r->m.depth == 2)
        update_bwd_deep<Ts>(r, io, c, t0, n);
    else if (have_pq)
        update_bwd_linear<Ts>(r, io, c, t0, n);
    reads_bwd(r, c, t0, n, have_pq);
    MEM_UNITS(r, k_bwd_end<Ts>, "titans_mem_bwd (end)", r->ws, r->slot, r->m, r->flip, have_pq, (Ts *)io->dq,
              (Ts *)io->dk, (Ts *)io->dv, io->ldd, (Ts *)io->dgates, io->lddg, r->T, r->H, t0, n);
}

template <typename Ts>
static void mem_bwd(eng__cu *c, const bwd_io *io, float *dw0, const eng_act *dy, int ldy, const float *states,
                    const eng_act *q, const eng_act *k, const eng_act *v, int ldqkv, int B, int T, int H,
                    const mdims *m, float *ws)
{
    run r = run_of(c, m, B, T, H, ws, (float *)states);
    units_in<Ts>(&r, r.qu, q, ldqkv);
    units_in<Ts>(&r, r.ku, k, ldqkv);
    units_in<Ts>(&r, r.vu, v, ldqkv);
    units_in<Ts>(&r, r.xu, dy, ldy);
    for (int ci = m->nc - 1; ci >= 0 && !c->status; ci--) {
        chunk_bwd<Ts>(&r, io, ci, ci < m->nc - 1);
        r.flip = !r.flip; /* P <-> Pn */
        r.s = scratch_carve(ws, m, r.flip);
    }
    if (c->status)
        return;
    const size_t n = (size_t)H * m->Pm;
    ENG__CU_LAUNCH(k_mem_dw0, (unsigned)((n + ENG__CU_THREADS - 1) / ENG__CU_THREADS), ENG__CU_THREADS, 0, c->stream,
                   dw0, r.s.P, r.slot, B, H, *m);
    ENG__CU_LAUNCHED(c, "titans_mem_bwd (dw0)");
}

size_t eng__cu_titans_mem_workspace(void *ctx, int B, int T, int H, int hd, int hm, int depth, int chunk)
{
    return eng_cu_mem_ws_floats(B, T, H, hd, hm, depth, chunk);
}

static int mem_shape_ok(eng__cu *c, int hd, int hm, int depth, int chunk)
{
    if (hd <= 0 || chunk <= 0 || chunk > 512 || (depth != 1 && depth != 2) || (depth == 2 && hm <= 0))
        return !eng__cu_fail(c, TLM_ECONFIG, "titans_mem", "chunk not in 1..512, depth not 1 or 2, or a bad size");
    return 1;
}

void eng__cu_titans_mem_fwd(void *ctx, eng_act *y, int ldy, float *states, const eng_act *q, const eng_act *k,
                            const eng_act *v, int ldqkv, const eng_act *gates, int ldg, const float *w0, int B, int T,
                            int H, int hd, int hm, int depth, int chunk, float max_lr, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !mem_shape_ok(c, hd, hm, depth, chunk) || B * T * H <= 0)
        return;
    const mdims m = dims(hd, hm, depth, chunk, T);
    ENG__CU_ACT(c, mem_fwd, c, y, ldy, states, q, k, v, ldqkv, gates, ldg, w0, B, T, H, &m, max_lr, ws);
}

void eng__cu_titans_mem_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, int ldd, eng_act *dgates, int lddg,
                            float *dw0, const eng_act *dy, int ldy, const float *states, const eng_act *q,
                            const eng_act *k, const eng_act *v, int ldqkv, const eng_act *gates, int ldg, int B, int T,
                            int H, int hd, int hm, int depth, int chunk, float max_lr, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !mem_shape_ok(c, hd, hm, depth, chunk) || B * T * H <= 0)
        return;
    const mdims m = dims(hd, hm, depth, chunk, T);
    const bwd_io io = {dq, dk, dv, dgates, ldd, lddg, gates, ldg, max_lr};
    ENG__CU_ACT(c, mem_bwd, c, &io, dw0, dy, ldy, states, q, k, v, ldqkv, B, T, H, &m, ws);
}

ENG__CU_END
