/* nccl.c: the NCCL communicator (comm.h): one rank per GPU, the gradient
 * collectives by NCCL on device memory, on a stream of its own; the NCCL
 * unique id goes from rank 0 to the others over MPI, and the host scalars
 * (loss sums, stop flags) stay MPI's.
 *
 * libnccl is loaded at run time (dlopen, as engine/cuda loads cuBLASLt), so
 * a binary built with it starts where NCCL is absent and says so only when
 * a job of several GPU ranks asks for it.
 *
 * Ordering with the compute stream: a buffer handed to a collective must be
 * complete when the call is made (the model's gradient hook fences the
 * backend's stream before it calls: engine/model/model.h); allreduce_sum,
 * reduce_scatter_sum and all_gather return complete; allreduce_start
 * queues on NCCL's stream and returns at once, and wait returns once that
 * stream is idle, so the optimizer that follows reads summed gradients.
 * Built only with MPI and CUDA (HAVE_NCCL); run on no GPU so far
 * (docs/parallel.md).  Must not: link libnccl. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "engine/comm/internal.h"

/* The functions used, resolved from libnccl.so.2 */
typedef struct nccl_lib {
    void *dl;
    ncclResult_t (*get_unique_id)(ncclUniqueId *);
    ncclResult_t (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*comm_destroy)(ncclComm_t);
    ncclResult_t (*comm_abort)(ncclComm_t);
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*reduce_scatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                   cudaStream_t);
    ncclResult_t (*all_gather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    const char *(*error_string)(ncclResult_t);
} nccl_lib;

typedef struct nccl_ctx {
    void *mpi;          /* the MPI context: ids, host scalars, abort */
    nccl_lib lib;
    ncclComm_t comm;
    cudaStream_t stream;
    int rank, size, device;
} nccl_ctx;

static int nccl_fail(nccl_ctx *n, ncclResult_t r, const char *op, tlm_err *e)
{
    return tlm_errf(e, TLM_EIO, "NCCL %s: %s", op, n->lib.error_string ? n->lib.error_string(r) : "failed");
}

static int cuda_fail(cudaError_t r, const char *op, tlm_err *e)
{
    return tlm_errf(e, r == cudaErrorMemoryAllocation ? TLM_ENOMEM : TLM_EIO, "CUDA %s: %s", op,
                    cudaGetErrorString(r));
}

static int sync_stream(nccl_ctx *n, const char *op, tlm_err *e)
{
    cudaError_t r = cudaStreamSynchronize(n->stream);
    return r == cudaSuccess ? 0 : cuda_fail(r, op, e);
}

static int load(nccl_lib *l, tlm_err *e)
{
    memset(l, 0, sizeof *l);
    l->dl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!l->dl)
        return tlm_errf(e, TLM_ECONFIG,
                        "cannot load libnccl.so.2 (%s): a job of several GPU ranks needs NCCL (the CUDA toolkit's, "
                        "or the libnccl2 package) on the library path",
                        dlerror());
#define SYM(field, name)                                                                                   \
    do {                                                                                                   \
        *(void **)&l->field = dlsym(l->dl, name);                                                          \
        if (!l->field) {                                                                                   \
            dlclose(l->dl);                                                                                \
            l->dl = NULL;                                                                                  \
            return tlm_errf(e, TLM_ECONFIG, "libnccl.so.2 has no %s: an NCCL older than 2.4?", name);        \
        }                                                                                                  \
    } while (0)
    SYM(get_unique_id, "ncclGetUniqueId");
    SYM(comm_init_rank, "ncclCommInitRank");
    SYM(comm_destroy, "ncclCommDestroy");
    SYM(comm_abort, "ncclCommAbort");
    SYM(all_reduce, "ncclAllReduce");
    SYM(reduce_scatter, "ncclReduceScatter");
    SYM(all_gather, "ncclAllGather");
    SYM(error_string, "ncclGetErrorString");
#undef SYM
    return 0;
}

static int allreduce_start(void *ctx, float *x, size_t n, tlm_err *e)
{
    nccl_ctx *c = ctx;
    ncclResult_t r = c->lib.all_reduce(x, x, n, ncclFloat32, ncclSum, c->comm, c->stream);
    return r == ncclSuccess ? 0 : nccl_fail(c, r, "AllReduce", e);
}

static int wait_all(void *ctx, tlm_err *e)
{
    return sync_stream(ctx, "stream synchronize (NCCL)", e);
}

static int allreduce_sum(void *ctx, float *x, size_t n, tlm_err *e)
{
    int rc = allreduce_start(ctx, x, n, e);
    return rc ? rc : wait_all(ctx, e);
}

