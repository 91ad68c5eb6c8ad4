/* titans_mem.cu: the Titans neural memory on device pointers, forward and
 * backward through its chunked online training (the second-order terms
 * included).  Contract: engine/model/ops.h; the derivation and the CPU
 * reference: docs/titans.md, engine/cpu/titans_mem.c, whose structure this
 * file follows step for step so the two can be read side by side.
 *
 * Correctness first: one thread block per (sequence, head) walks its
 * chunks in order, as the CPU's OpenMP thread does; the chunk's products
 * are block-wide loops (bmm below: a thread per output element, K summed
 * in order), the scalar recursions over the chunk's tokens run on thread
 * 0, and a step ends at a barrier when a later step reads across threads
 * what it wrote (a product, a dot, a row-wise step: always).  The steps
 * that need none say why: the emulated build's racecheck reports a
 * missing one, and bench/cuda_mutants.sh checks that every barrier left
 * is needed.  The per-chunk products are small
 * (chunk x head x hidden); batching them across units through cuBLASLt is
 * the measured replacement (docs/engine.md, "CUDA").  The initial
 * weights' gradient of every unit goes to its own workspace slot, added
 * in sequence order by a second kernel (no atomics: runs repeat). */
#include <math.h>

#include "engine/cuda/internal.h"
#include "engine/cuda/plan.h"

ENG__CU_BEGIN

#define MEM_THREADS 256

/* the unit's sizes and its scratch's shape, shared with the CPU */
#include "engine/model/titans_mem.h"
typedef eng_tmem_dims mdims;

static mdims dims(int hd, int hm, int depth, int chunk, int T)
{
    return eng_tmem_dims_of(hd, hm, depth, chunk, T);
}

/* the CPU's scratch, plus the per-token arrays it keeps on its stack
 * (plan.h sizes it) */
enum { N_H = ENG_TMEM_N_H, N_D = ENG_TMEM_N_D, N_SCAL = 19 };

static size_t slot_floats(const mdims *m)
{
    return eng_cu_mem_slot_floats(m->D, m->Hm, m->depth, m->b, m->b);
}

typedef struct scratch {
    double *th, *et, *aa, *ps, *pw, *qs, *sg[3];
    double *gam, *mu, *pg, *qg, *c1, *c2, *dth, *det, *da;
    double *red; /* thread 0's result of a block dot */
    float *h[N_H];
    float *dd[N_D];
    float *P, *Q, *Pn;
} scratch;

__device__ static void scratch_carve(scratch *s, float *slot, const mdims *m)
{
    double *dp = (double *)slot;
    const size_t b = (size_t)m->b;
    s->th = dp, s->et = dp + b, s->aa = dp + 2 * b, s->ps = dp + 3 * b, s->pw = dp + 4 * b, s->qs = dp + 5 * b;
    s->sg[0] = dp + 6 * b, s->sg[1] = dp + 7 * b, s->sg[2] = dp + 8 * b;
    s->gam = dp + 9 * b, s->mu = dp + 10 * b, s->pg = dp + 11 * b, s->qg = dp + 12 * b;
    s->c1 = dp + 13 * b, s->c2 = dp + 14 * b, s->dth = dp + 15 * b, s->det = dp + 16 * b, s->da = dp + 17 * b;
    s->red = dp + (size_t)18 * m->b;
    float *f = slot + (size_t)N_SCAL * 2 * m->b;
    for (int i = 0; i < N_H; i++, f += m->nH)
        s->h[i] = f;
    for (int i = 0; i < N_D; i++, f += m->nD)
        s->dd[i] = f;
    s->P = f;
    s->Q = f + m->Pm;
    s->Pn = f + 2 * m->Pm;
}

/* C (M, N) = alpha op(A) op(B) + beta C, row major as the CPU's BLAS
 * (beta 0: C not read); the whole block, then a barrier */
