/* bench_titans.c: training throughput of titans beside the Transformer of
 * the same size on the CPU (a benchmark program, not a test), so the cost
 * of the memory is known.
 *
 *   bench_titans [--threads N] [--steps N] [--config 1m|small|large|all] [--repeat R]
 *                [--window W] [--chunk B] [--variant mag|mal|both] [--depth 1|2]
 *
 * Configurations: `1m` is the 1m preset as a sweep trains it (d 128, L 6,
 * H 4, d_ff 256, bytes, T 256, micro batch 64 sequences); `small` and
 * `large` are bench_engine's shapes (untied head, vocab 4096, T 256, B 8;
 * d 256 L 4 H 4 d_ff 768 / d 512 L 8 H 8 d_ff 1536).  Per configuration: a
 * uniform `transformer`, then `titans` (defaults unless given: MAG, window
 * 512, 4 persistent entries, chunk 16, depth 2), each trained with AdamW
 * on random tokens; tokens/s from the median of the timed steps after one
 * warm-up step; --repeat R alternates the models R times and keeps each
 * one's best (the machine is shared).  Printed beside each: the account's
 * training FLOPs per token and the rate they imply. */
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
    {"1m", "1m", 128, 6, 4, 256, 256, 256, 64},
    BENCH_SMALL,
    BENCH_LARGE,
};

typedef struct titans_opts {
    int window, chunk, depth;
    const char *variant;
} titans_opts;

static int make_config(const bench_shape *b, const char *arch, const titans_opts *to, eng_config *c, tlm_err *e)
{
    char y[768], titans[256] = "";
    if (!strcmp(arch, "titans"))
        snprintf(titans, sizeof titans, ", titans: {variant: %s, window: %d, chunk: %d, mem_depth: %d}", to->variant,
                 to->window, to->chunk, to->depth);
    if (!b->preset)
        return bench_config(b, arch, titans, c, e);
    snprintf(y, sizeof y,
             "arch: %s\ntokenizer: bytes\nscale: %s\nmodel: {%s}\ntaper: {schedule: uniform}\n"
             "train: {seq_len: %d, tokens: 1000000}\n",
             arch, b->preset, *titans ? titans + 2 : "", b->T);
    return eng_config_from_text("bench", y, strlen(y), c, e);
}

/* tokens/s of the median timed step; -1 on error */
static double run(const bench_shape *b, const char *arch, const titans_opts *to, int steps, double *flops_tok)
{
    eng_config c;
    tlm_err e = {0};
    eng_model *m;
    eng_account a;
    if (make_config(b, arch, to, &c, &e) || eng_account_compute(&c, &a, &e) ||
        eng_model_create(&m, &c, BE, b->B, b->T, &e)) {
        fprintf(stderr, "bench_titans: %s %s: %s\n", b->name, arch, e.msg);
        return -1;
    }
    *flops_tok = a.flops_train;
    eng_model_init_weights(m, 1);
    const int N = b->B * b->T, V = c.model.vocab;
    int32_t *tok = malloc(sizeof(int32_t) * (N + 1));
    uint64_t s = 88172645463325252ull;
    for (int i = 0; i <= N; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        tok[i] = (int32_t)(s % (uint64_t)V);
    }
    double *dt = malloc(sizeof(double) * (steps + 1));
    int rc = 0;
    for (int st = 0; st <= steps && !rc; st++) {
        double t0 = tlm_clock_mono(), loss;
        eng_model_zero_grads(m);
        rc = eng_model_forward(m, tok, tok + 1, b->B, b->T, &loss, NULL, &e) || eng_model_backward(m, 1.0f, &e);
        double gn = eng_model_grad_norm(m);
        eng_adamw opt = {4e-4, 0.9, 0.95, 1e-8, 0.1, st + 1, gn > 1.0 ? 1.0 / gn : 1.0};
        rc = rc || eng_model_step(m, &opt, &e) || !isfinite(loss);
        dt[st] = tlm_clock_mono() - t0;
    }
    double med = -1;
    if (!rc) {
        med = N / bench_median(dt + 1, steps);
    } else {
        fprintf(stderr, "bench_titans: %s %s: %s\n", b->name, arch, e.msg[0] ? e.msg : "non-finite loss");
    }
    free(dt);
    free(tok);
    eng_model_free(m);
    return med;
}

typedef struct cli_opts {
    bench_opts b;
    titans_opts to;
    const char *variant; /* the titans variants to run: mag, mal or both */
} cli_opts;

#define O(m) offsetof(cli_opts, m)
static const char *const SHAPES[] = {"1m", "small", "large", "all", NULL};
static const char *const VARIANTS[] = {"mag", "mal", "both", NULL};
static const tlm_opt OPTS[] = {
    BENCH_OPT_ROWS("5", SHAPES),
    {"window", "W", TLM_OPT_INT, O(to.window), .lo = 1, .hi = 1 << 20, .def = "512", .help = "titans' window"},
    {"chunk", "B", TLM_OPT_INT, O(to.chunk), .lo = 1, .hi = 512, .def = "16", .help = "titans' chunk"},
    {"variant", "V", TLM_OPT_CHOICE, O(variant), .choices = VARIANTS, .def = "both", .help = "the titans to run"},
    {"depth", "D", TLM_OPT_INT, O(to.depth), .lo = 1, .hi = 2, .def = "2", .help = "titans' memory depth"},
    BENCH_OPT_HELP,
    {0},
};

int main(int argc, char **argv)
{
    cli_opts opt = {.to = {.variant = "mag"}};
    int rc = bench_start("bench_titans", OPTS, argc, argv, &opt, &BE);
    if (rc >= 0)
        return rc;
    const int steps = opt.b.steps, repeat = opt.b.repeat;
    const char *which = opt.b.config, *variant = opt.variant;
    titans_opts to = opt.to;
    printf("bench_titans: %d threads, %s, %d timed steps, best of %d; titans window %d, chunk %d, depth %d\n",
           eng_backend_cpu_threads(BE), eng_runtime_blas(), steps, repeat, to.window, to.chunk, to.depth);
    printf("%-6s %-16s %10s %8s %12s %10s\n", "config", "model", "tokens/s", "ratio", "FLOPs/token", "GFLOP/s");
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        const bench_shape *b = &configs[i];
        if (strcmp(which, "all") && strcmp(which, b->name))
            continue;
        const char *names[3] = {"transformer", "titans mag", "titans mal"};
        int use[3] = {1, strcmp(variant, "mal") != 0, strcmp(variant, "mag") != 0};
        double best[3] = {0, 0, 0}, fl[3] = {0, 0, 0};
        for (int r = 0; r < repeat; r++)
            for (int k = 0; k < 3; k++) {
                if (!use[k])
                    continue;
                titans_opts o = to;
                o.variant = k == 2 ? "mal" : "mag";
                double v = run(b, k ? "titans" : "transformer", &o, steps, &fl[k]);
                if (v < 0)
                    return 1;
                best[k] = fmax(best[k], v);
            }
        for (int k = 0; k < 3; k++)
            if (use[k])
                printf("%-6s %-16s %10.0f %7.2fx %12.3g %10.1f\n", b->name, names[k], best[k], best[k] / best[0], fl[k],
                       best[k] * fl[k] / 1e9);
    }
    return 0;
}
