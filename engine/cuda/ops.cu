/* ops.cu: the CUDA backend's element-wise and per-row ops: embedding,
 * RMSNorm, RoPE, SwiGLU, the output gate, cross-entropy, AdamW, sum of
 * squares and axpy, each one kernel (or two) on the context's stream.  What
 * each element computes is engine/cuda/elem.h's; here is only which thread
 * does what.
 *
 * Determinism: no atomics.  Sums over rows (RMSNorm's gain, the
 * embedding's scatter) have one owner per column and a fixed order, sums
 * within a row use the fixed tree of block_sum, and sumsq a fixed number
 * of blocks: a run repeats bit for bit on the same GPU and grid. */
#include <math.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

#define CTX(ctx) ((eng__cu *)(ctx))
/* skip the op when the context already failed; the launch's error kept after */
#define RUN(ctx, what, launch)                                                                                 \
    do {                                                                                                       \
        eng__cu *c_ = CTX(ctx);                                                                                \
        if (c_->status)                                                                                        \
            return;                                                                                            \
        launch;                                                                                                \
        ENG__CU_LAUNCHED(c_, what);                                                                            \
    } while (0)
#define S(ctx) (CTX(ctx)->stream)

/* ------------------------------------------------------------ reductions */
/* Sum over the block (blockDim.x a multiple of 32, at most 1024) in a fixed
 * tree; every thread gets the result.  T: float (the rows' sums) or double
 * (sumsq's).  sh: 32 T of shared memory.
 * Only warp 0 reads the warps' partials: its lane 0 then overwrites sh[0]
 * after the warp's shuffles, which order it after the other lanes' reads.
 * (Every warp used to read them, and thread 0's write of sh[0] raced with
 * the other warps' lane 0 reading it: the emulator's racecheck found it.)
 * A kernel that calls it twice on one sh needs a __syncthreads between
 * the calls (the last reads of sh[0] against the next call's writes); no
 * kernel does, so the barrier that opened it went (the mutation test,
 * bench/cuda_mutants.sh, found it guarded nothing), and the racecheck
 * would report the missing one. */
template <typename T> __device__ static T block_sum(T x, T *sh)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_down_sync(0xffffffffu, x, o);
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (lane == 0)
        sh[w] = x;
    __syncthreads();
    if (w == 0) {
        x = lane < nw ? sh[lane] : T(0);
        for (int o = 16; o > 0; o >>= 1)
            x += __shfl_down_sync(0xffffffffu, x, o);
        if (lane == 0)
            sh[0] = x;
    }
    __syncthreads();
    return sh[0];
}

/* The (max, sum of exp) pair over the block, the same way (and, as
 * block_sum, once per kernel: a second call would need a barrier first). */
__device__ static void block_lse(float *m, float *s, float *shm, float *shs)
{
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_down_sync(0xffffffffu, *m, o), s2 = __shfl_down_sync(0xffffffffu, *s, o);
        eng_cu_lse_merge(m, s, m2, s2);
    }
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (lane == 0)
        shm[w] = *m, shs[w] = *s;
    __syncthreads();
    if (w == 0) {
        *m = lane < nw ? shm[lane] : -INFINITY;
        *s = lane < nw ? shs[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            float m2 = __shfl_down_sync(0xffffffffu, *m, o), s2 = __shfl_down_sync(0xffffffffu, *s, o);
            eng_cu_lse_merge(m, s, m2, s2);
        }
        if (lane == 0)
            shm[0] = *m, shs[0] = *s;
    }
    __syncthreads();
    *m = shm[0], *s = shs[0];
}

/* ------------------------------------------------------------ embedding */
/* Every kernel from here to cross-entropy is templated on T, the storage
 * of its activations (float, or __nv_bfloat16: eng__cu_ld / eng__cu_st,
 * fp32 arithmetic, one rounding to nearest even per stored element);
 * weights, their gradients and rstd stay fp32.  The launchers cast the
 * eng_act pointers to T and are called through ENG__CU_ACT. */
