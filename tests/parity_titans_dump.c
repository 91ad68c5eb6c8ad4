/* parity_titans_dump.c: the engine's side of the Titans PyTorch parity
 * test (tests/parity_titans.py runs it).  For each tiny titans variant it
 * writes
 *   DIR/<variant>.model.safetensors  the initial weights (HF names, the
 *                                    Titans tensors under each layer's
 *                                    prefix) and, in the metadata, the
 *                                    model's shape, its Titans settings and
 *                                    the optimizer's as JSON ("tlm_parity")
 *   DIR/<variant>.out.safetensors    tokens, targets (I32, (B, T)), the
 *                                    step-0 loss (1), logits (B, T, V),
 *                                    "grad.<name>" for every parameter, and
 *                                    "losses" (10): the losses of 10 AdamW
 *                                    steps on the same batch, clipping at 1
 * Usage: parity_titans_dump DIR */
#include <math.h>
#include <stdlib.h>

#include "engine/model.h"
#include "engine/runtime.h"
#include "engine/safetensors.h"
#include "tests/test_model_util.h"
#include "tests/titans_util.h"

#define B 2
#define T 16
#define STEPS 10
#define LR 5e-3
#define WD 0.1
#define BETA1 0.9
#define BETA2 0.95
#define EPS 1e-8
#define CLIP 1.0

/* name, variant, schedule, d, L, H, kv, dff, V, tied, window, persistent, chunk, depth, hidden, max_lr, init_std */
static const titans_spec specs[] = {
    {"mag_cosine_tied_chunk4_window6", "mag", "cosine", 32, 3, 4, 4, 64, 64, 1, 6, 2, 4, 2, 0, 0.1, 0.1},
    {"mal_cosine_untied_gqa_depth1_chunk5", "mal", "cosine", 32, 3, 4, 2, 64, 64, 0, 32, 0, 5, 1, 0, 0.1, 0.1},
    {"mag_uniform_gqa_b1_window16_hidden12", "mag", "uniform", 32, 2, 4, 2, 64, 64, 1, 16, 3, 1, 2, 12, 0.1, 0.1},
    {"mal_uniform_chunk3_window4", "mal", "uniform", 32, 2, 2, 2, 64, 64, 0, 4, 1, 3, 2, 0, 0.1, 0.1},
};

static int dump(const char *dir, const titans_spec *s, eng_err *e)
{
    eng_config c;
    eng_model *m;
    int rc = ts_config(s, T, &c, e);
    if (rc || (rc = eng_model_create(&m, &c, B, T, e)))
        return rc;
    eng_model_init_weights(m, 2024);
    size_t n = eng_model_n_params(m);
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g);
    float *logits = malloc(sizeof(float) * B * T * s->V);
    int32_t tok[B * T], tgt[B * T];
    tm_batch(5, B, T, s->V, tok, tgt);
    eng_model_get_params(m, p);

    char path[1024], meta[2048];
    const int *w = eng_model_widths(m);
    char widths[512] = "";
    for (int l = 0; l < s->L; l++)
        snprintf(widths + strlen(widths), sizeof widths - strlen(widths), "%s%d", l ? "," : "", w[l]);
    const eng_model_cfg *mc = &c.model;
    snprintf(meta, sizeof meta,
             "{\"arch\":\"titans\",\"variant\":\"%s\",\"window\":%d,\"persistent\":%d,\"chunk\":%d,"
             "\"mem_depth\":%d,\"mem_hidden\":%d,\"max_lr\":%.17g,\"d\":%d,\"layers\":%d,\"heads\":%d,"
             "\"kv_heads\":%d,\"vocab\":%d,\"tied\":%d,\"norm_eps\":%.17g,\"rope_theta\":%.17g,"
             "\"widths\":[%s],\"B\":%d,\"T\":%d,\"steps\":%d,\"lr\":%.17g,\"weight_decay\":%.17g,"
             "\"beta1\":%.17g,\"beta2\":%.17g,\"eps\":%.17g,\"clip\":%.17g}",
             s->variant, mc->titans_window, mc->titans_persistent, mc->titans_chunk, mc->titans_mem_depth,
             mc->titans_mem_hidden, mc->titans_max_lr, s->d, s->L, s->H, s->kv, s->V, s->tied, mc->norm_eps,
             mc->rope_theta, widths, B, T, STEPS, LR, WD, BETA1, BETA2, EPS, CLIP);
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
        rc = eng_model_forward(m, tok, tgt, B, T, &loss, NULL, e);
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
    float loss0f = (float)loss0, lossesf[STEPS];
    for (int i = 0; i < STEPS; i++)
        lossesf[i] = (float)losses[i];
    int64_t bt[2] = {B, T}, btv[3] = {B, T, s->V}, one[1] = {1}, ns[1] = {STEPS};
    char name[160];
    rc = rc || eng_st_writer_new(&wr, e);
    rc = rc || eng_st_writer_add(wr, "tokens", "I32", 2, bt, tok, e) ||
         eng_st_writer_add(wr, "targets", "I32", 2, bt, tgt, e) || eng_st_writer_add(wr, "loss", "F32", 1, one, &loss0f, e) ||
         eng_st_writer_add(wr, "logits", "F32", 3, btv, logits, e) ||
         eng_st_writer_add(wr, "losses", "F32", 1, ns, lossesf, e);
    for (int i = 0; !rc && i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        snprintf(name, sizeof name, "grad.%s", t->name);
        rc = eng_st_writer_add(wr, name, "F32", t->ndim, t->shape, g + t->offset, e);
    }
    snprintf(path, sizeof path, "%s/%s.out.safetensors", dir, s->name);
    rc = rc || eng_st_writer_write(wr, path, NULL, e);
    eng_st_writer_free(wr);
    free(p);
    free(g);
    free(logits);
    eng_model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    if (argc != 2) {
        fprintf(stderr, "usage: parity_titans_dump DIR\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        eng_err e = {0};
        if (dump(argv[1], &specs[i], &e)) {
            fprintf(stderr, "parity_titans_dump: %s: %s\n", specs[i].name, e.msg);
            return 1;
        }
        printf("%s\n", specs[i].name);
    }
    return 0;
}