template <typename TA, typename TB, typename TC>
__device__ static void bmm(int ta, int tb, int M, int N, int K, float alpha, const TA *A, int lda, const TB *B, int ldb,
                           float beta, TC *C, int ldc)
{
    for (int i = threadIdx.x; i < M * N; i += blockDim.x) {
        const int r = i / N, col = i % N;
        float acc = 0;
#pragma unroll 1
        for (int kk = 0; kk < K; kk++) {
            const float a = eng__cu_ld(ta ? A[(size_t)kk * lda + r] : A[(size_t)r * lda + kk]);
            const float bv = eng__cu_ld(tb ? B[(size_t)col * ldb + kk] : B[(size_t)kk * ldb + col]);
            acc += a * bv;
        }
        TC *cp = C + (size_t)r * ldc + col;
        *cp = eng__cu_st<TC>(beta == 0.0f ? alpha * acc : alpha * acc + beta * eng__cu_ld(*cp));
    }
    __syncthreads();
}

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

__device__ static void bcopy(float *dst, const float *src, size_t n)
{
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = src[i];
    /* no barrier: its one use ends the kernel (the next kernel reads dst) */
}

__device__ static void bzero(float *dst, size_t n)
{
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = 0;
    /* no barrier: its one use (the first chunk's S) is read by the same threads, or after later barriers */
}

/* rows of a (rows, D) block at stride ld set to 0 */
template <typename Ts> __device__ static void bzero_rows(Ts *dst, int ld, int rows, int D)
{
    for (int i = threadIdx.x; i < rows * D; i += blockDim.x)
        dst[(size_t)(i / D) * ld + i % D] = eng__cu_st<Ts>(0.0f);
    /* no barrier: the rows are outputs nothing in the kernel reads again */
}

__device__ static void silu_rows(float *a, float *sz, const float *z, size_t n)
{
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        sz[i] = eng_cu_sigmoid(z[i]);
        a[i] = z[i] * sz[i];
    }
    __syncthreads();
}

__device__ static void scale_rows(float *dst, const float *src, const double *c, int rows, int cols)
{
    for (int i = threadIdx.x; i < rows * cols; i += blockDim.x)
        dst[i] = src[i] * (float)c[i / cols];
    __syncthreads();
}

/* the chunk's gates and the closed form's coefficients (thread 0) */
template <typename Ts>
__device__ static void coefficients(scratch *s, const Ts *gates, int ldg, int H, int h, int n, float max_lr,
                                    double *aW, double *aS, double *eS)
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
    }
    __syncthreads();
    *aW = s->aa[0] * s->pw[0];
    *aS = s->et[0] * s->ps[0];
    *eS = s->et[0] * s->qs[0];
}

template <typename Ts>
__device__ static void inner(const mdims *m, const float *W, const Ts *K, const Ts *V, int ldkv, int n,
                             float *Z, float *A, float *SZ, float *E2, float *G, float *Dl)
{
    const int D = m->D, Hm = m->Hm;
    if (m->depth == 2) {
        bmm(0, 1, n, Hm, D, 1.0f, K, ldkv, W, D, 0.0f, Z, Hm);
        silu_rows(A, SZ, Z, (size_t)n * Hm);
        bmm(0, 1, n, D, Hm, 1.0f, A, Hm, W + (size_t)Hm * D, Hm, 0.0f, E2, D);
    } else {
        bmm(0, 1, n, D, D, 1.0f, K, ldkv, W, D, 0.0f, E2, D);
    }
    for (int i = threadIdx.x; i < n * D; i += blockDim.x)
        E2[i] = 2.0f * (E2[i] - eng__cu_ld(V[(size_t)(i / D) * ldkv + i % D]));
    __syncthreads();
    if (m->depth == 2) {
        bmm(0, 0, n, Hm, D, 1.0f, E2, D, W + (size_t)Hm * D, Hm, 0.0f, G, Hm);
        for (int i = threadIdx.x; i < n * Hm; i += blockDim.x)
            Dl[i] = eng_cu_dsilu(Z[i], SZ[i]) * G[i];
        /* no barrier: Dl is read after the later steps' barriers */
    }
}

