/* test_cuda_plans.c: the cuBLASLt stand-ins (engine/cuda/emu/cublaslt.cc)
 * accept every product the model makes at the 440m, 760m and 1.3b
 * presets (issue 24: descriptor construction only, on a tiny batch).
 *
 * Each model is made on the emulated backend in its plan-only mode
 * (eng_cuda_emu_set_plan_only, engine/cuda/backend.h) and takes one step
 * the trainer's way (tm_trainer_step: eng_model_forward_train,
 * eng_model_backward, eng_model_step_report, eng_model_step).  In that
 * mode matmul.cu makes every plan as in a normal run (descriptors,
 * attributes, the stand-in's heuristic) and every cublasLtMatmul is
 * checked (alignments against the plan's, extents inside the allocation),
 * launches are checked for their configuration and pointer arguments,
 * but nothing is computed or stored and device memory is address space
 * only: a 1.3b model costs neither memory nor time.  A refused product is
 * the backend's kept error, which fails the model's check and names the
 * product.  The real shapes are the presets' (d_model 1024..2048, d_ff
 * tapered per layer, vocabulary 128256, the fused projections' column
 * slices); the batch is one sequence of T tokens.  One difference from a
 * GPU: the emulated build's classifier takes 1 row of logits a chunk at
 * this vocabulary (engine/cuda/plan.h), a GPU's up to 523, so the
 * classifier's products have other row counts there (their K, N, strides
 * and slices are the same).
 *
 * Then the mode's own checks: a product the library refuses (ld below
 * the rows, an fp32 operand at a 2-byte offset) still fails the backend
 * with the stand-in's reason, and the switch is refused while the
 * emulator holds an allocation.  Exits 77 without the emulated build. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "engine/cuda/backend.h"
#include "engine/model/model.h"
#include "tests/lib/model_util.h"
#include "tests/lib/tap.h"

#ifdef TLM_HAVE_CUDA_EMU
enum { T = 4096 }; /* the presets' own seq_len, one sequence */

/* Every architecture at every preset in bf16 with d_ff tapered per layer
 * (cosine 1.5 -> 0.5, widths multiples of 16: slices of the fused gate|up
 * at 32-byte offsets), and uniform; fp32 at 440m; train.recompute. */
#define TAPER "taper: {schedule: cosine}"
#define MAG "model: {titans: {variant: mag}}"
#define MAL "model: {titans: {variant: mal}}"
static const struct {
    const char *scale, *arch, *prec, *yaml, *train; /* yaml: more top-level keys; train: more keys of train */
} rows[] = {
    {"440m", "transformer", "bf16", TAPER, ""},
    {"440m", "transformer", "bf16", "", ""},
    {"440m", "transformer", "bf16", TAPER, ", recompute: true"},
    {"440m", "transformer", "fp32", TAPER, ""},
    {"440m", "gated_attn", "bf16", TAPER, ""},
    {"440m", "gated_attn", "fp32", "", ""},
    {"440m", "hope_attn", "bf16", "", ""},
    {"440m", "hope_attn", "fp32", "", ", recompute: true"},
    {"440m", "titans", "bf16", MAG "\n" TAPER, ""},
    {"440m", "titans", "bf16", MAL "\n" TAPER, ""},
    {"440m", "titans", "fp32", MAL, ""},
    {"760m", "transformer", "bf16", TAPER, ""},
    {"760m", "transformer", "bf16", "", ", recompute: true"},
    {"760m", "gated_attn", "bf16", TAPER, ""},
    {"760m", "hope_attn", "bf16", "", ""},
    {"760m", "titans", "bf16", MAG "\n" TAPER, ""},
    {"760m", "titans", "bf16", MAL, ""},
    {"1.3b", "transformer", "bf16", TAPER, ""},
    {"1.3b", "transformer", "bf16", "", ""},
    {"1.3b", "transformer", "fp32", TAPER, ", recompute: true"},
    {"1.3b", "gated_attn", "bf16", TAPER, ""},
    {"1.3b", "hope_attn", "bf16", "", ""},
    {"1.3b", "titans", "bf16", MAG, ""},
    {"1.3b", "titans", "bf16", MAL "\n" TAPER, ""},
};

