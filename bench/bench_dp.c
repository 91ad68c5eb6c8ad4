/* bench_dp.c: data-parallel training on the CPU, one rank of it per
 * process: run it alone and under `mpirun -np 2` (bench/bench_dp.sh does
 * both and prints them side by side).  Every rank trains its share of the
 * same global batch (engine/config/ranks.h) through the model API, and
 * rank 0 prints, per step (median over the steps): the time of the
 * forward and backward passes, of the gradient's all-reduce (or, with
 * --zero1, of the reduce-scatter and the all-gather), and of the AdamW
 * update; tokens/s of the whole job; and the collectives' share of the
 * step.  Must not: be a test (no pass/fail; the numbers are docs/parallel.md's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_model.h"
#include "common/clock.h"
#include "engine/comm/comm.h"
#include "engine/config/ranks.h"
#include "engine/model/model.h"

static double median_of(double *x, int n) { return bench_median(x, n); }

int main(int argc, char **argv)
{
    int steps = 8, zero = 0, threads = 1;
    const char *shape = "small";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc)
            shape = argv[++i];
        else if (!strcmp(argv[i], "--zero1"))
            zero = 1;
        else {
            fprintf(stderr, "usage: bench_dp [--steps N] [--threads N] [--shape small|large] [--zero1]\n");
            return 2;
        }
    }
    if (steps < 2 || steps > 1000)
        steps = 8;
    eng_runtime_init(argc, argv);
    tlm_err e = {0};
    eng_comm_env env;
    eng_comm *c = NULL;
    if (eng_comm_env_read(&env, &e) || eng_comm_create(&c, &env, ENG_COMM_HOST, -1, &e)) {
        fprintf(stderr, "bench_dp: %s\n", e.msg);
        return 1;
    }
    const int R = c->size, r = c->rank;
    /* bench_engine's shapes, with a global batch of 16 sequences */
    bench_shape b = BENCH_SMALL;
    if (!strcmp(shape, "large"))
        b = (bench_shape)BENCH_LARGE;
    eng_config cfg;
    eng_rank_split sp;
    eng_backend *be = bench_backend("bench_dp", threads);
    eng_model *m = NULL;
    if (!be || bench_config(&b, "transformer", "", &cfg, &e))
        goto fail;
    cfg.train.batch_tokens = 16 * (int64_t)b.T;
    cfg.train.micro_batch = 8;
    if (eng_rank_split_of(&cfg.train, R, &sp, &e) || eng_model_create(&m, &cfg, be, sp.micro, b.T, &e))
        goto fail;
    eng_model_init_weights(m, 1);
    const size_t np = eng_model_slab_floats(m), shard = np / (size_t)R, tail = shard * (size_t)R;
    const int N = sp.micro * b.T;
    int32_t *tok = malloc((size_t)N * sizeof *tok), *tgt = malloc((size_t)N * sizeof *tgt);
    double *t_comp = calloc((size_t)steps, sizeof(double)), *t_comm = calloc((size_t)steps, sizeof(double)),
           *t_opt = calloc((size_t)steps, sizeof(double)), *t_step = calloc((size_t)steps, sizeof(double));
    uint64_t seed = 12345 + (uint64_t)r;
    for (int s = 0; s <= steps; s++) { /* step 0 warms up */
        c->ops->barrier(c->ctx, &e);
        double t0 = tlm_clock_mono();
        eng_model_zero_grads(m);
        for (int a = 0; a < sp.accum; a++) {
            double loss;
            bench_batch(&seed, N, b.V, tok, tgt);
            if (eng_model_forward(m, tok, tgt, sp.micro, b.T, &loss, NULL, &e) ||
                eng_model_backward(m, 1.0f / (float)(sp.accum * R), &e))
                goto fail;
        }
        double t1 = tlm_clock_mono(), sumsq = 0;
        int rc;
        float *g = eng_model_grad_slab(m);
        if (zero) {
            rc = c->ops->reduce_scatter_sum(c->ctx, g, shard, &e);
            if (!rc && tail < np)
                rc = c->ops->allreduce_sum(c->ctx, g + tail, np - tail, &e);
            sumsq = eng_model_grad_sumsq_range(m, (size_t)r * shard, shard) +
                    (r == 0 ? eng_model_grad_sumsq_range(m, tail, np - tail) : 0);
            if (!rc)
                rc = c->ops->sum_f64(c->ctx, &sumsq, 1, &e);
        } else {
            rc = c->ops->allreduce_sum(c->ctx, g, np, &e);
        }
        if (rc)
            goto fail;
        double t2 = tlm_clock_mono(), t3, ag = 0; /* the norm counts with the update */
        if (!zero) {
            sumsq = eng_model_grad_norm(m);
            sumsq *= sumsq;
        }
        double gn = sqrt(sumsq);
        eng_adamw opt = {1e-3, 0.9, 0.95, 1e-8, 0.1, s + 1, gn > 1 ? 1 / gn : 1};
        if (zero) {
            rc = eng_model_step_range(m, &opt, (size_t)r * shard, (size_t)(r + 1) * shard, &e);
            if (!rc && tail < np)
                rc = eng_model_step_range(m, &opt, tail, np, &e);
            t3 = tlm_clock_mono();
            if (!rc)
                rc = c->ops->all_gather(c->ctx, eng_model_param_slab(m), shard, &e);
            ag = tlm_clock_mono() - t3;
        } else {
            rc = eng_model_step(m, &opt, &e);
            t3 = tlm_clock_mono();
        }
        if (rc)
            goto fail;
        if (s > 0) {
            t_comp[s - 1] = t1 - t0;
            t_comm[s - 1] = t2 - t1 + ag;
            t_opt[s - 1] = t3 - t2;
            t_step[s - 1] = tlm_clock_mono() - t0;
        }
    }
    if (r == 0) {
        double comp = median_of(t_comp, steps), comm = median_of(t_comm, steps), opt = median_of(t_opt, steps),
               step = median_of(t_step, steps);
        printf("ranks %d%s: %zu params, global batch 16 x %d tokens (%d x %d per rank), %d thread(s) a rank: "
               "step %.1f ms (forward+backward %.1f, %s %.1f = %.1f%%, AdamW %.1f), %.0f tokens/s\n",
               R, zero ? " zero1" : "", np, b.T, sp.accum, sp.micro, threads, step * 1e3, comp * 1e3,
               zero ? "reduce-scatter+all-gather" : "all-reduce", comm * 1e3, 100 * comm / step, opt * 1e3,
               16.0 * b.T / step);
    }
    free(tok);
    free(tgt);
    free(t_comp);
    free(t_comm);
    free(t_opt);
    free(t_step);
    eng_model_free(m);
    eng_backend_free(be);
    eng_comm_free(c);
    return 0;
fail:
    fprintf(stderr, "bench_dp rank %d: %s\n", r, e.msg);
    if (c && R > 1)
        c->ops->abort(c->ctx, 1);
    return 1;
}
