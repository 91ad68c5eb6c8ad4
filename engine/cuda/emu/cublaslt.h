/* cublaslt.h: cuBLASLt's types (the values of CUDA 13.0's cublasLt.h,
 * cublas_api.h and library_types.h) and the emulated build's stand-ins for
 * its functions (emu/cublaslt.cc), which backend.cu puts in the function
 * table it would otherwise fill with dlsym (internal.h, ENG__LT_FUNCS).
 *
 * A stand-in is not cuBLASLt: each records what its real counterpart is
 * given (descriptors' attributes, layouts, preferences, the pointers) and
 * computes the product those values describe on the CPU, refusing what the
 * real library documents it refuses.  docs/engine.md ("The emulated CUDA
 * build") says what they check and what they cannot.
 *
 * Must not: be included outside the emulated build; pretend to be the
 * library (the stand-ins' names say what they are). */
#ifndef TLM_ENGINE_CUDA_EMU_CUBLASLT_H
#define TLM_ENGINE_CUDA_EMU_CUBLASLT_H

#include <stddef.h>
#include <stdint.h>

#define CUBLAS_VER_MAJOR 13

namespace eng_cu_emu {

enum cudaDataType_t {
    CUDA_R_32F = 0,
    CUDA_R_64F = 1,
    CUDA_R_16F = 2,
    CUDA_R_16BF = 14,
};
typedef cudaDataType_t cudaDataType;

enum cublasStatus_t {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum cublasOperation_t {
    CUBLAS_OP_N = 0,
    CUBLAS_OP_T = 1,
    CUBLAS_OP_C = 2,
};
enum cublasComputeType_t {
    CUBLAS_COMPUTE_16F = 64,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_32F_PEDANTIC = 69,
    CUBLAS_COMPUTE_32F_FAST_16F = 74,
    CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    CUBLAS_COMPUTE_64F = 70,
};
enum cublasLtMatmulDescAttributes_t {
    CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,
    CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,
    CUBLASLT_MATMUL_DESC_POINTER_MODE = 2,
    CUBLASLT_MATMUL_DESC_TRANSA = 3,
    CUBLASLT_MATMUL_DESC_TRANSB = 4,
    CUBLASLT_MATMUL_DESC_TRANSC = 5,
    CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
    CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
    CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 10,
    CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,
};
enum cublasLtMatrixLayoutAttribute_t {
    CUBLASLT_MATRIX_LAYOUT_TYPE = 0,
    CUBLASLT_MATRIX_LAYOUT_ORDER = 1,
    CUBLASLT_MATRIX_LAYOUT_ROWS = 2,
    CUBLASLT_MATRIX_LAYOUT_COLS = 3,
    CUBLASLT_MATRIX_LAYOUT_LD = 4,
    CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
    CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
};
enum cublasLtOrder_t {
    CUBLASLT_ORDER_COL = 0,
    CUBLASLT_ORDER_ROW = 1,
};
enum cublasLtPointerMode_t {
    CUBLASLT_POINTER_MODE_HOST = 0,
    CUBLASLT_POINTER_MODE_DEVICE = 1,
};
enum cublasLtEpilogue_t {
    CUBLASLT_EPILOGUE_DEFAULT = 1,
    CUBLASLT_EPILOGUE_RELU = 2,
    CUBLASLT_EPILOGUE_BIAS = 4,
    CUBLASLT_EPILOGUE_RELU_BIAS = 6,
    CUBLASLT_EPILOGUE_GELU = 32,
    CUBLASLT_EPILOGUE_GELU_BIAS = 36,
};
enum cublasLtMatmulPreferenceAttributes_t {
    CUBLASLT_MATMUL_PREF_SEARCH_MODE = 0,
    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,
};

struct lt_handle;
struct lt_desc;
struct lt_layout;
struct lt_pref;
typedef lt_handle *cublasLtHandle_t;
typedef lt_desc *cublasLtMatmulDesc_t;
typedef lt_layout *cublasLtMatrixLayout_t;
typedef lt_pref *cublasLtMatmulPreference_t;
typedef struct {
    uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct {
    cublasLtMatmulAlgo_t algo;
    size_t workspaceSize;
    cublasStatus_t state;
    float wavesCount;
    int reserved[4];
} cublasLtMatmulHeuristicResult_t;

/* The stand-ins, one per function of internal.h's ENG__LT_FUNCS, with the
 * real functions' signatures. */
cublasStatus_t eng_lt_standin_cublasLtCreate(cublasLtHandle_t *h);
cublasStatus_t eng_lt_standin_cublasLtDestroy(cublasLtHandle_t h);
const char *eng_lt_standin_cublasLtGetStatusString(cublasStatus_t st);
cublasStatus_t eng_lt_standin_cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                                       cudaDataType_t scale);
cublasStatus_t eng_lt_standin_cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d);
cublasStatus_t eng_lt_standin_cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                             cublasLtMatmulDescAttributes_t attr, const void *buf,
                                                             size_t size);
cublasStatus_t eng_lt_standin_cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows,
                                                         uint64_t cols, int64_t ld);
cublasStatus_t eng_lt_standin_cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l);
cublasStatus_t eng_lt_standin_cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                               cublasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                               size_t size);
cublasStatus_t eng_lt_standin_cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p);
cublasStatus_t eng_lt_standin_cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p);
cublasStatus_t eng_lt_standin_cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                                   cublasLtMatmulPreferenceAttributes_t attr,
                                                                   const void *buf, size_t size);
cublasStatus_t eng_lt_standin_cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t op,
                                                             cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                             cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                                             cublasLtMatmulPreference_t pref, int requested,
                                                             cublasLtMatmulHeuristicResult_t *results, int *found);
cublasStatus_t eng_lt_standin_cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void *alpha,
                                             const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                             cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                             cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                                             const cublasLtMatmulAlgo_t *algo, void *workspace, size_t ws_bytes,
                                             cudaStream_t stream);

/* The most recent stand-in matmul's descriptor values, as the stand-in
 * read them (for tests: the wrapper's mapping from the op to cuBLASLt). */
struct lt_call_record {
    int compute, scale, transa, transb, epilogue;
    int type[4];         /* A, B, C, D */
    uint64_t rows[4], cols[4];
    int64_t ld[4];
    int batch;
    int64_t stride[4];
    unsigned ptr_align[4];  /* the lowest set bit of each pointer, at most 256 */
    unsigned algo_align[4]; /* the alignment the algorithm was chosen for */
};
const lt_call_record *lt_last_call(void);

} /* namespace eng_cu_emu */

#endif
