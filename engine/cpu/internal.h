/* internal.h: internals of the CPU backend (engine/cpu/): its context, the
 * prototypes of every op, one family per file, and the CBLAS, thread and
 * workspace helpers they share.  Only engine/cpu/backend.c puts the ops in
 * the eng_ops table; the model never includes this header.
 *
 * Threads: every OpenMP region of an op runs on the context's thread count
 * (eng__cpu_nt), never on a process-wide one, so two backends with other
 * counts can live side by side.  The BLAS runs single-threaded (blas.c says
 * why); OpenMP regions that call it (attention, per head) first switch it
 * to one thread explicitly (eng__blas_set_threads), so 2 cores never carry
 * 4 busy threads. */
#ifndef TLM_ENGINE_CPU_INTERNAL_H
#define TLM_ENGINE_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model/ops.h" /* eng_act */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine/model/ops.h"

/* Vectorisation: the hot inner loops carry `#pragma omp simd`, which
 * vectorises them whatever the optimisation level (the build's CFLAGS, -O2
 * by default, come after the kernels' -O3 and would leave them scalar). */

/* Below this many elements (or multiply-adds) a kernel runs on the calling
 * thread: waking a team costs more than the work, and on a loaded machine
 * (make -j check) every barrier can cost a time slice. */
#define ENG_PAR_MIN 32768

/* exp(x) for float, written so that loops calling it vectorize (libm's
 * expf is a scalar call): x = n ln2 + r with |r| <= ln2/2 (Cody-Waite
 * split of ln2), exp(r) by its degree-6 Taylor polynomial (truncation
 * < 2e-7 relative), 2^n built in the exponent bits.  Inputs are clamped to
 * [-87, 88], so the result is never 0, inf or subnormal: callers only use it
 * where exp(-87) ~ 1.6e-38 is as good as 0 (softmax, sigmoid).
 * tests/engine/backend/test_backend_ops checks it against exp() over the whole range. */
static inline float eng__expf(float x)
{
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float n = (x * 1.44269504088896341f + shifter) - shifter;
    float r = x - n * 0.693145751953125f;
    r = r - n * 1.428606765330187045e-06f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    union {
        uint32_t u;
        float f;
    } s;
    s.u = (uint32_t)((int32_t)n + 127) << 23;
    return p * s.f;
}

/* The CPU backend's context: what its ops need besides their arguments
 * (eng_backend.ctx, engine/model/ops.h). */
enum {
    ENG__CPU_WS_ATTENTION,  /* attention.c */
    ENG__CPU_WS_SWA,        /* swa.c */
    ENG__CPU_WS_TITANS_MEM, /* titans_mem.c */
    ENG__CPU_WS_FAMILIES
};
typedef struct eng__cpu {
    int threads; /* the OpenMP team of every op (eng_backend_cpu_set_threads) */
    /* per op family with a workspace: the slots of the smallest workspace
     * sized through this context (INT_MAX: none yet); see eng__cpu_ws_size */
    int ws_slots[ENG__CPU_WS_FAMILIES];
} eng__cpu;

/* the OpenMP team size of ctx's ops */
static inline int eng__cpu_nt(const void *ctx)
{
    return ((const eng__cpu *)ctx)->threads;
}

