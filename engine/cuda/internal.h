/* internal.h: internals of the CUDA backend (the .cu files of engine/cuda/): its
 * context, the sticky error every op leaves instead of returning one, the
 * launch every kernel goes through, and the ops each file defines for
 * backend.cu's table.  C++ only, in two builds of the same sources:
 *   - nvcc (engine/libtlmcuda.a): the CUDA toolkit's headers, <<<>>>
 *     launches, cuBLASLt loaded with dlopen;
 *   - the emulated build (engine/libtlmcuda_emu.a, clang++ -DENG_CUDA_EMU):
 *     engine/cuda/emu/cuda.h instead of those headers, launches run on the
 *     CPU under its checks, cuBLASLt's stand-ins in the function table.
 *     Every .cu file's body sits between ENG__CU_BEGIN and ENG__CU_END
 *     (namespace eng_cu_emu there), and the public names of backend.h get
 *     an _emu_ infix, so both builds link into one program.
 *
 * Errors: ops return nothing (engine/model/ops.h), so the first failed
 * launch, copy or cuBLASLt call is kept in the context (ENG__CU_CHECK) and
 * every op after it returns at once; eng_backend_cuda_status reports it,
 * and sumsq returns NaN meanwhile, so a caller that only looks at the
 * gradient norm stops too. */
#ifndef TLM_ENGINE_CUDA_INTERNAL_H
#define TLM_ENGINE_CUDA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef ENG_CUDA_EMU
#include "engine/cuda/emu/cuda.h"
#define ENG__CU_BEGIN namespace eng_cu_emu {
#define ENG__CU_END }
/* backend.h's names in this build (it declares both) */
#define eng_cuda_device_count eng_cuda_emu_device_count
#define eng_cuda_device_info_get eng_cuda_emu_device_info_get
#define eng_backend_cuda_create eng_backend_cuda_emu_create
#define eng_backend_cuda_status eng_backend_cuda_emu_status
#define eng_backend_cuda_set_fast_matmul eng_backend_cuda_emu_set_fast_matmul
#define eng_backend_cuda_memory eng_backend_cuda_emu_memory
#define eng_backend_cuda_set_dtype eng_backend_cuda_emu_set_dtype
#define eng_backend_cuda_set_attention_cudnn eng_backend_cuda_emu_set_attention_cudnn
/* k<<<grid, block, smem, stream>>>(args): the emulator's launch, which
 * checks the pointer arguments and runs the grid before it returns */
#define ENG__CU_LAUNCH(k, grid, block, smem, stream, ...)                                                      \
    ::eng_cu_emu::launch(#k, #__VA_ARGS__, ENG_CU_EMU_SITE, k, (grid), (block), (smem), (stream), __VA_ARGS__)
/* the table's entries are the stand-ins (emu/cublaslt.h) */
#define ENG__LT_QUAL(f) ::eng_cu_emu::eng_lt_standin_##f
#else
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#define ENG__CU_BEGIN
#define ENG__CU_END
/* the one launch both builds spell the same way */
#define ENG__CU_LAUNCH(k, grid, block, smem, stream, ...) k<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#define ENG__LT_QUAL(f) ::f
#endif

extern "C" {
#include "common/err.h"
#include "engine/model/ops.h"
}
#include "engine/cuda/elem.h"
#include "engine/cuda/mma.h"
#include "engine/cuda/plan.h"

ENG__CU_BEGIN

/* A kernel's element load and store in its storage type T (float, or
 * __nv_bfloat16 for bf16 activations): the arithmetic is fp32 either way,
 * a bf16 store rounds to nearest even (deterministic, as cuda_bf16.h). */
__device__ __forceinline__ float eng__cu_ld(float x)
{
    return x;
}
__device__ __forceinline__ float eng__cu_ld(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}
template <typename T> __device__ __forceinline__ T eng__cu_st(float x);
template <> __device__ __forceinline__ float eng__cu_st<float>(float x)
{
    return x;
}
template <> __device__ __forceinline__ __nv_bfloat16 eng__cu_st<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

/* A kernel's launcher templated on the activation storage T, called with
 * the context's type: f<float> or f<__nv_bfloat16>(args).  Each .cu file
 * casts its eng_act pointers to T there, so the fp32 instantiation is the
 * kernel as it was, bit for bit. */
#define ENG__CU_ACT(c, f, ...) ((c)->act == ENG_BF16 ? f<__nv_bfloat16>(__VA_ARGS__) : f<float>(__VA_ARGS__))

/* cuBLASLt, loaded at run time (dlopen at backend creation, not linked):
 * the library is 540 MB, and every tlm-worker start, GPU or not, would
 * map and relocate it.  The functions the backend calls, by name (the
 * emulated build fills the table with their stand-ins). */
#define ENG__LT_FUNCS(X)                                                                                        \
    X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetStatusString) X(cublasLtMatmulDescCreate)                \
    X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)               \
    X(cublasLtMatrixLayoutDestroy) X(cublasLtMatrixLayoutSetAttribute) X(cublasLtMatmulPreferenceCreate)       \
    X(cublasLtMatmulPreferenceDestroy)                                                                          \
    X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)
