/* dump_util.h: what the engine's side of every PyTorch parity test
 * does alike (tests/parity/parity_dump.c, parity_hope_dump.c, parity_titans_dump.c):
 * the recipe, the initial weights with their metadata, the 10 AdamW steps
 * and the file of their results.  Header-only, for the test programs.
 *
 *   DIR/<name>.model.safetensors  the initial weights (HF names) and, in the
 *                                 metadata, "tlm_parity": the model's shape
 *                                 and the recipe as JSON
 *   DIR/<name>.out.safetensors    tokens, targets (I32, (B, T), or
 *                                 (STEPS, B, T) with a batch per step), the
 *                                 step-0 loss (1), logits (B, T, V),
 *                                 "grad.<name>" for every parameter at step
 *                                 0, "losses" (STEPS) and, when asked,
 *                                 "final.<name>": the weights after them */
#ifndef TLM_TESTS_PARITY_DUMP_UTIL_H
#define TLM_TESTS_PARITY_DUMP_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/model.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/format/safetensors.h"
#include "tests/lib/model_util.h"

#define PD_B 2
#define PD_T 16
#define PD_STEPS 10
#define PD_LR 5e-3
#define PD_WD 0.1
#define PD_BETA1 0.9
#define PD_BETA2 0.95
#define PD_EPS 1e-8
#define PD_CLIP 1.0

/* the CPU backend (every core) every dumper's models run on; pd_main makes it */
static eng_backend *pd_backend;

/* The recipe's part of the "tlm_parity" JSON (it closes the object). */
#define PD_RECIPE_FMT                                                                                                 \
    "\"B\":%d,\"T\":%d,\"steps\":%d,\"lr\":%.17g,\"weight_decay\":%.17g,\"beta1\":%.17g,\"beta2\":%.17g,"           \
    "\"eps\":%.17g,\"clip\":%.17g}"
#define PD_RECIPE_ARGS PD_B, PD_T, PD_STEPS, PD_LR, PD_WD, PD_BETA1, PD_BETA2, PD_EPS, PD_CLIP

/* "384,256,128": the model's per-layer MLP widths */
static inline void pd_widths(eng_model *m, int L, char *buf, size_t cap)
{
    const int *w = eng_model_widths(m);
    buf[0] = '\0';
    for (int l = 0; l < L; l++)
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%d", l ? "," : "", w[l]);
}

/* Writes every tensor of `m` from the host copy `p` (eng_model_get_params)
 * under `prefix` ("" for the weights file, "grad." ...). */
static inline int pd_add_tensors(eng_st_writer *wr, eng_model *m, const char *prefix, const float *p, tlm_err *e)
{
    char name[160];
    int rc = 0;
    for (int i = 0; !rc && i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        snprintf(name, sizeof name, "%s%s", prefix, t->name);
        rc = eng_st_writer_add(wr, name, "F32", t->ndim, t->shape, p + t->offset, e);
    }
    return rc;
}

/* DIR/<name>.model.safetensors: the model's current weights and `meta`. */
static inline int pd_write_model(eng_model *m, const char *dir, const char *name, const char *meta, tlm_err *e)
{
    float *p = malloc(eng_model_n_params(m) * sizeof *p);
    eng_st_writer *wr = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.model.safetensors", dir, name);
    int rc = p ? eng_model_get_params(m, p) : tlm_errf(e, TLM_ENOMEM, "out of memory");
    rc = rc || eng_st_writer_new(&wr, e) || pd_add_tensors(wr, m, "", p, e) ||
         eng_st_writer_meta(wr, "format", "pt", e) || eng_st_writer_meta(wr, "tlm_parity", meta, e) ||
         eng_st_writer_write(wr, path, NULL, e);
    eng_st_writer_free(wr);
    free(p);
    return rc;
}

/* PD_STEPS AdamW steps (global-norm clipping at PD_CLIP) on the batch tok,
 * tgt ((B, T); per_step: (STEPS, B, T), batch st at st x B x T), then
 * DIR/<name>.out.safetensors as the header says. */
