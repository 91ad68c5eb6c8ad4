/* single.c: the communicator of a job of one rank (comm.h): every
 * collective is the sum, gather or copy over that one rank, that is,
 * nothing, so the trainer keeps one code path.  Must not: cost anything. */
#include <stdlib.h>

#include "engine/comm/internal.h"

static int buf_nop(void *ctx, float *x, size_t n, tlm_err *e)
{
    (void)ctx, (void)x, (void)n, (void)e;
    return 0;
}

static int wait_nop(void *ctx, tlm_err *e)
{
    (void)ctx, (void)e;
    return 0;
}

static int f64_nop(void *ctx, double *x, int n, tlm_err *e)
{
    (void)ctx, (void)x, (void)n, (void)e;
    return 0;
}

static int int_nop(void *ctx, int *x, int n, tlm_err *e)
{
    (void)ctx, (void)x, (void)n, (void)e;
    return 0;
}

static int bcast_nop(void *ctx, void *buf, size_t bytes, int root, tlm_err *e)
{
    (void)ctx, (void)buf, (void)bytes, (void)root, (void)e;
    return 0;
}

/* one rank: the caller exits with its own status */
static void abort_nop(void *ctx, int status)
{
    (void)ctx, (void)status;
}

static void free_nop(void *ctx)
{
    (void)ctx;
}

static const eng_comm_ops SINGLE = {
    .name = "single",
    .device_buffers = 0,
    .allreduce_sum = buf_nop,
    .reduce_scatter_sum = buf_nop,
    .all_gather = buf_nop,
    .allreduce_start = buf_nop,
    .wait = wait_nop,
    .sum_f64 = f64_nop,
    .max_int = int_nop,
    .broadcast = bcast_nop,
    .barrier = wait_nop,
    .abort = abort_nop,
    .free = free_nop,
};

void eng_comm_init_single(eng_comm *c)
{
    eng__comm_single(c);
}

void eng__comm_single(eng_comm *c)
{
    c->ops = &SINGLE;
    c->ctx = NULL;
    c->rank = 0;
    c->size = 1;
    c->local_rank = 0;
}