template <typename T>
__global__ static void k_embedding_fwd(T *out, const float *wte, const int32_t *tok, int N, int C)
{
    size_t total = (size_t)N * C;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        size_t n = i / C, ch = i % C;
        out[i] = eng__cu_st<T>(wte[(size_t)tok[n] * C + ch]);
    }
}

/* one thread per channel, tokens in order: the CPU's order, bit for bit */
template <typename T>
__global__ static void k_embedding_bwd(float *dwte, const T *dout, const int32_t *tok, int N, int C)
{
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= C)
        return;
    for (int n = 0; n < N; n++)
        dwte[(size_t)tok[n] * C + ch] += eng__cu_ld(dout[(size_t)n * C + ch]);
}

template <typename T>
static void embedding_fwd(void *ctx, eng_act *out, const float *wte, const int32_t *tok, int N, int C)
{
    RUN(ctx, "embedding_fwd",
        (ENG__CU_LAUNCH(k_embedding_fwd<T>, eng__cu_grid((size_t)N * C), ENG__CU_THREADS, 0, S(ctx), (T *)out, wte,
                        tok, N, C)));
}

void eng__cu_embedding_fwd(void *ctx, eng_act *out, const float *wte, const int32_t *tok, int N, int C)
{
    ENG__CU_ACT(CTX(ctx), embedding_fwd, ctx, out, wte, tok, N, C);
}

template <typename T>
static void embedding_bwd(void *ctx, float *dwte, const eng_act *dout, const int32_t *tok, int N, int C)
{
    RUN(ctx, "embedding_bwd",
        (ENG__CU_LAUNCH(k_embedding_bwd<T>, (C + 127) / 128, 128, 0, S(ctx), dwte, (const T *)dout, tok, N, C)));
}

void eng__cu_embedding_bwd(void *ctx, float *dwte, const eng_act *dout, const int32_t *tok, int N, int C)
{
    ENG__CU_ACT(CTX(ctx), embedding_bwd, ctx, dwte, dout, tok, N, C);
}

/* By token (ops.h embedding_bwd_sorted): a block per distinct id, a
 * thread per channel adding the id's rows in position order: every
 * (id, channel) has one owner and the order of k_embedding_bwd, so the
 * same bits, with U blocks at work instead of C / 128.  The sums are fp32
 * whatever T is.  U comes from device memory (*n_ids): the launch has
 * max_U blocks, those past U return at once, so a graph replays it for
 * any batch. */
template <typename T>
__global__ static void k_embedding_bwd_sorted(float *dwte, const T *dout, const int32_t *order, const int32_t *ids,
                                              const int32_t *starts, const int32_t *n_ids, int C)
{
    const int u = blockIdx.x;
    if (u >= *n_ids)
        return;
    const int s0 = starts[u], s1 = starts[u + 1];
    float *d = dwte + (size_t)ids[u] * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float acc = d[c];
        for (int i = s0; i < s1; i++)
            acc += eng__cu_ld(dout[(size_t)order[i] * C + c]);
        d[c] = acc;
    }
}

template <typename T>
static void embedding_bwd_sorted(void *ctx, float *dwte, const eng_act *dout, const int32_t *order,
                                 const int32_t *ids, const int32_t *starts, const int32_t *n_ids, int max_U, int C)
{
    RUN(ctx, "embedding_bwd_sorted",
        (ENG__CU_LAUNCH(k_embedding_bwd_sorted<T>, max_U, 128, 0, S(ctx), dwte, (const T *)dout, order, ids, starts,
                        n_ids, C)));
}

void eng__cu_embedding_bwd_sorted(void *ctx, float *dwte, const eng_act *dout, const int32_t *order,
                                  const int32_t *ids, const int32_t *starts, const int32_t *n_ids, int max_U, int C)
{
    if (max_U > 0)
        ENG__CU_ACT(CTX(ctx), embedding_bwd_sorted, ctx, dwte, dout, order, ids, starts, n_ids, max_U, C);
}

