/* memory.cc: the emulated device's memory and the runtime API around it:
 * cudaMalloc (an anonymous mapping with red zones and two shadows:
 * emu/internal.h), pinned host memory, copies and memsets (which mark the
 * bytes they write as initialised and refuse a range that leaves its
 * allocation), streams and events (synchronous: every call has finished
 * when it returns), the device queries (one device, described as the
 * emulator it is), the last error with its report, and the plan-only
 * switch (emu/internal.h g_plan_only: no shadows, a larger budget, nothing
 * stored on the device).
 *
 * Compiled without coverage instrumentation: nothing here is a kernel's
 * access.
 *
 * Must not: hand out memory a later allocation could overlap while the
 * first is alive; let a failed check go unreported. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "engine/cuda/emu/internal.h"

namespace eng_cu_emu {

/* what cudaMalloc may hand out in all (cudaMemGetInfo's total); in the
 * plan-only mode allocations are address space only (MAP_NORESERVE, no
 * shadows, never written), so the budget holds the largest presets' slabs */
static const size_t MEM_BUDGET = (size_t)16 << 30, PLAN_ONLY_BUDGET = (size_t)256 << 30;
int g_plan_only;

static size_t mem_budget(void)
{
    return g_plan_only ? PLAN_ONLY_BUDGET : MEM_BUDGET;
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
void emu_lock(void)
{
    pthread_mutex_lock(&g_lock);
}
void emu_unlock(void)
{
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------ errors */
static cudaError_t g_last = cudaSuccess;
static cudaError_t g_report_code = cudaSuccess;
static char g_report[2048];

void set_last_error(cudaError_t code, const char *report)
{
    g_last = code;
    if (report) {
        g_report_code = code;
        snprintf(g_report, sizeof g_report, "%s", report);
        fprintf(stderr, "cuda emulator: %s\n", report);
    }
}

cudaError_t api_fail(cudaError_t code, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    set_last_error(code, buf);
    return code;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = g_last;
    g_last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return g_last;
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
#define NAME(x)                                                                                                \
    case x:                                                                                                    \
        return #x;
        NAME(cudaSuccess)
        NAME(cudaErrorInvalidValue)
        NAME(cudaErrorMemoryAllocation)
        NAME(cudaErrorInitializationError)
        NAME(cudaErrorInvalidConfiguration)
        NAME(cudaErrorInvalidDevicePointer)
        NAME(cudaErrorInvalidMemcpyDirection)
        NAME(cudaErrorInsufficientDriver)
        NAME(cudaErrorNoDevice)
        NAME(cudaErrorInvalidDevice)
        NAME(cudaErrorInvalidResourceHandle)
        NAME(cudaErrorIllegalState)
        NAME(cudaErrorNotReady)
        NAME(cudaErrorIllegalAddress)
        NAME(cudaErrorAssert)
        NAME(cudaErrorMisalignedAddress)
        NAME(cudaErrorLaunchFailure)
        NAME(cudaErrorStreamCaptureUnsupported)
        NAME(cudaErrorStreamCaptureInvalidated)
#undef NAME
    }
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e)
{
    if (e != cudaSuccess && e == g_report_code)
        return g_report;
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorInvalidDevice:
        return "invalid device ordinal";
    default:
        return cudaGetErrorName(e);
    }
}

/* ------------------------------------------------------------ regions */
static region **g_regions; /* device and pinned allocations, by base */
static int g_n_regions, g_cap_regions;
region *g_region_hit;
static size_t g_bytes_used;
static unsigned g_next_id = 1;

region *region_find(uintptr_t a)
{
    region *h = g_region_hit;
    if (h && a - (uintptr_t)h->map < h->map_bytes)
        return h;
    int lo = 0, hi = g_n_regions - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        region *r = g_regions[mid];
        if (a < (uintptr_t)r->map)
            hi = mid - 1;
        else if (a - (uintptr_t)r->map >= r->map_bytes)
            lo = mid + 1;
        else
            return g_region_hit = r;
    }
    return NULL;
}

region *region_span(const void *p, size_t n)
{
    const uintptr_t a = (uintptr_t)p;
    region *r = region_find(a);
    if (!r || a < r->base || a - r->base > r->size || n > r->size - (a - r->base))
        return NULL;
    return r;
}

