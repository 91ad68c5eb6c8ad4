/* cuda.h: the CUDA execution model on the CPU, for the emulated build of
 * engine/cuda/ (engine/libtlmcuda_emu.a, compiled by clang++ with
 * -DENG_CUDA_EMU).  engine/cuda/internal.h includes it instead of
 * <cuda_runtime.h>, <cuda_bf16.h> and <cublasLt.h>; the kernels' sources
 * are the same .cu files nvcc compiles.
 *
 * What it provides (docs/engine.md, "The emulated CUDA build"):
 *   - the kernel language: __global__ and the other qualifiers, dim3,
 *     threadIdx/blockIdx/blockDim/gridDim, __shared__ (a static in the
 *     section eng_cu_shared: blocks run one at a time, so one copy is the
 *     block's storage), __syncthreads, the warp primitives with lockstep
 *     semantics, atomics, the math functions the kernels use, bf16
 *     (emu/bf16.h) and the tensor-core fragments (engine/cuda/mma.h);
 *   - the launch (eng_cu_emu::launch, reached through ENG__CU_LAUNCH in
 *     internal.h): every block in turn, its threads as fibers, 32
 *     consecutive threads a warp, switching at barriers and warp primitives;
 *   - the runtime API subset the backend calls (memory, copies, streams and
 *     events, all synchronous; device queries; the last error);
 *   - cuBLASLt's types and the stand-ins that replace its functions
 *     (emu/cublaslt.h).
 * Every load and store of the kernels is checked (emu/check.cc): bounds,
 * uninitialised reads and races, as compute-sanitizer's memcheck, initcheck
 * and racecheck would; a failed check fails the launch with a report
 * naming the kernel, block and thread.
 *
 * Everything lives in namespace eng_cu_emu (the .cu bodies are opened in
 * it by ENG__CU_BEGIN), so this build's symbols never meet the real
 * runtime's nor the nvcc build's in one program.
 *
 * Must not: be included by the nvcc build or by C code; make a kernel's
 * behaviour depend on the order fibers run in (only the checks may). */
#ifndef TLM_ENGINE_CUDA_EMU_CUDA_H
#define TLM_ENGINE_CUDA_EMU_CUDA_H

#ifndef ENG_CUDA_EMU
#error "engine/cuda/emu/cuda.h is for the emulated build (-DENG_CUDA_EMU)"
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

/* The emulator's own functions run uninstrumented: their loads and stores
 * are not the kernel's. */
#define ENG_CU_EMU_NOCOV __attribute__((no_sanitize("coverage")))
#define ENG_CU_EMU_STR_(x) #x
#define ENG_CU_EMU_STR(x) ENG_CU_EMU_STR_(x)
/* where a barrier or warp primitive was called, for reports */
#define ENG_CU_EMU_SITE (__FILE__ ":" ENG_CU_EMU_STR(__LINE__))

/* ------------------------------------------------------------ qualifiers */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
/* no restrict: another fiber writes through its own copy of the pointer
 * between two of this thread's accesses, at a barrier the compiler sees as
 * an ordinary call */
#define __restrict__
/* `used` keeps the compiler from proving that a barrier (a call it cannot
 * see into) leaves the array alone, which would let it keep an element in
 * a register across __syncthreads */
#define __shared__ static __attribute__((section("eng_cu_shared"), used, aligned(16)))
#define __constant__ __attribute__((section("eng_cu_const"), used))

namespace eng_cu_emu {

/* ------------------------------------------------------------ vector types */
struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
    constexpr dim3(uint3 u) : x(u.x), y(u.y), z(u.z) {}
};
struct float2 {
    float x, y;
};
struct float4 {
    float x, y, z, w;
};
struct uint2 {
    unsigned x, y;
};
struct uint4 {
    unsigned x, y, z, w;
};
static inline float2 make_float2(float x, float y)
{
    return float2{x, y};
}
static inline float4 make_float4(float x, float y, float z, float w)
{
    return float4{x, y, z, w};
}

/* The built-in variables: one record the scheduler rewrites at every switch
 * to a thread.  Kernels may read it, never write it (a write is reported). */
struct builtins {
    uint3 thread_idx, block_idx;
    dim3 block_dim, grid_dim;
};
extern builtins g_builtins;
constexpr int warpSize = 32;

