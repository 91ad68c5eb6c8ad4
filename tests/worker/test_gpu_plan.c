/* test_gpu_plan.c: tlm-worker --describe's GPU memory plan (worker/describe.c,
 * wrk_memory_need) against what the CUDA backend really allocates, on the
 * emulated build: the four architectures (Titans MAG and MAL), fp32 and
 * bf16, each model made on the emulated backend in that storage and
 * trained one step the trainer's way (the fused classifier, the step's
 * scalars, AdamW), then the backend's peak of allocations (every one
 * rounded to 256 bytes, as cudaMalloc is) compared with the plan's total
 * less the backend's own workspace (cuBLASLt's and sumsq's, which the
 * backend holds beside the model and does not count there).  The two
 * must agree to the byte: the plan is the model's own planning on a
 * counting table, with the backend's workspace queries (plan.h), so any
 * allocation the plan misses (or one the model makes late) shows.
 * describe.c is compiled into this test as the emulated build's plan.h
 * has it (ENG_CUDA_EMU: the classifier's chunk of 1024 floats, not a
 * GPU's 256 MiB; local.mk), the one size the two builds plan apart.
 * What a GPU adds (the CUDA context, cuBLASLt's and cuDNN's own memory)
 * is the device check's to measure.  Exits 77 without the emulated build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfgtree.h"
#include "config.h"
#include "engine/cuda/backend.h"
#include "engine/cuda/plan.h"
#include "engine/model/model.h"
#include "tests/lib/model_util.h"
#include "tests/lib/tap.h"
#include "worker/describe.h"

#ifdef TLM_HAVE_CUDA_EMU
static int config_of(const char *yaml, eng_config *c, tlm_err *e)
{
    tlm_cfg_node *root;
    int rc = tlm_cfg_parse_buffer("test_gpu_plan", yaml, strlen(yaml), &root, e);
    if (rc)
        return rc;
    rc = eng_config_from_tree(root, c, e);
    tlm_cfg_free(root);
    return rc;
}

/* One step on the emulated backend in c's precision; *peak its peak of
 * allocations.  0, or the failure's code (e says). */
static int run_emu(const eng_config *c, size_t *peak, tlm_err *e)
{
    eng_backend *be;
    int rc = eng_backend_cuda_emu_create(&be, 0, e);
    if (rc)
        return rc;
    eng_model *m = NULL;
    rc = eng_backend_cuda_emu_set_dtype(be, c->train.precision == ENG_PREC_FP32 ? ENG_F32 : ENG_BF16, e);
    const int B = c->train.micro_batch, T = c->train.seq_len, N = B * T;
    if (!rc)
        rc = eng_model_create(&m, c, be, B, T, e);
    int32_t *tok = malloc((size_t)N * sizeof *tok), *tgt = malloc((size_t)N * sizeof *tgt);
    if (!rc && (!tok || !tgt))
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    if (!rc) {
        eng_model_init_weights(m, 1);
        for (int i = 0; i < N; i++)
            tok[i] = (int32_t)((i * 7 + 3) % c->model.vocab), tgt[i] = (int32_t)((i * 5 + 1) % c->model.vocab);
        double loss, gn;
        rc = tm_trainer_step(m, tok, tgt, B, T, &loss, &gn, e);
        tlm_err ce = {0};
        if (eng_backend_cuda_emu_status(be, &ce))
            rc = ce.code, *e = ce;
    }
    size_t now;
    eng_backend_cuda_emu_memory(be, &now, peak);
    free(tok);
    free(tgt);
    eng_model_free(m);
    eng_backend_free(be);
    return rc;
}
#endif

int main(void)
{
#ifndef TLM_HAVE_CUDA_EMU
    return tap_skip("built without the emulated CUDA build");
#else
    /* each model in fp32 and bf16; with recompute: once more with
     * train.recompute (one gate|up and SwiGLU buffer for every layer: less
     * than the model's plan without, checked below) */
    static const struct {
        const char *name, *yaml;
        int recompute;
    } archs[] = {{"transformer", "arch: transformer", 1},
                 /* head size 64: bf16 attention on flash.cu, its workspace */
                 {"transformer hd 64 gqa", "arch: transformer\nmodel: {heads: 2, kv_heads: 1}", 0},
                 {"gated_attn", "arch: gated_attn", 0},
                 {"hope_attn", "arch: hope_attn", 1},
                 {"titans mag", "arch: titans\nmodel: {titans: {variant: mag, chunk: 8}}", 0},
                 {"titans mal", "arch: titans\nmodel: {titans: {variant: mal, chunk: 8}}", 0}};
    static const char *const precs[] = {"fp32", "bf16"};
    size_t kept[2] = {0, 0}; /* the model's plan without recompute, each precision */
    for (size_t a = 0; a < sizeof archs / sizeof *archs; a++)
        for (int r = 0; r <= archs[a].recompute; r++)
            for (int p = 0; p < 2; p++) {
                /* the 1m preset (d 128, 6 layers, 4 heads of 32), 2 sequences
                 * of 24 tokens a pass */
                char y[512], name[64];
                snprintf(y, sizeof y,
                         "scale: 1m\n%s\ntrain: {seq_len: 24, batch_tokens: 48, micro_batch: 2, precision: %s%s}\n",
                         archs[a].yaml, precs[p], r ? ", recompute: true" : "");
                snprintf(name, sizeof name, "%s%s", archs[a].name, r ? " recompute" : "");
                eng_config c;
                tlm_err e = {0};
                size_t total = 0, state = 0, peak = 0;
                if (config_of(y, &c, &e) || wrk_memory_need(&c, 1, &total, &state, &e)) {
                    TAP_OK(0, "%s %s: the plan: %s", name, precs[p], e.msg);
                    continue;
                }
                if (run_emu(&c, &peak, &e)) {
                    TAP_OK(0, "%s %s: on the emulated backend: %s", name, precs[p], e.msg);
                    continue;
                }
                const size_t planned = total - ENG_CU_BACKEND_BYTES;
                TAP_OK(total > ENG_CU_BACKEND_BYTES && planned == peak,
                       "%s %s: --describe plans %zu bytes of model memory, the backend allocated %zu at its peak "
                       "(weights and state %zu)",
                       name, precs[p], planned, peak, state);
                if (!r)
                    kept[p] = planned;
                else
                    TAP_OK(planned < kept[p], "%s %s: recompute plans %zu bytes less than keeping every layer's (%zu)",
                           archs[a].name, precs[p], kept[p] - planned, kept[p]);
            }
    return tap_done();
#endif
}
