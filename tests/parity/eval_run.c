/* eval_run.c: the engine's side of the evaluation parity tests
 * (tests/parity/parity_eval.py).  Runs evaluation suites and prints every result,
 * layer statistic and scored request as one JSON object per line:
 *   {"ev":"eval","suite":..,"task":..,"metric":..,"value":..,"n":..,"stderr":..}
 *   {"ev":"layer","suite":..,"layer":..,"name":..,"value":..}
 *   {"ev":"item","suite":..,"task":..,"item":..,"choice":..,"loglik":..,"greedy":..,"n_tokens":..}
 *
 * Usage:
 *   eval_run --config FILE [--suites a,b] [--model-out FILE]
 *       a model built from the config, initialised from its seed, its
 *       weights written to FILE (HF names; metadata "tlm_parity" holds the
 *       shape parity_torch.py's forward() needs)
 *   eval_run --config FILE --load DIR [--suites a,b]
 *       a TLM checkpoint or a Hugging Face GPT-2 folder (the config gives
 *       the eval.* inputs and the tokenizer)
 *   eval_run [--config FILE] --checkpoint DIR [--suites a,b]
 *       the same through eng_eval_checkpoint (what tlm-worker --eval runs)
 *   --ckpt-out ROOT (with --model-out) also writes the model as a training
 *       checkpoint ROOT/step-00000000 and prints {"ev":"ckpt","path":...}
 * Exit 0, or 1 with the error on stderr. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/train/ckpt.h"
#include "engine/eval/eval.h"
#include "engine/model/model.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/format/safetensors.h"

static void put_num(json_t *o, const char *k, double v)
{
    json_object_set_new(o, k, isfinite(v) ? json_real(v) : json_null());
}

static void emit(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    printf("%s\n", s);
    free(s);
    json_decref(o);
}

static void on_result(void *ud, const eng_eval_result *r)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:I}", "ev", "eval", "suite", r->suite, "task", r->task, "metric",
                          r->metric, "n", (json_int_t)r->n);
    put_num(o, "value", r->value);
    put_num(o, "stderr", r->stderr_);
    emit(o);
}

static void on_layer(void *ud, const char *suite, int layer, const char *name, double value)
{
    json_t *o = json_pack("{s:s,s:s,s:i,s:s}", "ev", "layer", "suite", suite, "layer", layer, "name", name);
    put_num(o, "value", value);
    emit(o);
}

static void on_item(void *ud, const eng_eval_item *it)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:i,s:i,s:I}", "ev", "item", "suite", it->suite, "task", it->task, "item",
                          (json_int_t)it->item, "choice", it->choice, "greedy", it->greedy, "n_tokens",
                          (json_int_t)it->n_tokens);
    put_num(o, "loglik", it->loglik);
    emit(o);
}

static void on_log(void *ud, const char *msg) { fprintf(stderr, "eval_run: %s\n", msg); }

static int write_model(const eng_model *m, const eng_config *c, const char *path, tlm_err *e)
{
    size_t n = eng_model_slab_floats(m);
    float *p = malloc(n * sizeof *p);
    if (!p)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    eng_model_get_params(m, p);
    const int *w = eng_model_widths(m);
    char widths[2048] = "", meta[4096];
    for (int l = 0; l < c->model.layers; l++)
        snprintf(widths + strlen(widths), sizeof widths - strlen(widths), "%s%d", l ? "," : "", w[l]);
    snprintf(meta, sizeof meta,
             "{\"arch\":\"%s\",\"gate\":\"%s\",\"d\":%d,\"layers\":%d,\"heads\":%d,\"kv_heads\":%d,\"vocab\":%d,"
             "\"tied\":%d,\"norm_eps\":%.17g,\"rope_theta\":%.17g,\"widths\":[%s],\"seq_len\":%d}",
             eng_arch_name(c->arch), c->model.gate ? "headwise" : "elementwise", c->model.d_model, c->model.layers,
             c->model.heads, c->model.kv_heads, c->model.vocab, c->model.tied, c->model.norm_eps,
             c->model.rope_theta, widths, c->train.seq_len);
    eng_st_writer *wr;
    int rc = eng_st_writer_new(&wr, e);
    for (int i = 0; !rc && i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        rc = eng_st_writer_add(wr, t->name, "F32", t->ndim, t->shape, p + t->offset, e);
    }
    if (!rc)
        rc = eng_st_writer_meta(wr, "format", "pt", e);
    if (!rc)
        rc = eng_st_writer_meta(wr, "tlm_parity", meta, e);
    if (!rc)
        rc = eng_st_writer_write(wr, path, NULL, e);
    eng_st_writer_free(wr);
    free(p);
    return rc;
}

static int write_ckpt(const eng_model *m, const eng_config *c, const char *root, tlm_err *e)
{
    size_t n = eng_model_slab_floats(m);
    float *p = malloc(n * sizeof *p), *z = calloc(n, sizeof *z);
    if (!p || !z) {
        free(p), free(z);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    eng_model_get_params(m, p);
    const eng_ckpt_data d = {eng_model_tensor(m, 0), eng_model_n_tensors(m), n, p, z, z, NULL, 0, NULL};
    eng_train_state st;
    memset(&st, 0, sizeof st);
    eng_config_id(c, st.config_id);
    st.seed = c->seed;
    st.loss = st.val_loss = NAN;
    char path[ENG_CKPT_PATH_MAX];
    int rc = eng_ckpt_write(root, &d, c, &st, 1, path, e);
    if (!rc) {
        json_t *o = json_pack("{s:s,s:s}", "ev", "ckpt", "path", path);
        emit(o);
    }
    free(p), free(z);
    return rc;
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    const char *config = NULL, *suites = NULL, *model_out = NULL, *load = NULL, *checkpoint = NULL, *ckpt_out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < argc)
            config = argv[++i];
        else if (!strcmp(argv[i], "--suites") && i + 1 < argc)
            suites = argv[++i];
        else if (!strcmp(argv[i], "--model-out") && i + 1 < argc)
            model_out = argv[++i];
        else if (!strcmp(argv[i], "--load") && i + 1 < argc)
            load = argv[++i];
        else if (!strcmp(argv[i], "--checkpoint") && i + 1 < argc)
            checkpoint = argv[++i];
        else if (!strcmp(argv[i], "--ckpt-out") && i + 1 < argc)
            ckpt_out = argv[++i];
        else {
            fprintf(stderr, "usage: eval_run --config FILE [--suites a,b] [--model-out FILE | --load DIR]\n");
            return 2;
        }
    }
    tlm_err e = {0};
    eng_eval_sink sink = {NULL, on_result, on_layer, on_item, on_log, NULL};
    eng_backend *be;
    if (eng_backend_cpu_create(&be, 0, &e)) {
        fprintf(stderr, "eval_run: %s\n", e.msg);
        return 1;
    }
    if (checkpoint) {
        int64_t step, tokens;
        int rc = eng_eval_checkpoint(checkpoint, suites, config, be, &sink, &step, &tokens, &e);
        fflush(stdout);
        if (rc)
            fprintf(stderr, "eval_run: %s\n", e.msg);
        eng_backend_free(be);
        return rc ? 1 : 0;
    }
    if (!config) {
        fprintf(stderr, "eval_run: --config is required\n");
        eng_backend_free(be);
        return 2;
    }
    eng_config c;
    if (eng_config_load(config, &c, &e)) {
        fprintf(stderr, "eval_run: %s\n", e.msg);
        eng_backend_free(be);
        return 1;
    }
    if (suites) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", suites);
        c.eval.n_suites = 0;
        for (char *t = strtok(buf, ","); t && c.eval.n_suites < ENG_MAX_SUITES; t = strtok(NULL, ","))
            snprintf(c.eval.suites[c.eval.n_suites++], ENG_NAME_MAX, "%s", t);
    }
    eng_evaluator *ev = NULL;
    eng_model *m = NULL;
    int rc = eng_evaluator_create(&ev, &c, be, &e);
    if (!rc && load) {
        rc = eng_evaluator_load(ev, load, &e);
        if (!rc)
            rc = eng_evaluator_run(ev, NULL, &sink, &e);
    } else if (!rc) {
        rc = eng_model_create(&m, &c, be, 1, c.train.seq_len, &e);
        if (!rc) {
            eng_model_init_weights(m, (uint64_t)c.seed);
            if (model_out)
                rc = write_model(m, &c, model_out, &e);
            if (!rc && ckpt_out)
                rc = write_ckpt(m, &c, ckpt_out, &e);
        }
        if (!rc)
            rc = eng_evaluator_run(ev, m, &sink, &e);
    }
    eng_model_free(m);
    eng_evaluator_free(ev);
    eng_backend_free(be);
    fflush(stdout);
    if (rc) {
        fprintf(stderr, "eval_run: %s\n", e.msg);
        return 1;
    }
    return 0;
}
