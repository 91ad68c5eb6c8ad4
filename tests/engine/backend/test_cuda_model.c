/* test_cuda_model.c: whole models on the CUDA backend against the CPU: the
 * four architectures (tapered and uniform), 10 AdamW steps from the same
 * weights on the same batches (two micro batches each, clipping), the
 * CUDA losses within 1e-4 relative of the CPU's at every step, and the
 * weights after them within 1e-3 (norm-wise: AdamW moves every weight by
 * about lr whatever its gradient, docs/engine.md).  fp32 on both sides.
 * The steps take the trainer's path (eng_model_forward_train, the fused
 * classifier, eng_model_step_report); the first model trains twice on
 * each CUDA backend, which must repeat itself bit for bit, and trains
 * again with train.cuda_graph on, which must give the same bits
 * (graph_rows; every model on the first backend).
 *
 * Two CUDA backends, each when built:
 *   - cuda-emu (TLM_HAVE_CUDA_EMU): the same kernels on the CPU under the
 *     emulated execution model, with its memory, race and barrier checks
 *     (a failed check is the backend's kept error, and fails the model);
 *     sequences of 13 tokens (odd) and Titans chunks of 8 (two chunks, the
 *     second short) keep the emulation within seconds per model (its cost
 *     is the threads, barriers and warp shuffles it runs one by one);
 *   - cuda (TLM_HAVE_CUDA), on GPU 0, 64 tokens: skipped (said, not
 *     counted) where the backend cannot start (no driver, no GPU:
 *     eng_backend_cuda_create's TLM_ECONFIG).
 * Exits 77 (skip) when neither ran.  Titans runs in both variants (MAG,
 * MAL: the spec's gate field names the variant, as tm_config only reads it
 * for gated_attn). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/cuda/backend.h"
#include "engine/model/model.h"
#include "tests/lib/model_util.h"
#include "tests/lib/tap.h"

#define STEPS 10
/* the bf16 rows' weights after STEPS steps, norm-wise against the CPU's
 * fp32 (AdamW moves each weight by about lr whatever its gradient, so a
 * rounded gradient's sign flip moves it 2 lr the other way) */
#define WTOL_BF16 5e-2

static const tm_spec specs[] = {
    {"transformer cosine tied", "transformer", "", "cosine", 64, 4, 4, 4, 128, 96, 1, 0.02},
    {"transformer uniform untied gqa", "transformer", "", "uniform", 64, 3, 4, 2, 96, 96, 0, 0.02},
    {"gated_attn elementwise cosine", "gated_attn", "elementwise", "cosine", 64, 4, 4, 4, 128, 96, 0, 0.02},
    {"gated_attn headwise uniform mqa", "gated_attn", "headwise", "uniform", 64, 3, 4, 1, 96, 96, 1, 0.02},
    {"hope_attn cosine", "hope_attn", "", "cosine", 64, 4, 4, 4, 192, 96, 0, 0.02},
    {"titans mag cosine tied", "titans", "mag", "cosine", 64, 4, 4, 4, 128, 96, 1, 0.02},
    {"titans mal uniform gqa", "titans", "mal", "uniform", 64, 3, 4, 2, 96, 96, 0, 0.02},
};
#define NSPEC (int)(sizeof specs / sizeof specs[0])

/* A CUDA backend that is built: how to make one, read its kept error and
 * its memory counters; needs_device: it may find no GPU (then skipped);
 * T: the sequence length its models train on. */
typedef struct device_row {
    const char *name;
    int (*create)(eng_backend **out, int device, tlm_err *e);
    /* the storage of activations and the weight copy (ENG_F32: the
     * backend's default, not set) */
    eng_dtype dtype;
    int (*set_dtype)(eng_backend *b, eng_dtype t, tlm_err *e);
    int (*status)(const eng_backend *b, tlm_err *e);
    void (*memory)(const eng_backend *b, size_t *now, size_t *peak);
    int (*info)(int k, eng_cuda_device_info *out, tlm_err *e);
    int needs_device, T;
    int titans_chunk; /* 0: the config's default */
} device_row;

