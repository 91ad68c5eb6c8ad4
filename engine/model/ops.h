/* ops.h: the op interface between the model code and a compute backend.
 *
 * The model (engine/model/model*.c) never touches a tensor's numbers itself: it
 * plans memory, then calls these ops on pointers it got from ops->alloc.
 * A backend is a table of function pointers (eng_ops) and a context
 * (eng_backend.ctx) that every op receives as its first argument, as
 * ggml-backend's interfaces carry theirs: the CPU backend (engine/cpu/)
 * keeps its thread count and workspace bookkeeping there and implements the
 * ops with C, OpenMP and a CBLAS; a CUDA backend keeps its stream, cuBLASLt
 * handle and workspaces there and fills the same table with kernels on
 * device pointers (docs/engine.md, "How the CUDA backend plugs in").
 * Code chooses by the table's properties (is_host, groups), never by its
 * name.
 *
 * Conventions, for every op:
 *   - all matrices are row-major; activations and their gradients are
 *     eng_act, stored in the backend's activation dtype (act_dtype: fp32,
 *     or bf16 on a CUDA device), everything else float (weights, weight
 *     gradients, optimizer state, per-row statistics, states, losses,
 *     workspaces); sizes are counted in elements, not bytes, but for the
 *     memory ops;
 *   - `ld` arguments are row strides in elements, so an op can read a slice
 *     (the q, k, v or gate columns of one fused projection) in place;
 *   - N is the number of token positions B*T;
 *   - backward ops ADD into parameter gradients (accumulation across micro
 *     batches) and say per argument whether activation gradients are
 *     written (=) or accumulated (+=);
 *   - no op allocates: what an op needs beyond its arguments comes in a
 *     workspace the model planned with the op's *_workspace query; a query
 *     may note in the context what it was asked for (the CPU backend runs
 *     a pass on no more threads than the smallest workspace it sized has
 *     slots), so a backend's workspaces are planned through its own
 *     context;
 *   - a device backend may run ops asynchronously (in order, on its
 *     stream): to_host and sumsq, which hand numbers to the host, return
 *     only when they are complete.
 *
 * Must not: know about layers, names or the model's layout. */
#ifndef TLM_ENGINE_OPS_H
#define TLM_ENGINE_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Optional op groups.  Every backend fills the core ops (all but the
 * groups'); a group is filled whole or not at all, and the table says which
 * it fills (eng_ops.groups).  eng_model_create checks once that the backend
 * has the groups the architecture needs (TLM_ECONFIG otherwise), so no pass
 * meets a NULL op. */
enum {
    ENG_OPS_TITANS = 1u << 0, /* dconv, silu_norm, swa, titans_mem: arch titans */
};

/* The ops of each group, for that check (X(member) per op). */
#define ENG_OPS_TITANS_LIST(X)                                                                                 \
    X(dconv_fwd) X(dconv_bwd) X(silu_norm_fwd) X(silu_norm_bwd) X(swa_workspace) X(swa_fwd) X(swa_bwd)     \
    X(titans_mem_workspace) X(titans_mem_fwd) X(titans_mem_bwd)

/* Storage types (train.precision; docs/engine.md "Precision").  Master
 * weights, their gradients, the optimizer's moments and every per-row
 * statistic (rstd, lse, losses) are fp32 always; activations, activation
 * gradients and the matmul weights' low-precision copy are in the run's
 * activation dtype.  The CPU backend stores fp32 only. */
typedef enum eng_dtype { ENG_F32 = 0, ENG_BF16 = 1 } eng_dtype;

static inline size_t eng_dtype_size(eng_dtype t)
{
    return t == ENG_BF16 ? 2 : 4;
}

/* An activation tensor, stored in the backend's activation dtype.  Opaque
 * so that a float * cannot be passed where bf16 may be stored: a backend
 * casts it to its element type, the model only plans and passes it. */
typedef struct eng_act eng_act;

