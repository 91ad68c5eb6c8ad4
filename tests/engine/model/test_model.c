/* test_model.c: the model's contract beyond gradients: the parameter count
 * equals eng_account's and the tensor table follows docs/protocol.md (names,
 * shapes, one contiguous slab, decay only on matrices); the same seed gives
 * bit-identical weights and losses; forward, backward, grad norm and the
 * AdamW step allocate nothing (malloc & co. are wrapped at link time for
 * this program, so every allocation the engine's code makes is counted);
 * a tiny model learns a pattern; and the API's edges: per-position NLL and
 * ignored targets, inference without targets, shorter batches than
 * planned, bad tokens, an unknown architecture. */
#include <math.h>
#include <stdlib.h>

#include "engine/config/account.h"
#include "engine/model/model.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/alloc_count.h"
#include "tests/lib/tap.h"
#include "tests/lib/model_util.h"

static eng_backend *BE; /* the CPU backend every model here runs on */

static const tm_spec specs[] = {
    {"transformer cosine tied", "transformer", "", "cosine", 32, 4, 4, 4, 64, 48, 1, 0.02},
    {"transformer uniform untied gqa", "transformer", "", "uniform", 32, 3, 4, 2, 48, 48, 0, 0.02},
    {"gated_attn elementwise cosine", "gated_attn", "elementwise", "cosine", 32, 4, 4, 4, 64, 48, 0, 0.02},
    {"gated_attn headwise cosine mqa", "gated_attn", "headwise", "cosine", 32, 6, 4, 1, 64, 48, 1, 0.02},
    /* 3 CMS levels updated every 1, 4, 16 steps (their layout: tests/engine/model/test_hope) */
    {"hope_attn cosine", "hope_attn", "", "cosine", 32, 4, 4, 4, 96, 48, 0, 0.02},
    /* the default Titans (MAG, chunk 16; its variants: tests/engine/model/test_titans) */
    {"titans cosine tied", "titans", "", "cosine", 32, 4, 4, 4, 64, 48, 1, 0.02},
    {"titans uniform untied gqa", "titans", "", "uniform", 32, 3, 4, 2, 48, 48, 0, 0.02},
};
#define NSPEC (int)(sizeof specs / sizeof specs[0])

static void test_layout(const tm_spec *s)
{
    eng_config c;
    tlm_err e = {0};
    eng_model *m;
    eng_account a;
    if (tm_tap_layout(s->name, tm_config(s, 16, &c, &e), &c, BE, 2, 16, &m, &a, &e))
        return;
    const int *w = eng_model_widths(m);
    int wok = 1;
    char name[96];
    for (int l = 0; l < c.model.layers && strcmp(s->arch, "hope_attn"); l++) {
        snprintf(name, sizeof name, "model.layers.%d.mlp.up_proj.weight", l);
        const eng_tensor_info *t = eng_model_find_tensor(m, name);
        wok &= t && t->shape[0] == w[l] && t->shape[1] == s->d && w[l] == a.layer[l].d_ff;
        snprintf(name, sizeof name, "model.layers.%d.mlp.down_proj.weight", l);
        t = eng_model_find_tensor(m, name);
        wok &= t && t->shape[0] == s->d && t->shape[1] == w[l];
        snprintf(name, sizeof name, "model.layers.%d.self_attn.k_proj.weight", l);
        t = eng_model_find_tensor(m, name);
        wok &= t && t->shape[0] == s->kv * (s->d / s->H);
        snprintf(name, sizeof name, "model.layers.%d.self_attn.g_proj.weight", l);
        t = eng_model_find_tensor(m, name);
        if (!strcmp(s->arch, "gated_attn"))
            wok &= t && t->shape[0] == (!strcmp(s->gate, "headwise") ? s->H : s->d) && t->shape[1] == s->d;
        else
            wok &= t == NULL;
    }
    wok &= (eng_model_find_tensor(m, "lm_head.weight") != NULL) == !s->tied;
    wok &= eng_model_find_tensor(m, "model.embed_tokens.weight") && eng_model_find_tensor(m, "model.norm.weight");
    TAP_OK(wok, "%s: HF names and shapes, per-layer d_ff %d..%d", s->name, w[0], w[c.model.layers - 1]);
    eng_model_free(m);
}

/* Trains `steps` AdamW steps (B 8, T 64); losses[] out.  Counts allocations during them. */
static int train(const tm_spec *s, uint64_t seed, int steps, double *losses, long *allocs, float *params_out)
{
    eng_config c;
    tlm_err e = {0};
    return tm_train_counted(tm_config(s, 64, &c, &e), &c, &e, BE, 8, 64, seed, steps, losses, params_out, &n_allocs,
                            allocs);
}