/* ------------------------------------------------------------ RMSNorm */
template <typename T>
__global__ static void k_rmsnorm_fwd(T *out, float *rstd, const T *x, const float *w, int C, float eps)
{
    __shared__ float sh[32];
    const size_t n = blockIdx.x;
    const T *xn = x + n * C;
    float ss = 0;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float xv = eng__cu_ld(xn[c]);
        ss += xv * xv;
    }
    float r = eng_cu_rmsnorm_rstd(block_sum(ss, sh), C, eps);
    if (threadIdx.x == 0)
        rstd[n] = r;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        out[n * C + c] = eng__cu_st<T>(eng__cu_ld(xn[c]) * r * w[c]);
}

template <typename T>
__global__ static void k_rmsnorm_bwd_dx(T *dx, const T *dout, const T *x, const float *w, const float *rstd, int C)
{
    __shared__ float sh[32];
    const size_t n = blockIdx.x;
    const T *xn = x + n * C, *dn = dout + n * C;
    float dot = 0;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        dot += eng__cu_ld(dn[c]) * w[c] * eng__cu_ld(xn[c]);
    const float r = rstd[n], k = eng_cu_rmsnorm_k(block_sum(dot, sh), r, C);
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        dx[n * C + c] = eng__cu_st<T>(eng__cu_ld(dx[n * C + c]) +
                                      eng_cu_rmsnorm_dx(r, w[c], eng__cu_ld(dn[c]), eng__cu_ld(xn[c]), k));
}

/* dw: 32 columns a block, 8 slices of rows each summed in order, the
 * slices then added in order: fixed whatever the GPU */
template <typename T>
__global__ static void k_rmsnorm_bwd_dw(float *dw, const T *dout, const T *x, const float *rstd, int N, int C)
{
    __shared__ float part[8][33];
    const int col = threadIdx.x & 31, slice = threadIdx.x >> 5, c = blockIdx.x * 32 + col;
    float s = 0;
    if (c < C)
        for (int n = slice; n < N; n += 8)
            s += eng__cu_ld(dout[(size_t)n * C + c]) * eng__cu_ld(x[(size_t)n * C + c]) * rstd[n];
    part[slice][col] = s;
    __syncthreads();
    if (slice == 0 && c < C) {
        float t = 0;
        for (int k = 0; k < 8; k++)
            t += part[k][col];
        dw[c] += t;
    }
}

template <typename T>
static void rmsnorm_fwd(void *ctx, eng_act *out, float *rstd, const eng_act *x, const float *w, int N, int C, float eps)
{
    RUN(ctx, "rmsnorm_fwd",
        (ENG__CU_LAUNCH(k_rmsnorm_fwd<T>, N, ENG__CU_THREADS, 0, S(ctx), (T *)out, rstd, (const T *)x, w, C, eps)));
}

void eng__cu_rmsnorm_fwd(void *ctx, eng_act *out, float *rstd, const eng_act *x, const float *w, int N, int C,
                         float eps)
{
    if (N > 0)
        ENG__CU_ACT(CTX(ctx), rmsnorm_fwd, ctx, out, rstd, x, w, N, C, eps);
}

template <typename T>
static void rmsnorm_bwd(void *ctx, eng_act *dx_a, float *dw, const eng_act *dout_a, const eng_act *x_a, const float *w,
                        const float *rstd, int N, int C)
{
    T *dx = (T *)dx_a;
    const T *dout = (const T *)dout_a, *x = (const T *)x_a;
    RUN(ctx, "rmsnorm_bwd",
        (ENG__CU_LAUNCH(k_rmsnorm_bwd_dx<T>, N, ENG__CU_THREADS, 0, S(ctx), dx, dout, x, w, rstd, C)));
    RUN(ctx, "rmsnorm_bwd (gain)",
        (ENG__CU_LAUNCH(k_rmsnorm_bwd_dw<T>, (C + 31) / 32, 256, 0, S(ctx), dw, dout, x, rstd, N, C)));
}

