/* sdpa_cudnn.cu: causal scaled-dot-product attention, forward and backward,
 * through cuDNN 9's graph API (the backend descriptors, from C-style host
 * code): issue 24's second attention candidate beside flash.cu, with the
 * same launchers' arguments (internal.h, eng__sdpa_cudnn_*), so the op can
 * take either.  Host code only: no kernel of ours runs here.
 *
 * The graphs are cuDNN's "fused flash attention" pattern, built from
 * generic nodes (matmul, pointwise, reduction, reshape), because cuDNN
 * 9.19's own SDPA node (CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR) has
 * no causal attribute:
 *   forward:  S = Q K^T; S *= scale; S = row >= col ? S : -inf (GEN_INDEX
 *             on both axes, CMP_GE, BINARY_SELECT); m = max_j S;
 *             E = exp(S - m); l = sum_j E; stats = m + log l (the lse,
 *             natural log, (B, H, T, 1) fp32); P = E / l; O = P V;
 *   backward: P = exp(mask(scale Q K^T) - stats); dV = P^T dO;
 *             D = sum_d dO * O; dP = dO V^T; dS = scale P (dP - D);
 *             dQ = dS K; dK = dS^T Q (transposes of virtual tensors are
 *             reshape nodes with swapped strides).
 * Tensors are (B, H, T, hd) views of the op's buffers: q, k and v column
 * slices of the fused projection (row stride ldq / ldkv, head stride hd),
 * O and dO rows of ldo; GQA is K and V with Hkv heads against H query
 * heads (the matmul's batch dimension, H a multiple of Hkv); bf16 in and
 * out, every intermediate and the compute type fp32.
 *
 * Plans: one execution plan per (direction, shape, strides), made once
 * (the heuristics' first engine config that finalizes) and kept with the
 * descriptors it was made from; a variant pack per call; the workspace is
 * the context's, grown to the largest plan's need.
 *
 * cuDNN is loaded at the first call (dlopen libcudnn.so.9, as backend.cu
 * loads cuBLASLt), not linked: a machine without it still runs, and this
 * candidate reports itself unavailable (eng__sdpa_cudnn_available) and
 * fails the op with TLM_ECONFIG.  The emulated build fills the table with
 * the stand-ins of emu/cudnn.cc, which compute the graph described here on
 * the CPU from the descriptors' values.
 *
 * Must not: link cuDNN; launch anything of its own; read or write past T
 * rows or hd columns of any operand; be given hd other than 64 or 128,
 * pointers not 16-byte aligned, or strides not multiples of 8 (refused as
 * flash.cu refuses them). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/cuda/internal.h"

#ifdef ENG_CUDA_EMU
#define SD_HAVE 1
#define SD_QUAL(f) ::eng_cu_emu::eng_dnn_standin_##f
#elif __has_include(<cudnn_graph.h>)
#include <cudnn_graph.h>
#include <dlfcn.h>
#define SD_HAVE 1
#define SD_QUAL(f) ::f
#else
#define SD_HAVE 0
#endif

ENG__CU_BEGIN

/* the test's mistake (internal.h): 0 in every real use */
int eng__sdpa_cudnn_test_fault = 0;

#if SD_HAVE
#define SD_FUNCS(X)                                                                                             \
    X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream)                  \
    X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor) X(cudnnBackendFinalize)                    \
    X(cudnnBackendSetAttribute) X(cudnnBackendGetAttribute) X(cudnnBackendExecute)

#define SD_PLANS 32
#define SD_DESCS 128 /* descriptors one graph is made of */
typedef struct sd_plan {
    int bwd, B, T, H, Hkv, hd, ldo, ldq, ldkv, fault;
    cudnnBackendDescriptor_t plan;
    cudnnBackendDescriptor_t descs[SD_DESCS];
    int n_descs;
    int64_t ws_bytes;
} sd_plan;

struct eng__dnn {
    void *dl;
#define SD_PTR(f) decltype(&SD_QUAL(f)) f;
    SD_FUNCS(SD_PTR)
#undef SD_PTR
    cudnnHandle_t h;
    int ready; /* 1 loaded, -1 unavailable (why) */
    char why[256];
    sd_plan plans[SD_PLANS];
    int n_plans;
    void *ws;
    size_t ws_bytes;
};

/* the variant pack's unique ids; virtual tensors from SD_VIRT */
enum { U_Q = 1, U_KT, U_V, U_O, U_STATS, U_SCALE, U_NEGINF, U_DO, U_DQ, U_DK, U_DV, U_K, U_VT, SD_VIRT = 100 };