static const device_row devices[] = {
#ifdef TLM_HAVE_CUDA_EMU
    {"cuda-emu", eng_backend_cuda_emu_create, ENG_F32, NULL, eng_backend_cuda_emu_status, eng_backend_cuda_emu_memory,
     eng_cuda_emu_device_info_get, 0, 13, 8},
    {"cuda-emu-bf16", eng_backend_cuda_emu_create, ENG_BF16, eng_backend_cuda_emu_set_dtype,
     eng_backend_cuda_emu_status, eng_backend_cuda_emu_memory, eng_cuda_emu_device_info_get, 0, 13, 8},
#endif
#ifdef TLM_HAVE_CUDA
    {"cuda", eng_backend_cuda_create, ENG_F32, NULL, eng_backend_cuda_status, eng_backend_cuda_memory,
     eng_cuda_device_info_get, 1, 64, 0},
    {"cuda-bf16", eng_backend_cuda_create, ENG_BF16, eng_backend_cuda_set_dtype, eng_backend_cuda_status,
     eng_backend_cuda_memory, eng_cuda_device_info_get, 1, 64, 0},
#endif
    {NULL, NULL, ENG_F32, NULL, NULL, NULL, NULL, 0, 0, 0},
};

/* train.recompute for the runs train() makes (the MLPs' activations
 * remade in the backward) */
static int g_recompute;
/* train.cuda_graph on for the runs train() makes */
static int g_graph;

/* 10 steps; losses[] and the final weights out.  0, or the creation's code. */
static int train(const tm_spec *s, const eng_backend *be, const device_row *d, double *losses, float **params,
                 size_t *np, tlm_err *e)
{
    enum { Bm = 4, MAX_T = 64 };
    const int Tm = d->T;
    eng_config c;
    eng_model *m;
    int rc = tm_config(s, Tm, &c, e);
    c.train.recompute = g_recompute;
    c.train.cuda_graph = g_graph ? ENG_GRAPH_ON : ENG_GRAPH_OFF;
    if (!rc && !strcmp(s->arch, "titans")) {
        c.model.titans_variant = strcmp(s->gate, "mal") ? ENG_TITANS_MAG : ENG_TITANS_MAL;
        if (d->titans_chunk)
            c.model.titans_chunk = d->titans_chunk;
    }
    if (rc || (rc = eng_model_create(&m, &c, be, Bm, Tm, e)))
        return rc;
    eng_model_init_weights(m, 1234);
    static int32_t tok[Bm * MAX_T], tgt[Bm * MAX_T];
    if (Tm > MAX_T)
        return tlm_errf(e, TLM_EINTERNAL, "sequences of %d tokens (the test has room for %d)", Tm, MAX_T);
    for (int st = 0; st < STEPS && !rc; st++) {
        /* bf16: one batch, learnt step by step, so the loss has a trend
         * to follow (fresh random tokens leave it near ln V) */
        tm_batch(d->dtype == ENG_BF16 ? 1 : (uint64_t)st + 1, Bm, Tm, s->V, tok, tgt);
        /* targets not counted at other positions in each micro-batch: 2
         * besides tm_batch's (the last of every other sequence), 3 in
         * the last step (another dscale, which a graph is captured for
         * again) */
        const int half = Bm / 2 * Tm;
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < (st == STEPS - 1 ? 3 : 2); k++)
                tgt[a * half + (st * 5 + a * 3 + k * 7) % (half - 1)] = -1;
        eng_model_zero_grads(m);
        /* the trainer's path: losses kept on the device, read with the
         * gradient norm once a step */
        double lsum = NAN, gn = NAN;
        rc = eng_model_forward_train(m, tok, tgt, Bm / 2, Tm, e) || eng_model_backward(m, 0.5f, e) ||
             eng_model_forward_train(m, tok + Bm / 2 * Tm, tgt + Bm / 2 * Tm, Bm / 2, Tm, e) ||
             eng_model_backward(m, 0.5f, e) || eng_model_step_report(m, &lsum, &gn);
        eng_adamw opt = {3e-3, 0.9, 0.95, 1e-8, 0.1, st + 1, gn > 1.0 ? 1.0 / gn : 1.0};
        rc = rc || eng_model_step(m, &opt, e);
        losses[st] = 0.5 * lsum;
    }
    /* the per-tensor sums (train.grad_norms_every: sumsq_into each, one
     * copy back) add up to the global norm's square */
    const int nt = eng_model_n_tensors(m);
    double *sq = rc ? NULL : malloc((size_t)nt * sizeof *sq), tot = 0;
    if (sq) {
        eng_model_grad_sumsq(m, sq);
        for (int i = 0; i < nt; i++)
            tot += sq[i];
        const double gn = eng_model_grad_norm(m);
        if (!(fabs(tot - gn * gn) <= 1e-9 * gn * gn))
            rc = tlm_errf(e, TLM_EINTERNAL, "per-tensor gradient sums %.17g, the global norm's square %.17g", tot,
                          gn * gn);
        free(sq);
    }
    *np = eng_model_slab_floats(m);
    *params = malloc(*np * sizeof **params);
    if (!*params)
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    else
        eng_model_get_params(m, *params);
    eng_model_free(m);
    return rc ? (rc < 0 ? rc : TLM_EINTERNAL) : 0;
}