void eng__cu_rmsnorm_bwd(void *ctx, eng_act *dx, float *dw, const eng_act *dout, const eng_act *x, const float *w,
                         const float *rstd, int N, int C)
{
    if (N > 0)
        ENG__CU_ACT(CTX(ctx), rmsnorm_bwd, ctx, dx, dw, dout, x, w, rstd, N, C);
}

/* ------------------------------------------------------------ RoPE */
template <typename T>
__global__ static void k_rope(T *x, int ld, int N, int T_, int H, int hd, const float *cs, float sign)
{
    const int h2 = hd / 2;
    const size_t total = (size_t)N * H * h2;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const int p = (int)(i % h2);
        const size_t nh = i / h2;
        const int h = (int)(nh % H);
        const size_t n = nh / H;
        const float *cosv = cs + (size_t)(n % T_) * hd;
        T *a = x + n * ld + (size_t)h * hd;
        float x1 = eng__cu_ld(a[p]), x2 = eng__cu_ld(a[p + h2]);
        eng_cu_rope_pair(&x1, &x2, cosv[p], cosv[h2 + p], sign);
        a[p] = eng__cu_st<T>(x1);
        a[p + h2] = eng__cu_st<T>(x2);
    }
}

template <typename T>
static void rope(void *ctx, const char *what, eng_act *x, int ld, int N, int T_, int H, int hd, const float *cs,
                 float sign)
{
    RUN(ctx, what,
        (ENG__CU_LAUNCH(k_rope<T>, eng__cu_grid((size_t)N * H * (hd / 2)), ENG__CU_THREADS, 0, S(ctx), (T *)x, ld, N,
                        T_, H, hd, cs, sign)));
}

void eng__cu_rope_fwd(void *ctx, eng_act *x, int ld, int N, int T, int H, int hd, const float *cs)
{
    ENG__CU_ACT(CTX(ctx), rope, ctx, "rope_fwd", x, ld, N, T, H, hd, cs, 1.0f);
}

void eng__cu_rope_bwd(void *ctx, eng_act *dx, int ld, int N, int T, int H, int hd, const float *cs)
{
    ENG__CU_ACT(CTX(ctx), rope, ctx, "rope_bwd", dx, ld, N, T, H, hd, cs, -1.0f);
}

/* ------------------------------------------------------------ SwiGLU */
template <typename T>
__global__ static void k_swiglu_fwd(T *out, const T *g, const T *u, int ldgu, int N, int F)
{
    const size_t total = (size_t)N * F;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const size_t n = i / F, f = i % F;
        out[i] = eng__cu_st<T>(eng_cu_swiglu_fwd(eng__cu_ld(g[n * ldgu + f]), eng__cu_ld(u[n * ldgu + f])));
    }
}

template <typename T>
__global__ static void k_swiglu_bwd(T *dg, T *du, const T *dout, const T *g, const T *u, int ldgu, int N, int F)
{
    const size_t total = (size_t)N * F;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const size_t n = i / F, f = i % F, at = n * ldgu + f;
        float a, b;
        eng_cu_swiglu_bwd(eng__cu_ld(dout[i]), eng__cu_ld(g[at]), eng__cu_ld(u[at]), &a, &b);
        dg[at] = eng__cu_st<T>(a);
        du[at] = eng__cu_st<T>(b);
    }
}

template <typename T>
static void swiglu_fwd(void *ctx, eng_act *out, const eng_act *g, const eng_act *u, int ldgu, int N, int F)
{
    RUN(ctx, "swiglu_fwd",
        (ENG__CU_LAUNCH(k_swiglu_fwd<T>, eng__cu_grid((size_t)N * F), ENG__CU_THREADS, 0, S(ctx), (T *)out,
                        (const T *)g, (const T *)u, ldgu, N, F)));
}