template <typename Ts>
__device__ static void reads(const mdims *m, const float *W, const Ts *Qm, int ldq, int n, Ts *Y, int ldy,
                             float *Zq, float *Aq, float *SZq)
{
    const int D = m->D, Hm = m->Hm;
    if (m->depth == 2) {
        bmm(0, 1, n, Hm, D, 1.0f, Qm, ldq, W, D, 0.0f, Zq, Hm);
        silu_rows(Aq, SZq, Zq, (size_t)n * Hm);
        bmm(0, 1, n, D, Hm, 1.0f, Aq, Hm, W + (size_t)Hm * D, Hm, 0.0f, Y, ldy);
    } else {
        bmm(0, 1, n, D, D, 1.0f, Qm, ldq, W, D, 0.0f, Y, ldy);
    }
}

template <typename Ts>
__device__ static void update(const mdims *m, float *Wout, const float *W, double cw, const float *S, double cs,
                              const double *c, const Ts *K, int ldkv, const float *E2, const float *A,
                              const float *Dl, int n, float *tmpH, float *tmpD)
{
    const int D = m->D, Hm = m->Hm;
    for (size_t i = threadIdx.x; i < m->Pm; i += blockDim.x)
        Wout[i] = (float)(cw * W[i] + cs * S[i]);
    /* no barrier: Wout is read next by bmm, after scale_rows' barrier */
    scale_rows(tmpD, E2, c, n, D);
    if (m->depth == 2) {
        scale_rows(tmpH, Dl, c, n, Hm);
        bmm(1, 0, Hm, D, n, -1.0f, tmpH, Hm, K, ldkv, 1.0f, Wout, D);
        bmm(1, 0, D, Hm, n, -1.0f, tmpD, D, A, Hm, 1.0f, Wout + (size_t)Hm * D, Hm);
    } else {
        bmm(1, 0, D, D, n, -1.0f, tmpD, D, K, ldkv, 1.0f, Wout, D);
    }
}

__device__ static void load_w0(const mdims *m, float *dst, const float *w0, int H, int h)
{
    const size_t D = (size_t)m->D, Hm = (size_t)m->Hm;
    if (m->depth == 2) {
        for (size_t i = threadIdx.x; i < Hm * D; i += blockDim.x) {
            dst[i] = w0[(size_t)h * Hm * D + i];
            dst[Hm * D + i] = w0[(size_t)H * Hm * D + (size_t)h * D * Hm + i];
        }
    } else {
        for (size_t i = threadIdx.x; i < D * D; i += blockDim.x)
            dst[i] = w0[(size_t)h * D * D + i];
    }
    __syncthreads();
}