typedef struct eng__lt_api {
    void *dl;
#define ENG__LT_PTR(f) decltype(&ENG__LT_QUAL(f)) f;
    ENG__LT_FUNCS(ENG__LT_PTR)
#undef ENG__LT_PTR
} eng__lt_api;

/* cuBLASLt algorithms chosen per matmul shape, kept for the next call: a
 * tapered model's products have a shape per layer width (test_cuda_plans:
 * up to 173 at the presets, 1.3b's 32 layers), and a plan past the table
 * would be made again at every call, heuristic included */
#define ENG__CU_PLANS 512
typedef struct eng__cu_plan {
    int used;
    int ta, tb, M, N, K, lda, ldb, ldc; /* beta is the call's: the heuristic is not told it */
    int align; /* the operands' smallest pointer alignment, bytes (4 .. 256) */
    int fast;  /* made for bf16 tensor-core products (eng_backend_cuda_set_fast_matmul) */
    eng_dtype dab, dc; /* A's and B's storage type, C's */
    int batch;             /* strided batch count (1: a single product) */
    long long sa, sb, sc;  /* the batch strides of A, B, C, elements (0 when batch is 1) */
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
} eng__cu_plan;

typedef struct eng__cu_alloc_rec {
    void *p;
    size_t bytes;
} eng__cu_alloc_rec;

struct eng__dnn; /* sdpa_cudnn.cu's cuDNN state */

/* One AdamW segment as the kernel reads it: start = the elements of the
 * segments before it (the launch's index space is their concatenation). */
typedef struct eng__cu_seg {
    size_t off, n, start;
    int decay;
} eng__cu_seg;

typedef struct eng__cu {
    int device;
    cudaStream_t stream;
    eng__lt_api api;
    cublasLtHandle_t lt;
    void *lt_ws; /* cuBLASLt's workspace */
    size_t lt_ws_bytes;
    double *partials; /* sumsq's per-block sums (ENG__CU_SUMSQ_BLOCKS) */
    double *host_sum; /* pinned: sumsq's result */
    eng__cu_plan plans[ENG__CU_PLANS];
    int n_plans;
    int fast_matmul; /* CUBLAS_COMPUTE_32F_FAST_16BF instead of CUBLAS_COMPUTE_32F */
    eng_dtype act;   /* the activations' storage type (eng_backend_cuda_set_dtype) */
    int attn_cudnn;  /* fused attention through cuDNN, not flash.cu (eng_backend_cuda_set_attention_cudnn) */
    /* AdamW's segment table: the last one uploaded (host copy, to skip
     * the upload when the next step's is the same) and its device copy */
    eng__cu_seg *seg_host, *seg_dev;
    int seg_n, seg_cap;
    eng__cu_alloc_rec *allocs;
    int n_allocs, cap_allocs;
    size_t bytes_now, bytes_peak;
    struct eng__dnn *dnn; /* loaded at sdpa_cudnn.cu's first call; NULL before */
    int status; /* first error: tlm_status, 0 none */
    char msg[512];
} eng__cu;