/* One preset's model, one step in plan-only; its TAP line. */
static void run_model(int i)
{
    char y[512], name[160];
    snprintf(name, sizeof name, "%s %s %s%s%s%s", rows[i].scale, rows[i].arch, rows[i].prec,
             strstr(rows[i].yaml, "mag") ? " mag" : strstr(rows[i].yaml, "mal") ? " mal" : "",
             strstr(rows[i].yaml, "taper") ? " tapered" : "", *rows[i].train ? " recompute" : "");
    snprintf(y, sizeof y,
             "scale: %s\narch: %s\n%s\ntrain: {seq_len: %d, batch_tokens: %d, micro_batch: 1, precision: %s%s}\n",
             rows[i].scale, rows[i].arch, rows[i].yaml, T, T, rows[i].prec, rows[i].train);
    long plans, heur, mms;
    eng_cuda_emu_lt_counts(&plans, &heur, &mms, 1);
    eng_config c;
    memset(&c, 0, sizeof c);
    eng_backend *be = NULL;
    eng_model *m = NULL;
    tlm_err e = {0};
    int rc = eng_config_from_text(name, y, strlen(y), &c, &e) || eng_backend_cuda_emu_create(&be, 0, &e) ||
             eng_backend_cuda_emu_set_dtype(be, c.train.precision == ENG_PREC_FP32 ? ENG_F32 : ENG_BF16, &e) ||
             eng_model_create(&m, &c, be, 1, T, &e);
    static int32_t tok[T], tgt[T];
    for (int t = 0; t < T && !rc; t++)
        tok[t] = (int32_t)((t * 7919 + 3) % c.model.vocab), tgt[t] = (int32_t)((t * 104729 + 1) % c.model.vocab);
    double loss, gn;
    if (!rc)
        rc = tm_trainer_step(m, tok, tgt, 1, T, &loss, &gn, &e);
    tlm_err ce = {0};
    if (be && eng_backend_cuda_emu_status(be, &ce))
        rc = ce.code, e = ce;
    size_t now, peak = 0;
    if (be)
        eng_backend_cuda_emu_memory(be, &now, &peak);
    const size_t slab = m ? eng_model_slab_floats(m) : 0;
    eng_model_free(m);
    eng_backend_free(be);
    eng_cuda_emu_lt_counts(&plans, &heur, &mms, 1);
    /* heur == plans: matmul.cu's table kept every plan, each made once */
    TAP_OK(!rc && plans > 0 && mms >= plans && heur == plans,
           "%s: d %d, %d layers, V %d, T %d: one step in plan-only, %ld distinct cuBLASLt plans made (%ld heuristic "
           "calls), %ld products checked (a slab of %.1f M floats, %zu MiB reserved); the backend's error: %s",
           name, c.model.d_model, c.model.layers, c.model.vocab, T, plans, heur, mms, (double)slab / 1e6, peak >> 20,
           rc ? e.msg : "none");
}

/* A product cuBLASLt refuses, on a plan-only backend: the backend keeps the
 * stand-in's reason (`want` in its message). */
static void refused(const char *what, int lda, size_t a_off, const char *want)
{
    eng_backend *be;
    tlm_err e = {0};
    if (eng_backend_cuda_emu_create(&be, 0, &e)) {
        TAP_OK(0, "%s: the backend: %s", what, e.msg);
        return;
    }
    const eng_ops *o = be->ops;
    enum { M = 64, N = 64, K = 64 };
    char *a = o->alloc(be->ctx, (M * K + 1) * sizeof(float));
    float *b = o->alloc(be->ctx, K * N * sizeof(float)), *c = o->alloc(be->ctx, M * N * sizeof(float));
    const eng_mm f32 = {ENG_F32, ENG_F32, ENG_F32};
    if (a && b && c)
        o->matmul(be->ctx, 0, 0, M, N, K, 1.0f, a + a_off, lda, b, N, 0.0f, c, N, f32);
    tlm_err ce = {0};
    const int st = eng_backend_cuda_emu_status(be, &ce);
    TAP_OK(a && b && c && st && strstr(ce.msg, want), "plan-only: %s: the backend keeps the refusal (%s)", what,
           ce.msg);
    o->free(be->ctx, a);
    o->free(be->ctx, b);
    o->free(be->ctx, c);
    eng_backend_free(be);
}
#endif

int main(void)
{
#ifndef TLM_HAVE_CUDA_EMU
    return tap_skip("built without the emulated CUDA build");
#else
    TAP_OK(eng_cuda_emu_set_plan_only(1) == 0, "plan-only: switched on with nothing allocated");
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        run_model((int)i);
    refused("lda 63 below A's 64 columns", 63, 0, "cuBLASLt plan");
    refused("fp32 A at a 2-byte offset", 64, 2, "not aligned to its CUDA_R_32F elements");
    eng_backend *be;
    tlm_err e = {0};
    const int made = eng_backend_cuda_emu_create(&be, 0, &e) == 0;
    TAP_OK(made && eng_cuda_emu_set_plan_only(0) == -1, "plan-only: the switch refused while a backend holds memory");
    if (made)
        eng_backend_free(be);
    TAP_OK(eng_cuda_emu_set_plan_only(0) == 0, "plan-only: switched off once everything is returned");
    return tap_done();
#endif
}
