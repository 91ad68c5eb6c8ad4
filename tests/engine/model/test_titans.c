/* test_titans.c: the titans model's contract beyond gradients (as
 * test_model does for the other architectures): the parameter count equals
 * eng_account's for both variants, both depths, with and without
 * persistent entries; the Titans tensors' names and shapes; the memory's
 * projections continue the fused q/k/v matrix; the MLP alone is tapered;
 * weight decay on matrices only; the account's FLOPs; config keys
 * (defaults, canonical form, refusals); zero allocations in training steps
 * (malloc & co. wrapped at link time); bit-identical losses for the same
 * seed, and on 1 and 2 threads; a tiny model learns; per-position NLL
 * of a shorter batch equals the longer one's (causality: no future token
 * reaches the memory); inference without targets. */
#include <math.h>
#include <stdlib.h>

#include "engine/config/account.h"
#include "engine/model/model.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/alloc_count.h"
#include "tests/lib/tap.h"
#include "tests/lib/model_util.h"
#include "tests/lib/titans_util.h"

static eng_backend *BE; /* the CPU backend every model here runs on */

/* name, variant, schedule, d, L, H, kv, dff, V, tied, window, persistent, chunk, depth, hidden, max_lr, init_std */
static const titans_spec specs[] = {
    {"mag cosine depth 2", "mag", "cosine", 32, 4, 4, 4, 64, 48, 1, 8, 4, 5, 2, 0, 0.05, 0.02},
    {"mal cosine depth 1 gqa untied", "mal", "cosine", 32, 4, 4, 2, 64, 48, 0, 64, 0, 16, 1, 0, 0.05, 0.02},
    {"mal uniform depth 2 hidden 24", "mal", "uniform", 32, 3, 2, 2, 48, 48, 1, 16, 2, 8, 2, 24, 0.05, 0.02},
    {"mag uniform depth 1 mqa", "mag", "uniform", 32, 2, 4, 1, 48, 48, 1, 4, 1, 64, 1, 0, 0.05, 0.02},
};
#define NSPEC (int)(sizeof specs / sizeof specs[0])

static const eng_tensor_info *find(eng_model *m, int l, const char *what)
{
    char name[96];
    snprintf(name, sizeof name, "model.layers.%d.%s", l, what);
    return eng_model_find_tensor(m, name);
}

static int shape_is(const eng_tensor_info *t, int64_t d0, int64_t d1)
{
    return t && t->shape[0] == d0 && (t->ndim == 1 ? d1 == 0 : t->shape[1] == d1);
}

