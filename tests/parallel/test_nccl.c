/* test_nccl.c: the NCCL communicator (engine/comm/nccl.c) on the GPU this
 * machine has, as one rank (MPI's singleton: no mpirun needed): libnccl
 * loads, the id goes through MPI, every collective on device memory leaves
 * one rank's data as it is, and the all-reduce of a 440m model's gradients
 * is timed (printed: the first figure of docs/parallel.md's GPU table).
 * Built with MPI and CUDA; skips (77) without a GPU or without libnccl. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "engine/comm/internal.h"
#include "engine/config/account.h"
#include "engine/config/config.h"
#include "engine/cuda/backend.h"
#include "tests/lib/tap.h"

int main(void)
{
    tlm_err e = {0};
    int n = 0;
    if (eng_cuda_device_count(&n, &e) || n < 1) {
        printf("# no GPU (%s): skip\n", e.msg);
        return 77;
    }
    eng_backend *be;
    if (eng_backend_cuda_create(&be, 0, &e)) {
        printf("# %s: skip\n", e.msg);
        return 77;
    }
    eng_comm c = {0};
    eng_comm_env env = {0, 1, 0, 1, "none"};
    int rc = eng__comm_nccl(&c, &env, 0, &e);
    if (rc == TLM_ECONFIG && strstr(e.msg, "libnccl")) {
        printf("# %s: skip\n", e.msg);
        eng_backend_free(be);
        return 77;
    }
    TAP_OK(!rc && c.ops->device_buffers, "an NCCL communicator of one rank on GPU 0 (%s)", rc ? e.msg : c.ops->name);
    if (rc) {
        eng_backend_free(be);
        return tap_done();
    }
    const eng_ops *o = be->ops;
    const size_t small = 1 << 20;
    float *h = malloc(small * sizeof *h), *back = malloc(small * sizeof *back);
    for (size_t i = 0; i < small; i++)
        h[i] = (float)(i % 1000) * 0.25f;
    float *d = o->alloc(be->ctx, small * sizeof *d);
    o->to_device(be->ctx, d, h, small * sizeof *d);
    o->to_host(be->ctx, back, d, 4); /* the copy is complete before NCCL reads */
    rc = c.ops->allreduce_sum(c.ctx, d, small, &e) || c.ops->reduce_scatter_sum(c.ctx, d, small, &e) ||
         c.ops->all_gather(c.ctx, d, small, &e) || c.ops->allreduce_start(c.ctx, d, small / 2, &e) ||
         c.ops->allreduce_start(c.ctx, d + small / 2, small / 2, &e) || c.ops->wait(c.ctx, &e);
    o->to_host(be->ctx, back, d, small * sizeof *back);
    TAP_OK(!rc && !memcmp(h, back, small * sizeof *h),
           "all-reduce, reduce-scatter, all-gather and two started all-reduces leave one rank's 1M floats as they "
           "are");
    double x[2] = {1.5, 2};
    int k = 3;
    rc = c.ops->sum_f64(c.ctx, x, 2, &e) || c.ops->max_int(c.ctx, &k, 1, &e) || c.ops->barrier(c.ctx, &e);
    TAP_OK(!rc && x[0] == 1.5 && k == 3, "the host scalars go through MPI");
    o->free(be->ctx, d);

    /* 440m's gradients: the all-reduce a step of the paper's smallest model makes */
    eng_config cfg;
    eng_account acc;
    const char *y = "scale: 440m\n";
    if (!eng_config_from_text("440m", y, strlen(y), &cfg, &e) && !eng_account_compute(&cfg, &acc, &e)) {
        size_t np = (size_t)acc.total;
        float *g = o->alloc(be->ctx, np * sizeof *g);
        if (g) {
            c.ops->allreduce_sum(c.ctx, g, np, &e); /* warm-up */
            double t0 = tlm_clock_mono();
            int reps = 5;
            for (int i = 0; i < reps && !rc; i++)
                rc = c.ops->allreduce_sum(c.ctx, g, np, &e);
            double ms = (tlm_clock_mono() - t0) / reps * 1e3;
            TAP_OK(!rc, "all-reduce of 440m's %zu gradients (fp32, %.2f GB), one rank: %.2f ms", np,
                   (double)np * 4 / 1e9, ms);
            o->free(be->ctx, g);
        } else {
            TAP_DIAG("no room for 440m's gradients on this GPU");
        }
    }
    free(h);
    free(back);
    c.ops->free(c.ctx);
    eng_backend_free(be);
    return tap_done();
}