#define ENG__CU_SUMSQ_BLOCKS ENG_CU_SUMSQ_BLOCKS
#define ENG__CU_THREADS 256

/* Keeps the first error; 1 when the context has one (now or before). */
int eng__cu_fail(eng__cu *c, int code, const char *what, const char *detail);
static inline int eng__cu_check(eng__cu *c, cudaError_t rc, const char *what)
{
    if (rc == cudaSuccess)
        return c->status != 0;
    return eng__cu_fail(c, rc == cudaErrorMemoryAllocation ? TLM_ENOMEM : TLM_EINTERNAL, what,
                        cudaGetErrorString(rc));
}
/* after a launch */
#define ENG__CU_LAUNCHED(c, what) eng__cu_check((c), cudaGetLastError(), (what))

/* grid size for n elements of ENG__CU_THREADS threads, capped (grid-stride loops) */
static inline unsigned eng__cu_grid(size_t n)
{
    size_t g = (n + ENG__CU_THREADS - 1) / ENG__CU_THREADS;
    return (unsigned)(g < 1 ? 1 : (g > 65535 * 4 ? 65535 * 4 : g));
}

/* ops.cu */
void eng__cu_embedding_fwd(void *ctx, eng_act *out, const float *wte, const int32_t *tok, int N, int C);
void eng__cu_embedding_bwd(void *ctx, float *dwte, const eng_act *dout, const int32_t *tok, int N, int C);
void eng__cu_rmsnorm_fwd(void *ctx, eng_act *out, float *rstd, const eng_act *x, const float *w, int N, int C,
                         float eps);
void eng__cu_rmsnorm_bwd(void *ctx, eng_act *dx, float *dw, const eng_act *dout, const eng_act *x, const float *w,
                         const float *rstd, int N, int C);
void eng__cu_rope_fwd(void *ctx, eng_act *x, int ld, int N, int T, int H, int hd, const float *cs);
void eng__cu_rope_bwd(void *ctx, eng_act *dx, int ld, int N, int T, int H, int hd, const float *cs);
void eng__cu_swiglu_fwd(void *ctx, eng_act *out, const eng_act *g, const eng_act *u, int ldgu, int N, int F);
void eng__cu_swiglu_bwd(void *ctx, eng_act *dg, eng_act *du, const eng_act *dout, const eng_act *g, const eng_act *u,
                        int ldgu,
                        int N, int F);
void eng__cu_gate_fwd(void *ctx, eng_act *out, const eng_act *a, const eng_act *z, int ldz, int N, int D, int G);
void eng__cu_gate_bwd(void *ctx, eng_act *da, eng_act *dz, const eng_act *dout, const eng_act *a, const eng_act *z,
                      int ldz,
                      int N, int D, int G);
void eng__cu_xent_fwd(void *ctx, float *losses, const float *logits, const int32_t *targets, int N, int V);
void eng__cu_xent_bwd(void *ctx, float *logits, const int32_t *targets, int N, int V, float dscale);
void eng__cu_adamw(void *ctx, float *p, const float *grad, float *m, float *v, const eng_adamw_seg *seg, int nseg,
                   float lr, float b1, float b2, float eps, float wd, float bc1, float bc2, float grad_scale,
                   void *p_lp, eng_dtype lp_dtype);
void eng__cu_cast(void *ctx, void *dst, eng_dtype t, const float *src, size_t n);
void eng__cu_act_axpy(void *ctx, eng_act *y, const eng_act *x, size_t n, float alpha);
double eng__cu_sumsq(void *ctx, const float *x, size_t n);
void eng__cu_axpy(void *ctx, float *y, const float *x, size_t n, float alpha);
void eng__cu_embedding_bwd_sorted(void *ctx, float *dwte, const eng_act *dout, const int32_t *order,
                                  const int32_t *ids, const int32_t *starts, const int32_t *n_ids, int max_U, int C);
