/* eval.h: the evaluation suites (docs/evaluation.md): what the paper
 * measures, measured the way lm-evaluation-harness and RULER do.
 *
 *   wikitext     rolling log-likelihood of each WikiText document: token-,
 *                word- and byte-level perplexity, bits per byte
 *   lambada      LAMBADA (OpenAI) last-word accuracy and perplexity
 *   commonsense  PIQA, HellaSwag, WinoGrande, ARC-e/-c, SIQA, BoolQ,
 *                OpenBookQA by log-likelihood: acc, acc_norm
 *   niah         S-NIAH-1/2/3 generated from a seed, exact match of greedy
 *                generation, at chosen context lengths
 *   alignment    rho_MLP(l), rho_block(l) per layer (the paper's analysis),
 *                on a TLM model or a Hugging Face GPT-2
 * (`val`, the validation perplexity, is the trainer's: engine/train/train.h.)
 *
 * Every suite scores a language model through eng_eval_lm (logits of a
 * batch of token rows), so the same code scores a TLM model, a GPT-2 and,
 * in tests, a scripted mock.  Results go to an eng_eval_sink: one call per
 * (suite, task, metric) with the item count n and the standard error, one
 * per layer statistic, optionally one per scored request (tests compare
 * those against PyTorch).
 *
 * Must not: print, exit, or read anything besides the files the config
 * names; a suite that cannot read an item stops with TLM_EDATA naming the
 * file and line (it never scores fewer items than it read). */
#ifndef TLM_ENGINE_EVAL_H
#define TLM_ENGINE_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/train/ckpt.h"
#include "engine/config/config.h"
#include "common/err.h"
#include "engine/model/model.h"
#include "engine/model/probe.h"
#include "engine/tok/tokenizer.h"
#include "engine/train/train.h"

/* ------------------------------------------------------------ results */
typedef struct eng_eval_result {
    const char *suite;  /* "commonsense" */
    const char *task;   /* "piqa", "s_niah_1@4096", "wikitext" */
    const char *metric; /* "acc", "acc_norm", "word_perplexity", ... */
    double value;
    int64_t n;          /* items the value averages over (docs/evaluation.md says what, per metric) */
    double stderr_;     /* sample standard error of the mean; NaN when not defined */
} eng_eval_result;

/* One scored request (a continuation given a context), for tests and
 * debugging: the numbers lm-evaluation-harness computes per request. */
typedef struct eng_eval_item {
    const char *suite, *task;
    int64_t item;       /* 0-based item (document, example) in its file */
    int choice;         /* request within the item (the choice; 0 when single) */
    double loglik;      /* sum of log p(continuation token) in nats */
    int greedy;         /* every continuation token is the argmax */
    int64_t n_tokens;   /* continuation tokens scored */
} eng_eval_item;

typedef struct eng_eval_sink {
    void *ud;
    void (*result)(void *ud, const eng_eval_result *r);
    /* per-layer statistic: name "rho_mlp", "rho_block" */
    void (*layer)(void *ud, const char *suite, int layer, const char *name, double value);
    void (*item)(void *ud, const eng_eval_item *it);  /* may be NULL */
    void (*log)(void *ud, const char *msg);            /* may be NULL */
    /* Called between batches (heartbeats); non-zero stops the suite with
     * TLM_EINTERRUPTED.  May be NULL. */
    int (*tick)(void *ud);
} eng_eval_sink;

/* ------------------------------------------------------------ models */
/* (eng_probe_fn, the per-layer activations a probe hands over: engine/model/probe.h) */

typedef struct eng_eval_lm {
    void *impl;
    int max_B, max_T;   /* largest batch the model takes */
    int max_length;     /* lm-evaluation-harness's max_length: the context the
                           model was trained for (<= max_T); longer inputs are
                           cut from the left, documents scored in windows */
    int vocab;          /* logits per position */
    /* Logits (B, T, vocab) of tokens (B, T); valid until the next call.
     * NULL: a check (eng_evaluator_check): the suites read and validate
     * their inputs, then stop before scoring. */
    int (*logits)(void *impl, const int32_t *tokens, int B, int T, const float **out, tlm_err *e);
    /* One sequence (1, T) with per-layer activations; NULL when the model
     * has no probe. */
    int (*probe)(void *impl, const int32_t *tokens, int T, eng_probe_fn fn, void *ud, tlm_err *e);
} eng_eval_lm;

/* Score through a TLM model (borrowed; its activations are overwritten);
 * max_length as above (0: the model's planned sequence length). */
void eng_eval_lm_model(eng_eval_lm *lm, eng_model *m, int max_length);