/* ------------------------------------------------------------ runtime API */
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorAssert = 710,
    cudaErrorMisalignedAddress = 716,
    cudaErrorLaunchFailure = 719,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
};
typedef cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
};
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01

struct stream_rec;
struct event_rec;
typedef stream_rec *cudaStream_t;
typedef event_rec *cudaEvent_t;

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int major, minor;
    int multiProcessorCount;
    int warpSize;
    int maxThreadsPerBlock;
};

cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
/* The emulator's own failures (a check that failed in a kernel, a
 * stand-in's refusal) come back as their report, the rest as the error's
 * usual meaning. */
const char *cudaGetErrorString(cudaError_t e);
const char *cudaGetErrorName(cudaError_t e);

cudaError_t cudaMalloc(void **p, size_t bytes);
template <typename T> static inline cudaError_t cudaMalloc(T **p, size_t bytes)
{
    return cudaMalloc((void **)p, bytes);
}
cudaError_t cudaFree(void *p);
/* pinned host memory, readable and writable by kernels (as the real
 * runtime's mapped pinned memory is on a unified-address device) */
cudaError_t cudaMallocHost(void **p, size_t bytes);
template <typename T> static inline cudaError_t cudaMallocHost(T **p, size_t bytes)
{
    return cudaMallocHost((void **)p, bytes);
}
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemset(void *p, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s = 0);

cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
/* host time between the two records (the work between them ran on the CPU) */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

/* Stream capture and graphs (emu/graph.cc), global mode only: while a
 * stream captures, the launches, device-side copies and memsets, copies
 * to and from pinned memory and cuBLASLt matmuls on it are recorded, not
 * run (arguments and descriptors copied), and a launch of the graph runs
 * the records in order on its stream.  What real CUDA refuses during a
 * capture (an allocation or free, a synchronisation, a synchronous copy
 * or memset, a copy to or from pageable memory, a cuDNN execution here)
 * returns cudaErrorStreamCaptureUnsupported with a report naming the call
 * and invalidates the capture: cudaStreamEndCapture then fails with
 * cudaErrorStreamCaptureInvalidated and no graph.  One capture at a
 * time. */
struct graph_rec;
struct graph_exec_rec;
typedef graph_rec *cudaGraph_t;
typedef graph_exec_rec *cudaGraphExec_t;
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};
enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2,
};
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g);
cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus *status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x);
cudaError_t cudaGraphDestroy(cudaGraph_t g);

/* the dynamic shared memory a kernel may be launched with (bytes) */
cudaError_t func_set_max_dynamic_smem(const void *kernel, int bytes);
template <typename F> static inline cudaError_t cudaFuncSetAttribute(F *kernel, cudaFuncAttribute attr, int value)
{
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
        return cudaErrorInvalidValue;
    return func_set_max_dynamic_smem((const void *)kernel, value);
}

/* ------------------------------------------------------------ the launch */
enum { LAUNCH_MAX_ARGS = 40 };
struct launch_info {
    const char *kernel;   /* its name, as written at the launch */
    const char *argnames; /* the launch's argument list, as written */
    const char *site;     /* file:line of the launch */
    const void *fn;       /* the kernel function (its dynamic shared memory limit) */
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
    void (*entry)(void *pack); /* runs the kernel on the launch's arguments */
    void *pack;                /* the arguments (the kernel's parameter space) */
    size_t pack_bytes;
    int n_ptr;                        /* pointer arguments, checked before the grid runs */
    const void *ptr[LAUNCH_MAX_ARGS]; /* their values */
    int ptr_arg[LAUNCH_MAX_ARGS];     /* their positions in the argument list */
    /* a copy of the pack on the heap, and its release: what a stream
     * capture keeps of the launch (the pack above is the caller's) */
    void *(*pack_clone)(const void *pack);
    void (*pack_free)(void *pack);
};
/* runs the launch (or records it, on a capturing stream); its error */
cudaError_t run_launch(launch_info *li);

template <typename F, typename Tuple> struct launch_pack {
    F fn;
    Tuple args;
};

template <typename T> ENG_CU_EMU_NOCOV static inline const void *ptr_value(const T &v)
{
    if constexpr (std::is_pointer<T>::value)
        return (const void *)v;
    else
        return nullptr;
}

