/* parity_hope_dump.c: the engine's side of the Hope-attention PyTorch
 * parity test (tests/parity_hope.py runs it).  For each tiny hope_attn
 * variant it writes
 *   DIR/<variant>.model.safetensors  the initial weights (HF names,
 *                                    model.layers.N.mlp.levels.I.*) and, in
 *                                    the metadata, the shape, the levels'
 *                                    chunk sizes and the optimizer settings
 *                                    as JSON ("tlm_parity")
 *   DIR/<variant>.out.safetensors    tokens, targets (I32, (STEPS, B, T):
 *                                    a new batch every step), the step-0
 *                                    loss (1) and logits (B, T, V),
 *                                    "grad.<name>" for every parameter at
 *                                    step 0, "losses" (STEPS) of STEPS AdamW
 *                                    steps with clipping and the levels'
 *                                    multi-frequency updates, and
 *                                    "final.<name>" the weights after them
 * Usage: parity_hope_dump DIR */
#include <math.h>
#include <stdlib.h>

#include "engine/model.h"
#include "engine/runtime.h"
#include "engine/safetensors.h"
#include "tests/hope_util.h"
#include "tests/test_model_util.h"

#define B 2
#define T 16
#define STEPS 10
#define LR 5e-3
#define WD 0.1
#define BETA1 0.9
#define BETA2 0.95
#define EPS 1e-8
#define CLIP 1.0

static const hope_spec specs[] = {
    {"hope_cosine_tied_c124", "cosine", 32, 4, 4, 4, 96, 64, 1, 3, "[1, 2, 4]", 16, 0.1},
    {"hope_uniform_untied_gqa_c124", "uniform", 32, 3, 4, 2, 96, 64, 0, 3, "[1, 2, 4]", 16, 0.1},
    {"hope_cosine_untied_4levels_c2124", "cosine", 32, 3, 4, 4, 112, 64, 0, 4, "[2, 1, 2, 4]", 8, 0.1},
};

static int dump(const char *dir, const hope_spec *s, eng_err *e)
{
    eng_config c;
    eng_model *m;
    int rc = hs_config(s, T, &c, e);
    if (rc || (rc = eng_model_create(&m, &c, B, T, e)))
        return rc;
    eng_model_init_weights(m, 2025);
    size_t n = eng_model_n_params(m);
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g), *fin = malloc(n * sizeof *fin);
    float *logits = malloc(sizeof(float) * B * T * s->V);
    int32_t tok[STEPS * B * T], tgt[STEPS * B * T];
    for (int st = 0; st < STEPS; st++)
        tm_batch(5 + (uint64_t)st, B, T, s->V, tok + st * B * T, tgt + st * B * T);
    eng_model_get_params(m, p);

    char path[1024], meta[1024], chunks[128] = "";
    for (int i = 0; i < c.model.hope_levels; i++)
        snprintf(chunks + strlen(chunks), sizeof chunks - strlen(chunks), "%s%d", i ? "," : "",
                 (int)c.model.hope_chunks[i]);
    snprintf(meta, sizeof meta,
             "{\"arch\":\"hope_attn\",\"d\":%d,\"layers\":%d,\"heads\":%d,\"kv_heads\":%d,\"vocab\":%d,"
             "\"tied\":%d,\"norm_eps\":%.17g,\"rope_theta\":%.17g,\"levels\":%d,\"chunks\":[%s],\"B\":%d,\"T\":%d,"
             "\"steps\":%d,\"lr\":%.17g,\"weight_decay\":%.17g,\"beta1\":%.17g,\"beta2\":%.17g,\"eps\":%.17g,"
             "\"clip\":%.17g}",
             s->d, s->L, s->H, s->kv, s->V, s->tied, c.model.norm_eps, c.model.rope_theta, c.model.hope_levels, chunks,
             B, T, STEPS, LR, WD, BETA1, BETA2, EPS, CLIP);
    eng_st_writer *wr;
    rc = eng_st_writer_new(&wr, e);
    for (int i = 0; !rc && i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        rc = eng_st_writer_add(wr, t->name, "F32", t->ndim, t->shape, p + t->offset, e);
    }
    snprintf(path, sizeof path, "%s/%s.model.safetensors", dir, s->name);
    rc = rc || eng_st_writer_meta(wr, "format", "pt", e) || eng_st_writer_meta(wr, "tlm_parity", meta, e) ||
         eng_st_writer_write(wr, path, NULL, e);
    eng_st_writer_free(wr);

    double loss0 = 0, losses[STEPS];
    for (int st = 0; !rc && st < STEPS; st++) {
        double loss;
        eng_model_zero_grads(m);
        rc = eng_model_forward(m, tok + st * B * T, tgt + st * B * T, B, T, &loss, NULL, e);
        if (!rc && st == 0)
            memcpy(logits, eng_model_logits(m), sizeof(float) * B * T * s->V);
        rc = rc || eng_model_backward(m, 1.0f, e);
        if (!rc && st == 0) {
            loss0 = loss;
            eng_model_get_grads(m, g);
        }
        double gn = eng_model_grad_norm(m);
        eng_adamw opt = {LR, BETA1, BETA2, EPS, WD, st + 1, gn > CLIP ? CLIP / gn : 1.0};
        rc = rc || eng_model_step(m, &opt, e);
        losses[st] = loss;
    }
    eng_model_get_params(m, fin);
    float loss0f = (float)loss0, lossesf[STEPS];
    for (int i = 0; i < STEPS; i++)
        lossesf[i] = (float)losses[i];
    int64_t sbt[3] = {STEPS, B, T}, btv[3] = {B, T, s->V}, one[1] = {1}, ns[1] = {STEPS};
    char name[160];
    rc = rc || eng_st_writer_new(&wr, e);
    rc = rc || eng_st_writer_add(wr, "tokens", "I32", 3, sbt, tok, e) ||
         eng_st_writer_add(wr, "targets", "I32", 3, sbt, tgt, e) ||
         eng_st_writer_add(wr, "loss", "F32", 1, one, &loss0f, e) ||
         eng_st_writer_add(wr, "logits", "F32", 3, btv, logits, e) ||
         eng_st_writer_add(wr, "losses", "F32", 1, ns, lossesf, e);
    for (int i = 0; !rc && i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        snprintf(name, sizeof name, "grad.%s", t->name);
        rc = eng_st_writer_add(wr, name, "F32", t->ndim, t->shape, g + t->offset, e);
        snprintf(name, sizeof name, "final.%s", t->name);
        rc = rc || eng_st_writer_add(wr, name, "F32", t->ndim, t->shape, fin + t->offset, e);
    }
    snprintf(path, sizeof path, "%s/%s.out.safetensors", dir, s->name);
    rc = rc || eng_st_writer_write(wr, path, NULL, e);
    eng_st_writer_free(wr);
    free(p);
    free(g);
    free(fin);
    free(logits);
    eng_model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    if (argc != 2) {
        fprintf(stderr, "usage: parity_hope_dump DIR\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        eng_err e = {0};
        if (dump(argv[1], &specs[i], &e)) {
            fprintf(stderr, "parity_hope_dump: %s: %s\n", specs[i].name, e.msg);
            return 1;
        }
        printf("%s\n", specs[i].name);
    }
    return 0;
}
