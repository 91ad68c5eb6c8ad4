/* eval.c: the suites by name, and the evaluator tlm-worker drives
 * (eval.h): it opens the tokenizer, checks the suites' input files up
 * front, keeps an evaluation copy of the model (a second, single-sequence
 * one when a NIAH length exceeds train.seq_len), and loads TLM or GPT-2
 * checkpoints for `tlm-worker --eval`.
 * Must not: print; everything goes through the sink. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/train/ckpt.h"
#include "engine/eval/internal.h"
#include "common/fileio.h"
#include "engine/config/suites.h"
#include "engine/eval/gpt2.h"
#include "engine/model/ops.h"
#include "engine/model/probe.h"
#include "engine/format/safetensors.h"

/* The suite of a name (engine/config/suites.h), -1 if none. */
static int suite_id(const char *name) { return eng_name_find(eng_suite_names, ENG_SUITE_COUNT, name); }

int eng_eval_is_suite(const char *suite)
{
    int id = suite_id(suite);
    return id >= 0 && id != ENG_SUITE_VAL;
}

const char *eng_eval_suite_list(char *out, size_t cap)
{
    /* val is first in the registry: the suites here are the others */
    return eng_names_join(eng_suite_names + ENG_SUITE_VAL + 1, ENG_SUITE_COUNT - ENG_SUITE_VAL - 1, out, cap);
}

int eng_eval_suite(const char *suite, const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg,
                   const eng_eval_sink *s, tlm_err *e)
{
    int rc;
    switch (suite_id(suite)) {
    case ENG_SUITE_WIKITEXT: rc = eng_eval_wikitext(lm, tok, cfg, s, e); break;
    case ENG_SUITE_LAMBADA: rc = eng_eval_lambada(lm, tok, cfg, s, e); break;
    case ENG_SUITE_COMMONSENSE: rc = eng_eval_commonsense(lm, tok, cfg, s, e); break;
    case ENG_SUITE_NIAH: rc = eng_eval_niah(lm, tok, cfg, s, e); break;
    case ENG_SUITE_ALIGNMENT: rc = eng_eval_alignment(lm, tok, cfg, s, e); break;
    case ENG_SUITE_VAL: return tlm_errf(e, TLM_ECONFIG, "suite val is run by the trainer (engine/train/train.h)");
    default: return tlm_errf(e, TLM_ECONFIG, "unknown evaluation suite '%s'", suite);
    }
    if (rc && rc != TLM_EINTERRUPTED && strncmp(e->msg, suite, strlen(suite)))
        tlm_err_prefix(e, "%s", suite);
    return rc;
}

/* ------------------------------------------------------------ evaluator */
struct eng_evaluator {
    eng_config cfg;
    const eng_backend *backend;
    char suites[ENG_MAX_SUITES][ENG_NAME_MAX];
    int n;
    eng_tok *tok;          /* NULL when no suite needs one */
    int B;                 /* rows per scoring pass */
    int long_T;            /* longest NIAH length (0: none beyond seq_len) */
    eng_model *model;      /* (B, seq_len) */
    eng_model *long_model; /* (1, long_T) */
    eng_gpt2 *gpt2;        /* instead of the models, after eng_evaluator_load of a GPT-2 */
    float *host;           /* a slab's floats, for parameter copies */
};