template <typename... P, size_t... I>
ENG_CU_EMU_NOCOV static inline void collect_ptrs(launch_info *li, const std::tuple<P...> &t, std::index_sequence<I...>)
{
    ((std::is_pointer<P>::value && li->n_ptr < LAUNCH_MAX_ARGS
          ? (void)(li->ptr[li->n_ptr] = ptr_value(std::get<I>(t)), li->ptr_arg[li->n_ptr++] = (int)I)
          : (void)0),
     ...);
}

/* one thread's run of the kernel: its parameters are copied from the pack
 * (which the checks treat as the kernel's read-only parameter space) */
template <typename... P> ENG_CU_EMU_NOCOV static void launch_entry(void *pack)
{
    auto *pk = (launch_pack<void (*)(P...), std::tuple<P...>> *)pack;
    std::apply(pk->fn, pk->args);
}

template <typename... P> ENG_CU_EMU_NOCOV static void *launch_pack_clone(const void *pack)
{
    typedef launch_pack<void (*)(P...), std::tuple<P...>> pack_t;
    return new pack_t(*(const pack_t *)pack);
}
template <typename... P> ENG_CU_EMU_NOCOV static void launch_pack_free(void *pack)
{
    delete (launch_pack<void (*)(P...), std::tuple<P...>> *)pack;
}

/* The launch: arguments converted to the kernel's parameter types, as a
 * <<<>>> launch converts them; then the grid, block after block. */
template <typename... P, typename... A>
ENG_CU_EMU_NOCOV static inline void launch(const char *name, const char *argnames, const char *site, void (*k)(P...),
                                           dim3 grid, dim3 block, size_t smem, cudaStream_t stream, A &&...a)
{
    static_assert(sizeof...(P) == sizeof...(A), "a kernel launch with the wrong number of arguments");
    static_assert(sizeof...(P) <= LAUNCH_MAX_ARGS, "more kernel arguments than the emulator checks");
    static_assert((std::is_trivially_copyable<P>::value && ...), "a kernel parameter a capture cannot copy");
    launch_pack<void (*)(P...), std::tuple<P...>> pk{k, std::tuple<P...>(std::forward<A>(a)...)};
    launch_info li;
    li.kernel = name, li.argnames = argnames, li.site = site, li.fn = (const void *)k;
    li.grid = grid, li.block = block, li.smem = smem, li.stream = stream;
    li.entry = &launch_entry<P...>;
    li.pack = &pk;
    li.pack_bytes = sizeof pk;
    li.pack_clone = &launch_pack_clone<P...>;
    li.pack_free = &launch_pack_free<P...>;
    li.n_ptr = 0;
    collect_ptrs(&li, pk.args, std::index_sequence_for<P...>{});
    run_launch(&li);
}

/* ------------------------------------------------------------ synchronisation */
void syncthreads(const char *site);
/* the block's dynamic shared memory (the launch's smem bytes) */
void *dynamic_smem(void);

/* Warp collectives: every lane of the mask must reach one with the same
 * mask and kind; they then exchange 64-bit values.  kind: COLL_* below. */
enum {
    COLL_SHFL,
    COLL_SHFL_UP,
    COLL_SHFL_DOWN,
    COLL_SHFL_XOR,
    COLL_BALLOT,
    COLL_ANY,
    COLL_ALL,
    COLL_SYNCWARP,
    COLL_LDMATRIX,
    COLL_MMA,
};
uint64_t warp_collective(int kind, unsigned mask, uint64_t value, int arg, int width, const char *site);

template <typename T> ENG_CU_EMU_NOCOV static inline T shfl_kind(int kind, unsigned mask, T v, int arg, int width,
                                                                 const char *site)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "a shuffle of more than 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof v);
    bits = warp_collective(kind, mask, bits, arg, width, site);
    T r;
    memcpy(&r, &bits, sizeof r);
    return r;
}