static void *map_zero(size_t bytes)
{
    if (!bytes)
        return NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int region_shadows(region *r)
{
    r->init_bytes = r->size;
    r->race_bytes = (r->size + GRANULE - 1) / GRANULE * sizeof(race_rec);
    r->init = (uint8_t *)map_zero(r->init_bytes);
    r->race = (race_rec *)map_zero(r->race_bytes);
    if ((r->init_bytes && !r->init) || (r->race_bytes && !r->race)) {
        region_shadows_free(r);
        return -1;
    }
    return 0;
}

void region_shadows_free(region *r)
{
    if (r->init)
        munmap(r->init, r->init_bytes);
    if (r->race)
        munmap(r->race, r->race_bytes);
    r->init = NULL;
    r->race = NULL;
}

void region_describe(const region *r, uintptr_t a, char *buf, size_t cap)
{
    const char *what = r->kind == REG_DEVICE ? "device allocation" : r->kind == REG_PINNED ? "pinned host allocation"
                                                                                         : "shared memory";
    if (r->kind == REG_SHARED || r->kind == REG_DYN_SHARED) {
        char sym[512];
        if (r->kind == REG_SHARED)
            symbolize(a, sym, sizeof sym);
        else
            snprintf(sym, sizeof sym, "the dynamic shared memory");
        snprintf(buf, cap, "%s %s, byte %zu of the block's shared memory", what, sym, (size_t)(a - r->base));
        return;
    }
    const long long off = (long long)(a - r->base);
    if (a < r->base)
        snprintf(buf, cap, "%lld bytes before %s #%u (%zu bytes)", -off, what, r->id, r->size);
    else if ((size_t)off >= r->size)
        snprintf(buf, cap, "%lld bytes past the end of %s #%u (%zu bytes)", off - (long long)r->size, what, r->id,
                 r->size);
    else
        snprintf(buf, cap, "byte %lld of %s #%u (%zu bytes)", off, what, r->id, r->size);
}

static int regions_insert(region *r)
{
    if (g_n_regions == g_cap_regions) {
        const int cap = g_cap_regions ? 2 * g_cap_regions : 64;
        region **a = (region **)realloc(g_regions, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        g_regions = a, g_cap_regions = cap;
    }
    int i = g_n_regions;
    while (i > 0 && g_regions[i - 1]->base > r->base) {
        g_regions[i] = g_regions[i - 1];
        i--;
    }
    g_regions[i] = r;
    g_n_regions++;
    return 0;
}

static region *regions_remove(uintptr_t base, int kind)
{
    for (int i = 0; i < g_n_regions; i++)
        if (g_regions[i]->base == base && g_regions[i]->kind == kind) {
            region *r = g_regions[i];
            memmove(g_regions + i, g_regions + i + 1, (size_t)(g_n_regions - i - 1) * sizeof *g_regions);
            g_n_regions--;
            if (g_region_hit == r)
                g_region_hit = NULL;
            return r;
        }
    return NULL;
}

static cudaError_t region_new(void **p, size_t bytes, int kind)
{
    *p = NULL;
    const size_t rounded = (bytes + 255) & ~(size_t)255;
    if (bytes > mem_budget() || g_bytes_used + rounded > mem_budget())
        return cudaErrorMemoryAllocation;
    region *r = (region *)calloc(1, sizeof *r);
    if (!r)
        return cudaErrorMemoryAllocation;
    r->map_bytes = RED_ZONE + rounded + RED_ZONE;
    r->map = (char *)map_zero(r->map_bytes);
    r->base = (uintptr_t)r->map + RED_ZONE;
    r->size = bytes;
    r->kind = kind;
    if (!r->map || (!g_plan_only && region_shadows(r)) || regions_insert(r)) {
        region_shadows_free(r);
        if (r->map)
            munmap(r->map, r->map_bytes);
        free(r);
        return cudaErrorMemoryAllocation;
    }
    r->id = g_next_id++;
    /* the host writes pinned memory without the emulator seeing it */
    if (kind == REG_PINNED && r->init)
        memset(r->init, 1, r->init_bytes);
    g_bytes_used += rounded;
    *p = (void *)r->base;
    return cudaSuccess;
}

static cudaError_t region_delete(void *p, int kind, const char *what)
{
    if (!p)
        return cudaSuccess;
    emu_lock();
    region *r = regions_remove((uintptr_t)p, kind);
    emu_unlock();
    if (!r)
        return api_fail(cudaErrorInvalidValue, "%s(%p): not a pointer %s returned", what, p,
                        kind == REG_DEVICE ? "cudaMalloc" : "cudaMallocHost");
    g_bytes_used -= (r->size + 255) & ~(size_t)255;
    region_shadows_free(r);
    munmap(r->map, r->map_bytes);
    free(r);
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = NULL;
    if (capture_any())
        return capture_refuse("cudaMalloc");
    emu_lock();
    cudaError_t rc = region_new(p, bytes, REG_DEVICE);
    emu_unlock();
    if (rc != cudaSuccess)
        set_last_error(rc, NULL);
    return rc;
}

cudaError_t cudaFree(void *p)
{
    if (capture_any())
        return capture_refuse("cudaFree");
    return region_delete(p, REG_DEVICE, "cudaFree");
}

cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    *p = NULL;
    if (capture_any())
        return capture_refuse("cudaMallocHost");
    emu_lock();
    cudaError_t rc = region_new(p, bytes, REG_PINNED);
    emu_unlock();
    if (rc != cudaSuccess)
        set_last_error(rc, NULL);
    return rc;
}

cudaError_t cudaFreeHost(void *p)
{
    if (capture_any())
        return capture_refuse("cudaFreeHost");
    return region_delete(p, REG_PINNED, "cudaFreeHost");
}

/* ------------------------------------------------------------ copies */
static const char *kind_name(cudaMemcpyKind k)
{
    static const char *names[] = {"cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost",
                                  "cudaMemcpyDeviceToDevice", "cudaMemcpyDefault"};
    return (unsigned)k < 5 ? names[k] : "?";
}

/* a device range of a copy: inside one allocation, else the report */
static region *span_or_fail(const void *p, size_t n, const char *call, const char *which, cudaError_t *rc)
{
    region *r = region_span(p, n);
    if (!r) {
        region *near = region_find((uintptr_t)p);
        char where[256] = "not in any device allocation";
        if (near)
            region_describe(near, (uintptr_t)p, where, sizeof where);
        *rc = api_fail(cudaErrorInvalidValue, "%s: the %s range [%p, +%zu) is not inside one allocation (%s)", call,
                       which, p, n, where);
    }
    return r;
}

/* A copy or memset on a capturing stream, kept for the graph with its
 * arguments (graph.cc) */
struct mem_rec {
    void *dst;
    const void *src; /* NULL: a memset of value */
    int value;
    size_t n;
    cudaMemcpyKind kind;
};

static cudaError_t mem_run(void *arg, cudaStream_t s)
{
    const mem_rec *r = (const mem_rec *)arg;
    return r->src ? cudaMemcpyAsync(r->dst, r->src, r->n, r->kind, s) : cudaMemsetAsync(r->dst, r->value, r->n, s);
}

static cudaError_t mem_record(void *dst, const void *src, int value, size_t n, cudaMemcpyKind kind)
{
    mem_rec *r = (mem_rec *)malloc(sizeof *r);
    if (!r)
        return api_fail(cudaErrorMemoryAllocation, "stream capture: out of host memory");
    *r = mem_rec{dst, src, value, n, kind};
    return capture_record(capture_op{mem_run, free, r});
}

/* a host side of a copy is pinned memory (a graph may copy it) */
static int pinned(const void *p, size_t n)
{
    const region *r = region_span(p, n);
    return r && r->kind == REG_PINNED;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s)
{
    if (!n)
        return cudaSuccess;
    if (!dst || !src)
        return api_fail(cudaErrorInvalidValue, "cudaMemcpy: a NULL pointer");
    if ((unsigned)kind > cudaMemcpyDefault)
        return api_fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpy: direction %d", (int)kind);
    if (capture_on(s)) {
        /* the device side's kind is checked when the graph runs the copy;
         * a pageable host side cannot be in a graph (the copy is staged
         * when the call is made, not when the graph runs) */
        const int from_host = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost,
                  to_host = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost;
        if ((from_host && !pinned(src, n)) || (to_host && !pinned(dst, n)))
            return capture_refuse(from_host ? "cudaMemcpyAsync from pageable host memory"
                                            : "cudaMemcpyAsync to pageable host memory");
        return mem_record(dst, src, 0, n, kind);
    }
    emu_lock();
    if (kind == cudaMemcpyDefault) {
        const int dd = region_find((uintptr_t)dst) != NULL, sd = region_find((uintptr_t)src) != NULL;
        kind = (cudaMemcpyKind)((sd ? 2 : 0) + (dd ? 1 : 0));
        if (kind == cudaMemcpyHostToHost)
            kind = cudaMemcpyDefault;
    }
    cudaError_t rc = cudaSuccess;
    region *rd = NULL, *rs = NULL;
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice)
        rd = span_or_fail(dst, n, kind_name(kind), "destination", &rc);
    if (rc == cudaSuccess && (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice))
        rs = span_or_fail(src, n, kind_name(kind), "source", &rc);
    if (rc == cudaSuccess && !(g_plan_only && rd)) { /* plan-only: nothing is stored on the device */
        memmove(dst, src, n);
        if (rd && rs)
            memmove(rd->init + ((uintptr_t)dst - rd->base), rs->init + ((uintptr_t)src - rs->base), n);
        else if (rd)
            memset(rd->init + ((uintptr_t)dst - rd->base), 1, n);
    }
    emu_unlock();
    return rc;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    if (capture_any())
        return capture_refuse("cudaMemcpy (synchronous)");
    return cudaMemcpyAsync(dst, src, n, kind, 0);
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t s)
{
    if (!n)
        return cudaSuccess;
    if (capture_on(s))
        return mem_record(p, NULL, value, n, cudaMemcpyDeviceToDevice);
    emu_lock();
    cudaError_t rc = cudaSuccess;
    region *r = span_or_fail(p, n, "cudaMemset", "destination", &rc);
    if (r && !g_plan_only) {
        memset(p, value, n);
        memset(r->init + ((uintptr_t)p - r->base), 1, n);
    }
    emu_unlock();
    return rc;
}