void eng__cu_sumsq_into(void *ctx, double *out, const float *x, size_t n);

/* classifier.cu */
size_t eng__cu_classifier_workspace(void *ctx, int N, int V, int C);
void eng__cu_classifier_fwd(void *ctx, float *losses, double *loss_acc, const eng_act *x, const void *w_lp,
                            const int32_t *targets, int N, int V, int C, float *ws);
void eng__cu_classifier_bwd(void *ctx, eng_act *dx, float *dw, const eng_act *x, const void *w_lp,
                            const int32_t *targets, int N, int V, int C, float dscale, float *ws);

/* attention.cu */
size_t eng__cu_attention_workspace(void *ctx, int B, int T, int H, int hd);
void eng__cu_attention_fwd(void *ctx, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                           const eng_act *v, int ldkv, int B, int T, int H, int Hkv, int hd, float *ws);
void eng__cu_attention_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, const float *lse, const eng_act *dout,
                           const eng_act *out,
                           int ldo,
                           const eng_act *q, int ldq, const eng_act *k, const eng_act *v, int ldkv, int B, int T, int H,
                           int Hkv, int hd, float *ws);

/* flash.cu: causal flash attention on the tensor cores, bf16 in and out
 * (FlashAttention-2 style; the op's strides: q rows of ldq, k and v of ldkv,
 * out and dout of ldo, elements; lse (B, H, T) fp32, natural log).  hd 64
 * or 128, pointers 16-byte aligned, strides multiples of 8, else the
 * context's TLM_ECONFIG.  The backward writes dq with ldq, dk and dv with
 * ldkv, and uses eng__flash_workspace_floats floats of ws (D). */
size_t eng__flash_workspace_floats(int B, int T, int H);
/* What both attention candidates (flash.cu, sdpa_cudnn.cu) take: hd 64 or
 * 128, H a multiple of Hkv, strides multiples of 8 elements; else the
 * context's TLM_ECONFIG naming `what`, and 0.  Operands must also be
 * 16-byte aligned (eng__cu_aligned16). */
int eng__attn_shape_ok(eng__cu *c, const char *what, int hd, int H, int Hkv, int ldo, int ldq, int ldkv);
static inline int eng__cu_aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}
void eng__flash_fwd(void *ctx, __nv_bfloat16 *out, int ldo, float *lse, const __nv_bfloat16 *q, int ldq,
                    const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv, int hd,
                    float scale);
void eng__flash_bwd(void *ctx, __nv_bfloat16 *dq, __nv_bfloat16 *dk, __nv_bfloat16 *dv, const float *lse,
                    const __nv_bfloat16 *dout, const __nv_bfloat16 *out, int ldo, const __nv_bfloat16 *q, int ldq,
                    const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv, int hd,
                    float scale, float *ws);

/* sdpa_cudnn.cu: the same attention through cuDNN's graph API (issue 24's
 * other candidate), the flash launchers' arguments and refusals; ws is not
 * used (cuDNN's workspace is the context's).  cuDNN is loaded at the
 * first call: where it cannot be, available says why (0) and the
 * launchers fail with TLM_ECONFIG.  prepare makes (and caches) the plan of
 * a shape without running it: descriptor construction only.  release
 * frees the plans and unloads cuDNN (backend.cu's context teardown).
 * test_fault: test_flash's deliberate mapping mistakes (1: K's row stride
 * taken as hd; 2: Q declared fp32; 3: O's tensor without its unique id),
 * 0 in every real use. */
int eng__sdpa_cudnn_available(void *ctx, char *why, size_t cap);
int eng__sdpa_cudnn_prepare(void *ctx, int bwd, int B, int T, int H, int Hkv, int hd, int ldo, int ldq, int ldkv);
void eng__sdpa_cudnn_fwd(void *ctx, __nv_bfloat16 *out, int ldo, float *lse, const __nv_bfloat16 *q, int ldq,
                         const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv,
                         int hd, float scale);
