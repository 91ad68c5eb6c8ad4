/* backend.cu: the CUDA backend (backend.h): its op table, its context
 * (device, stream, cuBLASLt handle and workspace, sumsq's partials), its
 * memory ops, the sticky error, and the device queries.  fp32 throughout
 * (parity with the CPU); every op group, ENG_OPS_TITANS included
 * (titans.cu, titans_mem.cu), so all four architectures run on it.  In the
 * emulated build (internal.h) the same code is the cuda-emu backend: the
 * runtime calls are the emulator's and the cuBLASLt table holds its
 * stand-ins. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/internal.h"

extern "C" {
#include "engine/cuda/backend.h"
}

ENG__CU_BEGIN

/* cuBLASLt's workspace: 32 MiB (plan.h) */
#define LT_WS_BYTES ENG_CU_LT_WS_BYTES

int eng__cu_fail(eng__cu *c, int code, const char *what, const char *detail)
{
    if (!c->status) {
        c->status = code;
        snprintf(c->msg, sizeof c->msg, "%s: %s", what, detail);
    }
    return 1;
}

/* ------------------------------------------------------------ memory */
/* The backend's allocations and their sizes (a model makes a handful of
 * slabs), for the memory counters and so that free knows what it returns. */
static int track(eng__cu *c, void *p, size_t n)
{
    if (c->n_allocs == c->cap_allocs) {
        int cap = c->cap_allocs ? 2 * c->cap_allocs : 16;
        eng__cu_alloc_rec *a = (eng__cu_alloc_rec *)realloc(c->allocs, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        c->allocs = a, c->cap_allocs = cap;
    }
    c->allocs[c->n_allocs].p = p;
    c->allocs[c->n_allocs].bytes = n;
    c->n_allocs++;
    c->bytes_now += n;
    if (c->bytes_now > c->bytes_peak)
        c->bytes_peak = c->bytes_now;
    return 0;
}

static void *cu_alloc(void *ctx, size_t bytes)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || bytes > SIZE_MAX - 255)
        return NULL;
    size_t n = bytes ? (bytes + 255) & ~(size_t)255 : 256;
    void *p = NULL;
    if (cudaMalloc(&p, n) != cudaSuccess) {
        /* an allocation that does not fit is the caller's to report (NULL:
         * TLM_ENOMEM, the `oom` event), not a broken context */
        (void)cudaGetLastError();
        return NULL;
    }
    if (eng__cu_check(c, cudaMemsetAsync(p, 0, n, c->stream), "alloc: zero") || track(c, p, n)) {
        cudaFree(p);
        return NULL;
    }
    return p;
}

static void cu_free(void *ctx, void *p)
{
    eng__cu *c = (eng__cu *)ctx;
    if (!p)
        return;
    for (int i = 0; i < c->n_allocs; i++)
        if (c->allocs[i].p == p) {
            c->bytes_now -= c->allocs[i].bytes;
            c->allocs[i] = c->allocs[--c->n_allocs];
            break;
        }
    /* the stream may still use the memory: cudaFree waits for the device */
    cudaStreamSynchronize(c->stream);
    cudaFree(p);
}

static void cu_to_device(void *ctx, void *dst, const void *src, size_t bytes)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !bytes)
        return;
    /* the source is the caller's pageable memory, reusable on return:
     * cudaMemcpyAsync from pageable memory is staged before it returns */
    eng__cu_check(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream), "to_device");
}

static void cu_to_host(void *ctx, void *dst, const void *src, size_t bytes)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !bytes)
        return;
    if (!eng__cu_check(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream), "to_host"))
        eng__cu_check(c, cudaStreamSynchronize(c->stream), "to_host");
}

static void cu_zero(void *ctx, void *x, size_t bytes)
{
    eng__cu *c = (eng__cu *)ctx;
    if (!c->status && bytes)
        eng__cu_check(c, cudaMemsetAsync(x, 0, bytes, c->stream), "zero");
}

static void cu_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    eng__cu *c = (eng__cu *)ctx;
    if (!c->status && bytes && dst != src)
        eng__cu_check(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream), "copy");
}

/* ------------------------------------------------------------ graphs */
/* ops.h graph_*: stream capture on the context's stream (global mode: a
 * call CUDA cannot put in a graph fails the capture, with the emulator's
 * report naming it in the emulated build), then an executable graph. */
static int cu_graph_begin(void *ctx)
{
    eng__cu *c = (eng__cu *)ctx;
    return c->status ||
           eng__cu_check(c, cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeGlobal), "graph: begin capture");
}