static void test_layout(const titans_spec *s)
{
    eng_config c;
    tlm_err e = {0};
    eng_model *m;
    eng_account a;
    if (tm_tap_layout(s->name, ts_config(s, 16, &c, &e), &c, BE, 2, 16, &m, &a, &e))
        return;
    const int d = s->d, H = s->H, hd = d / H, hm = s->depth == 2 ? (s->hidden ? s->hidden : 2 * hd) : 0;
    const int dkv = s->kv * hd, mag = !strcmp(s->variant, "mag");
    const int *w = eng_model_widths(m);
    int names = 1, fused = 1, taper = 1;
    int64_t extra = 0;
    for (int l = 0; l < s->L; l++) {
        const eng_tensor_info *v = find(m, l, "self_attn.v_proj.weight"), *mq = find(m, l, "memory.q_proj.weight");
        names &= shape_is(mq, d, d) && shape_is(find(m, l, "memory.k_proj.weight"), d, d) &&
                 shape_is(find(m, l, "memory.v_proj.weight"), d, d) &&
                 shape_is(find(m, l, "memory.gate_proj.weight"), 3 * H, d) &&
                 shape_is(find(m, l, "memory.gate_proj.bias"), 3 * H, 0) &&
                 shape_is(find(m, l, "memory.conv.weight"), 3 * d, 4) &&
                 shape_is(find(m, l, "memory.norm.weight"), d, 0);
        if (s->depth == 2)
            names &= shape_is(find(m, l, "memory.init_w1"), (int64_t)H * hm, hd) &&
                     shape_is(find(m, l, "memory.init_w2"), (int64_t)H * hd, hm) && !find(m, l, "memory.init_w");
        else
            names &= shape_is(find(m, l, "memory.init_w"), (int64_t)H * hd, hd) && !find(m, l, "memory.init_w1");
        names &= mag ? shape_is(find(m, l, "self_attn.norm.weight"), d, 0) : !find(m, l, "self_attn.norm.weight");
        if (s->persistent)
            names &= shape_is(find(m, l, "self_attn.persistent_k"), s->persistent, dkv) &&
                     shape_is(find(m, l, "self_attn.persistent_v"), s->persistent, dkv);
        else
            names &= !find(m, l, "self_attn.persistent_k") && !find(m, l, "self_attn.persistent_v");
        names &= !find(m, l, "self_attn.g_proj.weight");
        /* q, k, v, memory q, k, v, gates: one (S, d) matrix */
        fused &= v && mq && mq->offset == v->offset + v->numel;
        /* the taper reaches the MLP only */
        const eng_tensor_info *up = find(m, l, "mlp.up_proj.weight");
        taper &= up && up->shape[0] == w[l] && w[l] == a.layer[l].d_ff && a.layer[l].extra == a.layer[0].extra;
        extra += a.layer[l].extra;
    }
    TAP_OK(names, "%s: Titans tensors under each layer's prefix with the documented shapes", s->name);
    TAP_OK(fused, "%s: the memory's projections continue q/k/v (one fused matrix)", s->name);
    TAP_OK(taper, "%s: d_ff %d..%d, the memory's share equal in every layer", s->name, w[0], w[s->L - 1]);
    /* the account's extra FLOPs: the memory projection and the memory itself */
    double mem_flops = s->depth == 2 ? 18.0 * hd * hm * H : 8.0 * hd * hd * H;
    double want = 2.0 * (3.0 * d * d + 3.0 * H * d) + 2.0 * 3 * d * 4 + mem_flops;
    double base = 2.0 * (a.layer[0].attn + a.layer[0].mlp);
    double keys = 0;
    for (int t = 0; t < 16; t++)
        keys += t + 1 < s->window ? t + 1 : s->window;
    double attn = 4.0 * d * (keys / 16 + s->persistent);
    TAP_OK(fabs(a.layer[0].flops_fwd - (base + want + attn)) < 1e-6 * a.layer[0].flops_fwd && extra == a.extra,
           "%s: per-layer forward FLOPs %.4g = projections + memory %.3g + window attention %.3g", s->name,
           a.layer[0].flops_fwd, want, attn);
    eng_model_free(m);
}

static void test_config(void)
{
    eng_config c;
    tlm_err e = {0};
    titans_spec s = specs[0];
    int rc = ts_config(&s, 16, &c, &e);
    char *canon = rc ? NULL : eng_config_canonical(&c);
    const char *want = "\"titans\":{\"chunk\":5,\"max_lr\":0.05,\"mem_depth\":2,\"mem_hidden\":16,"
                       "\"persistent\":4,\"variant\":\"mag\",\"window\":8}";
    TAP_OK(canon && strstr(canon, want), "canonical form carries model.titans (mem_hidden resolved to 2 x head size): %s",
           canon ? want : e.msg);
    free(canon);
    /* and only for titans */
    rc = tm_config(&(tm_spec){"t", "transformer", "", "cosine", 32, 4, 4, 4, 64, 48, 1, 0.02}, 16, &c, &e);
    canon = rc ? NULL : eng_config_canonical(&c);
    TAP_OK(canon && !strstr(canon, "titans"), "a transformer's canonical form has no titans keys");
    free(canon);
    const char *y = "arch: titans\nscale: 1m\n";
    rc = eng_config_from_text("t", y, strlen(y), &c, &e);
    const eng_model_cfg *mc = &c.model;
    TAP_OK(!rc && mc->titans_variant == ENG_TITANS_MAG && mc->titans_window == 512 && mc->titans_persistent == 4 &&
               mc->titans_chunk == 16 && mc->titans_mem_depth == 2 && mc->titans_mem_hidden == 64 &&
               mc->titans_max_lr == 0.002,
           "defaults: mag, window 512, 4 persistent, chunk 16, depth 2, hidden 2 x 32, max_lr 0.002");
    static const char *const bad[] = {
        "arch: transformer\nscale: 1m\nmodel: {titans: {window: 64}}\n",
        "arch: titans\nscale: 1m\nmodel: {titans: {mem_depth: 1, mem_hidden: 32}}\n",
        "arch: titans\nscale: 1m\nmodel: {titans: {variant: mac}}\n",
        "arch: titans\nscale: 1m\nmodel: {titans: {chunk: 0}}\n",
        "arch: titans\nscale: 1m\nmodel: {titans: {max_lr: 0}}\n",
        "arch: titans\nscale: 1m\nmodel: {titans: {windw: 3}}\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = eng_config_from_text("t", bad[i], strlen(bad[i]), &c, &e);
        TAP_OK(rc == TLM_ECONFIG, "refused: %s", e.msg);
    }
}

