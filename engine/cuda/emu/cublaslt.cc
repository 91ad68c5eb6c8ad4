/* cublaslt.cc: the emulated build's stand-ins for the cuBLASLt functions
 * the backend calls (emu/cublaslt.h).  They are not cuBLASLt: each keeps
 * the attributes its real counterpart is given, and the matmul computes
 * D = epilogue(alpha op(A) op(B) + beta C) on the CPU from those values
 * alone (layouts, orders, transposes, leading dimensions, batch counts and
 * strides, compute and scale types, pointer mode, epilogue and bias), so a
 * wrong mapping from the op table to the descriptors gives a wrong product
 * here as it would on the GPU.
 *
 * What they refuse, as the real library documents it refuses it
 * (cublasLt.h of CUDA 13.0; docs/engine.md lists the sources):
 *   - types the compute type does not take (A and B of one type, C and D
 *     of one type; fp32 or bf16; scale fp32) and compute types other than
 *     the fp32 ones (CUBLAS_STATUS_NOT_SUPPORTED);
 *   - shapes that do not chain (op(A) m x k, op(B) k x n, C and D m x n),
 *     a leading dimension smaller than the rows (columns for row order),
 *     unequal batch counts, C == D with different layouts
 *     (CUBLAS_STATUS_INVALID_VALUE);
 *   - a pointer not aligned to its element, or less aligned than the
 *     CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES promised when the
 *     algorithm was chosen: "Selecting a smaller value will exclude
 *     algorithms that can not work with matrix A that is not as strictly
 *     aligned as they need" (default 256), so an algorithm chosen for 256
 *     may need all of it (CUBLAS_STATUS_NOT_SUPPORTED here; the library
 *     may also fault); in a strided batch, every matrix's pointer (the
 *     first's plus a multiple of the stride);
 *   - a workspace smaller than the algorithm needs (INVALID_VALUE);
 *   - a matrix whose elements leave their device allocation, or a read of
 *     bytes nothing wrote (the GPU would fault or read garbage:
 *     CUBLAS_STATUS_EXECUTION_FAILED here, with the emulator's report).
 * Numbers: products in double, rounded once to D's type (the library
 * accumulates in fp32 in an order of its own); CUBLAS_COMPUTE_32F_FAST_16BF
 * rounds A and B to bf16 first, _FAST_TF32 to tf32, as those modes allow.
 * Each refusal is printed and kept for cublasLtGetStatusString.
 *
 * Must not: check less than the real library documents; claim to check
 * what only the library can (its heuristics, kernels, speed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/emu/internal.h"

namespace eng_cu_emu {

enum { MAGIC_HANDLE = 0x4c74, MAGIC_DESC, MAGIC_LAYOUT, MAGIC_PREF, MAGIC_ALGO = 0x53544e44 };

struct lt_handle {
    unsigned magic;
};
struct lt_desc {
    unsigned magic;
    int compute, scale, pointer_mode, transa, transb, transc, epilogue, bias_type;
    const void *bias;
    int64_t bias_stride;
};
struct lt_layout {
    unsigned magic;
    int type, order;
    uint64_t rows, cols;
    int64_t ld;
    int batch;
    int64_t stride;
};
struct lt_pref {
    unsigned magic;
    size_t max_ws;
    uint32_t align[4];
};

static char g_why[1024];
static cublasStatus_t g_why_status = CUBLAS_STATUS_SUCCESS;
static lt_call_record g_last;

/* The problems the heuristic gave an algorithm for, each once (everything
 * it was told: descriptor, layouts, the preference's alignments), and how
 * many times it and the matmul succeeded: eng_cuda_emu_lt_counts. */
struct lt_key {
    int compute, scale, transa, transb, epilogue;
    int type[4], order[4], batch[4];
    uint64_t rows[4], cols[4];
    int64_t ld[4], stride[4];
    uint32_t align[4];
};
static lt_key *g_keys;
static long g_n_keys, g_cap_keys, g_heuristics, g_matmuls;

static const char *status_name(cublasStatus_t st)
{
    switch (st) {
    case CUBLAS_STATUS_SUCCESS:
        return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
        return "CUBLAS_STATUS_INTERNAL_ERROR";
    }
}

