/* cudnn.h: the cuDNN graph API's types (the values of cuDNN 9.19's
 * cudnn_graph_v9.h, only those engine/cuda/sdpa_cudnn.cu uses) and the
 * emulated build's stand-ins for its functions (emu/cudnn.cc), which
 * sdpa_cudnn.cu puts in the function table it would otherwise fill with
 * dlsym (ENG__DNN_FUNCS).
 *
 * A stand-in is not cuDNN: each keeps the attributes its real counterpart
 * is given, and execute computes the operation graph those values describe
 * on the CPU, refusing what the real library documents it refuses.
 * docs/engine.md ("cuDNN's fused attention") says what they check and
 * what they cannot.
 *
 * Must not: be included outside the emulated build; pretend to be the
 * library (the stand-ins' names say what they are). */
#ifndef TLM_ENGINE_CUDA_EMU_CUDNN_H
#define TLM_ENGINE_CUDA_EMU_CUDNN_H

#include <stddef.h>
#include <stdint.h>

#define CUDNN_MAJOR 9

namespace eng_cu_emu {

enum cudnnStatus_t {
    CUDNN_STATUS_SUCCESS = 0,
    CUDNN_STATUS_NOT_INITIALIZED = 1001,
    CUDNN_STATUS_BAD_PARAM = 2000,
    CUDNN_STATUS_BAD_PARAM_NULL_POINTER = 2002,
    CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER = 2003,
    CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED = 2004,
    CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND = 2005,
    CUDNN_STATUS_NOT_SUPPORTED = 3000,
    CUDNN_STATUS_NOT_SUPPORTED_SHAPE = 3002,
    CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE = 3003,
    CUDNN_STATUS_NOT_SUPPORTED_LAYOUT = 3004,
    CUDNN_STATUS_INTERNAL_ERROR = 4000,
    CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED = 4003,
    CUDNN_STATUS_EXECUTION_FAILED = 5000,
};
enum cudnnDataType_t {
    CUDNN_DATA_FLOAT = 0,
    CUDNN_DATA_HALF = 2,
    CUDNN_DATA_INT32 = 4,
    CUDNN_DATA_BFLOAT16 = 9,
    CUDNN_DATA_INT64 = 10,
    CUDNN_DATA_BOOLEAN = 11,
};
enum cudnnPointwiseMode_t {
    CUDNN_POINTWISE_ADD = 0,
    CUDNN_POINTWISE_MUL = 1,
    CUDNN_POINTWISE_DIV = 6,
    CUDNN_POINTWISE_SUB = 9,
    CUDNN_POINTWISE_EXP = 13,
    CUDNN_POINTWISE_LOG = 15,
    CUDNN_POINTWISE_IDENTITY = 21,
    CUDNN_POINTWISE_CMP_GE = 303,
    CUDNN_POINTWISE_GEN_INDEX = 501,
    CUDNN_POINTWISE_BINARY_SELECT = 601,
};
enum cudnnReduceTensorOp_t {
    CUDNN_REDUCE_TENSOR_ADD = 0,
    CUDNN_REDUCE_TENSOR_MAX = 3,
};
enum cudnnBackendHeurMode_t {
    CUDNN_HEUR_MODE_INSTANT = 0,
    CUDNN_HEUR_MODE_B = 1,
    CUDNN_HEUR_MODE_FALLBACK = 2,
    CUDNN_HEUR_MODE_A = 3,
};
enum cudnnBackendAttributeName_t {
    CUDNN_ATTR_POINTWISE_MODE = 0,
    CUDNN_ATTR_POINTWISE_MATH_PREC = 1,
    CUDNN_ATTR_POINTWISE_AXIS = 9,
    CUDNN_ATTR_ENGINEHEUR_MODE = 200,
    CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
    CUDNN_ATTR_ENGINEHEUR_RESULTS = 202,
    CUDNN_ATTR_ENGINECFG_ENGINE = 300,
    CUDNN_ATTR_EXECUTION_PLAN_HANDLE = 400,
    CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
    CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
    CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR = 750,
    CUDNN_ATTR_OPERATION_POINTWISE_XDESC = 751,
    CUDNN_ATTR_OPERATION_POINTWISE_BDESC = 752,
    CUDNN_ATTR_OPERATION_POINTWISE_YDESC = 753,
    CUDNN_ATTR_OPERATION_POINTWISE_TDESC = 758,
    CUDNN_ATTR_OPERATIONGRAPH_HANDLE = 800,
    CUDNN_ATTR_OPERATIONGRAPH_OPS = 801,
    CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 900,
    CUDNN_ATTR_TENSOR_DATA_TYPE = 901,
    CUDNN_ATTR_TENSOR_DIMENSIONS = 902,
    CUDNN_ATTR_TENSOR_STRIDES = 903,
    CUDNN_ATTR_TENSOR_UNIQUE_ID = 906,
    CUDNN_ATTR_TENSOR_IS_VIRTUAL = 907,
    CUDNN_ATTR_TENSOR_IS_BY_VALUE = 908,
    CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
    CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
    CUDNN_ATTR_VARIANT_PACK_WORKSPACE = 1003,
    CUDNN_ATTR_MATMUL_COMP_TYPE = 1500,
    CUDNN_ATTR_OPERATION_MATMUL_ADESC = 1520,
    CUDNN_ATTR_OPERATION_MATMUL_BDESC = 1521,
    CUDNN_ATTR_OPERATION_MATMUL_CDESC = 1522,
    CUDNN_ATTR_OPERATION_MATMUL_DESC = 1523,
    CUDNN_ATTR_REDUCTION_OPERATOR = 1600,
    CUDNN_ATTR_REDUCTION_COMP_TYPE = 1601,
    CUDNN_ATTR_OPERATION_REDUCTION_XDESC = 1610,
    CUDNN_ATTR_OPERATION_REDUCTION_YDESC = 1611,
    CUDNN_ATTR_OPERATION_REDUCTION_DESC = 1612,
    CUDNN_ATTR_OPERATION_RESHAPE_XDESC = 2200,
    CUDNN_ATTR_OPERATION_RESHAPE_YDESC = 2201,
};
enum cudnnBackendAttributeType_t {
    CUDNN_TYPE_HANDLE = 0,
    CUDNN_TYPE_DATA_TYPE = 1,
    CUDNN_TYPE_BOOLEAN = 2,
    CUDNN_TYPE_INT64 = 3,
    CUDNN_TYPE_FLOAT = 4,
    CUDNN_TYPE_DOUBLE = 5,
    CUDNN_TYPE_VOID_PTR = 6,
    CUDNN_TYPE_HEUR_MODE = 8,
    CUDNN_TYPE_POINTWISE_MODE = 14,
    CUDNN_TYPE_BACKEND_DESCRIPTOR = 15,
    CUDNN_TYPE_REDUCTION_OPERATOR_TYPE = 18,
};
enum cudnnBackendDescriptorType_t {
    CUDNN_BACKEND_POINTWISE_DESCRIPTOR = 0,
    CUDNN_BACKEND_ENGINECFG_DESCRIPTOR = 3,
    CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 4,
    CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 5,
    CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 13,
    CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 15,
    CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 16,
    CUDNN_BACKEND_TENSOR_DESCRIPTOR = 17,
    CUDNN_BACKEND_MATMUL_DESCRIPTOR = 18,
    CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 19,
    CUDNN_BACKEND_REDUCTION_DESCRIPTOR = 21,
    CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR = 22,
    CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR = 31,
};


struct dnn_handle;
struct dnn_desc;
typedef dnn_handle *cudnnHandle_t;
typedef void *cudnnBackendDescriptor_t;

/* The stand-ins, one per function of sdpa_cudnn.cu's ENG__DNN_FUNCS, with
 * the real functions' signatures. */
size_t eng_dnn_standin_cudnnGetVersion(void);
const char *eng_dnn_standin_cudnnGetErrorString(cudnnStatus_t st);
cudnnStatus_t eng_dnn_standin_cudnnCreate(cudnnHandle_t *h);
cudnnStatus_t eng_dnn_standin_cudnnDestroy(cudnnHandle_t h);
cudnnStatus_t eng_dnn_standin_cudnnSetStream(cudnnHandle_t h, cudaStream_t s);
cudnnStatus_t eng_dnn_standin_cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                           cudnnBackendDescriptor_t *d);
cudnnStatus_t eng_dnn_standin_cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d);
cudnnStatus_t eng_dnn_standin_cudnnBackendFinalize(cudnnBackendDescriptor_t d);
cudnnStatus_t eng_dnn_standin_cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                                       cudnnBackendAttributeType_t type, int64_t count,
                                                       const void *elems);
cudnnStatus_t eng_dnn_standin_cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d,
                                                       cudnnBackendAttributeName_t name,
                                                       cudnnBackendAttributeType_t type, int64_t requested,
                                                       int64_t *count, void *elems);
cudnnStatus_t eng_dnn_standin_cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                                                  cudnnBackendDescriptor_t pack);

/* How many operation graphs the stand-in has finalized, and executed (for
 * tests: descriptor construction alone, at the presets' shapes). */
void dnn_standin_counts(long *graphs_finalized, long *plans_executed);

} /* namespace eng_cu_emu */

#endif
