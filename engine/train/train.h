/* train.h: the training loop of one job: data, model, AdamW with warm-up +
 * cosine LR (lr.h), gradient accumulation, global-norm clipping,
 * validation perplexity, periodic checkpoints (ckpt.h), resume, and a stop
 * on request or on divergence.
 *
 * The engine emits nothing itself: whatever happens is reported through
 * eng_train_hooks (the worker turns them into events and log lines).
 *
 * A step (1-based s) draws the next batch_tokens / seq_len sequences from
 * the loader, in micro_batch-sized passes whose gradients accumulate with
 * weight 1 / passes; the step's loss is the mean of the passes' losses (all
 * passes count the same number of tokens).  The gradient's global L2 norm
 * is measured before clipping; clipping scales the update by
 * min(1, grad_clip / norm).  A loss or norm that is not finite ends the run
 * with TLM_EDIVERGED before any update is applied.
 *
 * Evaluations run after the step that ends each eval.every_tokens period
 * and after the last step, suite by suite as eval.suites lists them:
 * "val" is the trainer's own (token-weighted mean NLL over the loader's
 * fixed validation set, reported as metrics "loss" (nats/token) and "ppl"
 * (its exp)); every other suite runs through the suites the caller hands
 * over (eng_train_suites: tlm-worker's is engine/eval/eval.h's evaluator,
 * created and checked before the trainer, so missing inputs fail before the
 * first step; the trainer does not know the suites, which keeps engine/train
 * below engine/eval).
 * Checkpoints follow train.ckpt_every_tokens the same way and are always
 * written after the last step and on a stop request.
 *
 * Data parallel (docs/parallel.md): given a communicator of N ranks
 * (engine/comm/comm.h), every rank runs this same loop on its own model.
 * Rank r trains the r-th contiguous share of each step's sequences
 * (engine/config/ranks.h), in its own micro-batches, with backward weight
 * 1 / (passes x N); the gradients are then summed over the ranks (MPI's
 * blocking all-reduce after the backward on the CPU; NCCL's, started
 * layer by layer from the model's gradient hook, on a GPU), so clipping,
 * the norm and the update see the one-process batch's mean gradient and
 * every rank ends the step with the same weights (checked at every
 * checkpoint).  The step's loss is the sum of the ranks' losses over all
 * passes.  Rank 0 alone writes checkpoints and runs the suites besides
 * val (validation is shared out); a checkpoint's data cursor is global
 * (step x sequences per step), so a job resumes on any number of ranks.
 * The stop request is any rank's, so every rank stops after the same step.
 * A failure on one rank reaches every rank at the next point where they
 * agree (each step, checkpoint and evaluation), as that rank's error.
 *
 * Memory: everything the step needs is allocated by eng_trainer_create; the
 * step loop allocates nothing (checkpoint writing allocates host copies of
 * the tensors, between steps). */
#ifndef TLM_ENGINE_TRAIN_H
#define TLM_ENGINE_TRAIN_H

#include <stdint.h>

#include "engine/train/ckpt.h"
#include "engine/config/config.h"
#include "common/err.h"
#include "engine/train/loader.h"
#include "engine/model/model.h"

typedef struct eng_step_info {
    int64_t step;        /* 1-based, after the update */
    int64_t total_steps;
    int64_t tokens;      /* trained so far */
    double loss;         /* mean over the batch */
    double lr;
    double grad_norm;    /* before clipping */
    double tokens_per_s; /* this step */
    double step_ms;
} eng_step_info;

typedef struct eng_eval_info {
    int64_t step, tokens;
    const char *suite, *task, *metric; /* "val", "val", "loss" | "ppl" */
    double value;
    int64_t n;           /* tokens scored */
    double stderr_;      /* NaN when not defined */
} eng_eval_info;