template <typename Ts>
__global__ static void __launch_bounds__(MEM_THREADS)
    k_mem_fwd(Ts *y, int ldy, float *states, const Ts *q, const Ts *k, const Ts *v, int ldqkv, const Ts *gates, int ldg, const float *w0, int T, int H, mdims m, float max_lr, float *ws,
              size_t slot)
{
    const int bh = blockIdx.x, b = bh / H, h = bh % H, hd = m.D;
    const int nc = (T + m.b - 1) / m.b;
    scratch s;
    scratch_carve(&s, ws + (size_t)bh * slot, &m);
    float *st = states + (size_t)bh * nc * 2 * m.Pm;
    load_w0(&m, st, w0, H, h);
    bzero(st + m.Pm, m.Pm);
    for (int c = 0; c < nc; c++) {
        const int t0 = c * m.b, n = t0 + m.b < T ? m.b : T - t0;
        const size_t r0 = (size_t)b * T + t0;
        const float *W = st + (size_t)c * 2 * m.Pm, *S = W + m.Pm;
        const Ts *Qc = q + r0 * ldqkv + (size_t)h * hd, *Kc = k + r0 * ldqkv + (size_t)h * hd,
                 *Vc = v + r0 * ldqkv + (size_t)h * hd;
        reads(&m, W, Qc, ldqkv, n, y + r0 * ldy + (size_t)h * hd, ldy, s.h[0], s.h[1], s.h[5]);
        if (c == nc - 1)
            break;
        float *Z = s.h[0], *A = s.h[1], *G = s.h[2], *Dl = s.h[3], *E2 = s.dd[0];
        inner(&m, W, Kc, Vc, ldqkv, n, Z, A, s.h[5], E2, G, Dl);
        double aW, aS, eS;
        coefficients(&s, gates + r0 * ldg, ldg, H, h, n, max_lr, &aW, &aS, &eS);
        for (int t = threadIdx.x; t < n; t += blockDim.x) {
            s.gam[t] = s.th[t] * s.ps[t];
            s.mu[t] = s.th[t] * s.qs[t];
        }
        __syncthreads();
        float *Wn = st + (size_t)(c + 1) * 2 * m.Pm, *Sn = Wn + m.Pm;
        update(&m, Wn, W, aW, S, aS, s.gam, Kc, ldqkv, E2, A, Dl, n, s.h[4], s.dd[1]);
        update(&m, Sn, W, 0.0, S, eS, s.mu, Kc, ldqkv, E2, A, Dl, n, s.h[4], s.dd[1]);
    }
}

__device__ static void gate_adjoints(const scratch *s, int n, double sP, double sQ, double wP)
{
    if (threadIdx.x == 0)
        for (int t = 0; t < n; t++) {
            eng_cu_mem_gate_adj(s->ps[t], s->qs[t], s->pw[t], s->th[t], s->et[t], s->aa[t], s->pg[t], s->qg[t], &sP,
                                &sQ, &wP, &s->dth[t], &s->det[t], &s->da[t]);
            s->c1[t] = -s->th[t] * s->ps[t];
            s->c2[t] = -s->th[t] * s->qs[t];
        }
    /* no barrier: its results are read after the products that follow */
}

typedef struct chunk_acts {
    const float *Z, *A, *SZ, *G, *Dl, *E2, *Zq, *Aq, *SZq;
} chunk_acts;