/* Activation element n on from p, stored as t (eng_act is opaque: no
 * pointer arithmetic on it, so every offset into an activation buffer is
 * taken here, sized by the dtype). */
static inline eng_act *eng_act_off(eng_dtype t, const eng_act *p, size_t n)
{
    return (eng_act *)((const char *)p + n * eng_dtype_size(t));
}

/* A bf16 value's bits widened to the float it stands for (exact), on the
 * host. */
static inline float eng_bf16_to_f32(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* A matmul's operand types (ops->matmul): A, B, C. */
typedef struct eng_mm {
    eng_dtype a, b, c;
} eng_mm;

static inline eng_mm eng_mm_of(eng_dtype a, eng_dtype b, eng_dtype c)
{
    eng_mm t;
    t.a = a;
    t.b = b;
    t.c = c;
    return t;
}

/* all fp32: the CPU's, and products on fp32 workspaces */
static inline eng_mm eng_mm_f32(void)
{
    return eng_mm_of(ENG_F32, ENG_F32, ENG_F32);
}

typedef struct eng_backend eng_backend;

/* One segment of an AdamW launch: n floats at `off` of the slabs the op
 * is given (p, grad, m, v alike), weight decay on (1) or off (0). */
typedef struct eng_adamw_seg {
    size_t off, n;
    int decay;
} eng_adamw_seg;

typedef struct eng_ops {
    /* ---- what the backend is */
    const char *name; /* for messages only ("cpu"): no code may choose by it */
    int is_host;      /* its pointers are host memory: callers may read them in place (no copies) */
    unsigned groups;  /* ENG_OPS_* it fills */
    /* Destroys a backend made by its create function (eng_backend_free):
     * the context, then b. */
    void (*backend_free)(eng_backend *b);

    /* Every op below takes the backend's context (eng_backend.ctx) first. */

    /* ---- memory (device memory for a device backend) */
    void *(*alloc)(void *ctx, size_t bytes);                                /* zeroed, 64-byte aligned, or NULL */
    void (*free)(void *ctx, void *p);
    void (*to_device)(void *ctx, void *dst, const void *src, size_t bytes); /* host -> backend */
    void (*to_host)(void *ctx, void *dst, const void *src, size_t bytes);   /* backend -> host, complete on return */
    /* in bytes, as alloc: the same two serve fp32 slabs and activations
     * of either dtype (the caller sizes them by eng_dtype_size) */
    void (*zero)(void *ctx, void *x, size_t bytes);
    void (*copy)(void *ctx, void *dst, const void *src, size_t bytes);

    /* ---- linear algebra
     * C (M, N) = alpha * op(A) op(B) + beta * C, op(A) (M, K), op(B) (K, N);
     * ta/tb: 1 = transposed (A stored (K, M) / B stored (N, K)).  Each
     * operand's storage type is in dt (eng_mm): a forward or input-gradient
     * product reads activations and the weights' low-precision copy and
     * writes an activation; a weight-gradient product reads two activations
     * and adds into fp32 gradients.  Products accumulate in fp32 whatever
     * the storage.  A and B share a type (cuBLASLt's rule); the CPU takes
     * fp32 only. */
    void (*matmul)(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda, const void *B,
                   int ldb, float beta, void *C, int ldc, eng_mm dt);
    /* D (M, N) = alpha * op(A) op(B) + X, X and D of stride ldd and type
     * dt.c: the residual add (resid[l+1] = resid[l] + a branch's
     * projection) made by the product itself, out of place so the block's
     * input X stays for the backward.  One pass over X and D, where a copy
     * of X then a beta-1 matmul made two (a device backend hands X to
     * cuBLASLt as C and D as D).  D must not overlap X, unless D == X (then
     * it is the beta-1 matmul). */
    void (*matmul_add)(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                       const void *B, int ldb, const void *X, void *D, int ldd, eng_mm dt);

    /* ---- embedding: out (N, C) = wte[tok[n]]; backward dwte (V, C) += rows of dout (N, C). */
    void (*embedding_fwd)(void *ctx, eng_act *out, const float *wte, const int32_t *tok, int N, int C);
    void (*embedding_bwd)(void *ctx, float *dwte, const eng_act *dout, const int32_t *tok, int N, int C);

    /* ---- RMSNorm: out = x * rstd * w, rstd (N) = 1/sqrt(mean(x^2) + eps).
     * backward: dx (N, C) +=, dw (C) +=. */
    void (*rmsnorm_fwd)(void *ctx, eng_act *out, float *rstd, const eng_act *x, const float *w, int N, int C,
                        float eps);
    void (*rmsnorm_bwd)(void *ctx, eng_act *dx, float *dw, const eng_act *dout, const eng_act *x, const float *w,
                        const float *rstd, int N, int C);

    /* ---- RoPE, rotate-half, in place on x (B*T rows of `ld`, H heads of hd
     * at the row's start); position of row n is n % T; cs (T, 2, hd/2) holds
     * cos (hd/2) then sin (hd/2) of pos * theta^(-2i/hd).  The backward is the inverse rotation
     * applied in place to the gradient. */
    void (*rope_fwd)(void *ctx, eng_act *x, int ld, int N, int T, int H, int hd, const float *cs);
    void (*rope_bwd)(void *ctx, eng_act *dx, int ld, int N, int T, int H, int hd, const float *cs);

    /* ---- causal softmax attention, heads H, key/value heads Hkv (H % Hkv == 0),
     * head size hd, scale 1/sqrt(hd).  q (B, T, H, hd) rows of ldq; k, v
     * (B, T, Hkv, hd) rows of ldkv; out (B, T, H, hd) rows of ldo.
     * lse (B, H, T): each query row's log-sum-exp of its scores, kept for the
     * backward, which recomputes the probabilities from it (memory O(T) per
     * head, as a fused GPU kernel keeps it).  backward: dq, dk, dv written
     * (=), same strides as q, k, v; it is also given the forward's out
     * (rows of ldo, as dout: the model keeps it for o_proj's gradient), so
     * a backend may take D = dO . O from it rather than compute the
     * forward again.  ws: attention_workspace(B, T, H, hd) floats, for
     * either pass. */
    size_t (*attention_workspace)(void *ctx, int B, int T, int H, int hd);
    void (*attention_fwd)(void *ctx, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                          const eng_act *v, int ldkv, int B, int T, int H, int Hkv, int hd, float *ws);
    void (*attention_bwd)(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, const float *lse, const eng_act *dout,
                          const eng_act *out, int ldo,
                          const eng_act *q, int ldq, const eng_act *k, const eng_act *v, int ldkv, int B, int T, int H,
                          int Hkv, int hd, float *ws);

    /* ---- SwiGLU: out (N, F) = silu(g) * u, g and u (N, F) rows of ldgu.
     * backward: dg, du written (=), rows of ldgu. */
    void (*swiglu_fwd)(void *ctx, eng_act *out, const eng_act *g, const eng_act *u, int ldgu, int N, int F);
    void (*swiglu_bwd)(void *ctx, eng_act *dg, eng_act *du, const eng_act *dout, const eng_act *g, const eng_act *u,
                       int ldgu,
                       int N, int F);

    /* ---- sigmoid output gate: out (N, D) = a (N, D) * sigmoid(z), z (N, G)
     * rows of ldz, G = D (elementwise) or G = heads (headwise: one gate per
     * group of D/G channels).  backward: da (N, D) =, dz (N, G) = (rows of ldz). */
    void (*gate_fwd)(void *ctx, eng_act *out, const eng_act *a, const eng_act *z, int ldz, int N, int D, int G);
    void (*gate_bwd)(void *ctx, eng_act *da, eng_act *dz, const eng_act *dout, const eng_act *a, const eng_act *z,
                     int ldz, int N,
                     int D, int G);

    /* ---- Titans (docs/titans.md; engine/cpu/dconv.c, silu_norm.c, swa.c,
     * titans_mem.c give each reference).
     * dconv: depthwise causal convolution over time, kernel w (C, K <= 16), tap
     * K-1 on the current position, positions restart every T rows.
     * backward: dx (=), dw (+=). */
    void (*dconv_fwd)(void *ctx, eng_act *y, int ldy, const eng_act *x, int ldx, const float *w, int N, int T, int C,
                      int K);
    void (*dconv_bwd)(void *ctx, eng_act *dx, int lddx, float *dw, const eng_act *dy, int lddy, const eng_act *x,
                      int ldx,
                      const float *w, int N, int T, int C, int K);
    /* silu_norm: y = silu(x) on C columns, then the first G groups of gw
     * columns scaled to unit L2 norm (rn (N, G) = 1/sqrt(sum^2 + eps)).
     * backward: dx (=; may be dy with the same ld). */
    void (*silu_norm_fwd)(void *ctx, eng_act *y, int ldy, float *rn, const eng_act *x, int ldx, int N, int C, int G,
                          int gw,
                          float eps);
    void (*silu_norm_bwd)(void *ctx, eng_act *dx, int lddx, const eng_act *dy, int lddy, const eng_act *y, int ldy,
                          const float *rn, const eng_act *x, int ldx, int N, int C, int G, int gw);
    /* swa: causal softmax attention where query t sees keys t-window+1..t
     * and Np persistent key/value entries kp, vp (Np, ldp: Hkv x hd, shared
     * by all sequences, no position); shapes and lse as attention_fwd.
     * backward: dq, dk, dv (=), dkp, dvp (+=).  ws: swa_workspace floats. */
    size_t (*swa_workspace)(void *ctx, int B, int T, int Hkv, int hd, int window, int Np);
    void (*swa_fwd)(void *ctx, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                    const eng_act *v,
                    int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T, int H, int Hkv, int hd,
                    int window, float *ws);
    void (*swa_bwd)(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, float *dkp, float *dvp, const float *lse,
                    const eng_act *dout, int ldo, const eng_act *q, int ldq, const eng_act *k, const eng_act *v,
                    int ldkv,
                    const float *kp, const float *vp, int ldp, int Np, int B, int T, int H, int Hkv, int hd, int window,
                    float *ws);
    /* titans_mem: per (sequence, head) the neural memory (depth 1: W (hd,
     * hd); 2: W1 (hm, hd), W2 (hd, hm) with SiLU) trained online in chunks
     * of `chunk` tokens on ||M(k_t) - v_t||^2 with momentum and decay from
     * the gates' pre-activations (N, ldg: theta, eta, alpha, H each); y_t
     * reads the memory as of the last completed chunk.  q, k, v, y (N, ld):
     * H x hd.  w0: the learned initial weights (depth 2: W1 of every head,
     * then W2 of every head).  states (B, H, ceil(T/chunk), 2, Pm) are
     * written by the forward for the backward.  backward: dq, dk, dv,
     * dgates (=), dw0 (+=).  ws: titans_mem_workspace floats. */
    size_t (*titans_mem_workspace)(void *ctx, int B, int T, int H, int hd, int hm, int depth, int chunk);
    void (*titans_mem_fwd)(void *ctx, eng_act *y, int ldy, float *states, const eng_act *q, const eng_act *k,
                           const eng_act *v,
                           int ldqkv, const eng_act *gates, int ldg, const float *w0, int B, int T, int H, int hd,
                           int hm,
                           int depth, int chunk, float max_lr, float *ws);
    void (*titans_mem_bwd)(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, int ldd, eng_act *dgates, int lddg,
                           float *dw0,
                           const eng_act *dy, int ldy, const float *states, const eng_act *q, const eng_act *k,
                           const eng_act *v, int ldqkv, const eng_act *gates, int ldg, int B, int T, int H, int hd,
                           int hm,
                           int depth, int chunk, float max_lr, float *ws);

    /* ---- softmax cross-entropy over logits (N, V), targets (N) (< 0: not
     * counted, loss 0).  fwd: losses (N) = -log softmax(logits)[target].
     * bwd: logits are overwritten in place by d(sum_n dscale * loss_n)/dlogits
     * (rows with target < 0 become 0). */
    void (*xent_fwd)(void *ctx, float *losses, const float *logits, const int32_t *targets, int N, int V);
    void (*xent_bwd)(void *ctx, float *logits, const int32_t *targets, int N, int V, float dscale);

    /* ---- optimizer (over the nseg segments of a flat slab: one launch
     * on a device, whatever the number of tensors)
     * AdamW (decoupled weight decay): g = grad_scale * grad;
     *   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
     *   p -= lr * (m / bc1 / (sqrt(v / bc2) + eps) + wd * p),
     * wd on the segments with decay (0 on the others), bc1 = 1 - b1^t,
     * bc2 = 1 - b2^t (passed in).  seg is host memory, sorted by off, not
     * overlapping; the op does not keep it.
     * p_lp (NULL: none): the weight copy the products read (the model's
     * params_lp), n elements of lp_dtype at p's offsets; each updated p is
     * also stored there, rounded to nearest even (bf16) or as it is (fp32),
     * in the same pass, so the copy never lags the master. */
    void (*adamw)(void *ctx, float *p, const float *grad, float *m, float *v, const eng_adamw_seg *seg, int nseg,
                  float lr, float b1, float b2, float eps, float wd, float bc1, float bc2, float grad_scale,
                  void *p_lp, eng_dtype lp_dtype);
    /* sum of squares, accumulated in double (for the global gradient norm) */
    double (*sumsq)(void *ctx, const float *x, size_t n);
    /* y (n) += alpha * x (n): gradient accumulation across optimizer steps
     * (hope_attn's slow levels) */
    void (*axpy)(void *ctx, float *y, const float *x, size_t n, float alpha);

    /* ---- issue 24: a step with no host round trip but its scalars.
     * (Added after the ops above, which keep their signatures; activations
     * are eng_act, per-row statistics, losses and weight gradients fp32.)
     *
     * Fused classifier: the LM head, logits = x W^T with x (N, C) and
     * W (V, C), and softmax cross-entropy over targets (N) (< 0: not
     * counted), in chunks of rows, so that the (N, V) logits never exist
     * whole on a device backend.  ws: classifier_workspace(N, V, C) floats
     * (a chunk's logits); pass the backward the same ws, untouched since
     * its forward: a backend whose one chunk is every row (the CPU) reuses
     * the forward's logits instead of recomputing them.
     * fwd: losses (N) = -log softmax(x_n W^T)[target_n] (0 where not
     *   counted); *loss_acc (one double, backend memory) += the mean of the
     *   counted losses (summed in double in a fixed order, then divided by
     *   their count; + 0 when none counts).  Nothing comes to the host.
     * bwd: with dl = dscale (softmax - onehot(target)) (rows not counted:
     *   0), dx (N, C) = dl W (written), dw (V, C) += dl^T x.
     * w_lp: W as the products read it, V x C elements of the activation
     *   dtype: the model's weight copy at the head (params_lp, which on
     *   fp32 is the master itself), as a matmul's weight operand; the fp32
     *   master is not read.  With bf16 activations the products are
     *   bf16 x bf16 with fp32 accumulation: the logits and their softmax
     *   are fp32, dl is rounded to bf16 once before dx's and dw's
     *   products. */
    size_t (*classifier_workspace)(void *ctx, int N, int V, int C);
    void (*classifier_fwd)(void *ctx, float *losses, double *loss_acc, const eng_act *x, const void *w_lp,
                           const int32_t *targets, int N, int V, int C, float *ws);
    void (*classifier_bwd)(void *ctx, eng_act *dx, float *dw, const eng_act *x, const void *w_lp,
                           const int32_t *targets, int N, int V, int C, float dscale, float *ws);
    /* Embedding backward by token: dwte (V, C) += the rows of dout (N, C),
     * its positions grouped by token id (a stable counting sort the model
     * does on the host, where the tokens come from): ids (U) the distinct
     * ids, starts (U + 1) where each id's positions begin in order (N,
     * ascending within an id).  U is read from *n_ids (backend memory, sent
     * with the sort: no per-call value is an argument, so a CUDA graph
     * replays the op for any batch), U <= max_U (a device backend sizes
     * its launch by max_U; what lies past U in ids and starts is not
     * read).  One owner per (id, channel) sums its rows in position order:
     * parallel over ids, and the order of embedding_bwd's sums
     * (deterministic, the same bits). */
    void (*embedding_bwd_sorted)(void *ctx, float *dwte, const eng_act *dout, const int32_t *order,
                                 const int32_t *ids, const int32_t *starts, const int32_t *n_ids, int max_U, int C);
    /* sumsq into *out (one double, backend memory) without waiting: the
     * gradient norm travels with the step's other scalars in one copy */
    void (*sumsq_into)(void *ctx, double *out, const float *x, size_t n);
    /* The storage type of this backend's activations (eng_act), fixed
     * before a model is planned on it: the model sizes its activation
     * buffers by it (eng_dtype_size).  The CPU's is ENG_F32 always. */
    eng_dtype (*act_dtype)(void *ctx);
    /* dst (n elements of type t) = src (n floats), rounded to nearest even
     * (bf16) or copied (fp32): the weight copy made whole from the master
     * where the master changed outside adamw (initialisation, a checkpoint
     * load, ZeRO-1's gather).  bf16 rounds as adamw's p_lp does, the same
     * bits for the same float. */
    void (*cast)(void *ctx, void *dst, eng_dtype t, const float *src, size_t n);
    /* y (n) += alpha x (n) on activations: a residual add the model makes
     * outside a matmul's beta (Titans MAL's x2 = x + nm).  fp32 math, one
     * rounding per element where stored in bf16; axpy's bits in fp32. */
    void (*act_axpy)(void *ctx, eng_act *y, const eng_act *x, size_t n, float alpha);

    /* ---- issue 24: CUDA graphs (train.cuda_graph; NULL on a backend
     * without them: the CPU's).  graph_begin: from now on the ops' device
     * work is recorded (stream capture), not run; nonzero when it cannot
     * start (the backend's kept error says why).  Between begin and end
     * only ops whose every per-call value is an argument fixed for the
     * graph's life or lives in backend memory may be called; one that
     * cannot be recorded (an allocation, a copy to or from the host, a
     * wait) fails the capture.  graph_end: the recorded work as a graph to
     * launch, NULL when the capture failed (the kept error names the
     * call).  graph_launch: runs it, in order with the ops around it;
     * graph_free: releases it. */
    int (*graph_begin)(void *ctx);
    void *(*graph_end)(void *ctx);
    void (*graph_launch)(void *ctx, void *graph);
    void (*graph_free)(void *ctx, void *graph);
} eng_ops;

/* A backend: its op table and the context every op receives.  Made by a
 * backend's create function (engine/cpu/backend.h: eng_backend_cpu_create),
 * destroyed by eng_backend_free; the models, trainers and evaluators built
 * on it borrow it and must be freed first. */
struct eng_backend {
    const eng_ops *ops;
    void *ctx;
};

/* Destroys b (NULL: nothing). */
static inline void eng_backend_free(eng_backend *b)
{
    if (b)
        b->ops->backend_free(b);
}

#endif
