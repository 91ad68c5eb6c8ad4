/* graph.cc: stream capture and CUDA graphs on the emulator (emu/cuda.h
 * says what is recorded and what refused).  A capture is a list of
 * operations (internal.h capture_op): launches with a heap copy of their
 * arguments, copies, memsets, cuBLASLt matmuls with their descriptors'
 * values; cudaStreamEndCapture hands the list to a graph, which
 * cudaGraphInstantiate shares with its executable (counted: the list goes
 * when the last of them is destroyed); cudaGraphLaunch runs the list in
 * order on its stream, stopping at the first error, as the ops would have
 * run one by one.
 *
 * Global capture mode only (the backend's), and one capture at a time: a
 * refused call anywhere invalidates it.  Counts the captures ended and
 * the graph launches for the tests (eng_cuda_emu_graph_counts).
 *
 * Must not: run an operation while its stream captures; keep a pointer
 * into the caller's memory past the call that recorded it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/emu/internal.h"

namespace eng_cu_emu {

/* a capture's operations, shared by its graph and their executables */
struct op_list {
    capture_op *ops;
    int n, cap, refs;
};

struct graph_rec {
    unsigned magic;
    op_list *list;
};
struct graph_exec_rec {
    unsigned magic;
    op_list *list;
};
enum { GRAPH_MAGIC = 0x4772u, EXEC_MAGIC = 0x4765u };

static cudaStream_t g_cap_stream; /* the capturing stream; NULL: none */
static op_list *g_cap_list;
static int g_cap_invalid;        /* a refused call: EndCapture fails */
static char g_cap_why[512];      /* the first refused call's report */
static long g_captures, g_launches;

static void list_release(op_list *l)
{
    if (!l || --l->refs > 0)
        return;
    for (int i = 0; i < l->n; i++)
        if (l->ops[i].free)
            l->ops[i].free(l->ops[i].arg);
    free(l->ops);
    free(l);
}

int capture_on(cudaStream_t s)
{
    return s && s == g_cap_stream;
}

int capture_any(void)
{
    return g_cap_stream != NULL;
}

cudaError_t capture_record(capture_op op)
{
    op_list *l = g_cap_list;
    if (g_cap_invalid || !l) {
        if (op.free)
            op.free(op.arg);
        return cudaErrorStreamCaptureInvalidated;
    }
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 256;
        capture_op *a = (capture_op *)realloc(l->ops, (size_t)cap * sizeof *a);
        if (!a) {
            if (op.free)
                op.free(op.arg);
            return api_fail(cudaErrorMemoryAllocation, "stream capture: no host memory for operation %d", l->n + 1);
        }
        l->ops = a, l->cap = cap;
    }
    l->ops[l->n++] = op;
    return cudaSuccess;
}

cudaError_t capture_refuse(const char *call)
{
    char msg[512];
    snprintf(msg, sizeof msg,
             "%s during stream capture: real CUDA refuses it there (cudaErrorStreamCaptureUnsupported) and the "
             "capture is invalidated",
             call);
    if (!g_cap_invalid)
        snprintf(g_cap_why, sizeof g_cap_why, "%s", msg);
    g_cap_invalid = 1;
    return api_fail(cudaErrorStreamCaptureUnsupported, "%s", msg);
}

/* ------------------------------------------------------------ launches */
struct launch_rec {
    launch_info li; /* its pack: the heap copy */
};

static cudaError_t launch_run(void *arg, cudaStream_t s)
{
    launch_info li = ((launch_rec *)arg)->li;
    li.stream = s;
    return run_launch(&li);
}

static void launch_free(void *arg)
{
    launch_rec *r = (launch_rec *)arg;
    r->li.pack_free(r->li.pack);
    delete r;
}

cudaError_t capture_launch(const launch_info *li)
{
    launch_rec *r = new launch_rec;
    r->li = *li;
    r->li.pack = li->pack_clone(li->pack);
    return capture_record(capture_op{launch_run, launch_free, r});
}