template <typename Ts>
__device__ static void update_bwd_deep(const mdims *m, scratch *s, const chunk_acts *c, const float *W,
                                       const float *S, const Ts *Kc, int ldqkv, int n, Ts *dk, Ts *dv, int ldd)
{
    const int D = m->D, Hm = m->Hm;
    const size_t Pm = m->Pm;
    const float *Z = c->Z, *A = c->A, *G = c->G, *Dl = c->Dl, *SZ = c->SZ, *E2 = c->E2;
    const float *P = s->P, *Q = s->Q;
    const float *W1 = W, *W2 = W + (size_t)Hm * D;
    const float *P1 = P, *P2 = P + (size_t)Hm * D, *Q1 = Q, *Q2 = Q + (size_t)Hm * D;
    float *Pn1 = s->Pn, *Pn2 = s->Pn + (size_t)Hm * D;
    float *RP2 = s->dd[1], *RQ2 = s->dd[2], *UP1 = s->dd[3], *UQ1 = s->dd[4], *Pb = s->dd[5];
    float *SP1 = s->h[6], *SQ1 = s->h[7], *TP2 = s->h[8], *TQ2 = s->h[9], *Zb = s->h[10];
    bmm(0, 1, n, D, Hm, 1.0f, A, Hm, P2, Hm, 0.0f, RP2, D);
    bmm(0, 1, n, D, Hm, 1.0f, A, Hm, Q2, Hm, 0.0f, RQ2, D);
    bmm(0, 1, n, Hm, D, 1.0f, Kc, ldqkv, P1, D, 0.0f, SP1, Hm);
    bmm(0, 1, n, Hm, D, 1.0f, Kc, ldqkv, Q1, D, 0.0f, SQ1, Hm);
    for (int t = 0; t < n; t++) {
        const double pg = bdot(E2 + (size_t)t * D, RP2 + (size_t)t * D, D) +
                          bdot(Dl + (size_t)t * Hm, SP1 + (size_t)t * Hm, Hm);
        const double qg = bdot(E2 + (size_t)t * D, RQ2 + (size_t)t * D, D) +
                          bdot(Dl + (size_t)t * Hm, SQ1 + (size_t)t * Hm, Hm);
        if (threadIdx.x == 0)
            s->pg[t] = pg, s->qg[t] = qg;
    }
    /* no barrier: thread 0 wrote pg, qg and thread 0 reads them (gate_adjoints) */
    const double sP = bdot(P, S, Pm), sQ = bdot(Q, S, Pm), wP = bdot(P, W, Pm);
    gate_adjoints(s, n, sP, sQ, wP);
    bmm(0, 0, n, Hm, D, 1.0f, E2, D, P2, Hm, 0.0f, TP2, Hm);
    bmm(0, 0, n, Hm, D, 1.0f, E2, D, Q2, Hm, 0.0f, TQ2, Hm);
    bmm(0, 0, n, D, Hm, 1.0f, Dl, Hm, P1, D, 0.0f, UP1, D);
    bmm(0, 0, n, D, Hm, 1.0f, Dl, Hm, Q1, D, 0.0f, UQ1, D);
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
        const float a1 = (float)s->c1[i / D], a2 = (float)s->c2[i / D];
        RP2[i] = a1 * RP2[i] + a2 * RQ2[i];
        UP1[i] = a1 * UP1[i] + a2 * UQ1[i];
    }
    for (int i = threadIdx.x; i < n * Hm; i += blockDim.x) {
        const float a1 = (float)s->c1[i / Hm], a2 = (float)s->c2[i / Hm];
        const float sv = a1 * SP1[i] + a2 * SQ1[i];
        Zb[i] = eng_cu_d2silu(Z[i], SZ[i]) * G[i] * sv;
        SP1[i] = eng_cu_dsilu(Z[i], SZ[i]) * sv;
        TP2[i] = a1 * TP2[i] + a2 * TQ2[i];
    }
    __syncthreads();
    float *GS = SP1;
    bmm(0, 1, n, D, Hm, 1.0f, GS, Hm, W2, Hm, 1.0f, RP2, D);
    for (int i = threadIdx.x; i < n * D; i += blockDim.x)
        Pb[i] = 2.0f * RP2[i];
    /* no barrier: Pb is read by the second product below, after the first one's barrier */
    bmm(1, 0, D, Hm, n, 1.0f, E2, D, GS, Hm, 1.0f, Pn2, Hm);
    bmm(1, 0, D, Hm, n, 1.0f, Pb, D, A, Hm, 1.0f, Pn2, Hm);
    bmm(0, 0, n, Hm, D, 1.0f, Pb, D, W2, Hm, 1.0f, TP2, Hm);
    for (int i = threadIdx.x; i < n * Hm; i += blockDim.x)
        Zb[i] += eng_cu_dsilu(Z[i], SZ[i]) * TP2[i];
    __syncthreads();
    bmm(1, 0, Hm, D, n, 1.0f, Zb, Hm, Kc, ldqkv, 1.0f, Pn1, D);
    bmm(0, 0, n, D, Hm, 1.0f, Zb, Hm, W1, D, 1.0f, UP1, D);
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
        const size_t at = (size_t)(i / D) * ldd + i % D;
        dk[at] = eng__cu_st<Ts>(UP1[i]);
        dv[at] = eng__cu_st<Ts>(-Pb[i]);
    }
    /* no barrier: dk, dv are outputs */
}