/* ------------------------------------------------------------ atomics */
/* read-modify-write of one word, outside the race check (as atomics are) */
float atomic_add_f32(float *p, float v);
double atomic_add_f64(double *p, double v);
int atomic_add_i32(int *p, int v);
unsigned atomic_add_u32(unsigned *p, unsigned v);
unsigned long long atomic_add_u64(unsigned long long *p, unsigned long long v);
int atomic_max_i32(int *p, int v);
int atomic_min_i32(int *p, int v);
unsigned atomic_max_u32(unsigned *p, unsigned v);
int atomic_exch_i32(int *p, int v);
unsigned atomic_exch_u32(unsigned *p, unsigned v);
float atomic_exch_f32(float *p, float v);
int atomic_cas_i32(int *p, int compare, int v);
unsigned atomic_cas_u32(unsigned *p, unsigned compare, unsigned v);
unsigned long long atomic_cas_u64(unsigned long long *p, unsigned long long compare, unsigned long long v);

/* CUDA's overloads, onto the functions above */
#define ENG_CU_EMU_ATOMIC(name, T, impl)                                                                       \
    static inline T name(T *p, T v)                                                                            \
    {                                                                                                          \
        return impl(p, v);                                                                                     \
    }
ENG_CU_EMU_ATOMIC(atomicAdd, float, atomic_add_f32)
ENG_CU_EMU_ATOMIC(atomicAdd, double, atomic_add_f64)
ENG_CU_EMU_ATOMIC(atomicAdd, int, atomic_add_i32)
ENG_CU_EMU_ATOMIC(atomicAdd, unsigned, atomic_add_u32)
ENG_CU_EMU_ATOMIC(atomicAdd, unsigned long long, atomic_add_u64)
ENG_CU_EMU_ATOMIC(atomicMax, int, atomic_max_i32)
ENG_CU_EMU_ATOMIC(atomicMax, unsigned, atomic_max_u32)
ENG_CU_EMU_ATOMIC(atomicMin, int, atomic_min_i32)
ENG_CU_EMU_ATOMIC(atomicExch, int, atomic_exch_i32)
ENG_CU_EMU_ATOMIC(atomicExch, unsigned, atomic_exch_u32)
ENG_CU_EMU_ATOMIC(atomicExch, float, atomic_exch_f32)
#undef ENG_CU_EMU_ATOMIC
static inline int atomicCAS(int *p, int compare, int v)
{
    return atomic_cas_i32(p, compare, v);
}
static inline unsigned atomicCAS(unsigned *p, unsigned compare, unsigned v)
{
    return atomic_cas_u32(p, compare, v);
}
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long compare, unsigned long long v)
{
    return atomic_cas_u64(p, compare, v);
}
/* every access of the emulated grid is sequentially consistent already */
static inline void __threadfence(void) {}
static inline void __threadfence_block(void) {}

/* ------------------------------------------------------------ device math */
/* What the kernels call beyond <math.h>; the fast intrinsics compute what
 * their full-precision counterparts do (the device's are within a few ulp). */