void eng__cu_swiglu_fwd(void *ctx, eng_act *out, const eng_act *g, const eng_act *u, int ldgu, int N, int F)
{
    ENG__CU_ACT(CTX(ctx), swiglu_fwd, ctx, out, g, u, ldgu, N, F);
}

template <typename T>
static void swiglu_bwd(void *ctx, eng_act *dg, eng_act *du, const eng_act *dout, const eng_act *g, const eng_act *u,
                       int ldgu, int N, int F)
{
    RUN(ctx, "swiglu_bwd",
        (ENG__CU_LAUNCH(k_swiglu_bwd<T>, eng__cu_grid((size_t)N * F), ENG__CU_THREADS, 0, S(ctx), (T *)dg, (T *)du,
                        (const T *)dout, (const T *)g, (const T *)u, ldgu, N, F)));
}

void eng__cu_swiglu_bwd(void *ctx, eng_act *dg, eng_act *du, const eng_act *dout, const eng_act *g, const eng_act *u,
                        int ldgu, int N, int F)
{
    ENG__CU_ACT(CTX(ctx), swiglu_bwd, ctx, dg, du, dout, g, u, ldgu, N, F);
}

/* ------------------------------------------------------------ gate */
template <typename T>
__global__ static void k_gate_fwd(T *out, const T *a, const T *z, int ldz, int N, int D, int G)
{
    const int w = D / G;
    const size_t total = (size_t)N * D;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const size_t n = i / D;
        const int j = (int)(i % D);
        out[i] = eng__cu_st<T>(eng__cu_ld(a[i]) * eng_cu_sigmoid(eng__cu_ld(z[n * ldz + j / w])));
    }
}

/* one thread per (row, gate): its group's sum in channel order, as the CPU */
template <typename T>
__global__ static void k_gate_bwd(T *da, T *dz, const T *dout, const T *a, const T *z, int ldz, int N, int D, int G)
{
    const int w = D / G;
    const size_t total = (size_t)N * G;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const size_t n = i / G;
        const int g = (int)(i % G);
        const float s = eng_cu_sigmoid(eng__cu_ld(z[n * ldz + g]));
        float acc = 0;
        for (int j = g * w; j < (g + 1) * w; j++) {
            const size_t at = n * D + j;
            const float d = eng__cu_ld(dout[at]);
            da[at] = eng__cu_st<T>(d * s);
            acc += d * eng__cu_ld(a[at]);
        }
        dz[n * ldz + g] = eng__cu_st<T>(eng_cu_gate_dz(s, acc));
    }
}

template <typename T>
static void gate_fwd(void *ctx, eng_act *out, const eng_act *a, const eng_act *z, int ldz, int N, int D, int G)
{
    RUN(ctx, "gate_fwd",
        (ENG__CU_LAUNCH(k_gate_fwd<T>, eng__cu_grid((size_t)N * D), ENG__CU_THREADS, 0, S(ctx), (T *)out,
                        (const T *)a, (const T *)z, ldz, N, D, G)));
}

void eng__cu_gate_fwd(void *ctx, eng_act *out, const eng_act *a, const eng_act *z, int ldz, int N, int D, int G)
{
    ENG__CU_ACT(CTX(ctx), gate_fwd, ctx, out, a, z, ldz, N, D, G);
}

template <typename T>
static void gate_bwd(void *ctx, eng_act *da, eng_act *dz, const eng_act *dout, const eng_act *a, const eng_act *z,
                     int ldz, int N, int D, int G)
{
    RUN(ctx, "gate_bwd",
        (ENG__CU_LAUNCH(k_gate_bwd<T>, eng__cu_grid((size_t)N * G), ENG__CU_THREADS, 0, S(ctx), (T *)da, (T *)dz,
                        (const T *)dout, (const T *)a, (const T *)z, ldz, N, D, G)));
}