template <typename Ts>
__device__ static void update_bwd_linear(const mdims *m, scratch *s, const chunk_acts *c, const float *W,
                                         const float *S, const Ts *Kc, int ldqkv, int n, Ts *dk, Ts *dv, int ldd)
{
    const int D = m->D;
    const size_t Pm = m->Pm;
    const float *E2 = c->E2, *P = s->P, *Q = s->Q;
    float *Pn = s->Pn;
    float *RP = s->dd[1], *RQ = s->dd[2], *UP = s->dd[3], *UQ = s->dd[4];
    bmm(0, 1, n, D, D, 1.0f, Kc, ldqkv, P, D, 0.0f, RP, D);
    bmm(0, 1, n, D, D, 1.0f, Kc, ldqkv, Q, D, 0.0f, RQ, D);
    for (int t = 0; t < n; t++) {
        const double pg = bdot(E2 + (size_t)t * D, RP + (size_t)t * D, D);
        const double qg = bdot(E2 + (size_t)t * D, RQ + (size_t)t * D, D);
        if (threadIdx.x == 0)
            s->pg[t] = pg, s->qg[t] = qg;
    }
    /* no barrier: thread 0 wrote pg, qg and thread 0 reads them (gate_adjoints) */
    const double sP = bdot(P, S, Pm), sQ = bdot(Q, S, Pm), wP = bdot(P, W, Pm);
    gate_adjoints(s, n, sP, sQ, wP);
    bmm(0, 0, n, D, D, 1.0f, E2, D, P, D, 0.0f, UP, D);
    bmm(0, 0, n, D, D, 1.0f, E2, D, Q, D, 0.0f, UQ, D);
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
        const float a1 = (float)s->c1[i / D], a2 = (float)s->c2[i / D];
        RP[i] = 2.0f * (a1 * RP[i] + a2 * RQ[i]);
        UP[i] = a1 * UP[i] + a2 * UQ[i];
    }
    __syncthreads();
    float *Pb = RP;
    bmm(1, 0, D, D, n, 1.0f, Pb, D, Kc, ldqkv, 1.0f, Pn, D);
    bmm(0, 0, n, D, D, 1.0f, Pb, D, W, D, 1.0f, UP, D);
    for (int i = threadIdx.x; i < n * D; i += blockDim.x) {
        const size_t at = (size_t)(i / D) * ldd + i % D;
        dk[at] = eng__cu_st<Ts>(UP[i]);
        dv[at] = eng__cu_st<Ts>(-Pb[i]);
    }
    /* no barrier: dk, dv are outputs */
}

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
    /* no barrier: dgates are outputs */
}

template <typename Ts>
__device__ static void reads_bwd(const mdims *m, scratch *s, const chunk_acts *c, const float *W, const Ts *Qc,
                                 int ldqkv, const Ts *dY, int ldy, Ts *dq, int ldd, int n)
{
    const int D = m->D, Hm = m->Hm;
    float *Pn = s->Pn;
    if (m->depth == 2) {
        const float *W1 = W, *W2 = W + (size_t)Hm * D;
        float *Pn1 = Pn, *Pn2 = Pn + (size_t)Hm * D, *dAq = s->h[11];
        bmm(1, 0, D, Hm, n, 1.0f, dY, ldy, c->Aq, Hm, 1.0f, Pn2, Hm);
        bmm(0, 0, n, Hm, D, 1.0f, dY, ldy, W2, Hm, 0.0f, dAq, Hm);
        for (int i = threadIdx.x; i < n * Hm; i += blockDim.x)
            dAq[i] *= eng_cu_dsilu(c->Zq[i], c->SZq[i]);
        __syncthreads();
        bmm(1, 0, Hm, D, n, 1.0f, dAq, Hm, Qc, ldqkv, 1.0f, Pn1, D);
        bmm(0, 0, n, D, Hm, 1.0f, dAq, Hm, W1, D, 0.0f, dq, ldd);
    } else {
        bmm(1, 0, D, D, n, 1.0f, dY, ldy, Qc, ldqkv, 1.0f, Pn, D);
        bmm(0, 0, n, D, D, 1.0f, dY, ldy, W, D, 0.0f, dq, ldd);
    }
}