/* train.cuda_graph: on, the same losses and weights bit for bit as off
 * (l0, p0: train()'s without), with different tokens (and so another
 * count of distinct ids) in each micro-batch and ignored targets; under
 * emulation, the graph captured twice (at the second micro-batch; the
 * last step's new dscale, at its second) and launched for every
 * micro-batch but the first of each key, which runs op by op */
static void graph_rows(const tm_spec *s, const device_row *d, const eng_backend *gpu, const double *l0,
                       const float *p0, size_t n0)
{
    double l1[STEPS];
    float *p1 = NULL;
    size_t n1 = 0;
    long captures = -1, launches = -1;
    tlm_err e = {0}, ce = {0};
#ifdef TLM_HAVE_CUDA_EMU
    eng_cuda_emu_graph_counts(&captures, &launches, 1);
#endif
    g_graph = 1;
    int rc = train(s, gpu, d, l1, &p1, &n1, &e);
    g_graph = 0;
#ifdef TLM_HAVE_CUDA_EMU
    eng_cuda_emu_graph_counts(&captures, &launches, 1);
#endif
    if (!rc && d->status(gpu, &ce))
        rc = ce.code, e = ce;
    TAP_OK(!rc && n1 == n0 && !memcmp(l1, l0, sizeof l1) && !memcmp(p1, p0, n0 * sizeof *p0),
           "%s: %s: train.cuda_graph on: the same losses and weights bit for bit as off (%d steps of 2 micro-batches, "
           "ignored targets)%s%s",
           d->name, s->name, STEPS, rc ? ": " : "", e.msg);
    if (!d->needs_device)
        TAP_OK(captures == 2 && launches == 2 * STEPS - 2,
               "%s: %s: the graph captured twice (second micro-batch, the last step's dscale) and launched %d times: "
               "%ld and %ld",
               d->name, s->name, 2 * STEPS - 2, captures, launches);
    free(p1);
}