static inline float rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
static inline float __expf(float x)
{
    return expf(x);
}
static inline float __logf(float x)
{
    return logf(x);
}
static inline float __fdividef(float a, float b)
{
    return a / b;
}
static inline float __saturatef(float x)
{
    return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
static inline float __fmaf_rn(float a, float b, float c)
{
    return fmaf(a, b, c);
}
static inline unsigned __float_as_uint(float x)
{
    unsigned u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline float __uint_as_float(unsigned u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
static inline int __float_as_int(float x)
{
    return (int)__float_as_uint(x);
}
static inline float __int_as_float(int i)
{
    return __uint_as_float((unsigned)i);
}
static inline int __popc(unsigned x)
{
    return __builtin_popcount(x);
}
static inline int __clz(int x)
{
    return x ? __builtin_clz((unsigned)x) : 32;
}
static inline int __ffs(int x)
{
    return __builtin_ffs(x);
}
template <typename T> static inline T min(T a, T b)
{
    return b < a ? b : a;
}
template <typename T> static inline T max(T a, T b)
{
    return a < b ? b : a;
}

} /* namespace eng_cu_emu */

/* The built-in variables, as the kernels spell them. */
#define threadIdx (::eng_cu_emu::g_builtins.thread_idx)
#define blockIdx (::eng_cu_emu::g_builtins.block_idx)
#define blockDim (::eng_cu_emu::g_builtins.block_dim)
#define gridDim (::eng_cu_emu::g_builtins.grid_dim)

/* Barriers and warp primitives carry their call site for the reports. */
#define __syncthreads() ::eng_cu_emu::syncthreads(ENG_CU_EMU_SITE)
#define __syncwarp(...) ::eng_cu_emu::syncwarp_site(ENG_CU_EMU_SITE, ##__VA_ARGS__)
#define __shfl_sync(mask, v, src, ...) ::eng_cu_emu::shfl_site(ENG_CU_EMU_SITE, (mask), (v), (src), ##__VA_ARGS__)
#define __shfl_up_sync(mask, v, d, ...)                                                                        \
    ::eng_cu_emu::shfl_up_site(ENG_CU_EMU_SITE, (mask), (v), (d), ##__VA_ARGS__)
#define __shfl_down_sync(mask, v, d, ...)                                                                      \
    ::eng_cu_emu::shfl_down_site(ENG_CU_EMU_SITE, (mask), (v), (d), ##__VA_ARGS__)
#define __shfl_xor_sync(mask, v, m, ...)                                                                       \
    ::eng_cu_emu::shfl_xor_site(ENG_CU_EMU_SITE, (mask), (v), (m), ##__VA_ARGS__)
#define __ballot_sync(mask, p) ::eng_cu_emu::ballot_site(ENG_CU_EMU_SITE, (mask), (p))
#define __any_sync(mask, p) ::eng_cu_emu::any_site(ENG_CU_EMU_SITE, (mask), (p))
#define __all_sync(mask, p) ::eng_cu_emu::all_site(ENG_CU_EMU_SITE, (mask), (p))

namespace eng_cu_emu {
ENG_CU_EMU_NOCOV static inline void syncwarp_site(const char *site, unsigned mask = 0xffffffffu)
{
    warp_collective(COLL_SYNCWARP, mask, 0, 0, 32, site);
}
template <typename T>
ENG_CU_EMU_NOCOV static inline T shfl_site(const char *site, unsigned mask, T v, int src, int width = 32)
{
    return shfl_kind(COLL_SHFL, mask, v, src, width, site);
}
template <typename T>
ENG_CU_EMU_NOCOV static inline T shfl_up_site(const char *site, unsigned mask, T v, unsigned d, int width = 32)
{
    return shfl_kind(COLL_SHFL_UP, mask, v, (int)d, width, site);
}
template <typename T>
ENG_CU_EMU_NOCOV static inline T shfl_down_site(const char *site, unsigned mask, T v, unsigned d, int width = 32)
{
    return shfl_kind(COLL_SHFL_DOWN, mask, v, (int)d, width, site);
}
template <typename T>
ENG_CU_EMU_NOCOV static inline T shfl_xor_site(const char *site, unsigned mask, T v, int m, int width = 32)
{
    return shfl_kind(COLL_SHFL_XOR, mask, v, m, width, site);
}
ENG_CU_EMU_NOCOV static inline unsigned ballot_site(const char *site, unsigned mask, int p)
{
    return (unsigned)warp_collective(COLL_BALLOT, mask, p != 0, 0, 32, site);
}
ENG_CU_EMU_NOCOV static inline int any_site(const char *site, unsigned mask, int p)
{
    return (int)warp_collective(COLL_ANY, mask, p != 0, 0, 32, site);
}
ENG_CU_EMU_NOCOV static inline int all_site(const char *site, unsigned mask, int p)
{
    return (int)warp_collective(COLL_ALL, mask, p != 0, 0, 32, site);
}

/* Tensor-core fragments (engine/cuda/mma.h wraps these): warp-collective,
 * every lane's fragment registers gathered with the PTX ISA's documented
 * layouts, the operation computed, the results scattered back. */
/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: d = a b + c */
void mma_m16n8k16_bf16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4], const char *site);
/* ldmatrix.sync.aligned.m8n8.x{n}{.trans}.shared.b16: r[0..n) from the
 * rows whose shared-memory addresses lanes 0..8n-1 give */
void ldmatrix(uint32_t *r, int n, int trans, const void *row, const char *site);
} /* namespace eng_cu_emu */

#include "engine/cuda/emu/bf16.h"
#include "engine/cuda/emu/cublaslt.h"
#include "engine/cuda/emu/cudnn.h"

#endif