void eng__cu_gate_bwd(void *ctx, eng_act *da, eng_act *dz, const eng_act *dout, const eng_act *a, const eng_act *z,
                      int ldz, int N, int D, int G)
{
    ENG__CU_ACT(CTX(ctx), gate_bwd, ctx, da, dz, dout, a, z, ldz, N, D, G);
}

/* ------------------------------------------------------------ cross-entropy */
/* A block per row: each thread's online (max, sum) over its strided
 * logits, merged over the block; the probabilities are never stored. */
__device__ static void row_lse(const float *l, int V, float *m, float *s)
{
    __shared__ float shm[32], shs[32];
    *m = -INFINITY, *s = 0.0f;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        eng_cu_lse_add(m, s, l[v]);
    block_lse(m, s, shm, shs);
}

__global__ static void k_xent_fwd(float *losses, const float *logits, const int32_t *targets, int V)
{
    const size_t n = blockIdx.x;
    const int t = targets[n];
    if (t < 0) { /* the whole block leaves together */
        if (threadIdx.x == 0)
            losses[n] = 0;
        return;
    }
    const float *l = logits + n * V;
    float m, s;
    row_lse(l, V, &m, &s);
    if (threadIdx.x == 0)
        losses[n] = eng_cu_xent_loss(m, s, l[t]);
}

__global__ static void k_xent_bwd(float *logits, const int32_t *targets, int V, float dscale)
{
    const size_t n = blockIdx.x;
    const int t = targets[n];
    float *l = logits + n * V;
    if (t < 0) {
        for (int v = threadIdx.x; v < V; v += blockDim.x)
            l[v] = 0;
        return;
    }
    float m, s;
    row_lse(l, V, &m, &s);
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        l[v] = eng_cu_xent_grad(l[v], m, s, v == t, dscale);
}

void eng__cu_xent_fwd(void *ctx, float *losses, const float *logits, const int32_t *targets, int N, int V)
{
    if (N > 0)
        RUN(ctx, "xent_fwd", (ENG__CU_LAUNCH(k_xent_fwd, N, 512, 0, S(ctx), losses, logits, targets, V)));
}

void eng__cu_xent_bwd(void *ctx, float *logits, const int32_t *targets, int N, int V, float dscale)
{
    if (N > 0)
        RUN(ctx, "xent_bwd", (ENG__CU_LAUNCH(k_xent_bwd, N, 512, 0, S(ctx), logits, targets, V, dscale)));
}

/* ------------------------------------------------------------ optimizer */
/* One launch over every segment: index j of the concatenation is in the
 * last segment whose start is <= j (binary search: the table is sorted).
 * lp (NULL: none): the weight copy, L = float or __nv_bfloat16, written
 * from the updated p by the same thread (round to nearest even). */
template <typename L>
__global__ static void k_adamw(float *p, L *lp, const float *grad, float *m, float *v, const eng__cu_seg *seg,
                               int nseg, size_t total, float b1, float b2, float eps, float decay_on, float step,
                               float rbc2, float grad_scale)
{
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < total; j += (size_t)gridDim.x * blockDim.x) {
        int lo = 0, hi = nseg - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (seg[mid].start <= j)
                lo = mid;
            else
                hi = mid - 1;
        }
        const size_t i = seg[lo].off + (j - seg[lo].start);
        eng_cu_adamw(p + i, grad[i], m + i, v + i, b1, b2, eps, seg[lo].decay ? decay_on : 1.0f, step, rbc2,
                     grad_scale);
        if (lp)
            lp[i] = eng__cu_st<L>(p[i]);
    }
}

/* the weight copy made whole: dst = src rounded (ops.h cast) */
__global__ static void k_cast_bf16(__nv_bfloat16 *dst, const float *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = eng__cu_st<__nv_bfloat16>(src[i]);
}