template <typename Ts>
__device__ static void chunk_bwd(const mdims *m, scratch *s, int have_pq, const float *W, const float *S,
                                 const Ts *Qc, const Ts *Kc, const Ts *Vc, int ldqkv, const Ts *dY, int ldy,
                                 const Ts *gates, int ldg, Ts *dgates, int lddg, Ts *dq, Ts *dk, Ts *dv, int ldd,
                                 int H, int h, int n, float max_lr)
{
    const int D = m->D, Hm = m->Hm;
    const size_t Pm = m->Pm;
    float *Z = s->h[0], *A = s->h[1], *G = s->h[2], *Dl = s->h[3], *Zq = s->h[4], *Aq = s->h[5];
    float *SZ = s->h[12], *SZq = s->h[13];
    float *E2 = s->dd[0];
    inner(m, W, Kc, Vc, ldqkv, n, Z, A, SZ, E2, G, Dl);
    if (m->depth == 2) {
        bmm(0, 1, n, Hm, D, 1.0f, Qc, ldqkv, W, D, 0.0f, Zq, Hm);
        silu_rows(Aq, SZq, Zq, (size_t)n * Hm);
    }
    const chunk_acts acts = {Z, A, SZ, G, Dl, E2, Zq, Aq, SZq};
    double aW, aS, eS;
    coefficients(s, gates, ldg, H, h, n, max_lr, &aW, &aS, &eS);
    float *P = s->P, *Q = s->Q, *Pn = s->Pn;
    for (size_t i = threadIdx.x; i < Pm; i += blockDim.x)
        Pn[i] = have_pq ? (float)(aW * P[i]) : 0.0f;
    __syncthreads();
    if (have_pq && m->depth == 2) {
        update_bwd_deep(m, s, &acts, W, S, Kc, ldqkv, n, dk, dv, ldd);
    } else if (have_pq) {
        update_bwd_linear(m, s, &acts, W, S, Kc, ldqkv, n, dk, dv, ldd);
    } else {
        for (int t = threadIdx.x; t < n; t += blockDim.x)
            s->dth[t] = s->det[t] = s->da[t] = 0;
        bzero_rows(dk, ldd, n, D);
        bzero_rows(dv, ldd, n, D);
    }
    gates_bwd(s, dgates, lddg, H, h, n, max_lr);
    reads_bwd(m, s, &acts, W, Qc, ldqkv, dY, ldy, dq, ldd, n);
    for (size_t i = threadIdx.x; i < Pm; i += blockDim.x)
        Q[i] = have_pq ? (float)(aS * P[i] + eS * Q[i]) : 0.0f;
    /* no barrier: Q is read after the next chunk's first barriers */
    s->P = Pn;
    s->Pn = P;
}

template <typename Ts>
__global__ static void __launch_bounds__(MEM_THREADS)
    k_mem_bwd(Ts *dq, Ts *dk, Ts *dv, int ldd, Ts *dgates, int lddg, const Ts *dy, int ldy, const float *states,
              const Ts *q, const Ts *k, const Ts *v, int ldqkv, const Ts *gates, int ldg, int T, int H, mdims m, float max_lr, float *ws, size_t slot, float *dslots)
{
    const int bh = blockIdx.x, b = bh / H, h = bh % H, hd = m.D;
    const int nc = (T + m.b - 1) / m.b;
    scratch s;
    scratch_carve(&s, ws + (size_t)bh * slot, &m);
    const float *st = states + (size_t)bh * nc * 2 * m.Pm;
    for (int c = nc - 1; c >= 0; c--) {
        const int t0 = c * m.b, n = t0 + m.b < T ? m.b : T - t0;
        const size_t r0 = (size_t)b * T + t0, col = (size_t)h * hd;
        const float *W = st + (size_t)c * 2 * m.Pm, *S = W + m.Pm;
        chunk_bwd(&m, &s, c < nc - 1, W, S, q + r0 * ldqkv + col, k + r0 * ldqkv + col, v + r0 * ldqkv + col, ldqkv,
                  dy + r0 * ldy + col, ldy, gates + r0 * ldg, ldg, dgates + r0 * lddg, lddg, dq + r0 * ldd + col,
                  dk + r0 * ldd + col, dv + r0 * ldd + col, ldd, H, h, n, max_lr);
    }
    bcopy(dslots + (size_t)bh * m.Pm, s.P, m.Pm);
}