/* this thread's index and the team size inside an OpenMP region (0, 1 without OpenMP) */
static inline int eng__omp_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}
static inline int eng__omp_nt(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

/* backend.c: per-thread workspace slots.  The passes that split
 * (sequence, head) units over threads (attention, swa, titans_mem) give each
 * thread one slot of slot_floats of the workspace; a family may keep more
 * after the slots.  Sizing a workspace (the family's *_workspace op) makes
 * one slot per thread of the context now, and a pass runs on at most as
 * many threads as the smallest workspace sized through the context has
 * slots: threads may be raised after a model planned its workspaces
 * (tests compare 1 and 2 threads on one backend), and no pass may then
 * write past a slot it was not given.  Which slot a unit uses never
 * changes its numbers. */
size_t eng__cpu_ws_size(void *ctx, int family, size_t slot_floats); /* slots x slot_floats */
int eng__cpu_ws_team(const void *ctx, int family);                  /* threads a pass of the family may use */
/* the calling thread's slot */
static inline float *eng__cpu_ws_slot(float *ws, size_t slot_floats)
{
    return ws + (size_t)eng__omp_id() * slot_floats;
}

/* runtime.c: the cores this process may run on (its CPU affinity) */
int eng__cpu_cores(void);

/* blas.c */
void eng__blas_set_threads(int n);
int eng__blas_threads(void);
void eng__cpu_matmul(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float beta, float *C, int ldc);
/* the op table's matmul (ops.h: operand types, fp32 only here) */
void eng__cpu_matmul_op(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                        const void *B, int ldb, float beta, void *C, int ldc, eng_mm dt);
void eng__cpu_matmul_add_op(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                            const void *B, int ldb, const void *X, void *D, int ldd, eng_mm dt);

/* memory.c */
void *eng__cpu_alloc(void *ctx, size_t bytes);
void eng__cpu_free(void *ctx, void *p);
void eng__cpu_memcpy(void *ctx, void *dst, const void *src, size_t bytes);
void eng__cpu_zero(void *ctx, void *x, size_t bytes);
void eng__cpu_copy(void *ctx, void *dst, const void *src, size_t bytes);

/* embedding.c */
void eng__cpu_embedding_fwd(void *ctx, eng_act *out, const float *wte, const int32_t *tok, int N, int C);
void eng__cpu_embedding_bwd(void *ctx, float *dwte, const eng_act *dout, const int32_t *tok, int N, int C);
void eng__cpu_embedding_bwd_sorted(void *ctx, float *dwte, const eng_act *dout, const int32_t *order,
                                   const int32_t *ids, const int32_t *starts, const int32_t *n_ids, int max_U, int C);

/* rmsnorm.c */
void eng__cpu_rmsnorm_fwd(void *ctx, eng_act *out, float *rstd, const eng_act *x, const float *w, int N, int C,
                          float eps);
void eng__cpu_rmsnorm_bwd(void *ctx, eng_act *dx, float *dw, const eng_act *dout, const eng_act *x, const float *w,
                          const float *rstd, int N, int C);

/* rope.c */
void eng__cpu_rope_fwd(void *ctx, eng_act *x, int ld, int N, int T, int H, int hd, const float *cs);
void eng__cpu_rope_bwd(void *ctx, eng_act *dx, int ld, int N, int T, int H, int hd, const float *cs);

/* attention.c */
size_t eng__cpu_attention_workspace(void *ctx, int B, int T, int H, int hd);
void eng__cpu_attention_fwd(void *ctx, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                            const eng_act *v, int ldkv, int B, int T, int H, int Hkv, int hd, float *ws);
void eng__cpu_attention_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, const float *lse, const eng_act *dout,
                            const eng_act *out,
                            int ldo,
                            const eng_act *q, int ldq, const eng_act *k, const eng_act *v, int ldkv, int B, int T,
                            int H,
                            int Hkv, int hd, float *ws);

/* swiglu.c */
void eng__cpu_swiglu_fwd(void *ctx, eng_act *out, const eng_act *g, const eng_act *u, int ldgu, int N, int F);
void eng__cpu_swiglu_bwd(void *ctx, eng_act *dg, eng_act *du, const eng_act *dout, const eng_act *g, const eng_act *u,
                         int ldgu,
                         int N, int F);

/* gate.c */
void eng__cpu_gate_fwd(void *ctx, eng_act *out, const eng_act *a, const eng_act *z, int ldz, int N, int D, int G);
void eng__cpu_gate_bwd(void *ctx, eng_act *da, eng_act *dz, const eng_act *dout, const eng_act *a, const eng_act *z,
                       int ldz,
                       int N, int D, int G);