static cublasStatus_t refuse(cublasStatus_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cublasStatus_t refuse(cublasStatus_t st, const char *fmt, ...)
{
    char buf[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    snprintf(g_why, sizeof g_why, "%s (cuBLASLt stand-in: %s)", status_name(st), buf);
    g_why_status = st;
    fprintf(stderr, "cuda emulator: %s\n", g_why);
    return st;
}

const lt_call_record *lt_last_call(void)
{
    return &g_last;
}

/* ------------------------------------------------------------ handles, descriptors */
cublasStatus_t eng_lt_standin_cublasLtCreate(cublasLtHandle_t *h)
{
    lt_handle *p = (lt_handle *)calloc(1, sizeof *p);
    if (!p)
        return CUBLAS_STATUS_ALLOC_FAILED;
    p->magic = MAGIC_HANDLE;
    *h = p;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t eng_lt_standin_cublasLtDestroy(cublasLtHandle_t h)
{
    if (!h || h->magic != MAGIC_HANDLE)
        return refuse(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtDestroy: not a handle");
    h->magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

const char *eng_lt_standin_cublasLtGetStatusString(cublasStatus_t st)
{
    return st != CUBLAS_STATUS_SUCCESS && st == g_why_status ? g_why : status_name(st);
}

cublasStatus_t eng_lt_standin_cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                                       cudaDataType_t scale)
{
    lt_desc *p = (lt_desc *)calloc(1, sizeof *p);
    if (!p)
        return CUBLAS_STATUS_ALLOC_FAILED;
    p->magic = MAGIC_DESC;
    p->compute = compute;
    p->scale = scale;
    p->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    p->bias_type = -1; /* D's type */
    *d = p;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t eng_lt_standin_cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    if (!d)
        return CUBLAS_STATUS_SUCCESS;
    if (d->magic != MAGIC_DESC)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulDescDestroy: not a matmul descriptor");
    d->magic = 0;
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

/* an attribute's value of the size the library documents */
template <typename T> static cublasStatus_t get_attr(T *out, const void *buf, size_t size, const char *what)
{
    if (!buf || size != sizeof(T))
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: a value of %zu bytes (the attribute takes %zu)", what, size,
                      sizeof(T));
    memcpy(out, buf, sizeof(T));
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t eng_lt_standin_cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                             cublasLtMatmulDescAttributes_t attr, const void *buf,
                                                             size_t size)
{
    if (!d || d->magic != MAGIC_DESC)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulDescSetAttribute: not a matmul descriptor");
    const char *w = "cublasLtMatmulDescSetAttribute";
    int32_t v;
    cublasStatus_t st;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
        return get_attr(&d->compute, buf, size, w);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
        return get_attr(&d->scale, buf, size, w);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
        if ((st = get_attr(&v, buf, size, w)) != CUBLAS_STATUS_SUCCESS)
            return st;
        if (v != CUBLASLT_POINTER_MODE_HOST && v != CUBLASLT_POINTER_MODE_DEVICE)
            return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: pointer mode %d (the stand-in has host and device)", w, v);
        d->pointer_mode = v;
        return st;
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
    case CUBLASLT_MATMUL_DESC_TRANSC:
        if ((st = get_attr(&v, buf, size, w)) != CUBLAS_STATUS_SUCCESS)
            return st;
        if (v != CUBLAS_OP_N && v != CUBLAS_OP_T)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: operation %d on a real matrix", w, v);
        if (attr == CUBLASLT_MATMUL_DESC_TRANSC && v != CUBLAS_OP_N)
            return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: TRANSC other than CUBLAS_OP_N", w);
        *(attr == CUBLASLT_MATMUL_DESC_TRANSA ? &d->transa : attr == CUBLASLT_MATMUL_DESC_TRANSB ? &d->transb
                                                                                             : &d->transc) = v;
        return st;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
        if ((st = get_attr(&v, buf, size, w)) != CUBLAS_STATUS_SUCCESS)
            return st;
        if (v != CUBLASLT_EPILOGUE_DEFAULT && v != CUBLASLT_EPILOGUE_RELU && v != CUBLASLT_EPILOGUE_BIAS &&
            v != CUBLASLT_EPILOGUE_RELU_BIAS && v != CUBLASLT_EPILOGUE_GELU && v != CUBLASLT_EPILOGUE_GELU_BIAS)
            return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: epilogue %d (the stand-in computes DEFAULT, RELU, BIAS, "
                                                       "RELU_BIAS, GELU, GELU_BIAS)",
                          w, v);
        d->epilogue = v;
        return st;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
        return get_attr(&d->bias, buf, size, w);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
        return get_attr(&d->bias_stride, buf, size, w);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
        return get_attr(&d->bias_type, buf, size, w);
    }
    return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: attribute %d (not one the stand-in models)", w, (int)attr);
}

cublasStatus_t eng_lt_standin_cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows,
                                                         uint64_t cols, int64_t ld)
{
    lt_layout *p = (lt_layout *)calloc(1, sizeof *p);
    if (!p)
        return CUBLAS_STATUS_ALLOC_FAILED;
    p->magic = MAGIC_LAYOUT;
    p->type = type;
    p->order = CUBLASLT_ORDER_COL;
    p->rows = rows, p->cols = cols, p->ld = ld;
    p->batch = 1;
    *l = p;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t eng_lt_standin_cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    if (!l)
        return CUBLAS_STATUS_SUCCESS;
    if (l->magic != MAGIC_LAYOUT)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatrixLayoutDestroy: not a layout");
    l->magic = 0;
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t eng_lt_standin_cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                               cublasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                               size_t size)
{
    if (!l || l->magic != MAGIC_LAYOUT)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatrixLayoutSetAttribute: not a layout");
    const char *w = "cublasLtMatrixLayoutSetAttribute";
    cublasStatus_t st;
    int32_t v;
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
        return get_attr(&l->type, buf, size, w);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
        if ((st = get_attr(&v, buf, size, w)) != CUBLAS_STATUS_SUCCESS)
            return st;
        if (v != CUBLASLT_ORDER_COL && v != CUBLASLT_ORDER_ROW)
            return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: order %d (the stand-in has COL and ROW)", w, v);
        l->order = v;
        return st;
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
        return get_attr(&l->rows, buf, size, w);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
        return get_attr(&l->cols, buf, size, w);
    case CUBLASLT_MATRIX_LAYOUT_LD:
        return get_attr(&l->ld, buf, size, w);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
        return get_attr(&l->batch, buf, size, w);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
        return get_attr(&l->stride, buf, size, w);
    }
    return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: attribute %d (not one the stand-in models)", w, (int)attr);
}

cublasStatus_t eng_lt_standin_cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    lt_pref *r = (lt_pref *)calloc(1, sizeof *r);
    if (!r)
        return CUBLAS_STATUS_ALLOC_FAILED;
    r->magic = MAGIC_PREF;
    for (int i = 0; i < 4; i++)
        r->align[i] = 256; /* the documented default */
    *p = r;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t eng_lt_standin_cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    if (!p)
        return CUBLAS_STATUS_SUCCESS;
    if (p->magic != MAGIC_PREF)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulPreferenceDestroy: not a preference");
    p->magic = 0;
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t eng_lt_standin_cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                                   cublasLtMatmulPreferenceAttributes_t attr,
                                                                   const void *buf, size_t size)
{
    if (!p || p->magic != MAGIC_PREF)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulPreferenceSetAttribute: not a preference");
    const char *w = "cublasLtMatmulPreferenceSetAttribute";
    switch (attr) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE: {
        uint32_t v;
        return get_attr(&v, buf, size, w);
    }
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: {
        uint64_t v;
        cublasStatus_t st = get_attr(&v, buf, size, w);
        p->max_ws = (size_t)v;
        return st;
    }
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: {
        uint32_t v;
        cublasStatus_t st = get_attr(&v, buf, size, w);
        if (st == CUBLAS_STATUS_SUCCESS && (!v || (v & (v - 1))))
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: alignment %u (a power of 2)", w, v);
        p->align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES] = v;
        return st;
    }
    }
    return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: attribute %d (not one the stand-in models)", w, (int)attr);
}