/* nll per position, ignored targets, inference without targets, misuse */
static void test_api(void)
{
    enum { Bq = 3, Tq = 12 };
    const tm_spec *s = &specs[2];
    eng_config c;
    tlm_err e = {0};
    eng_model *m;
    if (tm_config(s, Tq, &c, &e) || eng_model_create(&m, &c, BE, Bq, Tq, &e)) {
        TAP_OK(0, "api: build: %s", e.msg);
        return;
    }
    eng_model_init_weights(m, 3);
    int32_t tok[Bq * Tq], tgt[Bq * Tq];
    float nll[Bq * Tq];
    static float lg[Bq * Tq * 64];
    tm_batch(9, Bq, Tq, s->V, tok, tgt);
    double loss, sum = 0;
    int cnt = 0, zero_ok = 1;
    int rc = eng_model_forward(m, tok, tgt, Bq, Tq, &loss, nll, &e);
    for (int i = 0; i < Bq * Tq; i++) {
        if (tgt[i] >= 0) {
            sum += nll[i];
            cnt++;
        } else {
            zero_ok &= nll[i] == 0;
        }
    }
    TAP_OK(rc == 0 && cnt < Bq * Tq && zero_ok && fabs(loss - sum / cnt) < 1e-9,
           "nll per position: mean over the %d counted = loss %.5f, ignored ones 0", cnt, loss);
    memcpy(lg, eng_model_logits(m), sizeof(float) * Bq * Tq * s->V);
    double l2;
    rc = eng_model_forward(m, tok, NULL, Bq, Tq, &l2, NULL, &e);
    TAP_OK(rc == 0 && isnan(l2) && !memcmp(lg, eng_model_logits(m), sizeof(float) * Bq * Tq * s->V),
           "inference (no targets): same logits, loss NaN");
    TAP_OK(eng_model_backward(m, 1.0f, &e) != 0, "backward after an inference forward is refused: %s", e.msg);
    /* a shorter batch than planned: the first 2 sequences, 7 positions */
    int32_t tok2[2 * 7], tgt2[2 * 7];
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 7; t++) {
            tok2[b * 7 + t] = tok[b * Tq + t];
            tgt2[b * 7 + t] = tgt[b * Tq + t];
        }
    float nll2[2 * 7];
    rc = eng_model_forward(m, tok2, tgt2, 2, 7, &l2, nll2, &e);
    int same = 1;
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 7; t++)
            same &= fabsf(nll2[b * 7 + t] - nll[b * Tq + t]) < 1e-5f;
    TAP_OK(rc == 0 && same, "a shorter batch (2 x 7 of 3 x 12): causal, the same per-position nll");
    tok2[3] = s->V;
    TAP_OK(eng_model_forward(m, tok2, tgt2, 2, 7, &l2, NULL, &e) == TLM_EDATA, "a token outside the vocabulary: %s",
           e.msg);
    TAP_OK(eng_model_forward(m, tok, tgt, Bq + 1, Tq, &l2, NULL, &e) != 0, "a batch over the plan is refused");
    eng_model_free(m);

    c.arch = ENG_ARCH_COUNT;
    TAP_OK(eng_model_create(&m, &c, BE, 1, 8, &e) == TLM_ECONFIG, "an unknown architecture is refused: %s", e.msg);
}

int main(int argc, char **argv)
{
    if (!(BE = tm_cpu_backend(argc, argv)))
        return 1;
    for (int i = 0; i < NSPEC; i++)
        test_layout(&specs[i]);
    test_api();

    TAP_OK(n_allocs > 0, "the allocation counter sees the engine's allocations (%ld while building)", n_allocs);
    enum { STEPS = 60 };
    static double a[STEPS], b[STEPS], c[STEPS];
    static float pa[400000], pb[400000], pc[400000];
    for (int i = 0; i < NSPEC; i += 2) {
        const tm_spec *s = &specs[i];
        long alloc_a, alloc_b, alloc_c;
        memset(pa, 0, sizeof pa);
        memset(pb, 0, sizeof pb);
        memset(pc, 0, sizeof pc);
        int rc = train(s, 11, STEPS, a, &alloc_a, pa) | train(s, 11, STEPS, b, &alloc_b, pb) |
                 train(s, 12, 2, c, &alloc_c, pc);
        TAP_OK(rc == 0, "%s: trained", s->name);
        TAP_OK(!memcmp(a, b, sizeof a) && !memcmp(pa, pb, sizeof pa), "%s: same seed, bit-identical weights and %d losses",
               s->name, STEPS);
        TAP_OK(memcmp(pa, pc, sizeof pa) != 0 && a[0] != c[0], "%s: another seed, other weights", s->name);
        TAP_OK(alloc_a == 0, "%s: %ld allocations in %d training steps", s->name, alloc_a, STEPS);
        TAP_OK(a[STEPS - 1] < 0.5 * a[0], "%s: loss %.3f -> %.3f", s->name, a[0], a[STEPS - 1]);
    }

    /* a model big enough that every kernel and matmul runs threaded: the
     * same losses on 2 threads twice; on 1 thread the engine's own kernels
     * split rows, channels or output blocks, never a sum, and the gradient
     * norm sums fixed chunks in order, but the BLAS is handed other block
     * shapes, and some kernels (OpenBLAS Haswell/Zen) round those
     * differently: agreement within the documented tolerance */
    static const tm_spec big = {"threaded gated_attn", "gated_attn", "elementwise", "cosine", 128, 2, 4, 2, 256, 512,
                                0, 0.02};
    enum { BIG_STEPS = 8 };
    double t2a[BIG_STEPS], t2b[BIG_STEPS], t1[BIG_STEPS];
    long al;
    int th = eng_backend_cpu_threads(BE);
    int rc = train(&big, 5, BIG_STEPS, t2a, &al, NULL) | train(&big, 5, BIG_STEPS, t2b, &al, NULL);
    TAP_OK(rc == 0 && al == 0 && !memcmp(t2a, t2b, sizeof t2a), "%s, %d threads: bit-identical losses (%.6f -> %.6f)",
           big.name, th, t2a[0], t2a[BIG_STEPS - 1]);
    eng_backend_cpu_set_threads(BE, 1);
    rc = train(&big, 5, BIG_STEPS, t1, &al, NULL);
    eng_backend_cpu_set_threads(BE, th);
    double d = tap_max_rel(t2a, t1, BIG_STEPS);
    TAP_OK(rc == 0 && d <= TAP_CROSS_RUN_TOL, "%s: 1 thread's %d losses within %.0e of %d threads' (max rel %.2e, %s)",
           big.name, BIG_STEPS, TAP_CROSS_RUN_TOL, th, d, d == 0 ? "bit-identical" : "not bit-identical");
    return tap_done();
}
