/* bench_model.h: what the model benchmarks (bench_engine, bench_hope,
 * bench_titans) share, so that their numbers come from the same shapes,
 * configs, batches and statistic: the shapes, the config of a shape, the
 * CPU backend, random batches, the median, and the options they all take.
 *
 * Must not: time or print anything itself (each benchmark says what it
 * measures). */
#ifndef TLM_BENCH_MODEL_H
#define TLM_BENCH_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "engine/config/config.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"

/* A model's shape and the batch it trains on: `preset` (or NULL) names a
 * scale whose shape the other fields repeat. */
typedef struct bench_shape {
    const char *name;
    const char *preset;
    int d, L, H, dff, V, T, B;
} bench_shape;

/* bench_engine's shapes, which the others reuse: untied head, vocab 4096, T 256, B 8 */
#define BENCH_SMALL {"small", NULL, 256, 4, 4, 768, 4096, 256, 8}
#define BENCH_LARGE {"large", NULL, 512, 8, 8, 1536, 4096, 256, 8}

/* The options every model benchmark takes: a benchmark's options struct
 * starts with one, and its table (common/cli.h) with BENCH_OPT_ROWS. */
typedef struct bench_opts {
    int threads, steps, repeat;
    const char *config; /* --config: one of the shapes' names, or "all" */
} bench_opts;

/* --threads, --steps (STEPS: the default, a string), --config (CONFIGS: the
 * names accepted, NULL-terminated, "all" among them), --repeat; a table
 * ends with BENCH_OPT_HELP, {0} */
#define BENCH_OPT_ROWS(STEPS, CONFIGS)                                                                                \
    {"threads", "N", TLM_OPT_INT, offsetof(bench_opts, threads), .lo = 0, .hi = 4096, .def = "0",                   \
     .help = "CPU threads (0: the runtime's default)"},                                                              \
        {"steps", "N", TLM_OPT_INT, offsetof(bench_opts, steps), .lo = 1, .hi = 1e6, .def = STEPS,                  \
         .help = "timed steps"},                                                                                      \
        {"config", "NAME", TLM_OPT_CHOICE, offsetof(bench_opts, config), .choices = CONFIGS, .def = "all",          \
         .help = "the shape to run, or all"},                                                                         \
        {"repeat", "R", TLM_OPT_INT, offsetof(bench_opts, repeat), .lo = 1, .hi = 1000, .def = "1",                 \
         .help = "runs of each model, alternating; each keeps its best"}
#define BENCH_OPT_HELP {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"}


/* A uniform model of shape b (untied head, tokenizer bpeV): `arch`, and
 * `extra` appended inside model: {...} (", hope: {levels: 3}" or ""). */
static inline int bench_config(const bench_shape *b, const char *arch, const char *extra, eng_config *c, tlm_err *e)
{
    char y[768];
    snprintf(y, sizeof y,
             "arch: %s\ntokenizer: bpe%d\n"
             "model: {d_model: %d, layers: %d, heads: %d, d_ff: %d, vocab: %d, tied: false%s}\n"
             "taper: {schedule: uniform}\ntrain: {seq_len: %d, tokens: 1000000}\n",
             arch, b->V, b->d, b->L, b->H, b->dff, b->V, extra, b->T);
    return eng_config_from_text("bench", y, strlen(y), c, e);
}

/* The CPU backend on `threads` (0: the runtime's default), or NULL after
 * a message naming the program. */
static inline eng_backend *bench_backend(const char *prog, int threads)
{
    eng_backend *be;
    tlm_err e = {0};
    eng_runtime_set_threads(threads);
    if (eng_backend_cpu_create(&be, threads, &e)) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return NULL;
    }
    return be;
}

/* A model benchmark's start: the runtime, argv read into opts (a struct
 * that starts with a bench_opts) by the table `rows`, then the CPU backend
 * on --threads in *be.  -1 to go on, else the exit status (0 after --help,
 * 2 after the message saying what is wrong, 1 without a backend). */
static inline int bench_start(const char *prog, const tlm_opt *rows, int argc, char **argv, void *opts,
                              eng_backend **be)
{
    eng_runtime_init(argc, argv);
    tlm_cli cli = {.cmd = prog, .opts = rows, .col = 18};
    int rc = tlm_cli_main(&cli, prog, argc, argv, opts, NULL, NULL, 2, 2);
    if (rc >= 0)
        return rc;
    return (*be = bench_backend(prog, ((const bench_opts *)opts)->threads)) ? -1 : 1;
}

/* Random tokens and targets (N) in [0, V), from the LCG state *s */
static inline void bench_batch(uint64_t *s, int N, int V, int32_t *tok, int32_t *tgt)
{
    for (int i = 0; i < N; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        tok[i] = (int32_t)((*s >> 33) % (uint64_t)V);
        tgt[i] = (int32_t)((*s >> 13) % (uint64_t)V);
    }
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n-1] (sorts x): the machine is shared, and the median
 * shrugs off a step that another process slowed down. */
static inline double bench_median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
    return x[n / 2];
}

#endif