/* ------------------------------------------------------------ the API */
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
    if (!s)
        return api_fail(cudaErrorStreamCaptureUnsupported, "cudaStreamBeginCapture: the legacy stream cannot capture");
    if (mode != cudaStreamCaptureModeGlobal)
        return api_fail(cudaErrorInvalidValue, "cudaStreamBeginCapture: the emulator captures in global mode only");
    if (g_cap_stream)
        return api_fail(cudaErrorIllegalState, "cudaStreamBeginCapture: %s",
                        s == g_cap_stream ? "the stream captures already"
                                          : "another stream captures (the emulator captures one at a time)");
    op_list *l = (op_list *)calloc(1, sizeof *l);
    if (!l)
        return api_fail(cudaErrorMemoryAllocation, "cudaStreamBeginCapture: out of host memory");
    l->refs = 1;
    g_cap_list = l;
    g_cap_stream = s;
    g_cap_invalid = 0;
    g_cap_why[0] = 0;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    *g = NULL;
    if (!s || s != g_cap_stream)
        return api_fail(cudaErrorIllegalState, "cudaStreamEndCapture: the stream does not capture");
    op_list *l = g_cap_list;
    const int invalid = g_cap_invalid;
    g_cap_stream = NULL, g_cap_list = NULL, g_cap_invalid = 0;
    if (invalid) {
        list_release(l);
        return api_fail(cudaErrorStreamCaptureInvalidated, "cudaStreamEndCapture: the capture was invalidated: %s",
                        g_cap_why);
    }
    graph_rec *r = (graph_rec *)calloc(1, sizeof *r);
    if (!r) {
        list_release(l);
        return api_fail(cudaErrorMemoryAllocation, "cudaStreamEndCapture: out of host memory");
    }
    r->magic = GRAPH_MAGIC;
    r->list = l;
    *g = r;
    g_captures++;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus *status)
{
    *status = !capture_on(s)  ? cudaStreamCaptureStatusNone
              : g_cap_invalid ? cudaStreamCaptureStatusInvalidated
                              : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long)
{
    *x = NULL;
    if (!g || g->magic != GRAPH_MAGIC)
        return api_fail(cudaErrorInvalidValue, "cudaGraphInstantiate: not a graph");
    graph_exec_rec *r = (graph_exec_rec *)calloc(1, sizeof *r);
    if (!r)
        return api_fail(cudaErrorMemoryAllocation, "cudaGraphInstantiate: out of host memory");
    r->magic = EXEC_MAGIC;
    r->list = g->list;
    r->list->refs++;
    *x = r;
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s)
{
    if (!x || x->magic != EXEC_MAGIC)
        return api_fail(cudaErrorInvalidValue, "cudaGraphLaunch: not an instantiated graph");
    if (capture_any())
        return capture_refuse("cudaGraphLaunch"); /* the emulator does not nest graphs */
    g_launches++;
    for (int i = 0; i < x->list->n; i++) {
        const cudaError_t rc = x->list->ops[i].run(x->list->ops[i].arg, s);
        if (rc != cudaSuccess)
            return rc;
    }
    return cudaSuccess;
}

/* a graph or an executable: its share of the list, then itself */
template <typename R> static cudaError_t graph_destroy(R *r, unsigned magic, const char *call)
{
    if (!r || r->magic != magic)
        return api_fail(cudaErrorInvalidValue, "%s: not a graph of that kind", call);
    r->magic = 0;
    list_release(r->list);
    free(r);
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x)
{
    return graph_destroy(x, EXEC_MAGIC, "cudaGraphExecDestroy");
}

cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    return graph_destroy(g, GRAPH_MAGIC, "cudaGraphDestroy");
}

} /* namespace eng_cu_emu */

/* engine/cuda/backend.h: the captures ended and the graph launches */
extern "C" void eng_cuda_emu_graph_counts(long *captures, long *launches, int reset)
{
    using namespace eng_cu_emu;
    *captures = g_captures, *launches = g_launches;
    if (reset)
        g_captures = g_launches = 0;
}