/* in place: NCCL's rule, recvbuff == sendbuff + rank * recvcount */
static int reduce_scatter_sum(void *ctx, float *x, size_t n, tlm_err *e)
{
    nccl_ctx *c = ctx;
    ncclResult_t r = c->lib.reduce_scatter(x, x + (size_t)c->rank * n, n, ncclFloat32, ncclSum, c->comm, c->stream);
    return r == ncclSuccess ? sync_stream(c, "ReduceScatter", e) : nccl_fail(c, r, "ReduceScatter", e);
}

/* in place: sendbuff == recvbuff + rank * sendcount */
static int all_gather(void *ctx, float *x, size_t n, tlm_err *e)
{
    nccl_ctx *c = ctx;
    ncclResult_t r = c->lib.all_gather(x + (size_t)c->rank * n, x, n, ncclFloat32, c->comm, c->stream);
    return r == ncclSuccess ? sync_stream(c, "AllGather", e) : nccl_fail(c, r, "AllGather", e);
}

/* the host scalars: MPI's, on the MPI context */
static int sum_f64(void *ctx, double *x, int n, tlm_err *e)
{
    return eng__comm_mpi_ops.sum_f64(((nccl_ctx *)ctx)->mpi, x, n, e);
}

static int max_int(void *ctx, int *x, int n, tlm_err *e)
{
    return eng__comm_mpi_ops.max_int(((nccl_ctx *)ctx)->mpi, x, n, e);
}

static int broadcast(void *ctx, void *buf, size_t bytes, int root, tlm_err *e)
{
    return eng__comm_mpi_ops.broadcast(((nccl_ctx *)ctx)->mpi, buf, bytes, root, e);
}

static int barrier(void *ctx, tlm_err *e)
{
    return eng__comm_mpi_ops.barrier(((nccl_ctx *)ctx)->mpi, e);
}

static void abort_all(void *ctx, int status)
{
    nccl_ctx *c = ctx;
    if (c->comm)
        c->lib.comm_abort(c->comm);
    eng__comm_mpi_ops.abort(c->mpi, status);
}

static void free_ctx(void *ctx)
{
    nccl_ctx *c = ctx;
    if (c->comm) {
        cudaStreamSynchronize(c->stream);
        c->lib.comm_destroy(c->comm);
    }
    if (c->stream)
        cudaStreamDestroy(c->stream);
    if (c->lib.dl)
        dlclose(c->lib.dl);
    if (c->mpi)
        eng__comm_mpi_ops.free(c->mpi);
    free(c);
}

static const eng_comm_ops NCCL = {
    .name = "nccl",
    .device_buffers = 1,
    .allreduce_sum = allreduce_sum,
    .reduce_scatter_sum = reduce_scatter_sum,
    .all_gather = all_gather,
    .allreduce_start = allreduce_start,
    .wait = wait_all,
    .sum_f64 = sum_f64,
    .max_int = max_int,
    .broadcast = broadcast,
    .barrier = barrier,
    .abort = abort_all,
    .free = free_ctx,
};

/* Every rank learns whether every other got as far (a failure on one rank
 * must not leave the others waiting in ncclCommInitRank). */
static int agree(nccl_ctx *c, int failed, tlm_err *e)
{
    int any = failed;
    tlm_err me;
    if (max_int(c, &any, 1, &me))
        return failed ? TLM_EIO : (*e = me, me.code);
    if (any && !failed)
        return tlm_errf(e, TLM_EIO, "NCCL set-up failed on another rank (its log says why)");
    return failed ? TLM_EIO : 0;
}

int eng__comm_nccl(eng_comm *out, const eng_comm_env *env, int device, tlm_err *e)
{
    nccl_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    c->rank = env->rank;
    c->size = env->size;
    c->device = device;
    int rc = eng__mpi_open(&c->mpi, env, e);
    if (rc) {
        free(c);
        return rc;
    }
    cudaError_t cr;
    ncclResult_t nr;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int failed = (rc = load(&c->lib, e)) != 0;
    if (!failed && (cr = cudaSetDevice(device)) != cudaSuccess)
        failed = (rc = cuda_fail(cr, "set device", e)) != 0;
    if (!failed && (cr = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess)
        failed = (rc = cuda_fail(cr, "stream create", e)) != 0;
    if (!failed && c->rank == 0 && (nr = c->lib.get_unique_id(&id)) != ncclSuccess)
        failed = (rc = nccl_fail(c, nr, "GetUniqueId", e)) != 0;
    if ((rc = agree(c, failed, e)))
        goto fail;
    if ((rc = broadcast(c, &id, sizeof id, 0, e)))
        goto fail;
    if ((nr = c->lib.comm_init_rank(&c->comm, c->size, id, c->rank)) != ncclSuccess) {
        c->comm = NULL;
        rc = nccl_fail(c, nr, "CommInitRank", e);
        goto fail;
    }
    out->ops = &NCCL;
    out->ctx = c;
    return 0;
fail:
    free_ctx(c);
    return rc;
}
