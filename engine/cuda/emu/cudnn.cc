/* cudnn.cc: the emulated build's stand-ins for the cuDNN graph-API
 * functions engine/cuda/sdpa_cudnn.cu calls (emu/cudnn.h).  They are not
 * cuDNN: each descriptor keeps the attributes it is given, finalize checks
 * what the library documents it needs, and execute evaluates the operation
 * graph on the CPU from those values alone (tensor dimensions, strides,
 * data types, unique ids, by-value scalars; pointwise modes and axes,
 * reductions, matmuls, reshapes), reading and writing the emulator's
 * device memory through the variant pack's pointers.  So a wrong mapping
 * from the op to the descriptors (a stride, a dimension, a uid, the scale,
 * the mask's comparison) gives a wrong result here as on the GPU.
 *
 * What they refuse (cuDNN 9 documents these statuses):
 *   - finalize with a required attribute missing, or one descriptor where
 *     another kind belongs (CUDNN_STATUS_BAD_PARAM);
 *   - operands whose dimensions do not chain (matmul: (.., M, K) x
 *     (.., K, N) -> (.., M, N), batch dimensions equal, 1, or one a
 *     multiple of the other as GQA's heads; pointwise and reduction:
 *     each dimension the output's or 1) (CUDNN_STATUS_BAD_PARAM);
 *   - for the fused attention path (a graph with matmuls): a non-virtual
 *     matmul operand not bf16 or fp16, its last stride not 1, its byte
 *     alignment under 16, or a head size not a multiple of 8 or over 256
 *     (CUDNN_STATUS_NOT_SUPPORTED*: no engine);
 *   - at execute: a non-virtual tensor the variant pack does not bind, a
 *     pointer less aligned than its tensor's CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT
 *     (CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER), a tensor leaving its
 *     device allocation or reading bytes nothing wrote, a workspace smaller
 *     than the plan's (CUDNN_STATUS_EXECUTION_FAILED / BAD_PARAM).
 * Numbers: every intermediate in double, rounded to its tensor's type
 * (bf16 or fp32) when stored, outputs rounded once to theirs.
 *
 * Must not: check less than the library documents; claim to check what
 * only the library can (which graphs its engines take, their numerics,
 * speed); keep anything between calls but the descriptors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/emu/internal.h"

namespace eng_cu_emu {

enum { MAGIC_DNN_HANDLE = 0x444e4e48, MAGIC_DNN_DESC };
enum { MAXA = 16, MAXD = 4, MAXOPS = 64 };

struct dnn_handle {
    unsigned magic;
};
struct dnn_attr {
    int name, type;
    int64_t n;
    void *v;
};
struct dnn_desc {
    unsigned magic;
    int type, finalized;
    dnn_attr a[MAXA];
    int na;
    /* tensor, parsed at finalize */
    int dtype, nd, virt, byval;
    int64_t dim[MAXD], str[MAXD], uid, align;
    /* a plan's workspace; a heuristics' result's graph */
    int64_t ws;
    dnn_desc *graph;
};

static char g_why[1024];
static cudnnStatus_t g_why_status = CUDNN_STATUS_SUCCESS;
static long g_graphs, g_execs;

void dnn_standin_counts(long *graphs_finalized, long *plans_executed)
{
    *graphs_finalized = g_graphs;
    *plans_executed = g_execs;
}

static const char *status_name(cudnnStatus_t st)
{
    switch (st) {
    case CUDNN_STATUS_SUCCESS:
        return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED:
        return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM:
        return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER:
        return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER:
        return "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER";
    case CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED:
        return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
    case CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND:
        return "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND";
    case CUDNN_STATUS_NOT_SUPPORTED:
        return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_NOT_SUPPORTED_SHAPE:
        return "CUDNN_STATUS_NOT_SUPPORTED_SHAPE";
    case CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE:
        return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
    case CUDNN_STATUS_NOT_SUPPORTED_LAYOUT:
        return "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT";
    case CUDNN_STATUS_EXECUTION_FAILED:
        return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
        return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
    default:
        return "CUDNN_STATUS_INTERNAL_ERROR";
    }
}