void eng__sdpa_cudnn_bwd(void *ctx, __nv_bfloat16 *dq, __nv_bfloat16 *dk, __nv_bfloat16 *dv, const float *lse,
                         const __nv_bfloat16 *dout, const __nv_bfloat16 *out, int ldo, const __nv_bfloat16 *q, int ldq,
                         const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv,
                         int hd, float scale, float *ws);
void eng__sdpa_cudnn_release(eng__cu *c);
extern int eng__sdpa_cudnn_test_fault;

/* titans.cu */
void eng__cu_dconv_fwd(void *ctx, eng_act *y, int ldy, const eng_act *x, int ldx, const float *w, int N, int T, int C,
                       int K);
void eng__cu_dconv_bwd(void *ctx, eng_act *dx, int lddx, float *dw, const eng_act *dy, int lddy, const eng_act *x,
                       int ldx,
                       const float *w, int N, int T, int C, int K);
void eng__cu_silu_norm_fwd(void *ctx, eng_act *y, int ldy, float *rn, const eng_act *x, int ldx, int N, int C, int G,
                           int gw, float eps);
void eng__cu_silu_norm_bwd(void *ctx, eng_act *dx, int lddx, const eng_act *dy, int lddy, const eng_act *y, int ldy,
                           const float *rn, const eng_act *x, int ldx, int N, int C, int G, int gw);
size_t eng__cu_swa_workspace(void *ctx, int B, int T, int Hkv, int hd, int window, int Np);
void eng__cu_swa_fwd(void *ctx, eng_act *out, int ldo, float *lse, const eng_act *q, int ldq, const eng_act *k,
                     const eng_act *v, int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T, int H,
                     int Hkv, int hd, int window, float *ws);
void eng__cu_swa_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, float *dkp, float *dvp, const float *lse,
                     const eng_act *dout, int ldo, const eng_act *q, int ldq, const eng_act *k, const eng_act *v,
                     int ldkv,
                     const float *kp, const float *vp, int ldp, int Np, int B, int T, int H, int Hkv, int hd,
                     int window, float *ws);

/* titans_mem.cu */
size_t eng__cu_titans_mem_workspace(void *ctx, int B, int T, int H, int hd, int hm, int depth, int chunk);
void eng__cu_titans_mem_fwd(void *ctx, eng_act *y, int ldy, float *states, const eng_act *q, const eng_act *k,
                            const eng_act *v, int ldqkv, const eng_act *gates, int ldg, const float *w0, int B, int T,
                            int H, int hd, int hm, int depth, int chunk, float max_lr, float *ws);
void eng__cu_titans_mem_bwd(void *ctx, eng_act *dq, eng_act *dk, eng_act *dv, int ldd, eng_act *dgates, int lddg,
                            float *dw0,
                            const eng_act *dy, int ldy, const float *states, const eng_act *q, const eng_act *k,
                            const eng_act *v, int ldqkv, const eng_act *gates, int ldg, int B, int T, int H, int hd,
                            int hm, int depth, int chunk, float max_lr, float *ws);

/* matmul.cu */
void eng__cu_matmul(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                    const void *B, int ldb, float beta, void *C, int ldc, eng_mm dt);
void eng__cu_matmul_add(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                        const void *B, int ldb, const void *X, void *D, int ldd, eng_mm dt);
/* matmul for `batch` products at once (a strided batch): product i reads
 * A + i sa, B + i sb and updates C + i sc (strides in elements); K >= 1 */
void eng__cu_matmul_batched(void *ctx, int ta, int tb, int M, int N, int K, float alpha, const void *A, int lda,
                            long long sa, const void *B, int ldb, long long sb, float beta, void *C, int ldc,
                            long long sc, int batch, eng_mm dt);
void eng__cu_plans_clear(eng__cu *c);

ENG__CU_END

#endif