static void *cu_graph_end(void *ctx)
{
    eng__cu *c = (eng__cu *)ctx;
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    /* ended whatever happened since the begin: the stream captures no more */
    const cudaError_t rc = cudaStreamEndCapture(c->stream, &g);
    if (!eng__cu_check(c, rc, "graph: end capture"))
        eng__cu_check(c, cudaGraphInstantiate(&x, g, 0), "graph: instantiate");
    if (g)
        cudaGraphDestroy(g);
    if (c->status && x) {
        cudaGraphExecDestroy(x);
        x = NULL;
    }
    /* a failed capture is this context's kept error, not the next
     * launch's (the runtime's last error is the thread's) */
    if (!x)
        (void)cudaGetLastError();
    return x;
}

static void cu_graph_launch(void *ctx, void *graph)
{
    eng__cu *c = (eng__cu *)ctx;
    if (!c->status)
        eng__cu_check(c, cudaGraphLaunch((cudaGraphExec_t)graph, c->stream), "graph: launch");
}

static void cu_graph_free(void *ctx, void *graph)
{
    (void)ctx;
    if (graph)
        cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

/* ------------------------------------------------------------ the table */
static void cu_backend_free(eng_backend *b);

static eng_dtype cu_act_dtype(void *ctx)
{
    return ((const eng__cu *)ctx)->act;
}

static const eng_ops cuda_ops = {
#ifdef ENG_CUDA_EMU
    /* .name */ "cuda-emu",
#else
    /* .name */ "cuda",
#endif
    /* .is_host */ 0,
    /* .groups */ ENG_OPS_TITANS,
    /* .backend_free */ cu_backend_free,
    /* .alloc */ cu_alloc,
    /* .free */ cu_free,
    /* .to_device */ cu_to_device,
    /* .to_host */ cu_to_host,
    /* .zero */ cu_zero,
    /* .copy */ cu_copy,
    /* .matmul */ eng__cu_matmul,
    /* .matmul_add */ eng__cu_matmul_add,
    /* .embedding_fwd */ eng__cu_embedding_fwd,
    /* .embedding_bwd */ eng__cu_embedding_bwd,
    /* .rmsnorm_fwd */ eng__cu_rmsnorm_fwd,
    /* .rmsnorm_bwd */ eng__cu_rmsnorm_bwd,
    /* .rope_fwd */ eng__cu_rope_fwd,
    /* .rope_bwd */ eng__cu_rope_bwd,
    /* .attention_workspace */ eng__cu_attention_workspace,
    /* .attention_fwd */ eng__cu_attention_fwd,
    /* .attention_bwd */ eng__cu_attention_bwd,
    /* .swiglu_fwd */ eng__cu_swiglu_fwd,
    /* .swiglu_bwd */ eng__cu_swiglu_bwd,
    /* .gate_fwd */ eng__cu_gate_fwd,
    /* .gate_bwd */ eng__cu_gate_bwd,
    /* .dconv_fwd */ eng__cu_dconv_fwd,
    /* .dconv_bwd */ eng__cu_dconv_bwd,
    /* .silu_norm_fwd */ eng__cu_silu_norm_fwd,
    /* .silu_norm_bwd */ eng__cu_silu_norm_bwd,
    /* .swa_workspace */ eng__cu_swa_workspace,
    /* .swa_fwd */ eng__cu_swa_fwd,
    /* .swa_bwd */ eng__cu_swa_bwd,
    /* .titans_mem_workspace */ eng__cu_titans_mem_workspace,
    /* .titans_mem_fwd */ eng__cu_titans_mem_fwd,
    /* .titans_mem_bwd */ eng__cu_titans_mem_bwd,
    /* .xent_fwd */ eng__cu_xent_fwd,
    /* .xent_bwd */ eng__cu_xent_bwd,
    /* .adamw */ eng__cu_adamw,
    /* .sumsq */ eng__cu_sumsq,
    /* .axpy */ eng__cu_axpy,
    /* .classifier_workspace */ eng__cu_classifier_workspace,
    /* .classifier_fwd */ eng__cu_classifier_fwd,
    /* .classifier_bwd */ eng__cu_classifier_bwd,
    /* .embedding_bwd_sorted */ eng__cu_embedding_bwd_sorted,
    /* .sumsq_into */ eng__cu_sumsq_into,
    /* .act_dtype */ cu_act_dtype,
    /* .cast */ eng__cu_cast,
    /* .act_axpy */ eng__cu_act_axpy,
    /* .graph_begin */ cu_graph_begin,
    /* .graph_end */ cu_graph_end,
    /* .graph_launch */ cu_graph_launch,
    /* .graph_free */ cu_graph_free,
};

typedef struct cu_backend {
    eng_backend b;
    eng__cu ctx;
} cu_backend;

/* ------------------------------------------------------------ devices */
/* The runtime says "CUDA driver version is insufficient for CUDA runtime
 * version" also when there is no driver at all (no GPU, a container
 * without the driver's libraries): the driver's /proc file tells the two
 * apart, and the message says what to do either way. */
static int no_gpu(tlm_err *e, cudaError_t rc)
{
    (void)cudaGetLastError();
    const char *cpu = "train on the CPU instead: tlm-worker --device cpu, tlmd --devices cpu";
    if (rc == cudaErrorInsufficientDriver || rc == cudaErrorNoDevice) {
        char version[160] = "";
        FILE *f = fopen("/proc/driver/nvidia/version", "r");
        if (f) {
            if (!fgets(version, sizeof version, f))
                version[0] = '\0';
            fclose(f);
            version[strcspn(version, "\n")] = '\0';
        }
        if (rc == cudaErrorInsufficientDriver && version[0])
            return tlm_errf(e, TLM_ECONFIG,
                            "no usable GPU: the NVIDIA driver (%s) is older than this build's CUDA runtime needs "
                            "(%s); update the driver, or %s",
                            version, cudaGetErrorName(rc), cpu);
        return tlm_errf(e, TLM_ECONFIG,
                        "no NVIDIA driver or GPU found on this machine (the CUDA runtime says %s: %s); %s",
                        cudaGetErrorName(rc), cudaGetErrorString(rc), cpu);
    }
    return tlm_errf(e, TLM_ECONFIG, "no GPU: the CUDA runtime says %s (%s); %s", cudaGetErrorString(rc),
                    cudaGetErrorName(rc), cpu);
}

extern "C" int eng_cuda_device_count(int *n, tlm_err *e)
{
    *n = 0;
    int k = 0;
    cudaError_t rc = cudaGetDeviceCount(&k);
    if (rc != cudaSuccess)
        return no_gpu(e, rc);
    *n = k;
    return 0;
}

extern "C" int eng_cuda_device_info_get(int k, eng_cuda_device_info *out, tlm_err *e)
{
    memset(out, 0, sizeof *out);
    cudaDeviceProp p;
    cudaError_t rc = cudaGetDeviceProperties(&p, k);
    if (rc != cudaSuccess)
        return no_gpu(e, rc);
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->total_bytes = p.totalGlobalMem;
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    int cur = 0;
    if (cudaGetDevice(&cur) == cudaSuccess && cudaSetDevice(k) == cudaSuccess) {
        size_t fr = 0, tot = 0;
        if (cudaMemGetInfo(&fr, &tot) == cudaSuccess)
            out->free_bytes = fr;
        cudaSetDevice(cur);
    }
    (void)cudaGetLastError();
    return 0;
}

#ifdef ENG_CUDA_EMU
/* the emulated build: the stand-ins (emu/cublaslt.h), nothing loaded */
static int load_lt(eng__lt_api *a, int device, tlm_err *e)
{
    a->dl = NULL;
#define ENG__LT_SYM(f) a->f = ENG__LT_QUAL(f);
    ENG__LT_FUNCS(ENG__LT_SYM)
#undef ENG__LT_SYM
    return 0;
}
#else
/* cuBLASLt of the major version the backend was compiled against
 * (CUBLAS_VER_MAJOR), found where the dynamic loader looks: LD_LIBRARY_PATH
 * (the device check points it at PyTorch's wheels), then the toolkit's
 * folder configure wrote into the program's run path. */
#define LT_SONAME_(v) "libcublasLt.so." #v
#define LT_SONAME(v) LT_SONAME_(v)
static int load_lt(eng__lt_api *a, int device, tlm_err *e)
{
    a->dl = dlopen(LT_SONAME(CUBLAS_VER_MAJOR), RTLD_NOW | RTLD_LOCAL);
    if (!a->dl)
        return tlm_errf(e, TLM_ECONFIG, "cuda:%d: cannot load cuBLASLt (%s): %s", device,
                        LT_SONAME(CUBLAS_VER_MAJOR), dlerror());
#define ENG__LT_SYM(f)                                                                                         \
    if (!(a->f = (decltype(a->f))dlsym(a->dl, #f)))                                                            \
        return tlm_errf(e, TLM_ECONFIG, "cuda:%d: %s lacks %s", device, LT_SONAME(CUBLAS_VER_MAJOR), #f);
    ENG__LT_FUNCS(ENG__LT_SYM)
#undef ENG__LT_SYM
    return 0;
}
#endif

static void ctx_destroy(eng__cu *c)
{
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    eng__sdpa_cudnn_release(c);
    eng__cu_plans_clear(c);
    if (c->lt)
        c->api.cublasLtDestroy(c->lt);
    cudaFree(c->lt_ws);
    cudaFree(c->partials);
    cudaFree(c->seg_dev);
    free(c->seg_host);
    cudaFreeHost(c->host_sum);
    free(c->allocs);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    if (c->api.dl)
        dlclose(c->api.dl);
}

extern "C" int eng_backend_cuda_create(eng_backend **out, int device, tlm_err *e)
{
    *out = NULL;
    int n;
    int rc = eng_cuda_device_count(&n, e);
    if (rc)
        return rc;
    if (n == 0)
        return tlm_errf(e, TLM_ECONFIG, "no GPU: the CUDA runtime lists no device; train on the CPU instead: "
                                        "tlm-worker --device cpu, tlmd --devices cpu");
    if (device < 0 || device >= n)
        return tlm_errf(e, TLM_ECONFIG, "cuda:%d: no such GPU (the CUDA runtime lists %d: cuda:0 to cuda:%d)", device,
                        n, n - 1);
    cu_backend *cb = (cu_backend *)calloc(1, sizeof *cb);
    if (!cb)
        return tlm_errf(e, TLM_ENOMEM, "cuda backend: out of memory");
    eng__cu *c = &cb->ctx;
    c->device = device;
    const char *step = "cudaSetDevice";
    cudaError_t cr = cudaSetDevice(device);
    if (cr == cudaSuccess) {
        step = "cudaStreamCreate";
        cr = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    }
    if (cr == cudaSuccess) {
        step = "cudaMalloc (cuBLASLt workspace)";
        c->lt_ws_bytes = LT_WS_BYTES;
        cr = cudaMalloc(&c->lt_ws, c->lt_ws_bytes);
    }
    if (cr == cudaSuccess) {
        step = "cudaMalloc (sumsq)";
        cr = cudaMalloc((void **)&c->partials, ENG__CU_SUMSQ_BLOCKS * sizeof(double));
    }
    if (cr == cudaSuccess) {
        step = "cudaMallocHost";
        cr = cudaMallocHost((void **)&c->host_sum, sizeof(double));
    }
    if (cr != cudaSuccess) {
        (void)cudaGetLastError();
        ctx_destroy(c);
        free(cb);
        return tlm_errf(e, cr == cudaErrorMemoryAllocation ? TLM_ENOMEM : TLM_ECONFIG, "cuda:%d: %s: %s", device,
                        step, cudaGetErrorString(cr));
    }
    if (load_lt(&c->api, device, e)) {
        ctx_destroy(c);
        free(cb);
        return e ? e->code : TLM_ECONFIG;
    }
    cublasStatus_t st = c->api.cublasLtCreate(&c->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        c->lt = NULL;
        tlm_errf(e, TLM_ECONFIG, "cuda:%d: cublasLtCreate: %s", device, c->api.cublasLtGetStatusString(st));
        ctx_destroy(c);
        free(cb);
        return TLM_ECONFIG;
    }
    cb->b.ops = &cuda_ops;
    cb->b.ctx = c;
    *out = &cb->b;
    return 0;
}

static void cu_backend_free(eng_backend *b)
{
    cu_backend *cb = (cu_backend *)b; /* b is the first member */
    ctx_destroy(&cb->ctx);
    free(cb);
}

extern "C" int eng_backend_cuda_status(const eng_backend *b, tlm_err *e)
{
    if (b->ops != &cuda_ops)
        return 0;
    const eng__cu *c = (const eng__cu *)b->ctx;
    return c->status ? tlm_errf(e, c->status, "cuda:%d: %s", c->device, c->msg) : 0;
}

extern "C" void eng_backend_cuda_memory(const eng_backend *b, size_t *now, size_t *peak)
{
    const eng__cu *c = b->ops == &cuda_ops ? (const eng__cu *)b->ctx : NULL;
    *now = c ? c->bytes_now : 0;
    *peak = c ? c->bytes_peak : 0;
}

extern "C" int eng_backend_cuda_set_dtype(eng_backend *b, eng_dtype t, tlm_err *e)
{
    if (b->ops != &cuda_ops)
        return tlm_errf(e, TLM_EINTERNAL, "eng_backend_cuda_set_dtype: not a CUDA backend");
    if (t != ENG_F32 && t != ENG_BF16)
        return tlm_errf(e, TLM_EINTERNAL, "eng_backend_cuda_set_dtype: storage type %d", (int)t);
    ((eng__cu *)b->ctx)->act = t;
    return 0;
}

extern "C" int eng_backend_cuda_set_attention_cudnn(eng_backend *b, int cudnn)
{
    if (b->ops != &cuda_ops)
        return -1;
    ((eng__cu *)b->ctx)->attn_cudnn = cudnn != 0;
    return 0;
}

extern "C" int eng_backend_cuda_set_fast_matmul(eng_backend *b, int on)
{
    if (b->ops != &cuda_ops)
        return -1;
    ((eng__cu *)b->ctx)->fast_matmul = on != 0;
    return 0;
}

ENG__CU_END