/* dconv.c, silu_norm.c, swa.c, titans_mem.c: Titans (engine/model/ops.h) */
void eng__cpu_dconv_fwd(void *ctx, eng_act *y, int ldy, const eng_act *x, int ldx, const float *w, int N, int T, int C,
                        int K);
void eng__cpu_dconv_bwd(void *ctx, eng_act *dx, int lddx, float *dw, const eng_act *dy, int lddy, const eng_act *x,
                        int ldx,
                        const float *w, int N, int T, int C, int K);
void eng__cpu_silu_norm_fwd(void *ctx, eng_act *y, int ldy, float *rn, const eng_act *x, int ldx, int N, int C, int G,
                            int gw, float eps);
void eng__cpu_silu_norm_bwd(void *ctx, eng_act *dx, int lddx, const eng_act *dy, int lddy, const eng_act *y, int ldy,
                            const float *rn, const eng_act *x, int ldx, int N, int C, int G, int gw);
size_t eng__cpu_swa_workspace(void *ctx, int B, int T, int Hkv, int hd, int window, int Np);
void eng__cpu_swa_fwd(void *ctx, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                      const eng_act *v, int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T,
                      int H,
                      int Hkv, int hd, int window, float *ws);
void eng__cpu_swa_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, float *dkp, float *dvp, const float *lse,
                      const eng_act *dout, int ldo, const eng_act *q, int ldq, const eng_act *k, const eng_act *v,
                      int ldkv,
                      const float *kp, const float *vp, int ldp, int Np, int B, int T, int H, int Hkv, int hd,
                      int window, float *ws);
size_t eng__cpu_titans_mem_workspace(void *ctx, int B, int T, int H, int hd, int hm, int depth, int chunk);
void eng__cpu_titans_mem_fwd(void *ctx, eng_act *y, int ldy, float *states, const eng_act *q, const eng_act *k,
                             const eng_act *v, int ldqkv, const eng_act *gates, int ldg, const float *w0, int B, int T,
                             int H, int hd, int hm, int depth, int chunk, float max_lr, float *ws);
void eng__cpu_titans_mem_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, int ldd, eng_act *dgates, int lddg,
                             float *dw0,
                             const eng_act *dy, int ldy, const float *states, const eng_act *q, const eng_act *k,
                             const eng_act *v, int ldqkv, const eng_act *gates, int ldg, int B, int T, int H, int hd,
                             int hm, int depth, int chunk, float max_lr, float *ws);

/* xent.c */
void eng__cpu_xent_fwd(void *ctx, float *losses, const float *logits, const int32_t *targets, int N, int V);
void eng__cpu_xent_bwd(void *ctx, float *logits, const int32_t *targets, int N, int V, float dscale);

/* adamw.c */
void eng__cpu_adamw(void *ctx, float *p, const float *grad, float *m, float *v, const eng_adamw_seg *seg, int nseg,
                    float lr, float b1, float b2, float eps, float wd, float bc1, float bc2, float grad_scale,
                    void *p_lp, eng_dtype lp_dtype);
void eng__cpu_cast(void *ctx, void *dst, eng_dtype t, const float *src, size_t n);
double eng__cpu_sumsq(void *ctx, const float *x, size_t n);
void eng__cpu_sumsq_into(void *ctx, double *out, const float *x, size_t n);
/* accumulate.c */
void eng__cpu_axpy(void *ctx, float *y, const float *x, size_t n, float alpha);
void eng__cpu_act_axpy(void *ctx, eng_act *y, const eng_act *x, size_t n, float alpha);

/* classifier.c */
size_t eng__cpu_classifier_workspace(void *ctx, int N, int V, int C);
void eng__cpu_classifier_fwd(void *ctx, float *losses, double *loss_acc, const eng_act *x, const void *w_lp,
                             const int32_t *targets, int N, int V, int C, float *ws);
void eng__cpu_classifier_bwd(void *ctx, eng_act *dx, float *dw, const eng_act *x, const void *w_lp,
                             const int32_t *targets, int N, int V, int C, float dscale, float *ws);

#endif