void eng__cu_cast(void *ctx, void *dst, eng_dtype t, const float *src, size_t n)
{
    eng__cu *c = CTX(ctx);
    if (t == ENG_F32) {
        if (!c->status && n && dst != src)
            eng__cu_check(c, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, c->stream),
                          "cast");
        return;
    }
    if (n)
        RUN(ctx, "cast", (ENG__CU_LAUNCH(k_cast_bf16, eng__cu_grid(n), ENG__CU_THREADS, 0, S(ctx),
                                         (__nv_bfloat16 *)dst, src, n)));
}

/* The table on the device: uploaded only when it differs from the last
 * one (the model's full table is the same every step).  The staging copy
 * is the context's, so the asynchronous copy never reads freed memory. */
static int upload_segs(eng__cu *c, const eng_adamw_seg *seg, int nseg, size_t *total)
{
    size_t start = 0;
    int same = nseg == c->seg_n;
    for (int k = 0; k < nseg; k++) {
        same = same && c->seg_host[k].off == seg[k].off && c->seg_host[k].n == seg[k].n &&
               c->seg_host[k].decay == (seg[k].decay != 0);
        start += seg[k].n;
    }
    *total = start;
    if (same)
        return 0;
    if (nseg > c->seg_cap) {
        int cap = nseg < 64 ? 64 : nseg;
        eng__cu_seg *h = (eng__cu_seg *)malloc((size_t)cap * sizeof *h), *d = NULL;
        if (!h)
            return eng__cu_fail(c, TLM_ENOMEM, "adamw", "out of host memory for the segment table");
        /* the old device table may still be read by a launch in flight */
        if (eng__cu_check(c, cudaStreamSynchronize(c->stream), "adamw (segment table)") ||
            eng__cu_check(c, cudaMalloc((void **)&d, (size_t)cap * sizeof *d), "adamw (segment table)")) {
            free(h);
            return 1;
        }
        free(c->seg_host);
        cudaFree(c->seg_dev);
        c->seg_host = h, c->seg_dev = d, c->seg_cap = cap;
    } else if (eng__cu_check(c, cudaStreamSynchronize(c->stream), "adamw (segment table)")) {
        return 1; /* the staging copy is about to change under a copy in flight */
    }
    start = 0;
    for (int k = 0; k < nseg; k++) {
        c->seg_host[k] = eng__cu_seg{seg[k].off, seg[k].n, start, seg[k].decay != 0};
        start += seg[k].n;
    }
    c->seg_n = nseg;
    return eng__cu_check(c,
                         cudaMemcpyAsync(c->seg_dev, c->seg_host, (size_t)nseg * sizeof *c->seg_dev,
                                         cudaMemcpyHostToDevice, c->stream),
                         "adamw (segment table)");
}

void eng__cu_adamw(void *ctx, float *p, const float *grad, float *m, float *v, const eng_adamw_seg *seg, int nseg,
                   float lr, float b1, float b2, float eps, float wd, float bc1, float bc2, float grad_scale,
                   void *p_lp, eng_dtype lp_dtype)
{
    const float decay = 1.0f - lr * wd, step = lr / bc1, rbc2 = 1.0f / sqrtf(bc2);
    eng__cu *c = CTX(ctx);
    size_t total = 0;
    if (c->status || nseg <= 0 || upload_segs(c, seg, nseg, &total) || !total)
        return;
    if (p_lp && lp_dtype == ENG_BF16)
        RUN(ctx, "adamw",
            (ENG__CU_LAUNCH(k_adamw<__nv_bfloat16>, eng__cu_grid(total), ENG__CU_THREADS, 0, S(ctx), p,
                            (__nv_bfloat16 *)p_lp, grad, m, v, c->seg_dev, nseg, total, b1, b2, eps, decay, step,
                            rbc2, grad_scale)));
    else
        RUN(ctx, "adamw",
            (ENG__CU_LAUNCH(k_adamw<float>, eng__cu_grid(total), ENG__CU_THREADS, 0, S(ctx), p, (float *)p_lp, grad,
                            m, v, c->seg_dev, nseg, total, b1, b2, eps, decay, step, rbc2, grad_scale)));
}