/* ------------------------------------------------------------ loading */
#ifdef ENG_CUDA_EMU
static int sd_load(eng__dnn *d)
{
    d->dl = NULL;
#define SD_SYM(f) d->f = SD_QUAL(f);
    SD_FUNCS(SD_SYM)
#undef SD_SYM
    return 0;
}
#else
#define SD_SONAME_(v) "libcudnn.so." #v
#define SD_SONAME(v) SD_SONAME_(v)
static int sd_load(eng__dnn *d)
{
    d->dl = dlopen(SD_SONAME(CUDNN_MAJOR), RTLD_NOW | RTLD_LOCAL);
    if (!d->dl) {
        snprintf(d->why, sizeof d->why, "cannot load %s: %s", SD_SONAME(CUDNN_MAJOR), dlerror());
        return -1;
    }
#define SD_SYM(f)                                                                                              \
    if (!(d->f = (decltype(d->f))dlsym(d->dl, #f))) {                                                          \
        snprintf(d->why, sizeof d->why, "%s lacks %s", SD_SONAME(CUDNN_MAJOR), #f);                            \
        return -1;                                                                                             \
    }
    SD_FUNCS(SD_SYM)
#undef SD_SYM
    return 0;
}
#endif

/* the context's cuDNN state, loaded at the first use; NULL when
 * unavailable (d->why says why, kept for the next asks) */
static eng__dnn *sd_get(eng__cu *c)
{
    if (!c->dnn) {
        c->dnn = (eng__dnn *)calloc(1, sizeof *c->dnn);
        if (!c->dnn)
            return NULL;
        eng__dnn *d = c->dnn;
        d->ready = -1;
        if (sd_load(d))
            return NULL;
        /* the graph API of the major version these enums are from */
        if (d->cudnnGetVersion() / 10000 != CUDNN_MAJOR) {
            snprintf(d->why, sizeof d->why, "cuDNN %zu loaded, version %d expected", d->cudnnGetVersion(),
                     CUDNN_MAJOR);
            return NULL;
        }
        cudnnStatus_t st = d->cudnnCreate(&d->h);
        if (st == CUDNN_STATUS_SUCCESS)
            st = d->cudnnSetStream(d->h, c->stream);
        if (st != CUDNN_STATUS_SUCCESS) {
            snprintf(d->why, sizeof d->why, "cudnnCreate: %s", d->cudnnGetErrorString(st));
            return NULL;
        }
        d->ready = 1;
    }
    return c->dnn->ready == 1 ? c->dnn : NULL;
}

/* ------------------------------------------------------------ graph building */
/* A graph under construction: its descriptors (kept by the plan), its
 * operations in order, the first failure. */
typedef struct sd_build {
    eng__dnn *d;
    sd_plan *p;
    cudnnBackendDescriptor_t ops[32];
    int n_ops;
    cudnnStatus_t st;
    char what[128];
    int64_t next_virt;
} sd_build;

static void sd_fail(sd_build *b, cudnnStatus_t st, const char *what)
{
    if (b->st == CUDNN_STATUS_SUCCESS) {
        b->st = st;
        snprintf(b->what, sizeof b->what, "%s", what);
    }
}

static cudnnBackendDescriptor_t sd_new(sd_build *b, cudnnBackendDescriptorType_t type)
{
    cudnnBackendDescriptor_t x = NULL;
    if (b->st)
        return NULL;
    if (b->p->n_descs == SD_DESCS) {
        sd_fail(b, CUDNN_STATUS_INTERNAL_ERROR, "too many descriptors for one graph");
        return NULL;
    }
    cudnnStatus_t st = b->d->cudnnBackendCreateDescriptor(type, &x);
    if (st != CUDNN_STATUS_SUCCESS) {
        sd_fail(b, st, "cudnnBackendCreateDescriptor");
        return NULL;
    }
    b->p->descs[b->p->n_descs++] = x;
    return x;
}

static void sd_set(sd_build *b, cudnnBackendDescriptor_t x, cudnnBackendAttributeName_t name,
                   cudnnBackendAttributeType_t type, int64_t n, const void *v)
{
    if (b->st)
        return;
    cudnnStatus_t st = b->d->cudnnBackendSetAttribute(x, name, type, n, v);
    if (st != CUDNN_STATUS_SUCCESS) {
        char w[64];
        snprintf(w, sizeof w, "cudnnBackendSetAttribute (attribute %d)", (int)name);
        sd_fail(b, st, w);
    }
}

static void sd_fin(sd_build *b, cudnnBackendDescriptor_t x, const char *what)
{
    if (b->st)
        return;
    cudnnStatus_t st = b->d->cudnnBackendFinalize(x);
    if (st != CUDNN_STATUS_SUCCESS)
        sd_fail(b, st, what);
}

/* a 4-d tensor: uid 0 makes a virtual one (an intermediate of the graph) */
static cudnnBackendDescriptor_t sd_tensor(sd_build *b, int64_t uid, cudnnDataType_t type, int64_t d0, int64_t d1,
                                          int64_t d2, int64_t d3, int64_t s0, int64_t s1, int64_t s2, int64_t s3,
                                          int by_value)
{
    const int64_t dims[4] = {d0, d1, d2, d3}, strides[4] = {s0, s1, s2, s3};
    const bool virt = uid == 0, byval = by_value != 0;
    /* 16 bytes: the launchers refuse less; a by-value scalar is host memory */
    const int64_t align = by_value ? 4 : 16;
    if (!uid)
        uid = b->next_virt++;
    cudnnBackendDescriptor_t t = sd_new(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    sd_set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    sd_set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    sd_set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    if (!(b->p->fault == 3 && uid == U_O)) /* the test's third mistake: O without its uid */
        sd_set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    sd_set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    sd_set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
    if (by_value)
        sd_set(b, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byval);
    sd_fin(b, t, "tensor descriptor");
    return t;
}

/* a (B, H, T, T) fp32 intermediate, rows contiguous (trans: its transpose
 * in the same memory, for a reshape's output) */
static cudnnBackendDescriptor_t sd_scores(sd_build *b, int B, int H, int T, int trans)
{
    const int64_t TT = (int64_t)T * T;
    return sd_tensor(b, 0, CUDNN_DATA_FLOAT, B, H, T, T, H * TT, TT, trans ? 1 : T, trans ? T : 1, 0);
}
/* a (B, H, T, 1) fp32 intermediate: a row's max, sum or D */
static cudnnBackendDescriptor_t sd_rowvec(sd_build *b, int B, int H, int T)
{
    return sd_tensor(b, 0, CUDNN_DATA_FLOAT, B, H, T, 1, (int64_t)H * T, T, 1, 1, 0);
}

/* an operation node of type: its descriptor attributes names[i] =
 * descs[i] (a NULL one left unset), finalized, added to the graph */
static void sd_node(sd_build *b, cudnnBackendDescriptorType_t type, const char *what, int n,
                    const cudnnBackendAttributeName_t *names, const cudnnBackendDescriptor_t *descs)
{
    cudnnBackendDescriptor_t op = sd_new(b, type);
    for (int i = 0; i < n; i++)
        if (descs[i])
            sd_set(b, op, names[i], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &descs[i]);
    sd_fin(b, op, what);
    if (!b->st)
        b->ops[b->n_ops++] = op;
}

/* y = mode(x, bb, t); axis: GEN_INDEX's */
static void sd_pw(sd_build *b, cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t bb,
                  cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y, int64_t axis)
{
    const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t pw = sd_new(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    sd_set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    sd_set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    if (mode == CUDNN_POINTWISE_GEN_INDEX)
        sd_set(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    sd_fin(b, pw, "pointwise descriptor");
    const cudnnBackendAttributeName_t names[] = {
        CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
        CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_ATTR_OPERATION_POINTWISE_TDESC,
        CUDNN_ATTR_OPERATION_POINTWISE_YDESC};
    const cudnnBackendDescriptor_t descs[] = {pw, x, bb, t, y};
    sd_node(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "pointwise operation", 5, names, descs);
}

/* c = a b over the last two dimensions, fp32 compute */
static void sd_mm(sd_build *b, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t bb, cudnnBackendDescriptor_t c)
{
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm = sd_new(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    sd_set(b, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    sd_fin(b, mm, "matmul descriptor");
    const cudnnBackendAttributeName_t names[] = {CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_ATTR_OPERATION_MATMUL_BDESC,
                                                 CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_ATTR_OPERATION_MATMUL_DESC};
    const cudnnBackendDescriptor_t descs[] = {a, bb, c, mm};
    sd_node(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "matmul operation", 4, names, descs);
}

/* y = reduce(x) over the dimensions where y has 1 */
static void sd_reduce(sd_build *b, cudnnReduceTensorOp_t how, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t rd = sd_new(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    sd_set(b, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &how);
    sd_set(b, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    sd_fin(b, rd, "reduction descriptor");
    const cudnnBackendAttributeName_t names[] = {CUDNN_ATTR_OPERATION_REDUCTION_XDESC,
                                                 CUDNN_ATTR_OPERATION_REDUCTION_YDESC,
                                                 CUDNN_ATTR_OPERATION_REDUCTION_DESC};
    const cudnnBackendDescriptor_t descs[] = {x, y, rd};
    sd_node(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "reduction operation", 3, names, descs);
}

/* y: x's memory seen through y's strides (a transpose here) */
static void sd_reshape(sd_build *b, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
    const cudnnBackendAttributeName_t names[] = {CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_ATTR_OPERATION_RESHAPE_YDESC};
    const cudnnBackendDescriptor_t descs[] = {x, y};
    sd_node(b, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "reshape operation", 2, names, descs);
}

/* The operands as cuDNN tensors.  q: (B, H, T, hd) at row stride ldq,
 * head stride hd; k and v (B, Hkv, T, hd) at ldkv; o, do (B, H, T, hd)
 * at ldo.  K^T and V^T are the same memory with the last two strides
 * swapped. */
typedef struct sd_io {
    cudnnBackendDescriptor_t q, kt, k, v, vt, o, stats, scale, neginf;
} sd_io;

static void sd_operands(sd_build *b, const sd_plan *p, sd_io *io)
{
    const int64_t B = p->B, T = p->T, H = p->H, G = p->Hkv, hd = p->hd;
    /* the test's mistake: K's rows taken as packed (hd apart) */
    const int64_t ldk = p->fault == 1 ? hd : p->ldkv;
    /* and 2: Q declared fp32 (the fused path's refusal) */
    io->q = sd_tensor(b, U_Q, p->fault == 2 ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16, B, H, T, hd, T * p->ldq, hd,
                      p->ldq, 1, 0);
    io->kt = sd_tensor(b, U_KT, CUDNN_DATA_BFLOAT16, B, G, hd, T, T * p->ldkv, hd, 1, ldk, 0);
    if (!p->bwd)
        io->v = sd_tensor(b, U_V, CUDNN_DATA_BFLOAT16, B, G, T, hd, T * p->ldkv, hd, p->ldkv, 1, 0);
    io->o = sd_tensor(b, U_O, CUDNN_DATA_BFLOAT16, B, H, T, hd, T * p->ldo, hd, p->ldo, 1, 0);
    io->stats = sd_tensor(b, U_STATS, CUDNN_DATA_FLOAT, B, H, T, 1, H * T, T, 1, 1, 0);
    io->scale = sd_tensor(b, U_SCALE, CUDNN_DATA_FLOAT, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    io->neginf = sd_tensor(b, U_NEGINF, CUDNN_DATA_FLOAT, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    if (p->bwd) {
        io->k = sd_tensor(b, U_K, CUDNN_DATA_BFLOAT16, B, G, T, hd, T * p->ldkv, hd, p->ldkv, 1, 0);
        io->vt = sd_tensor(b, U_VT, CUDNN_DATA_BFLOAT16, B, G, hd, T, T * p->ldkv, hd, 1, p->ldkv, 0);
    }
}

/* S = mask(scale Q K^T): the causal scores both graphs start from */
static cudnnBackendDescriptor_t sd_masked_scores(sd_build *b, const sd_plan *p, const sd_io *io)
{
    cudnnBackendDescriptor_t s = sd_scores(b, p->B, p->H, p->T, 0), ss = sd_scores(b, p->B, p->H, p->T, 0);
    cudnnBackendDescriptor_t row = sd_scores(b, p->B, p->H, p->T, 0), col = sd_scores(b, p->B, p->H, p->T, 0);
    const int64_t TT = (int64_t)p->T * p->T;
    cudnnBackendDescriptor_t keep =
        sd_tensor(b, 0, CUDNN_DATA_BOOLEAN, p->B, p->H, p->T, p->T, p->H * TT, TT, p->T, 1, 0);
    cudnnBackendDescriptor_t masked = sd_scores(b, p->B, p->H, p->T, 0);
    sd_mm(b, io->q, io->kt, s);
    sd_pw(b, CUDNN_POINTWISE_MUL, s, io->scale, NULL, ss, 0);
    sd_pw(b, CUDNN_POINTWISE_GEN_INDEX, ss, NULL, NULL, row, 2);
    sd_pw(b, CUDNN_POINTWISE_GEN_INDEX, ss, NULL, NULL, col, 3);
    sd_pw(b, CUDNN_POINTWISE_CMP_GE, row, col, NULL, keep, 0);
    sd_pw(b, CUDNN_POINTWISE_BINARY_SELECT, ss, io->neginf, keep, masked, 0);
    return masked;
}

static void sd_graph_fwd(sd_build *b, const sd_plan *p)
{
    sd_io io;
    memset(&io, 0, sizeof io);
    sd_operands(b, p, &io);
    const int B = p->B, H = p->H, T = p->T;
    cudnnBackendDescriptor_t s = sd_masked_scores(b, p, &io);
    cudnnBackendDescriptor_t mx = sd_rowvec(b, B, H, T), sum = sd_rowvec(b, B, H, T), lg = sd_rowvec(b, B, H, T);
    cudnnBackendDescriptor_t sub = sd_scores(b, B, H, T, 0), e = sd_scores(b, B, H, T, 0);
    const int64_t TT = (int64_t)T * T;
    /* P in bf16: the second matmul's operand, as flash.cu rounds it */
    cudnnBackendDescriptor_t pr = sd_tensor(b, 0, CUDNN_DATA_BFLOAT16, B, H, T, T, H * TT, TT, T, 1, 0);
    sd_reduce(b, CUDNN_REDUCE_TENSOR_MAX, s, mx);
    sd_pw(b, CUDNN_POINTWISE_SUB, s, mx, NULL, sub, 0);
    sd_pw(b, CUDNN_POINTWISE_EXP, sub, NULL, NULL, e, 0);
    sd_reduce(b, CUDNN_REDUCE_TENSOR_ADD, e, sum);
    sd_pw(b, CUDNN_POINTWISE_LOG, sum, NULL, NULL, lg, 0);
    sd_pw(b, CUDNN_POINTWISE_ADD, mx, lg, NULL, io.stats, 0);
    sd_pw(b, CUDNN_POINTWISE_DIV, e, sum, NULL, pr, 0);
    sd_mm(b, pr, io.v, io.o);
}

static void sd_graph_bwd(sd_build *b, const sd_plan *p)
{
    sd_io io;
    memset(&io, 0, sizeof io);
    sd_operands(b, p, &io);
    const int64_t B = p->B, H = p->H, T = p->T, G = p->Hkv, hd = p->hd;
    cudnnBackendDescriptor_t dout = sd_tensor(b, U_DO, CUDNN_DATA_BFLOAT16, B, H, T, hd, T * p->ldo, hd, p->ldo, 1, 0);
    cudnnBackendDescriptor_t dq = sd_tensor(b, U_DQ, CUDNN_DATA_BFLOAT16, B, H, T, hd, T * p->ldq, hd, p->ldq, 1, 0);
    cudnnBackendDescriptor_t dk =
        sd_tensor(b, U_DK, CUDNN_DATA_BFLOAT16, B, G, T, hd, T * p->ldkv, hd, p->ldkv, 1, 0);
    cudnnBackendDescriptor_t dv =
        sd_tensor(b, U_DV, CUDNN_DATA_BFLOAT16, B, G, T, hd, T * p->ldkv, hd, p->ldkv, 1, 0);
    cudnnBackendDescriptor_t s = sd_masked_scores(b, p, &io);
    cudnnBackendDescriptor_t sub = sd_scores(b, B, H, T, 0), pr = sd_scores(b, B, H, T, 0);
    cudnnBackendDescriptor_t prt = sd_scores(b, B, H, T, 1), dp = sd_scores(b, B, H, T, 0);
    cudnnBackendDescriptor_t diff = sd_scores(b, B, H, T, 0), ds = sd_scores(b, B, H, T, 0);
    cudnnBackendDescriptor_t dss = sd_scores(b, B, H, T, 0), dst = sd_scores(b, B, H, T, 1);
    cudnnBackendDescriptor_t odo = sd_tensor(b, 0, CUDNN_DATA_FLOAT, B, H, T, hd, H * T * hd, T * hd, hd, 1, 0);
    cudnnBackendDescriptor_t dd = sd_rowvec(b, B, H, T);
    /* P from the forward's statistics */
    sd_pw(b, CUDNN_POINTWISE_SUB, s, io.stats, NULL, sub, 0);
    sd_pw(b, CUDNN_POINTWISE_EXP, sub, NULL, NULL, pr, 0);
    sd_reshape(b, pr, prt);
    sd_mm(b, prt, dout, dv);
    /* D = rowsum(dO * O) */
    sd_pw(b, CUDNN_POINTWISE_MUL, dout, io.o, NULL, odo, 0);
    sd_reduce(b, CUDNN_REDUCE_TENSOR_ADD, odo, dd);
    /* dS = scale P (dO V^T - D) */
    sd_mm(b, dout, io.vt, dp);
    sd_pw(b, CUDNN_POINTWISE_SUB, dp, dd, NULL, diff, 0);
    sd_pw(b, CUDNN_POINTWISE_MUL, pr, diff, NULL, ds, 0);
    sd_pw(b, CUDNN_POINTWISE_MUL, ds, io.scale, NULL, dss, 0);
    sd_mm(b, dss, io.k, dq);
    sd_reshape(b, dss, dst);
    sd_mm(b, dst, io.q, dk);
}

/* the operation graph, the heuristics' engine configs, the first that
 * makes an execution plan */
static void sd_plan_make(sd_build *b, sd_plan *p)
{
    eng__dnn *d = b->d;
    cudnnBackendDescriptor_t g = sd_new(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    sd_set(b, g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &d->h);
    sd_set(b, g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, b->n_ops, b->ops);
    sd_fin(b, g, "operation graph (no engine takes this graph)");
    cudnnBackendDescriptor_t heur = sd_new(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    sd_set(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    sd_set(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    sd_fin(b, heur, "engine heuristics");
    enum { NCFG = 8 };
    cudnnBackendDescriptor_t cfg[NCFG];
    for (int i = 0; i < NCFG; i++)
        cfg[i] = sd_new(b, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t n = 0;
    if (!b->st) {
        cudnnStatus_t st = d->cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, NCFG, &n, cfg);
        if (st != CUDNN_STATUS_SUCCESS)
            sd_fail(b, st, "engine heuristics' results");
        else if (n <= 0)
            sd_fail(b, CUDNN_STATUS_NOT_SUPPORTED, "engine heuristics: no engine config");
    }
    /* the first config, in the heuristics' order, that finalizes a plan */
    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    for (int64_t i = 0; i < n && !b->st && !p->plan; i++) {
        cudnnBackendDescriptor_t plan = sd_new(b, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        sd_set(b, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &d->h);
        sd_set(b, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
        if (b->st)
            return;
        last = d->cudnnBackendFinalize(plan);
        if (last == CUDNN_STATUS_SUCCESS)
            p->plan = plan;
    }
    if (!b->st && !p->plan)
        sd_fail(b, last, "execution plan (no engine config finalized)");
    int64_t got = 0;
    if (!b->st) {
        cudnnStatus_t st = d->cudnnBackendGetAttribute(p->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                       CUDNN_TYPE_INT64, 1, &got, &p->ws_bytes);
        if (st != CUDNN_STATUS_SUCCESS)
            sd_fail(b, st, "execution plan's workspace size");
    }
}

static void sd_plan_free(eng__dnn *d, sd_plan *p)
{
    for (int i = p->n_descs - 1; i >= 0; i--)
        d->cudnnBackendDestroyDescriptor(p->descs[i]);
    memset(p, 0, sizeof *p);
}

/* the plan for this call's shape, made at its first use; NULL with the
 * context's error */
static sd_plan *sd_plan_for(eng__cu *c, const char *what, int bwd, int B, int T, int H, int Hkv, int hd, int ldo,
                            int ldq, int ldkv)
{
    eng__dnn *d = sd_get(c);
    if (!d) {
        eng__cu_fail(c, TLM_ECONFIG, what, c->dnn ? c->dnn->why : "cuDNN unavailable: out of memory");
        return NULL;
    }
    const int fault = eng__sdpa_cudnn_test_fault;
    for (int i = 0; i < d->n_plans; i++) {
        sd_plan *p = &d->plans[i];
        if (p->bwd == bwd && p->B == B && p->T == T && p->H == H && p->Hkv == Hkv && p->hd == hd && p->ldo == ldo &&
            p->ldq == ldq && p->ldkv == ldkv && p->fault == fault)
            return p;
    }
    if (d->n_plans == SD_PLANS) /* a new run's shapes: the oldest go */
        while (d->n_plans)
            sd_plan_free(d, &d->plans[--d->n_plans]);
    sd_plan *p = &d->plans[d->n_plans];
    memset(p, 0, sizeof *p);
    p->bwd = bwd, p->B = B, p->T = T, p->H = H, p->Hkv = Hkv, p->hd = hd;
    p->ldo = ldo, p->ldq = ldq, p->ldkv = ldkv, p->fault = fault;
    sd_build b;
    memset(&b, 0, sizeof b);
    b.d = d, b.p = p, b.next_virt = SD_VIRT;
    if (bwd)
        sd_graph_bwd(&b, p);
    else
        sd_graph_fwd(&b, p);
    sd_plan_make(&b, p);
    if (b.st) {
        char msg[320];
        snprintf(msg, sizeof msg, "cuDNN: %s: %s", b.what, d->cudnnGetErrorString(b.st));
        sd_plan_free(d, p);
        eng__cu_fail(c, b.st == CUDNN_STATUS_NOT_SUPPORTED || b.st == CUDNN_STATUS_NOT_SUPPORTED_SHAPE ||
                                b.st == CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE ||
                                b.st == CUDNN_STATUS_NOT_SUPPORTED_LAYOUT
                            ? TLM_ECONFIG
                            : TLM_EINTERNAL,
                     what, msg);
        return NULL;
    }
    d->n_plans++;
    return p;
}

/* the plan run with the call's pointers (a variant pack per call) */
static void sd_execute(eng__cu *c, const char *what, sd_plan *p, int n, const int64_t *uids, void *const *ptrs)
{
    eng__dnn *d = c->dnn;
    if ((size_t)p->ws_bytes > d->ws_bytes) {
        cudaFree(d->ws);
        d->ws = NULL;
        d->ws_bytes = 0;
        if (eng__cu_check(c, cudaMalloc(&d->ws, (size_t)p->ws_bytes), what))
            return;
        d->ws_bytes = (size_t)p->ws_bytes;
    }
    cudnnBackendDescriptor_t pack = NULL;
    cudnnStatus_t st = d->cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
    if (st == CUDNN_STATUS_SUCCESS)
        st = d->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    if (st == CUDNN_STATUS_SUCCESS)
        st = d->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs);
    if (st == CUDNN_STATUS_SUCCESS)
        st = d->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &d->ws);
    if (st == CUDNN_STATUS_SUCCESS)
        st = d->cudnnBackendFinalize(pack);
    if (st == CUDNN_STATUS_SUCCESS)
        st = d->cudnnBackendExecute(d->h, p->plan, pack);
    if (pack)
        d->cudnnBackendDestroyDescriptor(pack);
    if (st != CUDNN_STATUS_SUCCESS) {
        char msg[320];
        snprintf(msg, sizeof msg, "cuDNN: %s", d->cudnnGetErrorString(st));
        eng__cu_fail(c, TLM_EINTERNAL, what, msg);
    }
}
#endif /* SD_HAVE */

/* ------------------------------------------------------------ launchers */
/* the launchers' common refusals (flash.cu's), and no empty batch: a plan
 * needs B and T */
static int sd_shape_ok(eng__cu *c, const char *what, int hd, int H, int Hkv, int ldo, int ldq, int ldkv, int B, int T)
{
    if (!eng__attn_shape_ok(c, what, hd, H, Hkv, ldo, ldq, ldkv))
        return 0;
    if (B <= 0 || T <= 0)
        return !eng__cu_fail(c, TLM_ECONFIG, what, "an empty batch (B or T not positive)");
    return 1;
}

int eng__sdpa_cudnn_available(void *ctx, char *why, size_t cap)
{
    eng__cu *c = (eng__cu *)ctx;
#if SD_HAVE
    if (sd_get(c))
        return 1;
    snprintf(why, cap, "cuDNN unavailable: %s", c->dnn ? c->dnn->why : "out of memory");
#else
    (void)c;
    snprintf(why, cap, "cuDNN unavailable: built without cudnn_graph.h");
#endif
    return 0;
}

int eng__sdpa_cudnn_prepare(void *ctx, int bwd, int B, int T, int H, int Hkv, int hd, int ldo, int ldq, int ldkv)
{
    eng__cu *c = (eng__cu *)ctx;
    const char *what = bwd ? "sdpa_cudnn_bwd" : "sdpa_cudnn_fwd";
    if (c->status || !sd_shape_ok(c, what, hd, H, Hkv, ldo, ldq, ldkv, B, T))
        return -1;
#if SD_HAVE
    return sd_plan_for(c, what, bwd, B, T, H, Hkv, hd, ldo, ldq, ldkv) ? 0 : -1;
#else
    eng__cu_fail(c, TLM_ECONFIG, what, "cuDNN unavailable: built without cudnn_graph.h");
    return -1;
#endif
}

void eng__sdpa_cudnn_fwd(void *ctx, __nv_bfloat16 *out, int ldo, float *lse, const __nv_bfloat16 *q, int ldq,
                         const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv,
                         int hd, float scale)
{
    eng__cu *c = (eng__cu *)ctx;
    if (c->status || !sd_shape_ok(c, "sdpa_cudnn_fwd", hd, H, Hkv, ldo, ldq, ldkv, B, T))
        return;
    if (!eng__cu_aligned16(out) || !eng__cu_aligned16(q) || !eng__cu_aligned16(k) || !eng__cu_aligned16(v)) {
        eng__cu_fail(c, TLM_ECONFIG, "sdpa_cudnn_fwd", "a bf16 operand not 16-byte aligned");
        return;
    }
#if SD_HAVE
    sd_plan *p = sd_plan_for(c, "sdpa_cudnn_fwd", 0, B, T, H, Hkv, hd, ldo, ldq, ldkv);
    if (!p)
        return;
    float neginf = -INFINITY;
    const int64_t uids[] = {U_Q, U_KT, U_V, U_O, U_STATS, U_SCALE, U_NEGINF};
    void *const ptrs[] = {(void *)q, (void *)k, (void *)v, out, lse, &scale, &neginf};
    sd_execute(c, "sdpa_cudnn_fwd", p, 7, uids, ptrs);
#else
    (void)lse, (void)scale;
    eng__cu_fail(c, TLM_ECONFIG, "sdpa_cudnn_fwd", "cuDNN unavailable: built without cudnn_graph.h");
#endif
}

void eng__sdpa_cudnn_bwd(void *ctx, __nv_bfloat16 *dq, __nv_bfloat16 *dk, __nv_bfloat16 *dv, const float *lse,
                         const __nv_bfloat16 *dout, const __nv_bfloat16 *out, int ldo, const __nv_bfloat16 *q, int ldq,
                         const __nv_bfloat16 *k, const __nv_bfloat16 *v, int ldkv, int B, int T, int H, int Hkv,
                         int hd, float scale, float *ws)
{
    eng__cu *c = (eng__cu *)ctx;
    (void)ws; /* cuDNN's workspace is the context's (its size is the plan's) */
    if (c->status || !sd_shape_ok(c, "sdpa_cudnn_bwd", hd, H, Hkv, ldo, ldq, ldkv, B, T))
        return;
    if (!eng__cu_aligned16(dq) || !eng__cu_aligned16(dk) || !eng__cu_aligned16(dv) || !eng__cu_aligned16(dout) || !eng__cu_aligned16(out) ||
        !eng__cu_aligned16(q) || !eng__cu_aligned16(k) || !eng__cu_aligned16(v)) {
        eng__cu_fail(c, TLM_ECONFIG, "sdpa_cudnn_bwd", "a bf16 operand not 16-byte aligned");
        return;
    }
#if SD_HAVE
    sd_plan *p = sd_plan_for(c, "sdpa_cudnn_bwd", 1, B, T, H, Hkv, hd, ldo, ldq, ldkv);
    if (!p)
        return;
    float neginf = -INFINITY;
    const int64_t uids[] = {U_Q, U_KT, U_O, U_STATS, U_SCALE, U_NEGINF, U_DO, U_DQ, U_DK, U_DV, U_K, U_VT};
    void *const ptrs[] = {(void *)q, (void *)k, (void *)out, (void *)lse, &scale, &neginf,
                          (void *)dout, dq, dk, dv, (void *)k, (void *)v};
    sd_execute(c, "sdpa_cudnn_bwd", p, 12, uids, ptrs);
#else
    (void)dq, (void)dk, (void)dv, (void)lse, (void)dout, (void)out, (void)q, (void)k, (void)v, (void)scale;
    eng__cu_fail(c, TLM_ECONFIG, "sdpa_cudnn_bwd", "cuDNN unavailable: built without cudnn_graph.h");
#endif
}

void eng__sdpa_cudnn_release(eng__cu *c)
{
    if (!c->dnn)
        return;
#if SD_HAVE
    eng__dnn *d = c->dnn;
    while (d->n_plans)
        sd_plan_free(d, &d->plans[--d->n_plans]);
    cudaFree(d->ws);
    if (d->h)
        d->cudnnDestroy(d->h);
#ifndef ENG_CUDA_EMU
    if (d->dl)
        dlclose(d->dl);
#endif
#endif
    free(c->dnn);
    c->dnn = NULL;
}

ENG__CU_END