/* Trains `steps` AdamW steps (B 8, T 32) on a learnable stream (two micro
 * batches); losses out, allocations during the steps counted. */
static int train(const titans_spec *s, uint64_t seed, int steps, double *losses, long *allocs)
{
    eng_config c;
    tlm_err e = {0};
    return tm_train_counted(ts_config(s, 32, &c, &e), &c, &e, BE, 8, 32, seed, steps, losses, NULL, &n_allocs, allocs);
}

/* The optional op group, checked once at creation: a backend without the
 * Titans ops is refused for titans (and only titans); one that claims the
 * group but leaves an op out is a broken table. */
static void test_op_groups(void)
{
    eng_ops lack = *BE->ops;
    lack.name = "lacking";
    lack.groups &= ~(unsigned)ENG_OPS_TITANS;
#define DROP(op) lack.op = NULL;
    ENG_OPS_TITANS_LIST(DROP)
#undef DROP
    eng_backend without = {&lack, BE->ctx};
    eng_config c;
    tlm_err e = {0};
    eng_model *m = (eng_model *)&c; /* must come back NULL */
    int rc = ts_config(&specs[0], 16, &c, &e);
    rc = rc ? rc : eng_model_create(&m, &c, &without, 2, 16, &e);
    TAP_OK(rc == TLM_ECONFIG && !m && strstr(e.msg, "titans") && strstr(e.msg, "Titans ops") &&
               strstr(e.msg, "lacking"),
           "a backend without the Titans ops is refused for titans at creation: %s", e.msg);
    static const tm_spec tr = {"transformer", "transformer", "elementwise", "uniform", 32, 2, 4, 4, 64, 48, 1, 0.02};
    eng_config tc;
    m = NULL;
    rc = tm_config(&tr, 16, &tc, &e) || eng_model_create(&m, &tc, &without, 2, 16, &e);
    double loss = NAN;
    int32_t tok[2 * 16], tgt[2 * 16];
    tm_batch(1, 2, 16, tr.V, tok, tgt);
    if (!rc) {
        eng_model_init_weights(m, 1);
        rc = eng_model_forward(m, tok, tgt, 2, 16, &loss, NULL, &e) || eng_model_backward(m, 1.0f, &e);
    }
    TAP_OK(rc == 0 && isfinite(loss), "... a transformer, which needs no optional group, trains on it (loss %.3f)",
           loss);
    eng_model_free(m);
    eng_ops half = *BE->ops;
    half.name = "half";
    half.swa_bwd = NULL;
    eng_backend broken = {&half, BE->ctx};
    m = NULL;
    rc = ts_config(&specs[0], 16, &c, &e) || eng_model_create(&m, &c, &broken, 2, 16, &e);
    TAP_OK(rc && e.code == TLM_EINTERNAL && !m && strstr(e.msg, "swa_bwd"),
           "a backend that claims the Titans ops without swa_bwd is refused: %s", e.msg);
}

/* nll of a shorter batch, inference without targets */
static void test_api(const titans_spec *s)
{
    enum { Bq = 3, Tq = 23 };
    eng_config c;
    tlm_err e = {0};
    eng_model *m;
    if (ts_config(s, Tq, &c, &e) || eng_model_create(&m, &c, BE, Bq, Tq, &e)) {
        TAP_OK(0, "api: build: %s", e.msg);
        return;
    }
    eng_model_init_weights(m, 3);
    int32_t tok[Bq * Tq], tgt[Bq * Tq];
    float nll[Bq * Tq], nll2[2 * 13];
    static float lg[Bq * Tq * 48];
    tm_batch(9, Bq, Tq, s->V, tok, tgt);
    double loss, l2;
    int rc = eng_model_forward(m, tok, tgt, Bq, Tq, &loss, nll, &e);
    memcpy(lg, eng_model_logits(m), sizeof(float) * Bq * Tq * s->V);
    rc |= eng_model_forward(m, tok, NULL, Bq, Tq, &l2, NULL, &e);
    TAP_OK(rc == 0 && isnan(l2) && !memcmp(lg, eng_model_logits(m), sizeof(float) * Bq * Tq * s->V),
           "%s: inference (no targets): same logits, loss NaN", s->name);
    /* the first 13 positions of 2 sequences: chunks of 5 start at the same
     * places, and a later token never reaches an earlier one */
    int32_t tok2[2 * 13], tgt2[2 * 13];
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 13; t++) {
            tok2[b * 13 + t] = tok[b * Tq + t];
            tgt2[b * 13 + t] = tgt[b * Tq + t];
        }
    rc = eng_model_forward(m, tok2, tgt2, 2, 13, &l2, nll2, &e);
    double worst = 0;
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 13; t++)
            worst = fmax(worst, fabs(nll2[b * 13 + t] - nll[b * Tq + t]));
    TAP_OK(rc == 0 && worst < 1e-5, "%s: a shorter batch (2 x 13 of 3 x 23): per-position nll within %.1e", s->name,
           worst);
    /* changing the last token changes no earlier position's nll */
    tok[Tq - 1] = (tok[Tq - 1] + 1) % s->V;
    float nll3[Bq * Tq];
    rc = eng_model_forward(m, tok, tgt, Bq, Tq, &l2, nll3, &e);
    int same = 1;
    for (int t = 0; t < Tq - 1; t++)
        same &= nll3[t] == nll[t];
    TAP_OK(rc == 0 && same && nll3[Tq - 1] != nll[Tq - 1], "%s: the last token changes only its own position",
           s->name);
    eng_model_free(m);
}