cudaError_t cudaMemset(void *p, int value, size_t n)
{
    if (capture_any())
        return capture_refuse("cudaMemset (synchronous)");
    return cudaMemsetAsync(p, value, n, 0);
}

/* ------------------------------------------------------------ streams, events */
struct stream_rec {
    unsigned magic;
};
struct event_rec {
    unsigned magic;
    double t; /* seconds, when recorded */
};
enum { STREAM_MAGIC = 0x5743u, EVENT_MAGIC = 0x4576u };

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    stream_rec *r = (stream_rec *)calloc(1, sizeof *r);
    if (!r)
        return api_fail(cudaErrorMemoryAllocation, "cudaStreamCreate: out of host memory");
    r->magic = STREAM_MAGIC;
    *s = r;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    return cudaStreamCreateWithFlags(s, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s || s->magic != STREAM_MAGIC)
        return api_fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: not a stream");
    s->magic = 0;
    free(s);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (s && s->magic != STREAM_MAGIC)
        return api_fail(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize: not a stream");
    if (capture_on(s) || (!s && capture_any()))
        return capture_refuse("cudaStreamSynchronize");
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    return capture_any() ? capture_refuse("cudaDeviceSynchronize") : cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    event_rec *r = (event_rec *)calloc(1, sizeof *r);
    if (!r)
        return api_fail(cudaErrorMemoryAllocation, "cudaEventCreate: out of host memory");
    r->magic = EVENT_MAGIC;
    *e = r;
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (!e || e->magic != EVENT_MAGIC)
        return api_fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy: not an event");
    e->magic = 0;
    free(e);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t)
{
    if (!e || e->magic != EVENT_MAGIC)
        return api_fail(cudaErrorInvalidResourceHandle, "cudaEventRecord: not an event");
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (capture_any())
        return capture_refuse("cudaEventSynchronize");
    return e && e->magic == EVENT_MAGIC ? cudaSuccess
                                        : api_fail(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: not an event");
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    if (!a || !b || a->magic != EVENT_MAGIC || b->magic != EVENT_MAGIC)
        return api_fail(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: not an event");
    *ms = (float)(1e3 * (b->t - a->t));
    return cudaSuccess;
}

/* ------------------------------------------------------------ the device */
cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device)
{
    if (device != 0)
        return api_fail(cudaErrorInvalidDevice, "cudaGetDeviceProperties: device %d (the emulator has 1)", device);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "TLM CUDA emulator on the CPU (not a GPU)");
    p->totalGlobalMem = mem_budget();
    p->sharedMemPerBlock = 48 << 10;
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 1;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : api_fail(cudaErrorInvalidDevice, "cudaSetDevice(%d): the emulator has 1", device);
}

cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    *total_bytes = mem_budget();
    *free_bytes = mem_budget() - g_bytes_used;
    return cudaSuccess;
}

} /* namespace eng_cu_emu */

/* engine/cuda/backend.h: the switch, only while nothing is allocated (a
 * region made in one mode is never used in the other) */
extern "C" int eng_cuda_emu_set_plan_only(int on)
{
    using namespace eng_cu_emu;
    emu_lock();
    const int busy = g_n_regions > 0;
    if (!busy)
        g_plan_only = on != 0;
    emu_unlock();
    return busy ? -1 : 0;
}
