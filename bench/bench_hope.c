/* bench_hope.c: training throughput of hope_attn beside the Transformer of
 * the same size on the CPU (a benchmark program, not a test), so the cost
 * of the Continuum Memory System is known.
 *
 *   bench_hope [--threads N] [--steps N] [--config 1m|small|large|all] [--repeat R] [--levels K]
 *
 * Per configuration (1m: the 1m preset's shape, d 128 L 6 H 4 d_ff 256,
 * vocab 256, T 256, B 64, as sweeps/main_cpu.yaml trains it, but untied;
 * then the shapes of bench_engine: untied head, vocab 4096, T 256, B 8;
 * small d 256 L 4 H 4 d_ff 768, large d 512 L 8 H 8 d_ff 1536): a uniform
 * `transformer`, and `hope_attn` with K levels (default 3,
 * chunks 1, 4, 16, ...) splitting the same d_ff, both trained with AdamW on
 * random tokens; tokens/s from the median step after one warm-up step.
 * --repeat R alternates the two R times and keeps each one's best (the
 * machine is shared).  Steps 1..16 are timed so that hope's slowest level
 * is updated once (the optimizer's share is printed on its own). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/config/account.h"
#include "common/clock.h"
#include "engine/model/model.h"
#include "bench/bench_model.h"

static eng_backend *BE; /* the CPU backend every run computes on */

static const bench_shape configs[] = {
    {"1m", NULL, 128, 6, 4, 256, 256, 256, 64}, /* the 1m preset as the CPU sweeps train it */
    BENCH_SMALL,
    BENCH_LARGE,
};

static int make_config(const bench_shape *b, const char *arch, int levels, eng_config *c, tlm_err *e)
{
    char hope[96] = "";
    if (!strcmp(arch, "hope_attn"))
        snprintf(hope, sizeof hope, ", hope: {levels: %d}", levels);
    return bench_config(b, arch, hope, c, e);
}

typedef struct result {
    double tps;     /* tokens/s, median step */
    double ms_opt;  /* median optimizer step, ms */
    int64_t params;
} result;

static int run(const bench_shape *b, const char *arch, int levels, int steps, result *r)
{
    eng_config c;
    tlm_err e = {0};
    eng_account a;
    eng_model *m;
    if (make_config(b, arch, levels, &c, &e) || eng_account_compute(&c, &a, &e) ||
        eng_model_create(&m, &c, BE, b->B, b->T, &e)) {
        fprintf(stderr, "bench_hope: %s: %s\n", arch, e.msg);
        return -1;
    }
    r->params = a.total;
    eng_model_init_weights(m, 1);
    const int N = b->B * b->T;
    int32_t *tok = malloc(sizeof(int32_t) * N), *tgt = malloc(sizeof(int32_t) * N);
    double *t_step = calloc((size_t)steps, sizeof(double)), *t_opt = calloc((size_t)steps, sizeof(double));
    uint64_t s = 42;
    int rc = 0;
    for (int st = 0; st <= steps && !rc; st++) {
        bench_batch(&s, N, b->V, tok, tgt);
        double loss, t0 = tlm_clock_mono();
        eng_model_zero_grads(m);
        rc = eng_model_forward(m, tok, tgt, b->B, b->T, &loss, NULL, &e) || eng_model_backward(m, 1.0f, &e);
        double gn = eng_model_grad_norm(m), t1 = tlm_clock_mono();
        eng_adamw opt = {1e-3, 0.9, 0.95, 1e-8, 0.1, st + 1, gn > 1 ? 1 / gn : 1};
        rc = rc || eng_model_step(m, &opt, &e);
        double t2 = tlm_clock_mono();
        if (st > 0) {
            t_step[st - 1] = t2 - t0;
            t_opt[st - 1] = t2 - t1;
        }
    }
    if (rc)
        fprintf(stderr, "bench_hope: %s: %s\n", arch, e.msg);
    r->tps = (double)N / bench_median(t_step, steps);
    r->ms_opt = 1e3 * bench_median(t_opt, steps);
    free(t_step);
    free(t_opt);
    free(tok);
    free(tgt);
    eng_model_free(m);
    return rc ? -1 : 0;
}

typedef struct hope_opts {
    bench_opts b;
    int levels;
} hope_opts;

static const char *const SHAPES[] = {"1m", "small", "large", "all", NULL};
static const tlm_opt OPTS[] = {
    BENCH_OPT_ROWS("16", SHAPES),
    {"levels", "K", TLM_OPT_INT, offsetof(hope_opts, levels), .lo = 1, .hi = ENG_HOPE_MAX_LEVELS, .def = "3",
     .help = "hope_attn's CMS levels"},
    BENCH_OPT_HELP,
    {0},
};

int main(int argc, char **argv)
{
    hope_opts o;
    int rc = bench_start("bench_hope", OPTS, argc, argv, &o, &BE);
    if (rc >= 0)
        return rc;
    const int steps = o.b.steps, repeat = o.b.repeat, levels = o.levels;
    const char *which = o.b.config;
    printf("bench_hope: %d threads, %s, %d timed steps, best of %d\n", eng_backend_cpu_threads(BE), eng_runtime_blas(),
           steps, repeat);
    printf("%-6s %-12s %12s %12s %12s %10s\n", "config", "arch", "params", "tokens/s", "opt ms/step", "vs transf.");
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        const bench_shape *b = &configs[i];
        if (strcmp(which, "all") && strcmp(which, b->name))
            continue;
        result best[2] = {{0, 0, 0}, {0, 0, 0}};
        static const char *const archs[2] = {"transformer", "hope_attn"};
        for (int r = 0; r < repeat; r++)
            for (int a = 0; a < 2; a++) {
                result x;
                if (run(b, archs[a], levels, steps, &x))
                    return 1;
                if (x.tps > best[a].tps)
                    best[a] = x;
            }
        for (int a = 0; a < 2; a++) {
            char arch[32];
            if (a)
                snprintf(arch, sizeof arch, "hope_attn k%d", levels);
            else
                snprintf(arch, sizeof arch, "%s", archs[a]);
            printf("%-6s %-12s %12lld %12.0f %12.2f %9.3fx\n", b->name, arch, (long long)best[a].params, best[a].tps,
                   best[a].ms_opt, best[a].tps / best[0].tps);
        }
    }
    return 0;
}