/* ------------------------------------------------------------ suites */
/* Each reads its inputs from cfg (eval.* keys, docs/config.md).  tok
 * encodes the texts (alignment with eval.alignment.ids needs none). */
int eng_eval_wikitext(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s,
                      tlm_err *e);
int eng_eval_lambada(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s,
                     tlm_err *e);
int eng_eval_commonsense(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s,
                         tlm_err *e);
int eng_eval_niah(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s, tlm_err *e);
int eng_eval_alignment(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s,
                       tlm_err *e);

/* One suite by name ("wikitext", ...; "val" is TLM_ECONFIG: the trainer's). */
int eng_eval_suite(const char *suite, const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg,
                   const eng_eval_sink *s, tlm_err *e);
/* Is `suite` one of the suites above (not val)?  The names, and the
 * commonsense and NIAH task names, are engine/config/suites.h's. */
int eng_eval_is_suite(const char *suite);
/* Those suites' names, "wikitext, lambada, ...", in out; returns out. */
const char *eng_eval_suite_list(char *out, size_t cap);

/* ------------------------------------------------------------ evaluator
 * What tlm-worker uses: every suite of cfg->eval.suites except val, run on
 * an evaluation copy of a model (sized for the suites' longest input,
 * created on first use on the evaluator's backend, its parameters copied
 * from `src` each time). */
typedef struct eng_evaluator eng_evaluator;

/* Opens the tokenizer (cfg->tokenizer, found beside cfg->data.train or in
 * $TLM_TOKENIZERS) and checks that every input file of the listed suites
 * exists, so a training run fails before its first step, not at its first
 * evaluation.  Its models go on `backend` (borrowed: free the evaluator
 * first); a GPT-2 (eng_evaluator_load) needs one on host memory. */
int eng_evaluator_create(eng_evaluator **out, const eng_config *cfg, const struct eng_backend *backend, tlm_err *e);
void eng_evaluator_free(eng_evaluator *ev);
/* Number of suites it will run (0: nothing to do besides val). */
int eng_evaluator_n_suites(const eng_evaluator *ev);
/* Read every input of its suites the way the suites will, in full: parse
 * every item, encode it, check it fits train.seq_len and model.vocab, build
 * NIAH's first item at each length; score nothing.  The trainer calls it in
 * set-up, so a corrupt evaluation file fails the job (TLM_EDATA naming file
 * and line) before training time is spent, not at the first evaluation. */
int eng_evaluator_check(const eng_evaluator *ev, tlm_err *e);
int eng_evaluator_run(eng_evaluator *ev, const eng_model *src, const eng_eval_sink *s, tlm_err *e);
/* The evaluator as the trainer's suites (engine/train/train.h): each run
 * is eng_evaluator_run on the trainer's model, results and per-layer
 * statistics reported through the trainer's hooks at its step; a stop
 * request waits for the evaluation to end. */
void eng_evaluator_suites(eng_evaluator *ev, eng_train_suites *out);

/* ------------------------------------------------------------ checkpoints
 * `tlm-worker --eval`: dir is a checkpoint folder (.../ckpt/step-N, with
 * model.safetensors; verified against its MANIFEST), a run folder (its
 * newest valid checkpoint) or a Hugging Face GPT-2 folder (config.json +
 * model.safetensors).
 *
 * The config stored in a TLM checkpoint (TLM_EDATA for a GPT-2 or anything
 * else without one); path receives the checkpoint folder used. */
int eng_eval_checkpoint_config(const char *dir, eng_config *cfg, char path[ENG_CKPT_PATH_MAX], tlm_err *e);
/* Load the checkpoint's parameters into the evaluator's own models (or
 * its GPT-2); eng_evaluator_run(ev, NULL, ...) then evaluates them. */
int eng_evaluator_load(eng_evaluator *ev, const char *dir, tlm_err *e);

/* All of `tlm-worker --eval` but the events: evaluate the checkpoint at dir
 * on `suites` (comma-separated; NULL: the stored config's eval.suites).
 * cfg_path (may be NULL for a TLM checkpoint, required for a GPT-2) is a
 * job config whose eval.* settings (and, for a GPT-2, tokenizer) are used.
 * "val" needs the training data loader and is refused here.  *step and
 * *tokens receive the checkpoint's (-1 for a GPT-2). */
int eng_eval_checkpoint(const char *dir, const char *suites, const char *cfg_path, const struct eng_backend *backend,
                        const eng_eval_sink *s, int64_t *step, int64_t *tokens, tlm_err *e);

#endif