typedef struct eng_train_hooks {
    void *ud;
    void (*log)(void *ud, const char *msg);                       /* human-readable notes */
    void (*step)(void *ud, const eng_step_info *s);               /* steps 1, every log_every, the last */
    void (*eval)(void *ud, const eng_eval_info *ev);
    void (*ckpt)(void *ud, const char *path, int64_t step, int64_t tokens);
    /* The phase the trainer is in, a heartbeat phase of common/protocol.h
     * ("setup", "train", "eval", "ckpt"); cheap,
     * often: at each stage of set-up (data, evaluator, model, checkpoint
     * search and load), each micro-batch, each evaluation batch and each
     * checkpoint.  Every call is evidence of progress (tlmd tells a stuck
     * worker from a slow one by it: docs/protocol.md, heartbeat). */
    void (*phase)(void *ud, const char *phase, int64_t step, int64_t tokens);
    /* Polled between steps: non-zero asks the loop to checkpoint and stop. */
    int (*stop_requested)(void *ud);
    /* A per-layer statistic: of an evaluation suite (alignment: rho_mlp, rho_block), or of
     * a step's gradient (train.grad_norms_every: grad_norm_*, before that step's step hook). */
    void (*layer)(void *ud, int64_t step, int64_t tokens, int layer, const char *name, double value);
} eng_train_hooks;

/* The evaluation suites other than "val": run after the trainer's own
 * validation at every evaluation, on its model, their results and progress
 * going to its hooks `h` (eval, layer, log, phase "eval") at `step` and
 * `tokens`.  engine/eval/eval.h's eng_evaluator_suites makes one from an
 * evaluator. */
typedef struct eng_train_suites {
    void *ud;
    int (*run)(void *ud, const eng_model *m, const eng_train_hooks *h, int64_t step, int64_t tokens, tlm_err *e);
} eng_train_suites;

typedef struct eng_trainer eng_trainer;

/* Open the data (TLM_EDATA on missing/mismatched shards), build the model
 * for cfg on `backend` and initialise it from cfg->seed.  comm: the ranks
 * of a data-parallel job, copied (what it points to is borrowed); NULL is
 * one process.  TLM_ECONFIG when the batch does not divide among the
 * ranks.  suites (NULL when
 * eval.suites lists only val; TLM_ECONFIG otherwise) is copied, and what it
 * points to, like the backend, is borrowed: free the trainer first.
 * ckpt_root (may be NULL: never checkpoint) is where checkpoints go.  Hooks
 * are copied; any may be NULL. */
struct eng_comm;
int eng_trainer_create(eng_trainer **out, const eng_config *cfg, const struct eng_backend *backend,
                       const struct eng_comm *comm, const eng_train_suites *suites, const char *ckpt_root,
                       const eng_train_hooks *hooks, tlm_err *e);
void eng_trainer_free(eng_trainer *t);

/* Continue from the newest valid checkpoint under ckpt_root: *from_step is
 * its step, or -1 when there is none (the run starts fresh).  A checkpoint
 * of another config is TLM_ECONFIG, of other data TLM_EDATA. */
int eng_trainer_resume(eng_trainer *t, int64_t *from_step, tlm_err *e);

/* The weights, step and tokens of the checkpoint folder dir, for an
 * evaluation (tlm-worker --eval): no optimizer state, no data position;
 * its config may differ from the trainer's where the shapes agree. */
int eng_trainer_load(eng_trainer *t, const char *dir, tlm_err *e);

/* Train to the end: 0 when done; TLM_EINTERRUPTED after a stop request
 * (checkpoint written); TLM_EDIVERGED; or the failure of a step/checkpoint. */
int eng_trainer_run(eng_trainer *t, tlm_err *e);

/* Every configured suite now, reported through the hooks; *loss receives
 * the validation loss (NaN when "val" is not among eval.suites). */
int eng_trainer_evaluate(eng_trainer *t, double *loss, tlm_err *e);

const eng_train_state *eng_trainer_state(const eng_trainer *t);
const eng_model *eng_trainer_model(const eng_trainer *t);
int64_t eng_trainer_total_steps(const eng_trainer *t);
/* Path of the last checkpoint written or resumed from ("" if none). */
const char *eng_trainer_last_ckpt(const eng_trainer *t);

#endif