/* A grid of min(ENG__CU_SUMSQ_BLOCKS, n / 256 rounded up) blocks (fixed
 * for a given n), each summing its strided elements in double in a fixed
 * tree; then one block sums the partials.  A small n (the per-tensor
 * gradient norms) launches only the blocks it fills.  Both passes use
 * block_sum in double. */
__global__ static void k_sumsq_part(double *part, const float *x, size_t n)
{
    __shared__ double sh[32];
    double s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += (double)x[i] * x[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0)
        part[blockIdx.x] = s;
}

__global__ static void k_sumsq_total(double *out, const double *part, int nparts)
{
    __shared__ double sh[32];
    double s = 0;
    for (int i = threadIdx.x; i < nparts; i += blockDim.x)
        s += part[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0)
        *out = s;
}

double eng__cu_sumsq(void *ctx, const float *x, size_t n)
{
    eng__cu *c = CTX(ctx);
    if (c->status)
        return NAN;
    if (!n)
        return 0;
    const unsigned nb = eng__cu_grid(n) < ENG__CU_SUMSQ_BLOCKS ? eng__cu_grid(n) : ENG__CU_SUMSQ_BLOCKS;
    ENG__CU_LAUNCH(k_sumsq_part, nb, ENG__CU_THREADS, 0, c->stream, c->partials, x, n);
    if (ENG__CU_LAUNCHED(c, "sumsq"))
        return NAN;
    /* the pinned result is written by the kernel itself: no copy to order */
    ENG__CU_LAUNCH(k_sumsq_total, 1, 1024, 0, c->stream, c->host_sum, c->partials, (int)nb);
    if (ENG__CU_LAUNCHED(c, "sumsq") || eng__cu_check(c, cudaStreamSynchronize(c->stream), "sumsq"))
        return NAN;
    return *c->host_sum;
}

/* the same two kernels into device memory, and no wait: the trainer reads
 * the norm with the step's loss in one copy */
void eng__cu_sumsq_into(void *ctx, double *out, const float *x, size_t n)
{
    eng__cu *c = CTX(ctx);
    if (c->status)
        return;
    const unsigned g = eng__cu_grid(n ? n : 1), nb = g < ENG__CU_SUMSQ_BLOCKS ? g : ENG__CU_SUMSQ_BLOCKS;
    ENG__CU_LAUNCH(k_sumsq_part, nb, ENG__CU_THREADS, 0, c->stream, c->partials, x, n);
    if (ENG__CU_LAUNCHED(c, "sumsq_into"))
        return;
    ENG__CU_LAUNCH(k_sumsq_total, 1, 1024, 0, c->stream, out, c->partials, (int)nb);
    ENG__CU_LAUNCHED(c, "sumsq_into");
}

/* y += alpha x: fp32 gradients (axpy), or activations (act_axpy: fp32
 * math, one rounding per bf16 store) */
template <typename T> __global__ static void k_axpy(T *y, const T *x, size_t n, float alpha)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = eng__cu_st<T>(eng__cu_ld(y[i]) + alpha * eng__cu_ld(x[i]));
}

template <typename T> static void axpy_launch(void *ctx, void *y, const void *x, size_t n, float alpha)
{
    if (n)
        RUN(ctx, "axpy",
            (ENG__CU_LAUNCH(k_axpy<T>, eng__cu_grid(n), ENG__CU_THREADS, 0, S(ctx), (T *)y, (const T *)x, n, alpha)));
}

void eng__cu_axpy(void *ctx, float *y, const float *x, size_t n, float alpha)
{
    axpy_launch<float>(ctx, y, x, n, alpha);
}

void eng__cu_act_axpy(void *ctx, eng_act *y, const eng_act *x, size_t n, float alpha)
{
    ENG__CU_ACT(CTX(ctx), axpy_launch, ctx, y, x, n, alpha);
}

ENG__CU_END