static cudnnStatus_t refuse(cudnnStatus_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cudnnStatus_t refuse(cudnnStatus_t st, const char *fmt, ...)
{
    char buf[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    snprintf(g_why, sizeof g_why, "%s (cuDNN stand-in: %s)", status_name(st), buf);
    g_why_status = st;
    fprintf(stderr, "cuda emulator: %s\n", g_why);
    return st;
}

size_t eng_dnn_standin_cudnnGetVersion(void)
{
    return 91900; /* the header's values are 9.19's */
}

const char *eng_dnn_standin_cudnnGetErrorString(cudnnStatus_t st)
{
    return st != CUDNN_STATUS_SUCCESS && st == g_why_status ? g_why : status_name(st);
}

cudnnStatus_t eng_dnn_standin_cudnnCreate(cudnnHandle_t *h)
{
    dnn_handle *p = (dnn_handle *)calloc(1, sizeof *p);
    if (!p)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    p->magic = MAGIC_DNN_HANDLE;
    *h = p;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t eng_dnn_standin_cudnnDestroy(cudnnHandle_t h)
{
    if (!h || h->magic != MAGIC_DNN_HANDLE)
        return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnDestroy: not a handle");
    h->magic = 0;
    free(h);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t eng_dnn_standin_cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    (void)s;
    return h && h->magic == MAGIC_DNN_HANDLE ? CUDNN_STATUS_SUCCESS
                                             : refuse(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: not a handle");
}

/* ------------------------------------------------------------ descriptors */
static dnn_desc *as_desc(cudnnBackendDescriptor_t d)
{
    dnn_desc *x = (dnn_desc *)d;
    return x && x->magic == MAGIC_DNN_DESC ? x : NULL;
}

cudnnStatus_t eng_dnn_standin_cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                           cudnnBackendDescriptor_t *d)
{
    dnn_desc *x = (dnn_desc *)calloc(1, sizeof *x);
    if (!x)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    x->magic = MAGIC_DNN_DESC;
    x->type = type;
    *d = x;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t eng_dnn_standin_cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
    dnn_desc *x = as_desc(d);
    if (!x)
        return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnBackendDestroyDescriptor: not a descriptor");
    for (int i = 0; i < x->na; i++)
        free(x->a[i].v);
    x->magic = 0;
    free(x);
    return CUDNN_STATUS_SUCCESS;
}

static size_t type_size(int type)
{
    switch (type) {
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE:
        return 8;
    case CUDNN_TYPE_BOOLEAN:
        return sizeof(bool);
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
        return sizeof(void *);
    default:
        return 4; /* the enums, float */
    }
}

cudnnStatus_t eng_dnn_standin_cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                                       cudnnBackendAttributeType_t type, int64_t count,
                                                       const void *elems)
{
    dnn_desc *x = as_desc(d);
    if (!x)
        return refuse(CUDNN_STATUS_BAD_PARAM, "SetAttribute %d: not a descriptor", (int)name);
    if (x->finalized)
        return refuse(CUDNN_STATUS_BAD_PARAM, "SetAttribute %d on a finalized descriptor", (int)name);
    if (count <= 0 || !elems)
        return refuse(CUDNN_STATUS_BAD_PARAM, "SetAttribute %d: no elements", (int)name);
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
        for (int64_t i = 0; i < count; i++) {
            dnn_desc *e = as_desc(((cudnnBackendDescriptor_t const *)elems)[i]);
            if (!e || !e->finalized)
                return refuse(CUDNN_STATUS_BAD_PARAM, "SetAttribute %d: element %lld not a finalized descriptor",
                              (int)name, (long long)i);
        }
    dnn_attr *a = NULL;
    for (int i = 0; i < x->na; i++)
        if (x->a[i].name == name)
            a = &x->a[i];
    if (!a) {
        if (x->na == MAXA)
            return refuse(CUDNN_STATUS_BAD_PARAM, "SetAttribute %d: too many attributes", (int)name);
        a = &x->a[x->na++];
        a->name = name;
        a->v = NULL;
    }
    free(a->v);
    a->type = type;
    a->n = count;
    a->v = malloc((size_t)count * type_size(type));
    if (!a->v)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    memcpy(a->v, elems, (size_t)count * type_size(type));
    return CUDNN_STATUS_SUCCESS;
}

static const dnn_attr *get(const dnn_desc *x, int name, int type)
{
    for (int i = 0; i < x->na; i++)
        if (x->a[i].name == name)
            return x->a[i].type == type ? &x->a[i] : NULL;
    return NULL;
}
static int64_t get_i64(const dnn_desc *x, int name, int64_t dflt)
{
    const dnn_attr *a = get(x, name, CUDNN_TYPE_INT64);
    return a ? ((const int64_t *)a->v)[0] : dflt;
}
static int get_enum(const dnn_desc *x, int name, int type, int dflt)
{
    const dnn_attr *a = get(x, name, type);
    return a ? ((const int *)a->v)[0] : dflt;
}
/* attribute name's descriptor, of descriptor type want (-1: any) */
static dnn_desc *get_desc(const dnn_desc *x, int name, int want)
{
    const dnn_attr *a = get(x, name, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    dnn_desc *d = a ? as_desc(((cudnnBackendDescriptor_t *)a->v)[0]) : NULL;
    return d && (want < 0 || d->type == want) ? d : NULL;
}

#define NEED(cond, ...)                                                                                        \
    do {                                                                                                       \
        if (!(cond))                                                                                           \
            return refuse(CUDNN_STATUS_BAD_PARAM, __VA_ARGS__);                                                \
    } while (0)

static cudnnStatus_t fin_tensor(dnn_desc *x)
{
    const dnn_attr *dims = get(x, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64);
    const dnn_attr *str = get(x, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64);
    NEED(get(x, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE), "tensor: no CUDNN_ATTR_TENSOR_DATA_TYPE");
    NEED(dims && str, "tensor: no dimensions or strides");
    NEED(get(x, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64), "tensor: no CUDNN_ATTR_TENSOR_UNIQUE_ID");
    NEED(get(x, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64), "tensor: no CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT");
    NEED(dims->n == str->n && dims->n == MAXD, "tensor: %lld dimensions, %lld strides (4 expected here)",
         (long long)dims->n, (long long)str->n);
    x->dtype = get_enum(x, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, -1);
    x->nd = (int)dims->n;
    for (int i = 0; i < x->nd; i++) {
        x->dim[i] = ((const int64_t *)dims->v)[i];
        x->str[i] = ((const int64_t *)str->v)[i];
        NEED(x->dim[i] > 0 && x->str[i] > 0, "tensor: dimension %d is %lld, stride %lld", i, (long long)x->dim[i],
             (long long)x->str[i]);
    }
    x->uid = get_i64(x, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
    x->align = get_i64(x, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 0);
    const dnn_attr *v = get(x, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN);
    const dnn_attr *bv = get(x, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN);
    x->virt = v && *(const bool *)v->v;
    x->byval = bv && *(const bool *)bv->v;
    NEED(x->dtype == CUDNN_DATA_FLOAT || x->dtype == CUDNN_DATA_BFLOAT16 || x->dtype == CUDNN_DATA_BOOLEAN ||
             x->dtype == CUDNN_DATA_HALF,
         "tensor %lld: data type %d (the stand-in knows fp32, bf16, fp16, boolean)", (long long)x->uid, x->dtype);
    return CUDNN_STATUS_SUCCESS;
}

/* each of x's dimensions y's or 1 (gqa: or a divisor of y's) */
static int fits(const dnn_desc *x, const dnn_desc *y, int gqa)
{
    for (int i = 0; i < MAXD; i++)
        if (x->dim[i] != y->dim[i] && x->dim[i] != 1 && !(gqa && y->dim[i] % x->dim[i] == 0))
            return 0;
    return 1;
}

static int is_binary(int mode)
{
    return mode == CUDNN_POINTWISE_ADD || mode == CUDNN_POINTWISE_MUL || mode == CUDNN_POINTWISE_SUB ||
           mode == CUDNN_POINTWISE_DIV || mode == CUDNN_POINTWISE_CMP_GE || mode == CUDNN_POINTWISE_BINARY_SELECT;
}

static cudnnStatus_t fin_op(dnn_desc *x)
{
    switch (x->type) {
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR: {
        const int mode = get_enum(x, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, -1);
        NEED(mode >= 0, "pointwise: no CUDNN_ATTR_POINTWISE_MODE");
        NEED(mode != CUDNN_POINTWISE_GEN_INDEX || get(x, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64),
             "pointwise GEN_INDEX: no CUDNN_ATTR_POINTWISE_AXIS");
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: {
        dnn_desc *pw = get_desc(x, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        dnn_desc *X = get_desc(x, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        dnn_desc *B = get_desc(x, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        dnn_desc *T = get_desc(x, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        dnn_desc *Y = get_desc(x, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        NEED(pw && X && Y, "pointwise operation: no pointwise descriptor, X or Y");
        const int mode = get_enum(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, -1);
        NEED(!is_binary(mode) || B, "pointwise operation (mode %d): no B", mode);
        NEED(mode != CUDNN_POINTWISE_BINARY_SELECT || T, "pointwise BINARY_SELECT: no T (the mask)");
        if (mode == CUDNN_POINTWISE_GEN_INDEX) {
            const int64_t axis = get_i64(pw, CUDNN_ATTR_POINTWISE_AXIS, -1);
            NEED(axis >= 0 && axis < MAXD, "pointwise GEN_INDEX: axis %lld", (long long)axis);
        }
        NEED(fits(X, Y, 0) && (!B || fits(B, Y, 0)) && (!T || fits(T, Y, 0)),
             "pointwise operation (mode %d): an input does not broadcast to Y (uid %lld)", mode, (long long)Y->uid);
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_MATMUL_DESCRIPTOR:
        NEED(get(x, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE), "matmul: no CUDNN_ATTR_MATMUL_COMP_TYPE");
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: {
        dnn_desc *A = get_desc(x, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        dnn_desc *B = get_desc(x, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        dnn_desc *C = get_desc(x, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        NEED(A && B && C && get_desc(x, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_BACKEND_MATMUL_DESCRIPTOR),
             "matmul operation: no A, B, C or matmul descriptor");
        NEED(A->dim[2] == C->dim[2] && B->dim[3] == C->dim[3] && A->dim[3] == B->dim[2],
             "matmul: (%lld x %lld) x (%lld x %lld) -> (%lld x %lld) does not chain", (long long)A->dim[2],
             (long long)A->dim[3], (long long)B->dim[2], (long long)B->dim[3], (long long)C->dim[2],
             (long long)C->dim[3]);
        for (int i = 0; i < 2; i++) {
            const int64_t m = A->dim[i] > B->dim[i] ? A->dim[i] : B->dim[i];
            const int64_t mm = m > C->dim[i] ? m : C->dim[i];
            NEED(mm % A->dim[i] == 0 && mm % B->dim[i] == 0 && mm % C->dim[i] == 0,
                 "matmul: batch dimension %d of A, B, C (%lld, %lld, %lld) not one a multiple of the others", i,
                 (long long)A->dim[i], (long long)B->dim[i], (long long)C->dim[i]);
        }
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_REDUCTION_DESCRIPTOR: {
        const int op = get_enum(x, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, -1);
        NEED(op == CUDNN_REDUCE_TENSOR_ADD || op == CUDNN_REDUCE_TENSOR_MAX,
             "reduction: operator %d (the stand-in knows ADD and MAX)", op);
        NEED(get(x, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE), "reduction: no compute type");
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: {
        dnn_desc *X = get_desc(x, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        dnn_desc *Y = get_desc(x, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        NEED(X && Y && get_desc(x, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_BACKEND_REDUCTION_DESCRIPTOR),
             "reduction operation: no X, Y or reduction descriptor");
        NEED(fits(Y, X, 0), "reduction: Y's dimensions not X's or 1");
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR: {
        dnn_desc *X = get_desc(x, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        dnn_desc *Y = get_desc(x, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        NEED(X && Y, "reshape operation: no X or Y");
        int64_t nx = 1, ny = 1;
        for (int i = 0; i < MAXD; i++)
            nx *= X->dim[i], ny *= Y->dim[i];
        NEED(nx == ny && X->dtype == Y->dtype, "reshape: %lld elements to %lld, or a change of type", (long long)nx,
             (long long)ny);
        return CUDNN_STATUS_SUCCESS;
    }
    default:
        return CUDNN_STATUS_SUCCESS;
    }
}

static int is_op(const dnn_desc *x)
{
    return x->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR ||
           x->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR ||
           x->type == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR ||
           x->type == CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR;
}

/* an operation's tensors: inputs in[0..3), output *out */
static void op_tensors(const dnn_desc *op, dnn_desc *in[3], dnn_desc **out)
{
    in[0] = in[1] = in[2] = NULL;
    switch (op->type) {
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        in[0] = get_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, -1);
        in[1] = get_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, -1);
        in[2] = get_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, -1);
        *out = get_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, -1);
        break;
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
        in[0] = get_desc(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, -1);
        in[1] = get_desc(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, -1);
        *out = get_desc(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, -1);
        break;
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
        in[0] = get_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, -1);
        *out = get_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, -1);
        break;
    default:
        in[0] = get_desc(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, -1);
        *out = get_desc(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, -1);
        break;
    }
}

/* a graph: every virtual tensor made by exactly one operation; the fused
 * attention path's requirements on its matmuls' non-virtual operands */
static cudnnStatus_t fin_graph(dnn_desc *g)
{
    const dnn_attr *ops = get(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    NEED(get(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE), "operation graph: no handle");
    NEED(ops && ops->n <= MAXOPS, "operation graph: no operations (or over %d)", MAXOPS);
    for (int64_t i = 0; i < ops->n; i++) {
        dnn_desc *op = as_desc(((cudnnBackendDescriptor_t *)ops->v)[i]), *in[3], *out;
        NEED(op && is_op(op), "operation graph: element %lld not an operation", (long long)i);
        op_tensors(op, in, &out);
        for (int64_t j = 0; j < ops->n; j++) {
            dnn_desc *o2 = as_desc(((cudnnBackendDescriptor_t *)ops->v)[j]), *in2[3], *out2;
            op_tensors(o2, in2, &out2);
            NEED(j == i || out2->uid != out->uid, "operation graph: tensor %lld written by two operations",
                 (long long)out->uid);
        }
        for (int k = 0; k < 3; k++) {
            if (!in[k] || !in[k]->virt)
                continue;
            int made = 0;
            for (int64_t j = 0; j < ops->n; j++) {
                dnn_desc *o2 = as_desc(((cudnnBackendDescriptor_t *)ops->v)[j]), *in2[3], *out2;
                op_tensors(o2, in2, &out2);
                made |= out2->uid == in[k]->uid;
            }
            NEED(made, "operation graph: virtual tensor %lld read but never written", (long long)in[k]->uid);
        }
        if (op->type != CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)
            continue;
        dnn_desc *t[3] = {in[0], in[1], out};
        for (int k = 0; k < 3; k++) {
            if (t[k]->virt)
                continue;
            if (t[k]->dtype != CUDNN_DATA_BFLOAT16 && t[k]->dtype != CUDNN_DATA_HALF)
                return refuse(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE,
                              "fused attention: matmul operand %lld of data type %d (bf16 or fp16 only)",
                              (long long)t[k]->uid, t[k]->dtype);
            if (t[k]->str[3] != 1 && t[k]->str[2] != 1)
                return refuse(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT,
                              "fused attention: matmul operand %lld has no unit stride in its last two dimensions",
                              (long long)t[k]->uid);
            if (t[k]->align < 16)
                return refuse(CUDNN_STATUS_NOT_SUPPORTED, "fused attention: operand %lld aligned to %lld bytes (16)",
                              (long long)t[k]->uid, (long long)t[k]->align);
            /* the head size: the dimension with unit stride */
            const int64_t hd = t[k]->str[3] == 1 ? t[k]->dim[3] : t[k]->dim[2];
            if (hd % 8 || hd > 256)
                return refuse(CUDNN_STATUS_NOT_SUPPORTED_SHAPE,
                              "fused attention: head size %lld (a multiple of 8, at most 256)", (long long)hd);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

/* the bytes the plan asks for: a (B, H, T) fp32 row vector per reduction
 * (what a flash kernel keeps of its softmax; the real engine's need is
 * its own): so the caller's workspace path runs */
static int64_t plan_ws(const dnn_desc *g)
{
    const dnn_attr *ops = get(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    int64_t ws = 0;
    for (int64_t i = 0; i < ops->n; i++) {
        dnn_desc *op = as_desc(((cudnnBackendDescriptor_t *)ops->v)[i]), *in[3], *out;
        if (op->type != CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR)
            continue;
        op_tensors(op, in, &out);
        ws += 4 * out->dim[0] * out->dim[1] * out->dim[2] * out->dim[3];
    }
    return ws;
}

cudnnStatus_t eng_dnn_standin_cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
    dnn_desc *x = as_desc(d);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (!x)
        return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnBackendFinalize: not a descriptor");
    if (x->finalized)
        return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnBackendFinalize: finalized twice");
    switch (x->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        st = fin_tensor(x);
        break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        st = fin_graph(x);
        g_graphs += st == CUDNN_STATUS_SUCCESS;
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        NEED(get_desc(x, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR),
             "engine heuristics: no operation graph");
        NEED(get(x, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE), "engine heuristics: no mode");
        break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
        dnn_desc *cfg = get_desc(x, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        NEED(get(x, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE), "execution plan: no handle");
        NEED(cfg && cfg->graph, "execution plan: no engine config from the heuristics");
        x->graph = cfg->graph;
        x->ws = plan_ws(x->graph);
        break;
    }
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: {
        const dnn_attr *u = get(x, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64);
        const dnn_attr *p = get(x, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR);
        NEED(u && p && u->n == p->n, "variant pack: unique ids and data pointers missing or of unequal counts");
        break;
    }
    default:
        st = fin_op(x);
        break;
    }
    if (st == CUDNN_STATUS_SUCCESS)
        x->finalized = 1;
    return st;
}

cudnnStatus_t eng_dnn_standin_cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d,
                                                       cudnnBackendAttributeName_t name,
                                                       cudnnBackendAttributeType_t type, int64_t requested,
                                                       int64_t *count, void *elems)
{
    dnn_desc *x = as_desc(d);
    if (!x || !x->finalized)
        return refuse(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED, "GetAttribute %d: not a finalized descriptor", (int)name);
    if (x->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR && name == CUDNN_ATTR_ENGINEHEUR_RESULTS &&
        type == CUDNN_TYPE_BACKEND_DESCRIPTOR && requested >= 1) {
        /* one config: "the" engine (the stand-in has one way to run a graph) */
        dnn_desc *cfg = as_desc(((cudnnBackendDescriptor_t *)elems)[0]);
        if (!cfg || cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
            return refuse(CUDNN_STATUS_BAD_PARAM, "heuristics' results: element 0 not an engine config");
        cfg->graph = get_desc(x, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, -1);
        cfg->finalized = 1;
        *count = 1;
        return CUDNN_STATUS_SUCCESS;
    }
    if (x->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && name == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE &&
        type == CUDNN_TYPE_INT64 && requested >= 1) {
        *(int64_t *)elems = x->ws;
        *count = 1;
        return CUDNN_STATUS_SUCCESS;
    }
    return refuse(CUDNN_STATUS_NOT_SUPPORTED, "GetAttribute %d of descriptor type %d: not in the stand-in", (int)name,
                  x->type);
}

/* ------------------------------------------------------------ execution */
/* A tensor's values, dense in its logical order (row-major over dims). */
struct val {
    int64_t uid;
    const dnn_desc *t;
    double *v;
};

static int64_t count_of(const dnn_desc *t)
{
    return t->dim[0] * t->dim[1] * t->dim[2] * t->dim[3];
}
static size_t elem_bytes(int dtype)
{
    return dtype == CUDNN_DATA_FLOAT ? 4 : dtype == CUDNN_DATA_BOOLEAN ? 1 : 2;
}
static double round_to(int dtype, double x)
{
    if (dtype == CUDNN_DATA_BFLOAT16)
        return (float)__nv_bfloat16(x);
    if (dtype == CUDNN_DATA_BOOLEAN)
        return x != 0;
    return (float)x;
}
/* the memory offset (elements) of logical index i */
static int64_t offset_of(const dnn_desc *t, int64_t i)
{
    int64_t off = 0;
    for (int a = MAXD - 1; a >= 0; a--) {
        off += (i % t->dim[a]) * t->str[a];
        i /= t->dim[a];
    }
    return off;
}
static int64_t span_of(const dnn_desc *t)
{
    int64_t s = 1;
    for (int a = 0; a < MAXD; a++)
        s += (t->dim[a] - 1) * t->str[a];
    return s;
}
/* x's element for y's logical index iy (broadcast; gqa: a dimension of x
 * dividing y's takes index * x / y) */
static int64_t index_in(const dnn_desc *x, const int64_t *yd, int64_t iy)
{
    int64_t c[MAXD], ix = 0;
    for (int a = MAXD - 1; a >= 0; a--) {
        c[a] = iy % yd[a];
        iy /= yd[a];
    }
    for (int a = 0; a < MAXD; a++) {
        int64_t k = x->dim[a] == yd[a] ? c[a] : x->dim[a] == 1 ? 0 : c[a] / (yd[a] / x->dim[a]);
        ix = ix * x->dim[a] + k;
    }
    return ix;
}

struct exec_state {
    val vals[2 * MAXOPS + 16];
    int n;
};

static double *values(exec_state *s, const dnn_desc *t)
{
    for (int i = 0; i < s->n; i++)
        if (s->vals[i].uid == t->uid)
            return s->vals[i].v;
    return NULL;
}

static double *make_values(exec_state *s, const dnn_desc *t)
{
    double *v = (double *)calloc((size_t)count_of(t), sizeof(double));
    if (v) {
        s->vals[s->n].uid = t->uid;
        s->vals[s->n].t = t;
        s->vals[s->n++].v = v;
    }
    return v;
}

static double load(const void *p, int dtype, int64_t off)
{
    if (dtype == CUDNN_DATA_FLOAT)
        return ((const float *)p)[off];
    if (dtype == CUDNN_DATA_BFLOAT16)
        return bf16_bits_f32((uint32_t)((const uint16_t *)p)[off] << 16);
    return ((const uint8_t *)p)[off];
}

/* a non-virtual tensor's pointer from the pack, its checks, its values
 * (inputs); out: checked for writing only */
static cudnnStatus_t bind(exec_state *s, const dnn_desc *t, const dnn_attr *u, const dnn_attr *p, int out,
                          void **where)
{
    void *ptr = NULL;
    for (int64_t i = 0; i < u->n; i++)
        if (((const int64_t *)u->v)[i] == t->uid)
            ptr = ((void *const *)p->v)[i];
    if (!ptr)
        return refuse(CUDNN_STATUS_BAD_PARAM, "execute: tensor %lld not in the variant pack", (long long)t->uid);
    *where = ptr;
    if (t->byval) {
        if (!values(s, t)) {
            double *v = make_values(s, t);
            if (!v)
                return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
            v[0] = load(ptr, t->dtype, 0);
        }
        return CUDNN_STATUS_SUCCESS;
    }
    if ((uintptr_t)ptr % (uintptr_t)t->align)
        return refuse(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER,
                      "execute: tensor %lld at %p, not the %lld bytes its descriptor promised", (long long)t->uid, ptr,
                      (long long)t->align);
    const size_t es = elem_bytes(t->dtype), bytes = (size_t)span_of(t) * es;
    region *r = region_span(ptr, bytes);
    if (!r)
        return refuse(CUDNN_STATUS_EXECUTION_FAILED, "execute: tensor %lld (%p, %zu bytes) leaves its allocation",
                      (long long)t->uid, ptr, bytes);
    if (out || values(s, t))
        return CUDNN_STATUS_SUCCESS;
    double *v = make_values(s, t);
    if (!v)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    for (int64_t i = 0; i < count_of(t); i++) {
        const int64_t off = offset_of(t, i);
        const size_t at = (uintptr_t)ptr - r->base + (size_t)off * es;
        for (size_t q = 0; q < es; q++)
            if (!r->init[at + q])
                return refuse(CUDNN_STATUS_EXECUTION_FAILED,
                              "execute: tensor %lld's element %lld was never written (uninitialised)",
                              (long long)t->uid, (long long)i);
        v[i] = load(ptr, t->dtype, off);
    }
    return CUDNN_STATUS_SUCCESS;
}

static double pointwise(int mode, double x, double b, double t)
{
    switch (mode) {
    case CUDNN_POINTWISE_ADD:
        return x + b;
    case CUDNN_POINTWISE_MUL:
        return x * b;
    case CUDNN_POINTWISE_SUB:
        return x - b;
    case CUDNN_POINTWISE_DIV:
        return x / b;
    case CUDNN_POINTWISE_EXP:
        return exp(x);
    case CUDNN_POINTWISE_LOG:
        return log(x);
    case CUDNN_POINTWISE_CMP_GE:
        return x >= b;
    case CUDNN_POINTWISE_BINARY_SELECT:
        return t != 0 ? x : b;
    default:
        return x; /* IDENTITY */
    }
}

/* one operation: y's values from its inputs' */
static cudnnStatus_t run_op(exec_state *s, const dnn_desc *op)
{
    dnn_desc *in[3], *out;
    op_tensors(op, in, &out);
    double *x[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++)
        if (in[k] && !(x[k] = values(s, in[k])))
            return refuse(CUDNN_STATUS_INTERNAL_ERROR, "execute: tensor %lld has no values", (long long)in[k]->uid);
    double *y = make_values(s, out);
    if (!y)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    const int64_t ny = count_of(out);
    if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) {
        const dnn_desc *pw = get_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, -1);
        const int mode = get_enum(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, -1);
        const int64_t axis = get_i64(pw, CUDNN_ATTR_POINTWISE_AXIS, 0);
        for (int64_t i = 0; i < ny; i++) {
            if (mode == CUDNN_POINTWISE_GEN_INDEX) {
                int64_t r = i;
                for (int a = MAXD - 1; a > axis; a--)
                    r /= out->dim[a];
                y[i] = (double)(r % out->dim[axis]);
                continue;
            }
            const double xv = x[0][index_in(in[0], out->dim, i)];
            const double bv = in[1] ? x[1][index_in(in[1], out->dim, i)] : 0;
            const double tv = in[2] ? x[2][index_in(in[2], out->dim, i)] : 0;
            y[i] = round_to(out->dtype, pointwise(mode, xv, bv, tv));
        }
    } else if (op->type == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR) {
        const dnn_desc *rd = get_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, -1);
        const int how = get_enum(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 0);
        for (int64_t i = 0; i < ny; i++)
            y[i] = how == CUDNN_REDUCE_TENSOR_MAX ? -INFINITY : 0;
        for (int64_t i = 0; i < count_of(in[0]); i++) {
            const int64_t j = index_in(out, in[0]->dim, i);
            y[j] = how == CUDNN_REDUCE_TENSOR_MAX ? fmax(y[j], x[0][i]) : y[j] + x[0][i];
        }
        for (int64_t i = 0; i < ny; i++)
            y[i] = round_to(out->dtype, y[i]);
    } else if (op->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) {
        /* the batch: the largest of A's, B's and C's per dimension; each
         * maps into it (GQA: a kv head serves H / Hkv query heads, and a
         * kv-head output sums its group's products) */
        const dnn_desc *A = in[0], *B = in[1];
        int64_t full[MAXD];
        for (int a = 0; a < 2; a++) {
            full[a] = A->dim[a] > B->dim[a] ? A->dim[a] : B->dim[a];
            full[a] = full[a] > out->dim[a] ? full[a] : out->dim[a];
        }
        const int64_t M = A->dim[2], K = A->dim[3], N = B->dim[3];
        for (int64_t b0 = 0; b0 < full[0]; b0++)
            for (int64_t b1 = 0; b1 < full[1]; b1++)
                for (int64_t m = 0; m < M; m++)
                    for (int64_t n = 0; n < N; n++) {
                        int64_t fa[MAXD] = {full[0], full[1], M, K}, fb[MAXD] = {full[0], full[1], K, N};
                        int64_t fc[MAXD] = {full[0], full[1], M, N};
                        double acc = 0;
                        for (int64_t kk = 0; kk < K; kk++)
                            acc += x[0][index_in(A, fa, ((b0 * full[1] + b1) * M + m) * K + kk)] *
                                   x[1][index_in(B, fb, ((b0 * full[1] + b1) * K + kk) * N + n)];
                        y[index_in(out, fc, ((b0 * full[1] + b1) * M + m) * N + n)] += acc;
                    }
        for (int64_t i = 0; i < ny; i++)
            y[i] = round_to(out->dtype, y[i]);
    } else { /* reshape: y's element at memory offset o is x's at o */
        const int64_t span = span_of(in[0]);
        double *mem = (double *)calloc((size_t)span, sizeof(double));
        if (!mem)
            return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
        for (int64_t i = 0; i < count_of(in[0]); i++)
            mem[offset_of(in[0], i)] = x[0][i];
        for (int64_t i = 0; i < ny; i++) {
            const int64_t o = offset_of(out, i);
            if (o >= span) {
                free(mem);
                return refuse(CUDNN_STATUS_BAD_PARAM, "reshape: Y's element %lld outside X's memory", (long long)i);
            }
            y[i] = mem[o];
        }
        free(mem);
    }
    return CUDNN_STATUS_SUCCESS;
}

static void store(void *p, int dtype, int64_t off, double v)
{
    if (dtype == CUDNN_DATA_FLOAT)
        ((float *)p)[off] = (float)v;
    else if (dtype == CUDNN_DATA_BFLOAT16)
        ((uint16_t *)p)[off] = __nv_bfloat16(v).__x;
    else
        ((uint8_t *)p)[off] = v != 0;
}

static cudnnStatus_t execute(const dnn_desc *plan, const dnn_desc *pack)
{
    const dnn_desc *g = plan->graph;
    const dnn_attr *ops = get(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    const dnn_attr *u = get(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64);
    const dnn_attr *p = get(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR);
    const dnn_attr *w = get(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR);
    void *ws = w ? *(void **)w->v : NULL;
    if (plan->ws && (!ws || !region_span(ws, (size_t)plan->ws)))
        return refuse(CUDNN_STATUS_BAD_PARAM, "execute: the plan needs %lld bytes of device workspace, given %p",
                      (long long)plan->ws, ws);
    exec_state *s = (exec_state *)calloc(1, sizeof *s);
    if (!s)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    void *where;
    /* inputs: every non-virtual tensor an operation reads (plan-only: their
     * pointers checked as an output's are, nothing read) */
    for (int64_t i = 0; i < ops->n && !st; i++) {
        dnn_desc *in[3], *out;
        op_tensors(as_desc(((cudnnBackendDescriptor_t *)ops->v)[i]), in, &out);
        for (int k = 0; k < 3 && !st; k++)
            if (in[k] && !in[k]->virt)
                st = bind(s, in[k], u, p, g_plan_only, &where);
        if (!st && !out->virt)
            st = bind(s, out, u, p, 1, &where);
    }
    if (g_plan_only) {
        free(s);
        return st;
    }
    /* the operations, each once its inputs have values (any order given) */
    int done[MAXOPS] = {0}, left = (int)ops->n;
    while (!st && left) {
        int progress = 0;
        for (int64_t i = 0; i < ops->n && !st; i++) {
            const dnn_desc *op = as_desc(((cudnnBackendDescriptor_t *)ops->v)[i]);
            dnn_desc *in[3], *out;
            if (done[i])
                continue;
            op_tensors(op, in, &out);
            int ready = 1;
            for (int k = 0; k < 3; k++)
                ready &= !in[k] || values(s, in[k]) != NULL;
            if (!ready)
                continue;
            st = run_op(s, op);
            done[i] = 1, left--, progress = 1;
        }
        if (!st && !progress)
            st = refuse(CUDNN_STATUS_BAD_PARAM, "execute: the graph has a cycle");
    }
    /* outputs: the non-virtual tensors operations wrote */
    for (int64_t i = 0; i < ops->n && !st; i++) {
        dnn_desc *in[3], *out;
        op_tensors(as_desc(((cudnnBackendDescriptor_t *)ops->v)[i]), in, &out);
        if (out->virt)
            continue;
        bind(s, out, u, p, 1, &where);
        const double *v = values(s, out);
        const size_t es = elem_bytes(out->dtype);
        region *r = region_span(where, (size_t)span_of(out) * es);
        for (int64_t j = 0; j < count_of(out); j++) {
            const int64_t off = offset_of(out, j);
            store(where, out->dtype, off, v[j]);
            memset(r->init + ((uintptr_t)where - r->base) + (size_t)off * es, 1, es);
        }
    }
    for (int i = 0; i < s->n; i++)
        free(s->vals[i].v);
    free(s);
    return st;
}

cudnnStatus_t eng_dnn_standin_cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                                                  cudnnBackendDescriptor_t pack)
{
    dnn_desc *pl = as_desc(plan), *pk = as_desc(pack);
    if (!h || h->magic != MAGIC_DNN_HANDLE)
        return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnBackendExecute: not a handle");
    if (!pl || !pl->finalized || pl->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !pk || !pk->finalized ||
        pk->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        return refuse(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                      "cudnnBackendExecute: not a finalized execution plan and variant pack");
    /* the stand-in does not record its execution for a graph: a capture
     * that reaches it fails, as train.cuda_graph with cudnn is refused */
    if (capture_any()) {
        capture_refuse("cudnnBackendExecute (the cuDNN stand-in does not record for a graph)");
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "cudnnBackendExecute during stream capture");
    }
    emu_lock();
    const cudnnStatus_t st = execute(pl, pk);
    emu_unlock();
    g_execs += st == CUDNN_STATUS_SUCCESS;
    return st;
}

} /* namespace eng_cu_emu */