static int need_file(const char *key, const char *path, int dir, tlm_err *e)
{
    if (!path[0])
        return tlm_errf(e, TLM_ECONFIG, "%s: no file given (the suite needs it; docs/evaluation.md)", key);
    struct stat st;
    if (!dir)
        return tlm_stat_input(path, TLM_EDATA, &st, e) ? tlm_err_prefix(e, "%s", key) : 0;
    if (stat(path, &st))
        return tlm_errf(e, TLM_EDATA, "%s: %s: %s", key, path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tlm_errf(e, TLM_EDATA, "%s: %s is not a folder", key, path);
    return 0;
}

static int check_inputs(const eng_config *c, const char *suite, tlm_err *e)
{
    const eng_eval_cfg *v = &c->eval;
    switch (suite_id(suite)) {
    case ENG_SUITE_WIKITEXT: return need_file("eval.wikitext", v->wikitext, 0, e);
    case ENG_SUITE_LAMBADA: return need_file("eval.lambada", v->lambada, 0, e);
    case ENG_SUITE_COMMONSENSE: {
        int rc = need_file("eval.commonsense", v->commonsense, 1, e);
        for (int i = 0; i < v->n_commonsense_tasks && !rc; i++) {
            char p[ENG_PATH_MAX + 64];
            snprintf(p, sizeof p, "%s/%s.jsonl", v->commonsense, v->commonsense_tasks[i]);
            rc = need_file("eval.commonsense", p, 0, e);
        }
        return rc;
    }
    case ENG_SUITE_NIAH:
        for (int i = 0; i < v->n_niah_tasks; i++)
            if (strcmp(v->niah_tasks[i], eng_niah_names[ENG_NIAH_S_NIAH_1])) { /* the others need a haystack */
                int rc = need_file("eval.niah.haystack", v->niah_haystack, 0, e);
                if (rc)
                    return tlm_err_prefix(e, "%s", v->niah_tasks[i]);
                break;
            }
        return 0;
    case ENG_SUITE_ALIGNMENT:
        if (v->alignment_ids[0])
            return need_file("eval.alignment.ids", v->alignment_ids, 0, e);
        if (v->alignment_text[0])
            return need_file("eval.alignment.text", v->alignment_text, 0, e);
        return tlm_errf(e, TLM_ECONFIG,
                        "alignment: set eval.alignment.text (a text file) or eval.alignment.ids (token ids)");
    }
    return 0;
}

int eng_evaluator_create(eng_evaluator **out, const eng_config *cfg, const eng_backend *backend, tlm_err *e)
{
    eng_evaluator *ev = calloc(1, sizeof *ev);
    if (!ev)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    ev->cfg = *cfg;
    ev->backend = backend;
    int need_tok = 0, rc = 0;
    for (int i = 0; i < cfg->eval.n_suites && !rc; i++) {
        const char *s = cfg->eval.suites[i];
        if (suite_id(s) == ENG_SUITE_VAL)
            continue;
        if (!eng_eval_is_suite(s)) {
            rc = tlm_errf(e, TLM_ECONFIG, "eval.suites: unknown suite '%s'", s);
            break;
        }
        if ((rc = check_inputs(cfg, s, e)))
            break;
        snprintf(ev->suites[ev->n++], ENG_NAME_MAX, "%s", s);
        if (suite_id(s) != ENG_SUITE_ALIGNMENT || !cfg->eval.alignment_ids[0])
            need_tok = 1;
        if (suite_id(s) == ENG_SUITE_NIAH)
            for (int l = 0; l < cfg->eval.n_niah_lengths; l++)
                if ((int)cfg->eval.niah_lengths[l] > cfg->train.seq_len && (int)cfg->eval.niah_lengths[l] > ev->long_T)
                    ev->long_T = (int)cfg->eval.niah_lengths[l];
    }
    if (!rc && need_tok) {
        char search[2 * ENG_PATH_MAX + 2];
        snprintf(search, sizeof search, "%s:%s", cfg->data.train, cfg->data.val);
        if ((rc = eng_tok_open(&ev->tok, cfg->tokenizer, search, e)))
            tlm_err_prefix(e, "evaluation tokenizer");
    }
    if (!rc) {
        /* rows per pass: the training micro batch, fewer when the logits
         * (B, seq_len, vocab) would pass 256 MiB */
        int B = cfg->eval.batch > 0 ? cfg->eval.batch : cfg->train.micro_batch > 0 ? cfg->train.micro_batch : 1;
        if (cfg->eval.batch <= 0) {
            double per = (double)cfg->train.seq_len * (double)cfg->model.vocab * 4.0;
            while (B > 1 && (double)B * per > 256.0 * 1024 * 1024)
                B /= 2;
            if (B > 16)
                B = 16;
        }
        ev->B = B;
    }
    if (rc) {
        eng_evaluator_free(ev);
        return rc;
    }
    *out = ev;
    return 0;
}

void eng_evaluator_free(eng_evaluator *ev)
{
    if (!ev)
        return;
    eng_tok_free(ev->tok);
    eng_model_free(ev->model);
    eng_model_free(ev->long_model);
    eng_gpt2_free(ev->gpt2);
    free(ev->host);
    free(ev);
}

int eng_evaluator_n_suites(const eng_evaluator *ev) { return ev->n; }

int eng_evaluator_check(const eng_evaluator *ev, tlm_err *e)
{
    for (int i = 0; i < ev->n; i++) {
        /* no logits: the suites read and validate, score nothing (ev_checking) */
        const int niah = suite_id(ev->suites[i]) == ENG_SUITE_NIAH;
        eng_eval_lm lm = {NULL, ev->B, niah && ev->long_T ? ev->long_T : ev->cfg.train.seq_len,
                          ev->cfg.train.seq_len, ev->cfg.model.vocab, NULL, NULL};
        int rc = eng_eval_suite(ev->suites[i], &lm, ev->tok, &ev->cfg.eval, NULL, e);
        if (rc)
            return rc;
    }
    return 0;
}

static int make_models(eng_evaluator *ev, tlm_err *e)
{
    int rc = 0;
    if (!ev->model)
        rc = eng_model_create(&ev->model, &ev->cfg, ev->backend, ev->B, ev->cfg.train.seq_len, e);
    if (!rc && ev->long_T && !ev->long_model)
        rc = eng_model_create(&ev->long_model, &ev->cfg, ev->backend, 1, ev->long_T, e);
    if (!rc && !ev->host) {
        ev->host = malloc(eng_model_slab_floats(ev->model) * sizeof *ev->host);
        if (!ev->host)
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory (evaluation copy of the parameters)");
    }
    if (rc)
        tlm_err_prefix(e, "evaluation model");
    return rc;
}

/* ev->host -> the evaluation models */
static int push_params(eng_evaluator *ev, tlm_err *e)
{
    int rc = eng_model_set_params(ev->model, ev->host);
    if (!rc && ev->long_model)
        rc = eng_model_set_params(ev->long_model, ev->host);
    return rc ? tlm_errf(e, TLM_EINTERNAL, "evaluation model: cannot set parameters") : 0;
}

static int run_suites(eng_evaluator *ev, eng_model *m, eng_model *long_m, const eng_eval_sink *s, tlm_err *e)
{
    for (int i = 0; i < ev->n; i++) {
        eng_eval_lm lm;
        if (ev->gpt2)
            eng_gpt2_lm(&lm, ev->gpt2);
        else
            eng_eval_lm_model(&lm, suite_id(ev->suites[i]) == ENG_SUITE_NIAH && long_m ? long_m : m,
                              ev->cfg.train.seq_len);
        int rc = eng_eval_suite(ev->suites[i], &lm, ev->tok, &ev->cfg.eval, s, e);
        if (rc)
            return rc;
    }
    return 0;
}

int eng_evaluator_run(eng_evaluator *ev, const eng_model *src, const eng_eval_sink *s, tlm_err *e)
{
    if (!ev->n)
        return 0;
    int rc;
    if (src) {
        if ((rc = make_models(ev, e)))
            return rc;
        if (eng_model_slab_floats(src) != eng_model_slab_floats(ev->model))
            return tlm_errf(e, TLM_EINTERNAL, "evaluation model: %zu parameters, the model has %zu",
                            eng_model_slab_floats(ev->model), eng_model_slab_floats(src));
        if (eng_model_get_params(src, ev->host) || (rc = push_params(ev, e)))
            return tlm_errf(e, TLM_EINTERNAL, "evaluation model: cannot copy the parameters");
    } else if (!ev->gpt2 && !ev->model) {
        return tlm_errf(e, TLM_EINTERNAL, "evaluator: no model (give one, or load a checkpoint)");
    }
    return run_suites(ev, ev->model, ev->long_model, s, e);
}

/* ------------------------------------------------------------ as the trainer's suites */
/* The sink's view of one run: the trainer's hooks at its step. */
typedef struct train_sink {
    const eng_train_hooks *h;
    int64_t step, tokens;
} train_sink;

static void ts_result(void *ud, const eng_eval_result *r)
{
    const train_sink *t = ud;
    if (t->h->eval) {
        eng_eval_info ev = {t->step, t->tokens, r->suite, r->task, r->metric, r->value, r->n, r->stderr_};
        t->h->eval(t->h->ud, &ev);
    }
}

static void ts_layer(void *ud, const char *suite, int layer, const char *name, double value)
{
    const train_sink *t = ud;
    (void)suite;
    if (t->h->layer)
        t->h->layer(t->h->ud, t->step, t->tokens, layer, name, value);
}

static void ts_log(void *ud, const char *msg)
{
    const train_sink *t = ud;
    if (!t->h->log)
        return;
    char buf[TLM_MSG_MAX + 256]; /* a message and the words around it, as the trainer's own */
    tlm_msg_printf(buf, sizeof buf, "%s", msg);
    t->h->log(t->h->ud, buf);
}

/* Between the evaluator's batches: say where we are (heartbeats).  A stop
 * request waits for the evaluation to end, so every evaluation a run
 * reports is whole. */
static int ts_tick(void *ud)
{
    const train_sink *t = ud;
    if (t->h->phase)
        t->h->phase(t->h->ud, "eval", t->step, t->tokens);
    return 0;
}

static int run_for_trainer(void *ud, const eng_model *m, const eng_train_hooks *h, int64_t step, int64_t tokens,
                           tlm_err *e)
{
    train_sink t = {h, step, tokens};
    eng_eval_sink sink = {&t, ts_result, ts_layer, NULL, ts_log, ts_tick};
    return eng_evaluator_run(ud, m, &sink, e);
}

void eng_evaluator_suites(eng_evaluator *ev, eng_train_suites *out)
{
    out->ud = ev;
    out->run = run_for_trainer;
}

/* ------------------------------------------------------------ checkpoints */
/* The checkpoint folder that `dir` names: itself (it holds
 * model.safetensors), the newest valid one under dir/ckpt, or under dir. */
static int find_ckpt(const char *dir, char path[ENG_CKPT_PATH_MAX], tlm_err *e)
{
    char p[ENG_CKPT_PATH_MAX + 32];
    struct stat st;
    if (stat(dir, &st) != 0)
        return tlm_errf(e, errno == ENOENT || errno == ENOTDIR ? TLM_EDATA : TLM_EIO, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tlm_errf(e, TLM_EDATA, "%s: is not a directory (expected a checkpoint folder: a run folder, its ckpt/ "
                        "or a ckpt/step-N)", dir);
    snprintf(p, sizeof p, "%s/" ENG_CKPT_MODEL, dir);
    if (!stat(p, &st)) {
        snprintf(path, ENG_CKPT_PATH_MAX, "%s", dir);
        snprintf(p, sizeof p, "%s/" ENG_CKPT_MANIFEST, dir);
        if (!stat(p, &st))
            return eng_ckpt_verify(dir, e);
        /* a folder of TLM's checkpoint files without the MANIFEST that is
         * written last is an interrupted save; a bare model.safetensors
         * (exported, or made by hand) has nothing to check against */
        snprintf(p, sizeof p, "%s/" ENG_CKPT_STATE, dir);
        if (!stat(p, &st))
            return tlm_errf(e, TLM_EDATA, "%s: no " ENG_CKPT_MANIFEST " beside its " ENG_CKPT_STATE ": an incomplete "
                            "checkpoint (the manifest is written last, after every file is complete)", dir);
        return 0;
    }
    snprintf(p, sizeof p, "%s/" TLM_RUN_CKPT, dir);
    int rc = eng_ckpt_find(stat(p, &st) ? dir : p, path, NULL, NULL, e);
    if (!rc && !path[0])
        rc = tlm_errf(e, TLM_EDATA, "%s: no checkpoint (no model.safetensors, no valid ckpt/step-*)", dir);
    return rc;
}

int eng_eval_checkpoint_config(const char *dir, eng_config *cfg, char path[ENG_CKPT_PATH_MAX], tlm_err *e)
{
    int rc = find_ckpt(dir, path, e);
    if (rc)
        return rc;
    char p[ENG_CKPT_PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/model.safetensors", path);
    eng_st_file f;
    if ((rc = eng_st_open(&f, p, e)))
        return rc;
    const char *json = eng_st_meta(&f, "tlm_config");
    if (!json)
        rc = tlm_errf(e, TLM_EDATA, "%s: no tlm_config in the metadata (not a TLM checkpoint)", p);
    else if ((rc = eng_config_from_json(json, cfg, e)))
        tlm_err_prefix(e, "%s: stored config", p);
    eng_st_close(&f);
    return rc;
}

/* Parameters of model.safetensors into ev->host, by the model's names. */
static int read_params(eng_evaluator *ev, const char *ckpt, tlm_err *e)
{
    char p[ENG_CKPT_PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/model.safetensors", ckpt);
    eng_st_file f;
    int rc = eng_st_open(&f, p, e);
    if (rc)
        return rc;
    for (int i = 0; i < eng_model_n_tensors(ev->model) && !rc; i++) {
        const eng_tensor_info *ti = eng_model_tensor(ev->model, i);
        const eng_st_tensor *t = eng_st_find(&f, ti->name);
        if (!t)
            rc = tlm_errf(e, TLM_EDATA, "%s: tensor %s is missing", p, ti->name);
        else if (strcmp(t->dtype, "F32") || eng_st_numel(t) != ti->numel)
            rc = tlm_errf(e, TLM_EDATA, "%s: tensor %s is not F32 with %zu elements", p, ti->name, ti->numel);
        else
            memcpy(ev->host + ti->offset, eng_st_data(&f, t), ti->numel * sizeof(float));
    }
    eng_st_close(&f);
    return rc;
}

int eng_evaluator_load(eng_evaluator *ev, const char *dir, tlm_err *e)
{
    if (eng_gpt2_detect(dir))
        return eng_gpt2_load(&ev->gpt2, dir, ev->backend, ev->B, e);
    char path[ENG_CKPT_PATH_MAX];
    int rc = find_ckpt(dir, path, e);
    if (!rc)
        rc = make_models(ev, e);
    if (!rc)
        rc = read_params(ev, path, e);
    if (!rc)
        rc = push_params(ev, e);
    return rc;
}

int eng_eval_checkpoint(const char *dir, const char *suites, const char *cfg_path, const eng_backend *backend,
                        const eng_eval_sink *s, int64_t *step, int64_t *tokens, tlm_err *e)
{
    eng_config cfg, over;
    char path[ENG_CKPT_PATH_MAX] = "";
    int gpt2 = eng_gpt2_detect(dir), rc = 0;
    *step = *tokens = -1;
    if (cfg_path && (rc = eng_config_load(cfg_path, &over, e)))
        return rc;
    if (gpt2) {
        if (!cfg_path)
            return tlm_errf(e, TLM_ECONFIG, "%s is a GPT-2 checkpoint: give a config (--config) with its eval.* settings",
                            dir);
        cfg = over;
    } else {
        if ((rc = eng_eval_checkpoint_config(dir, &cfg, path, e)))
            return rc;
        if (cfg_path) {
            eng_eval_cfg keep = over.eval; /* the measurement settings, not the model */
            cfg.eval = keep;
        }
        eng_train_state st;
        tlm_err se;
        if (!eng_ckpt_read_state(path, &st, &se)) {
            *step = st.step;
            *tokens = st.tokens;
        }
    }
    if (suites) {
        char buf[ENG_MAX_SUITES * ENG_NAME_MAX];
        snprintf(buf, sizeof buf, "%s", suites);
        cfg.eval.n_suites = 0;
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (cfg.eval.n_suites == ENG_MAX_SUITES)
                return tlm_errf(e, TLM_ECONFIG, "--suites: at most %d suites", ENG_MAX_SUITES);
            snprintf(cfg.eval.suites[cfg.eval.n_suites++], ENG_NAME_MAX, "%s", t);
        }
    }
    for (int i = 0; i < cfg.eval.n_suites; i++) {
        char list[128];
        if (suite_id(cfg.eval.suites[i]) == ENG_SUITE_VAL)
            return tlm_errf(e, TLM_ECONFIG, "suite val needs the training data loader: run it while training");
        if (!eng_eval_is_suite(cfg.eval.suites[i]))
            return tlm_errf(e, TLM_ECONFIG, "unknown suite '%s' (expected %s)", cfg.eval.suites[i],
                            eng_eval_suite_list(list, sizeof list));
    }
    eng_evaluator *ev;
    if ((rc = eng_evaluator_create(&ev, &cfg, backend, e)))
        return rc;
    ev_log(s, "evaluating %s", gpt2 ? dir : path);
    rc = eng_evaluator_load(ev, gpt2 ? dir : path, e);
    if (!rc)
        rc = eng_evaluator_run(ev, NULL, s, e);
    eng_evaluator_free(ev);
    return rc;
}