static inline int pd_train_and_write(eng_model *m, int V, const int32_t *tok, const int32_t *tgt, int per_step,
                                     int with_final, const char *dir, const char *name, tlm_err *e)
{
    const size_t n = eng_model_n_params(m), bt = (size_t)PD_B * PD_T;
    float *g = malloc(n * sizeof *g), *fin = with_final ? malloc(n * sizeof *fin) : NULL;
    float *logits = malloc(sizeof(float) * bt * V);
    int rc = !g || !logits || (with_final && !fin) ? tlm_errf(e, TLM_ENOMEM, "out of memory") : 0;
    double loss0 = 0;
    float losses[PD_STEPS];
    for (int st = 0; !rc && st < PD_STEPS; st++) {
        const size_t off = per_step ? st * bt : 0;
        double loss;
        eng_model_zero_grads(m);
        rc = eng_model_forward(m, tok + off, tgt + off, PD_B, PD_T, &loss, NULL, e);
        if (!rc && st == 0)
            memcpy(logits, eng_model_logits(m), sizeof(float) * bt * V);
        rc = rc || eng_model_backward(m, 1.0f, e);
        if (!rc && st == 0) {
            loss0 = loss;
            eng_model_get_grads(m, g);
        }
        double gn = eng_model_grad_norm(m);
        eng_adamw opt = {PD_LR, PD_BETA1, PD_BETA2, PD_EPS, PD_WD, st + 1, gn > PD_CLIP ? PD_CLIP / gn : 1.0};
        rc = rc || eng_model_step(m, &opt, e);
        losses[st] = (float)loss;
    }
    if (!rc && with_final)
        rc = eng_model_get_params(m, fin);
    float loss0f = (float)loss0;
    int64_t sbt[3] = {PD_STEPS, PD_B, PD_T}, btv[3] = {PD_B, PD_T, V}, one[1] = {1}, ns[1] = {PD_STEPS};
    const int tdims = per_step ? 3 : 2;
    const int64_t *tshape = per_step ? sbt : sbt + 1;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.out.safetensors", dir, name);
    eng_st_writer *wr = NULL;
    rc = rc || eng_st_writer_new(&wr, e) || eng_st_writer_add(wr, "tokens", "I32", tdims, tshape, tok, e) ||
         eng_st_writer_add(wr, "targets", "I32", tdims, tshape, tgt, e) ||
         eng_st_writer_add(wr, "loss", "F32", 1, one, &loss0f, e) ||
         eng_st_writer_add(wr, "logits", "F32", 3, btv, logits, e) ||
         eng_st_writer_add(wr, "losses", "F32", 1, ns, losses, e) || pd_add_tensors(wr, m, "grad.", g, e) ||
         (with_final && pd_add_tensors(wr, m, "final.", fin, e)) || eng_st_writer_write(wr, path, NULL, e);
    eng_st_writer_free(wr);
    free(g);
    free(fin);
    free(logits);
    return rc;
}

/* A dumper's "tlm_parity" JSON for the model m of config c, made from its
 * spec (the variant's table row); it ends with PD_RECIPE_FMT. */
typedef void (*pd_meta_fn)(eng_model *m, const eng_config *c, const void *spec, char *buf, size_t cap);

/* One variant, the same for every dumper: the model of c with weights from
 * seed, its batch (tm_batch from seed 5; per_step: one per step, seeds 5,
 * 6, ...), DIR/<name>.model.safetensors with meta's JSON, then the steps
 * and DIR/<name>.out.safetensors (with_final: the final weights too). */
static inline int pd_dump(const char *dir, const char *name, const eng_config *c, uint64_t seed, int per_step,
                          int with_final, pd_meta_fn meta, const void *spec, tlm_err *e)
{
    const int V = c->model.vocab;
    eng_model *m;
    int rc = eng_model_create(&m, c, pd_backend, PD_B, PD_T, e);
    if (rc)
        return rc;
    eng_model_init_weights(m, seed);
    const int bt = PD_B * PD_T;
    static int32_t tok[PD_STEPS * PD_B * PD_T], tgt[PD_STEPS * PD_B * PD_T];
    for (int st = 0; st < (per_step ? PD_STEPS : 1); st++)
        tm_batch(5 + (uint64_t)st, PD_B, PD_T, V, tok + st * bt, tgt + st * bt);
    char json[2048];
    meta(m, c, spec, json, sizeof json);
    rc = pd_write_model(m, dir, name, json, e) ||
         pd_train_and_write(m, V, tok, tgt, per_step, with_final, dir, name, e);
    eng_model_free(m);
    return rc;
}

/* What a dumper is: its variants (n rows of `size` bytes, each a struct
 * whose first member is its name), how a row becomes a config (sequences
 * of PD_T), its JSON, and pd_dump's seed, per_step and with_final. */
typedef struct pd_dumper {
    const char *prog;
    const void *rows;
    size_t n, size;
    int (*config)(const void *row, eng_config *c, tlm_err *e);
    pd_meta_fn meta;
    uint64_t seed;
    int per_step, with_final;
} pd_dumper;

/* main() of a dumper: pd_dump of each variant into DIR, printing each
 * name. */
static inline int pd_main(int argc, char **argv, const pd_dumper *d)
{
    eng_runtime_init(argc, argv);
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", d->prog);
        return 2;
    }
    tlm_err be = {0};
    if (eng_backend_cpu_create(&pd_backend, 0, &be)) {
        fprintf(stderr, "%s: %s\n", d->prog, be.msg);
        return 1;
    }
    for (size_t i = 0; i < d->n; i++) {
        const void *row = (const char *)d->rows + i * d->size;
        const char *name = *(const char *const *)row; /* the struct's first member */
        tlm_err e = {0};
        eng_config c;
        if (d->config(row, &c, &e) ||
            pd_dump(argv[1], name, &c, d->seed, d->per_step, d->with_final, d->meta, row, &e)) {
            fprintf(stderr, "%s: %s: %s\n", d->prog, name, e.msg);
            eng_backend_free(pd_backend);
            return 1;
        }
        printf("%s\n", name);
    }
    eng_backend_free(pd_backend);
    return 0;
}

#endif