/* dw0 += the units' slots, sequences in order; a thread per element of
 * one head's state */
__global__ static void k_mem_dw0(float *dw0, const float *dslots, int B, int H, mdims m)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)H * m.Pm)
        return;
    const int h = (int)(i / m.Pm);
    const size_t e = i % m.Pm, D = (size_t)m.D, Hm = (size_t)m.Hm;
    float acc = 0;
    for (int b = 0; b < B; b++)
        acc += dslots[((size_t)b * H + h) * m.Pm + e];
    size_t at;
    if (m.depth == 2)
        at = e < Hm * D ? (size_t)h * Hm * D + e : (size_t)H * Hm * D + (size_t)h * D * Hm + (e - Hm * D);
    else
        at = (size_t)h * D * D + e;
    dw0[at] += acc;
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

template <typename Ts>
static void mem_fwd(eng__cu *c, eng_act *y, int ldy, float *states, const eng_act *q, const eng_act *k,
                    const eng_act *v, int ldqkv, const eng_act *gates, int ldg, const float *w0, int B, int T, int H,
                    const mdims *m, float max_lr, float *ws)
{
    ENG__CU_LAUNCH(k_mem_fwd<Ts>, (unsigned)(B * H), MEM_THREADS, 0, c->stream, (Ts *)y, ldy, states, (const Ts *)q,
                   (const Ts *)k, (const Ts *)v, ldqkv, (const Ts *)gates, ldg, w0, T, H, *m, max_lr, ws,
                   slot_floats(m));
    ENG__CU_LAUNCHED(c, "titans_mem_fwd");
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

template <typename Ts>
static void mem_bwd(eng__cu *c, eng_act *dq, eng_act *dk, eng_act *dv, int ldd, eng_act *dgates, int lddg,
                    const eng_act *dy, int ldy, const float *states, const eng_act *q, const eng_act *k,
                    const eng_act *v, int ldqkv, const eng_act *gates, int ldg, int B, int T, int H, const mdims *m,
                    float max_lr, float *ws, float *dslots)
{
    ENG__CU_LAUNCH(k_mem_bwd<Ts>, (unsigned)(B * H), MEM_THREADS, 0, c->stream, (Ts *)dq, (Ts *)dk, (Ts *)dv, ldd,
                   (Ts *)dgates, lddg, (const Ts *)dy, ldy, states, (const Ts *)q, (const Ts *)k, (const Ts *)v, ldqkv,
                   (const Ts *)gates, ldg, T, H, *m, max_lr, ws, slot_floats(m), dslots);
    ENG__CU_LAUNCHED(c, "titans_mem_bwd");
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
    float *dslots = ws + (size_t)B * H * slot_floats(&m);
    ENG__CU_ACT(c, mem_bwd, c, dq, dk, dv, ldd, dgates, lddg, dy, ldy, states, q, k, v, ldqkv, gates, ldg, B, T, H, &m,
                max_lr, ws, dslots);
    if (c->status)
        return;
    const size_t n = (size_t)H * m.Pm;
    ENG__CU_LAUNCH(k_mem_dw0, (unsigned)((n + ENG__CU_THREADS - 1) / ENG__CU_THREADS), ENG__CU_THREADS, 0, c->stream,
                   dw0, dslots, B, H, m);
    ENG__CU_LAUNCHED(c, "titans_mem_bwd (dw0)");
}

ENG__CU_END
