/* mpi.c: the MPI communicator (comm.h): MPI_COMM_WORLD of Open MPI, on
 * host memory (the CPU backend's buffers), with MPI's own collectives.
 * MPI is initialised here, only for a job of several ranks, and finalised
 * by the context's free.  Must not: call MPI from any thread but the one
 * that made it (MPI_THREAD_FUNNELED is all it asks for).  Built only
 * when configure finds MPI (HAVE_MPI). */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/comm/internal.h"

typedef struct mpi_ctx {
    MPI_Comm comm;
    int rank, size;
} mpi_ctx;

/* MPI's error as a tlm error naming the operation */
static int fail(int rc, const char *op, tlm_err *e)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", rc);
    return tlm_errf(e, TLM_EIO, "MPI %s: %s", op, msg);
}

/* MPI counts are ints: large buffers go in chunks */
#define CHUNK ((size_t)1 << 30)

static int allreduce_sum(void *ctx, float *x, size_t n, tlm_err *e)
{
    mpi_ctx *m = ctx;
    for (size_t at = 0; at < n; at += CHUNK) {
        int k = (int)(n - at < CHUNK ? n - at : CHUNK);
        int rc = MPI_Allreduce(MPI_IN_PLACE, x + at, k, MPI_FLOAT, MPI_SUM, m->comm);
        if (rc != MPI_SUCCESS)
            return fail(rc, "Allreduce", e);
    }
    return 0;
}

static int too_big(size_t n, const char *op, tlm_err *e)
{
    return tlm_errf(e, TLM_EINTERNAL, "MPI %s: %zu floats per rank, more than MPI's %d", op, n, INT_MAX);
}

static int reduce_scatter_sum(void *ctx, float *x, size_t n, tlm_err *e)
{
    mpi_ctx *m = ctx;
    if (n > INT_MAX)
        return too_big(n, "Reduce_scatter_block", e);
    /* in place, MPI leaves this rank's block at the start of x */
    int rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, m->comm);
    if (rc != MPI_SUCCESS)
        return fail(rc, "Reduce_scatter_block", e);
    if (m->rank)
        memcpy(x + (size_t)m->rank * n, x, n * sizeof *x);
    return 0;
}

static int all_gather(void *ctx, float *x, size_t n, tlm_err *e)
{
    mpi_ctx *m = ctx;
    if (n > INT_MAX)
        return too_big(n, "Allgather", e);
    int rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x, (int)n, MPI_FLOAT, m->comm);
    return rc == MPI_SUCCESS ? 0 : fail(rc, "Allgather", e);
}

/* On the CPU the backward leaves no core idle for MPI's progress: a
 * blocking reduction at the start is as good as a deferred one. */
static int wait_none(void *ctx, tlm_err *e)
{
    (void)ctx, (void)e;
    return 0;
}

static int sum_f64(void *ctx, double *x, int n, tlm_err *e)
{
    mpi_ctx *m = ctx;
    int rc = MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, m->comm);
    return rc == MPI_SUCCESS ? 0 : fail(rc, "Allreduce (sum)", e);
}

static int max_int(void *ctx, int *x, int n, tlm_err *e)
{
    mpi_ctx *m = ctx;
    int rc = MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_INT, MPI_MAX, m->comm);
    return rc == MPI_SUCCESS ? 0 : fail(rc, "Allreduce (max)", e);
}

static int broadcast(void *ctx, void *buf, size_t bytes, int root, tlm_err *e)
{
    mpi_ctx *m = ctx;
    for (size_t at = 0; at < bytes; at += CHUNK) {
        int k = (int)(bytes - at < CHUNK ? bytes - at : CHUNK);
        int rc = MPI_Bcast((char *)buf + at, k, MPI_BYTE, root, m->comm);
        if (rc != MPI_SUCCESS)
            return fail(rc, "Bcast", e);
    }
    return 0;
}

static int barrier(void *ctx, tlm_err *e)
{
    mpi_ctx *m = ctx;
    int rc = MPI_Barrier(m->comm);
    return rc == MPI_SUCCESS ? 0 : fail(rc, "Barrier", e);
}

static void abort_all(void *ctx, int status)
{
    mpi_ctx *m = ctx;
    MPI_Abort(m->comm, status);
}

static void free_ctx(void *ctx)
{
    int fin = 0;
    free(ctx);
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Finalize();
}

const eng_comm_ops eng__comm_mpi_ops = {
    .name = "mpi",
    .device_buffers = 0,
    .allreduce_sum = allreduce_sum,
    .reduce_scatter_sum = reduce_scatter_sum,
    .all_gather = all_gather,
    .allreduce_start = allreduce_sum,
    .wait = wait_none,
    .sum_f64 = sum_f64,
    .max_int = max_int,
    .broadcast = broadcast,
    .barrier = barrier,
    .abort = abort_all,
    .free = free_ctx,
};

int eng__mpi_open(void **out, const eng_comm_env *env, tlm_err *e)
{
    *out = NULL;
    int provided = 0, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS)
        return fail(rc, "Init", e);
    /* errors come back as values (the default aborts the job) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mpi_ctx *m = calloc(1, sizeof *m);
    if (!m) {
        MPI_Finalize();
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    m->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    if (m->rank != env->rank || m->size != env->size) {
        rc = tlm_errf(e, TLM_ECONFIG, "MPI says rank %d of %d, the launcher's environment (%s) rank %d of %d", m->rank,
                      m->size, env->launcher, env->rank, env->size);
        free_ctx(m);
        return rc;
    }
    *out = m;
    return 0;
}

int eng__comm_mpi(eng_comm *c, const eng_comm_env *env, tlm_err *e)
{
    int rc = eng__mpi_open(&c->ctx, env, e);
    if (!rc)
        c->ops = &eng__comm_mpi_ops;
    return rc;
}