/* every spec on one CUDA backend against the CPU */
static void run_device(const device_row *d, eng_backend *gpu, const eng_backend *cpu)
{
    eng_cuda_device_info info;
    tlm_err ie = {0};
    if (!d->info(0, &info, &ie))
        TAP_DIAG("%s: device 0: %s, sm_%d%d, %zu MiB", d->name, info.name, info.cc_major, info.cc_minor,
                 info.total_bytes >> 20);
    for (int i = 0; i < NSPEC; i++) {
        const tm_spec *s = &specs[i];
        double lc[STEPS], lg[STEPS];
        float *pc = NULL, *pg = NULL;
        size_t nc = 0, ng = 0;
        tlm_err e = {0};
        int rc = train(s, cpu, d, lc, &pc, &nc, &e);
        if (rc) {
            TAP_OK(0, "%s: on the cpu: %s", s->name, e.msg);
            continue;
        }
        rc = train(s, gpu, d, lg, &pg, &ng, &e);
        if (!rc && d == devices) {
            /* the CPU with train.recompute: every architecture's losses
             * and weights as without, bit for bit */
            double l2[STEPS];
            float *p2 = NULL;
            size_t n2 = 0;
            g_recompute = 1;
            tlm_err re = {0};
            int r2 = train(s, cpu, d, l2, &p2, &n2, &re);
            g_recompute = 0;
            TAP_OK(!r2 && n2 == nc && !memcmp(l2, lc, sizeof l2) && !memcmp(p2, pc, nc * sizeof *pc),
                   "cpu: %s: with train.recompute the same losses and weights bit for bit%s%s", s->name,
                   r2 ? ": " : "", re.msg);
            free(p2);
        }
        tlm_err ce = {0};
        if (!rc && d->status(gpu, &ce))
            rc = ce.code, e = ce;
        if (rc) {
            TAP_OK(0, "%s: %s: %s", d->name, s->name, e.msg);
            free(pc);
            free(pg);
            continue;
        }
        double worst = 0;
        int at = 0;
        for (int st = 0; st < STEPS; st++) {
            double dl = fabs(lg[st] - lc[st]) / fmax(1e-30, fabs(lc[st]));
            if (dl > worst || !isfinite(dl))
                worst = dl, at = st;
        }
        const int bf = d->dtype == ENG_BF16;
        /* bf16 against the CPU's fp32: issue 24's 2% on the loss at every
         * step (measured, docs/engine.md "Precision") */
        const double ltol = bf ? 2e-2 : 1e-4, wtol = bf ? WTOL_BF16 : 1e-3;
        TAP_OK(worst <= ltol, "%s: %s: %d steps of T=%d, losses within %.1e of the cpu's (worst at step %d: %.6f vs %.6f)",
               d->name, s->name, STEPS, d->T, worst, at, lg[at], lc[at]);
        if (bf) {
            /* the same trend: on the one batch the CPU's loss falls step
             * by step; bf16's must fall at every step it does, and by as
             * much in all (within a tenth) */
            int bad = -1;
            for (int st = 1; st < STEPS && bad < 0; st++)
                if ((lc[st] < lc[st - 1]) != (lg[st] < lg[st - 1]))
                    bad = st;
            const double fc = lc[0] - lc[STEPS - 1], fg = lg[0] - lg[STEPS - 1];
            TAP_OK(bad < 0 && fc > 0 && fabs(fg - fc) <= 0.1 * fc,
                   "%s: %s: the loss falls as the cpu's (%.4f -> %.4f; cpu %.4f -> %.4f; first step against it: %d, "
                   "-1 none)",
                   d->name, s->name, lg[0], lg[STEPS - 1], lc[0], lc[STEPS - 1], bad);
        }
        double dn = 0, wn = 1e-30;
        for (size_t k = 0; k < nc && nc == ng; k++) {
            dn += ((double)pg[k] - pc[k]) * ((double)pg[k] - pc[k]);
            wn += (double)pc[k] * pc[k];
        }
        const double wrel = nc == ng ? sqrt(dn / wn) : INFINITY;
        TAP_OK(wrel <= wtol, "%s: %s: weights after %d steps within %.1e (norm-wise) of the cpu's", d->name, s->name,
               STEPS, wrel);
        if (i == 0) {
            /* determinism: no atomics, fixed chunks and trees (issue 24) */
            double l2[STEPS];
            float *p2 = NULL;
            size_t n2 = 0;
            rc = train(s, gpu, d, l2, &p2, &n2, &e);
            TAP_OK(!rc && n2 == ng && !memcmp(l2, lg, sizeof l2) && !memcmp(p2, pg, ng * sizeof *pg),
                   "%s: %s: a second run repeats the first bit for bit (losses, weights)", d->name, s->name);
            free(p2);
            /* train.recompute remakes the MLP's activations with the same
             * ops on the same inputs: the same bits */
            g_recompute = 1;
            rc = train(s, gpu, d, l2, &p2, &n2, &e);
            g_recompute = 0;
            TAP_OK(!rc && n2 == ng && !memcmp(l2, lg, sizeof l2) && !memcmp(p2, pg, ng * sizeof *pg),
                   "%s: %s: with train.recompute the same losses and weights bit for bit", d->name, s->name);
            free(p2);
        }
        /* every architecture's ops captured on the first (fp32) row; the
         * others (bf16: the same kernels in their other instantiation)
         * the first model, for the test's time */
        if (d == devices || i == 0)
            graph_rows(s, d, gpu, lg, pg, ng);
        free(pc);
        free(pg);
    }
    size_t now, peak;
    d->memory(gpu, &now, &peak);
    TAP_OK(now == 0, "%s: every allocation of the models returned (%zu bytes held; peak %zu MiB)", d->name, now,
           peak >> 20);
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    tlm_err e = {0};
    eng_backend *cpu;
    if (eng_backend_cpu_create(&cpu, 0, &e)) {
        printf("Bail out! cpu backend: %s\n", e.msg);
        return 1;
    }
    int ran = 0;
    for (const device_row *d = devices; d->name; d++) {
        eng_backend *gpu;
        if (d->create(&gpu, 0, &e)) {
            if (d->needs_device && e.code == TLM_ECONFIG) {
                TAP_DIAG("%s: skipped: %s", d->name, e.msg);
                continue;
            }
            TAP_OK(0, "%s backend: %s", d->name, e.msg);
            continue;
        }
        if (d->set_dtype && d->set_dtype(gpu, d->dtype, &e)) {
            TAP_OK(0, "%s backend: %s", d->name, e.msg);
            eng_backend_free(gpu);
            continue;
        }
        ran++;
        run_device(d, gpu, cpu);
        eng_backend_free(gpu);
    }
#ifdef TLM_HAVE_CUDA_EMU
    static char run[16384];
    const int nk = eng_cuda_emu_kernels_run(run, sizeof run);
    TAP_DIAG("cuda-emu: %d kernels ran (name, launches, blocks, seconds emulated):", nk);
    for (char *line = strtok(run, "\n"); line; line = strtok(NULL, "\n"))
        TAP_DIAG("  %s", line);
#endif
    eng_backend_free(cpu);
    if (!ran && !tap_n) {
        printf("1..0 # SKIP no CUDA backend could run (built without CUDA and its emulation, or no GPU)\n");
        return 77;
    }
    return tap_done();
}