/* ------------------------------------------------------------ the problem */
static size_t type_bytes(int type)
{
    return type == CUDA_R_32F ? 4 : type == CUDA_R_16BF || type == CUDA_R_16F ? 2 : type == CUDA_R_64F ? 8 : 0;
}

static const char *type_name(int type)
{
    return type == CUDA_R_32F ? "CUDA_R_32F" : type == CUDA_R_16BF ? "CUDA_R_16BF" : type == CUDA_R_16F ? "CUDA_R_16F"
                                                                                  : type == CUDA_R_64F ? "CUDA_R_64F"
                                                                                                       : "?";
}

/* the shape the four layouts describe, checked: 0 or the refusal */
static cublasStatus_t problem(const char *w, const lt_desc *op, lt_layout *const L[4], uint64_t *m, uint64_t *n,
                              uint64_t *k)
{
    static const char *names = "ABCD";
    if (!op || op->magic != MAGIC_DESC)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: not a matmul descriptor", w);
    for (int i = 0; i < 4; i++)
        if (!L[i] || L[i]->magic != MAGIC_LAYOUT)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: %cdesc is not a layout", w, names[i]);
    if (op->compute != CUBLAS_COMPUTE_32F && op->compute != CUBLAS_COMPUTE_32F_PEDANTIC &&
        op->compute != CUBLAS_COMPUTE_32F_FAST_16BF && op->compute != CUBLAS_COMPUTE_32F_FAST_TF32)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: compute type %d (the stand-in has the fp32 ones)", w,
                      op->compute);
    if (op->scale != CUDA_R_32F)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: scale type %s with an fp32 compute type", w,
                      type_name(op->scale));
    if (L[0]->type != L[1]->type || L[2]->type != L[3]->type)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: A %s, B %s, C %s, D %s (A and B, C and D share a type)", w,
                      type_name(L[0]->type), type_name(L[1]->type), type_name(L[2]->type), type_name(L[3]->type));
    for (int i = 0; i < 4; i++)
        if (L[i]->type != CUDA_R_32F && L[i]->type != CUDA_R_16BF)
            return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: %c of type %s", w, names[i], type_name(L[i]->type));
    if (L[0]->type == CUDA_R_32F && L[2]->type != CUDA_R_32F)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "%s: fp32 A and B with %s C and D", w, type_name(L[2]->type));
    for (int i = 0; i < 4; i++) {
        const lt_layout *l = L[i];
        const uint64_t need = l->order == CUBLASLT_ORDER_COL ? l->rows : l->cols;
        if (l->ld < 1 || (uint64_t)l->ld < need)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: %c is %llu x %llu (%s order) with ld %lld < %llu", w,
                          names[i], (unsigned long long)l->rows, (unsigned long long)l->cols,
                          l->order == CUBLASLT_ORDER_COL ? "column" : "row", (long long)l->ld,
                          (unsigned long long)need);
        if (l->batch != L[0]->batch || l->batch < 1)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: batch counts A %d, B %d, C %d, D %d", w, L[0]->batch,
                          L[1]->batch, L[2]->batch, L[3]->batch);
    }
    *m = op->transa ? L[0]->cols : L[0]->rows;
    *k = op->transa ? L[0]->rows : L[0]->cols;
    const uint64_t kb = op->transb ? L[1]->cols : L[1]->rows;
    *n = op->transb ? L[1]->rows : L[1]->cols;
    if (kb != *k || L[2]->rows != *m || L[2]->cols != *n || L[3]->rows != *m || L[3]->cols != *n || !*k)
        return refuse(CUBLAS_STATUS_INVALID_VALUE,
                      "%s: op(A) %llu x %llu, op(B) %llu x %llu, C %llu x %llu, D %llu x %llu do not chain (or k = 0)",
                      w, (unsigned long long)*m, (unsigned long long)*k, (unsigned long long)kb,
                      (unsigned long long)*n, (unsigned long long)L[2]->rows, (unsigned long long)L[2]->cols,
                      (unsigned long long)L[3]->rows, (unsigned long long)L[3]->cols);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t eng_lt_standin_cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t op,
                                                             cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                             cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                                             cublasLtMatmulPreference_t pref, int requested,
                                                             cublasLtMatmulHeuristicResult_t *results, int *found)
{
    const char *w = "cublasLtMatmulAlgoGetHeuristic";
    *found = 0;
    if (!h || h->magic != MAGIC_HANDLE)
        return refuse(CUBLAS_STATUS_NOT_INITIALIZED, "%s: not a handle", w);
    if (!pref || pref->magic != MAGIC_PREF || requested < 1 || !results)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: no preference, or no room for a result", w);
    lt_layout *const L[4] = {a, b, c, d};
    uint64_t m, n, k;
    cublasStatus_t st = problem(w, op, L, &m, &n, &k);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    memset(results, 0, sizeof *results);
    /* the algorithm may count on what the preference promised */
    results->algo.data[0] = MAGIC_ALGO;
    for (int i = 0; i < 4; i++)
        results->algo.data[1 + i] = pref->align[i] < 256 ? pref->align[i] : 256;
    results->workspaceSize = 0;
    results->state = CUBLAS_STATUS_SUCCESS;
    results->wavesCount = 1.0f;
    *found = 1;
    g_heuristics++;
    lt_key key;
    memset(&key, 0, sizeof key); /* padding too: keys compare as bytes */
    key.compute = op->compute, key.scale = op->scale, key.transa = op->transa, key.transb = op->transb;
    key.epilogue = op->epilogue;
    for (int i = 0; i < 4; i++) {
        key.type[i] = L[i]->type, key.order[i] = L[i]->order, key.batch[i] = L[i]->batch;
        key.rows[i] = L[i]->rows, key.cols[i] = L[i]->cols, key.ld[i] = L[i]->ld, key.stride[i] = L[i]->stride;
        key.align[i] = pref->align[i];
    }
    long i = 0;
    while (i < g_n_keys && memcmp(&g_keys[i], &key, sizeof key))
        i++;
    if (i == g_n_keys) {
        if (g_n_keys == g_cap_keys) {
            const long cap = g_cap_keys ? 2 * g_cap_keys : 256;
            lt_key *k = (lt_key *)realloc(g_keys, (size_t)cap * sizeof *k);
            if (!k)
                return CUBLAS_STATUS_SUCCESS; /* an account, not a check */
            g_keys = k, g_cap_keys = cap;
        }
        g_keys[g_n_keys++] = key;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* ------------------------------------------------------------ the product */
static double load_elem(int type, const char *base, size_t idx)
{
    if (type == CUDA_R_32F) {
        float f;
        memcpy(&f, base + 4 * idx, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, base + 2 * idx, 2);
    return (double)bf16_bits_f32((uint32_t)h << 16);
}

static void store_elem(int type, char *base, size_t idx, double v)
{
    if (type == CUDA_R_32F) {
        const float f = (float)v;
        memcpy(base + 4 * idx, &f, 4);
    } else {
        const uint16_t h = __double2bfloat16(v).__x;
        memcpy(base + 2 * idx, &h, 2);
    }
}

static size_t elem_index(const lt_layout *l, uint64_t r, uint64_t c, int batch)
{
    const size_t at = l->order == CUBLASLT_ORDER_COL ? (size_t)(c * (uint64_t)l->ld + r) : (size_t)(r * (uint64_t)l->ld + c);
    return at + (size_t)((int64_t)batch * l->stride);
}

/* the compute type's rounding of an input */
static double input_round(int compute, double v)
{
    const float f = (float)v;
    if (compute == CUBLAS_COMPUTE_32F_FAST_16BF)
        return (float)__float2bfloat16_rn(f);
    if (compute == CUBLAS_COMPUTE_32F_FAST_TF32) {
        uint32_t u = bf16_f32_bits(f);
        if ((u & 0x7f800000u) != 0x7f800000u)
            u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
        return bf16_bits_f32(u);
    }
    return f;
}

/* [p, p + the matrix's extent) inside one allocation, its bytes written
 * (read: true); the allocation, else NULL with the refusal made */
static region *matrix_span(const char *w, char name, const void *p, const lt_layout *l, int read, cublasStatus_t *st)
{
    const size_t es = type_bytes(l->type);
    const uint64_t lines = l->order == CUBLASLT_ORDER_COL ? l->cols : l->rows;
    const uint64_t len = l->order == CUBLASLT_ORDER_COL ? l->rows : l->cols;
    int64_t lo = 0, hi = (int64_t)((lines - 1) * (uint64_t)l->ld + len);
    const int64_t span = (int64_t)(l->batch - 1) * l->stride;
    if (span < 0)
        lo += span;
    else
        hi += span;
    region *r = region_span((const char *)p + lo * (int64_t)es, (size_t)(hi - lo) * es);
    if (!r) {
        region *near = region_find((uintptr_t)p);
        char where[256] = "not device memory";
        if (near)
            region_describe(near, (uintptr_t)p, where, sizeof where);
        *st = refuse(CUBLAS_STATUS_EXECUTION_FAILED, "%s: %c (%p, %s) leaves its allocation: its %llu x %llu elements "
                                                     "at ld %lld, %d batches of stride %lld",
                     w, name, p, where, (unsigned long long)l->rows, (unsigned long long)l->cols, (long long)l->ld,
                     l->batch, (long long)l->stride);
        return NULL;
    }
    if (read && !g_plan_only) /* plan-only: nothing was written */
        for (int bt = 0; bt < l->batch; bt++)
            for (uint64_t i = 0; i < l->rows; i++)
                for (uint64_t j = 0; j < l->cols; j++) {
                    const size_t at = (uintptr_t)p - r->base + elem_index(l, i, j, bt) * es;
                    for (size_t q = 0; q < es; q++)
                        if (!r->init[at + q]) {
                            *st = refuse(CUBLAS_STATUS_EXECUTION_FAILED,
                                         "%s: %c's element (%llu, %llu) of batch %d was never written (uninitialised)",
                                         w, name, (unsigned long long)i, (unsigned long long)j, bt);
                            return NULL;
                        }
                }
    return r;
}

static unsigned low_bit(const void *p)
{
    const uintptr_t b = (uintptr_t)p | 256;
    return (unsigned)(b & (~b + 1));
}

/* the alignment every matrix of a strided batch has: matrix i starts i
 * strides after p, so the stride's bytes count as p's */
static unsigned batch_low_bit(const void *p, const lt_layout *l)
{
    const uintptr_t st = l->batch > 1 ? (uintptr_t)(l->stride * (int64_t)type_bytes(l->type)) : 0;
    return low_bit((const void *)((uintptr_t)p | st));
}

static double gelu(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* what the matmul read, for tests of the wrapper's mapping */
static void record_call(const lt_desc *op, lt_layout *const L[4], const void *const ptr[4],
                        const cublasLtMatmulAlgo_t *algo)
{
    lt_call_record *rec = &g_last;
    rec->compute = op->compute, rec->scale = op->scale, rec->transa = op->transa, rec->transb = op->transb;
    rec->epilogue = op->epilogue;
    rec->batch = L[0]->batch;
    for (int i = 0; i < 4; i++) {
        rec->type[i] = L[i]->type, rec->rows[i] = L[i]->rows, rec->cols[i] = L[i]->cols, rec->ld[i] = L[i]->ld;
        rec->stride[i] = L[i]->stride;
        rec->ptr_align[i] = low_bit(ptr[i]);
        rec->algo_align[i] = (unsigned)algo->data[1 + i];
    }
}

/* D = epilogue(alpha op(A) op(B) + beta C), batch after batch, on checked
 * operands; rd: D's allocation (its bytes become written) */
static cublasStatus_t product(const lt_desc *op, lt_layout *const L[4], const void *A, const void *B, const void *C,
                              void *D, float al, float be, uint64_t m, uint64_t n, uint64_t k, region *rd)
{
    const char *w = "cublasLtMatmul";
    const lt_layout *Adesc = L[0], *Bdesc = L[1], *Cdesc = L[2], *Ddesc = L[3];
    const int bias = op->epilogue & CUBLASLT_EPILOGUE_BIAS;
    const int bias_type = op->bias_type >= 0 ? op->bias_type : Ddesc->type;
    /* op(A) and op(B) gathered (rounded as the compute type allows), the
     * product with C and the epilogue, then D (which may be C) */
    double *a = (double *)malloc((size_t)(m * k) * sizeof *a), *b = (double *)malloc((size_t)(k * n) * sizeof *b);
    double *acc = (double *)malloc((size_t)(m * n) * sizeof *acc);
    if (!a || !b || !acc) {
        free(a), free(b), free(acc);
        return refuse(CUBLAS_STATUS_ALLOC_FAILED, "%s: no host memory for a %llu x %llu x %llu product", w,
                      (unsigned long long)m, (unsigned long long)n, (unsigned long long)k);
    }
    const size_t es = type_bytes(Ddesc->type);
    for (int bt = 0; bt < Adesc->batch; bt++) {
        for (uint64_t i = 0; i < m; i++)
            for (uint64_t q = 0; q < k; q++)
                a[i * k + q] = input_round(op->compute, load_elem(Adesc->type, (const char *)A,
                                                                  op->transa ? elem_index(Adesc, q, i, bt)
                                                                             : elem_index(Adesc, i, q, bt)));
        for (uint64_t q = 0; q < k; q++)
            for (uint64_t j = 0; j < n; j++)
                b[q * n + j] = input_round(op->compute, load_elem(Bdesc->type, (const char *)B,
                                                                  op->transb ? elem_index(Bdesc, j, q, bt)
                                                                             : elem_index(Bdesc, q, j, bt)));
        for (uint64_t i = 0; i < m; i++) {
            double *row = acc + i * n;
            for (uint64_t j = 0; j < n; j++)
                row[j] = 0;
            for (uint64_t q = 0; q < k; q++) {
                const double x = a[i * k + q];
                const double *bq = b + q * n;
                for (uint64_t j = 0; j < n; j++)
                    row[j] += x * bq[j];
            }
            for (uint64_t j = 0; j < n; j++) {
                double v = (double)al * row[j];
                if (be != 0.0f)
                    v += (double)be * load_elem(Cdesc->type, (const char *)C, elem_index(Cdesc, i, j, bt));
                if (bias)
                    v += load_elem(bias_type, (const char *)op->bias, (size_t)(i + (uint64_t)(bt * op->bias_stride)));
                if (op->epilogue & CUBLASLT_EPILOGUE_RELU)
                    v = v > 0 ? v : 0;
                if (op->epilogue & CUBLASLT_EPILOGUE_GELU)
                    v = gelu(v);
                row[j] = v;
            }
        }
        for (uint64_t i = 0; i < m; i++)
            for (uint64_t j = 0; j < n; j++) {
                const size_t at = elem_index(Ddesc, i, j, bt);
                store_elem(Ddesc->type, (char *)D, at, acc[i * n + j]);
                memset(rd->init + ((uintptr_t)D - rd->base) + at * es, 1, es);
            }
    }
    free(a), free(b), free(acc);
    return CUBLAS_STATUS_SUCCESS;
}

/* A matmul on a capturing stream, checked as above, then kept for the
 * graph with its descriptor's and layouts' values and alpha and beta
 * (the caller may change or destroy them; cuBLASLt reads host-mode
 * scalars when the call is made): the graph makes the same call. */
struct matmul_rec {
    lt_desc op;
    lt_layout L[4];
    float al, be;
    const void *ptr[4];
    cublasLtMatmulAlgo_t algo;
    void *ws;
    size_t ws_bytes;
};

static cudaError_t matmul_run(void *arg, cudaStream_t s)
{
    matmul_rec *r = (matmul_rec *)arg;
    static lt_handle h = {MAGIC_HANDLE};
    const cublasStatus_t st = eng_lt_standin_cublasLtMatmul(&h, &r->op, &r->al, r->ptr[0], &r->L[0], r->ptr[1],
                                                            &r->L[1], &r->be, r->ptr[2], &r->L[2], (void *)r->ptr[3],
                                                            &r->L[3], &r->algo, r->ws, r->ws_bytes, s);
    return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess
                                       : api_fail(cudaErrorLaunchFailure, "a graph's cublasLtMatmul: %s", g_why);
}

static void matmul_free(void *arg)
{
    delete (matmul_rec *)arg;
}

static cublasStatus_t capture_matmul(const lt_desc *op, lt_layout *const L[4], float al, float be,
                                     const void *const ptr[4], const cublasLtMatmulAlgo_t *algo, void *ws,
                                     size_t ws_bytes)
{
    matmul_rec *r = new matmul_rec;
    r->op = *op;
    r->op.pointer_mode = CUBLASLT_POINTER_MODE_HOST; /* the values, read now */
    for (int i = 0; i < 4; i++)
        r->L[i] = *L[i], r->ptr[i] = ptr[i];
    r->al = al, r->be = be;
    r->algo = *algo;
    r->ws = ws, r->ws_bytes = ws_bytes;
    return capture_record(capture_op{matmul_run, matmul_free, r}) == cudaSuccess
               ? CUBLAS_STATUS_SUCCESS
               : refuse(CUBLAS_STATUS_EXECUTION_FAILED, "cublasLtMatmul: the stream's capture is invalidated");
}

cublasStatus_t eng_lt_standin_cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void *alpha,
                                             const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                             cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                             cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                                             const cublasLtMatmulAlgo_t *algo, void *workspace, size_t ws_bytes,
                                             cudaStream_t stream)
{
    const char *w = "cublasLtMatmul";
    static const char *names = "ABCD";
    if (!h || h->magic != MAGIC_HANDLE)
        return refuse(CUBLAS_STATUS_NOT_INITIALIZED, "%s: not a handle", w);
    lt_layout *const L[4] = {Adesc, Bdesc, Cdesc, Ddesc};
    uint64_t m, n, k;
    cublasStatus_t st = problem(w, op, L, &m, &n, &k);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (!algo || algo->data[0] != MAGIC_ALGO)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: the algorithm is not one the stand-in's heuristic gave", w);
    if (ws_bytes && !region_span(workspace, ws_bytes))
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: the workspace (%p, %zu bytes) is not device memory", w,
                      workspace, ws_bytes);
    if (!alpha || !beta)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: alpha or beta is NULL", w);
    float al, be;
    if (op->pointer_mode == CUBLASLT_POINTER_MODE_DEVICE) {
        const region *ra = region_span(alpha, 4), *rb = region_span(beta, 4);
        if (!ra || !rb)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: device pointer mode with alpha or beta not in device memory",
                          w);
    }
    memcpy(&al, alpha, sizeof al);
    memcpy(&be, beta, sizeof be);
    const void *ptr[4] = {A, B, C, D};
    if (C == D && (Cdesc->rows != Ddesc->rows || Cdesc->cols != Ddesc->cols || Cdesc->ld != Ddesc->ld ||
                   Cdesc->order != Ddesc->order || Cdesc->type != Ddesc->type || Cdesc->stride != Ddesc->stride))
        return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: C == D in place with different layouts", w);
    for (int i = 0; i < 4; i++) {
        if (!ptr[i] && !(i == 2 && be == 0.0f))
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: %c is NULL", w, names[i]);
        const unsigned got = batch_low_bit(ptr[i], L[i]), elem = (unsigned)type_bytes(L[i]->type);
        if (ptr[i] && got < elem)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: %c (%p%s) is not aligned to its %s elements", w, names[i],
                          ptr[i], L[i]->batch > 1 ? " and its batch stride" : "", type_name(L[i]->type));
        if (ptr[i] && got < algo->data[1 + i])
            return refuse(CUBLAS_STATUS_NOT_SUPPORTED,
                          "%s: %c (%p%s) is %u-byte aligned, but the algorithm was chosen for %llu-byte aligned "
                          "pointers (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_%c_BYTES)",
                          w, names[i], ptr[i], L[i]->batch > 1 ? " and its batch stride" : "", got,
                          (unsigned long long)algo->data[1 + i], names[i]);
    }
    region *r[4];
    for (int i = 0; i < 4; i++) {
        r[i] = NULL;
        if (ptr[i] && !(r[i] = matrix_span(w, names[i], ptr[i], L[i], i < 2 || (i == 2 && be != 0.0f), &st)))
            return st;
    }
    const int bias = op->epilogue & CUBLASLT_EPILOGUE_BIAS;
    const int bias_type = op->bias_type >= 0 ? op->bias_type : Ddesc->type;
    if (bias) {
        lt_layout bl = {MAGIC_LAYOUT, bias_type, CUBLASLT_ORDER_COL, m, 1, (int64_t)m, Ddesc->batch, op->bias_stride};
        if (!op->bias)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, "%s: a bias epilogue without a bias pointer", w);
        if (!matrix_span(w, 'b', op->bias, &bl, 1, &st))
            return st;
    }
    record_call(op, L, ptr, algo);
    if (capture_on(stream))
        return capture_matmul(op, L, al, be, ptr, algo, workspace, ws_bytes);
    g_matmuls++;
    if (g_plan_only)
        return CUBLAS_STATUS_SUCCESS;
    return product(op, L, A, B, C, D, al, be, m, n, k, r[3]);
}

} /* namespace eng_cu_emu */

/* engine/cuda/backend.h: the stand-ins' account */
extern "C" void eng_cuda_emu_lt_counts(long *plans, long *heuristics, long *matmuls, int reset)
{
    using namespace eng_cu_emu;
    *plans = g_n_keys, *heuristics = g_heuristics, *matmuls = g_matmuls;
    if (reset)
        g_n_keys = g_heuristics = g_matmuls = 0;
}