int main(int argc, char **argv)
{
    if (!(BE = tm_cpu_backend(argc, argv)))
        return 1;
    for (int i = 0; i < NSPEC; i++)
        test_layout(&specs[i]);
    test_config();
    test_op_groups();
    test_api(&specs[0]);
    test_api(&specs[1]);
    TAP_OK(n_allocs > 0, "the allocation counter sees the engine's allocations (%ld while building)", n_allocs);
    enum { STEPS = 60 };
    static double a[STEPS], b[STEPS], c[STEPS];
    for (int i = 0; i < NSPEC; i += 1) {
        const titans_spec *s = &specs[i];
        long alloc_a, alloc_b, alloc_c;
        int steps = i < 2 ? STEPS : 8;
        int rc = train(s, 11, steps, a, &alloc_a) | train(s, 11, steps, b, &alloc_b) | train(s, 12, 2, c, &alloc_c);
        TAP_OK(rc == 0, "%s: trained", s->name);
        TAP_OK(!memcmp(a, b, sizeof(double) * steps), "%s: same seed, bit-identical %d losses", s->name, steps);
        TAP_OK(a[0] != c[0], "%s: another seed, another loss", s->name);
        TAP_OK(alloc_a == 0, "%s: %ld allocations in %d training steps", s->name, alloc_a, steps);
        if (i < 2)
            TAP_OK(a[STEPS - 1] < 0.5 * a[0], "%s: learns, loss %.3f -> %.3f", s->name, a[0], a[STEPS - 1]);
    }
    /* big enough that every Titans kernel runs threaded: 1 thread agrees
     * with 2 within the documented tolerance (the memory and attention
     * split (sequence, head) units, the convolution's kernel gradient splits
     * channels; only the BLAS's block shapes differ, see test_model) */
    static const titans_spec big = {"threaded titans", "mag", "cosine", 128, 2, 4, 2, 256, 512, 0, 16, 4, 8, 2, 0,
                                    0.05, 0.02};
    enum { BIG_STEPS = 4 };
    double t2[BIG_STEPS], t2b[BIG_STEPS], t1[BIG_STEPS];
    long al;
    int th = eng_backend_cpu_threads(BE);
    eng_backend_cpu_set_threads(BE, 2);
    int rc = train(&big, 5, BIG_STEPS, t2, &al) | train(&big, 5, BIG_STEPS, t2b, &al);
    TAP_OK(rc == 0 && !memcmp(t2, t2b, sizeof t2), "%s, 2 threads: bit-identical losses (%.6f -> %.6f)", big.name,
           t2[0], t2[BIG_STEPS - 1]);
    eng_backend_cpu_set_threads(BE, 1);
    rc |= train(&big, 5, BIG_STEPS, t1, &al);
    eng_backend_cpu_set_threads(BE, th);
    double d = tap_max_rel(t2, t1, BIG_STEPS);
    TAP_OK(rc == 0 && d <= TAP_CROSS_RUN_TOL, "%s: 1 thread's %d losses within %.0e of 2 threads' (max rel %.2e, %s)",
           big.name, BIG_STEPS, TAP_CROSS_RUN_TOL, d, d == 0 ? "bit-identical" : "not bit-identical");
    return tap_done();
}
