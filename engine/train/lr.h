/* lr.h: the learning-rate schedule and the step arithmetic of a run,
 * as pure functions of the config (no model, no state), so the trainer,
 * the worker's `start` event and the tests agree on them.
 *
 * Steps: a run takes total_steps = floor(train.tokens / train.batch_tokens)
 * optimizer steps of batch_tokens tokens each; step s (1-based) trains
 * tokens [(s-1) B, s B).
 *
 * Learning rate of step s, with done = (s-1) B tokens already trained,
 * W = train.warmup_tokens, N = total_steps x B, r = train.min_lr_ratio:
 *   warm-up (done < W):  lr x min(1, (done + B) / W)
 *   then:                lr x (r + (1 - r) x (1 + cos(pi x p)) / 2),
 *                        p = (done - W) / (N - W) clamped to [0, 1]
 * so the first step is never at zero, the peak is reached by the step that
 * ends the warm-up, and the schedule reaches r x lr where p = 1. */
#ifndef TLM_ENGINE_TRAIN_LR_H
#define TLM_ENGINE_TRAIN_LR_H

#include <stdint.h>

#include "engine/config/config.h"

int64_t eng_train_total_steps(const eng_train_cfg *t);
/* Sequences per optimizer step, and micro-steps (forward/backward passes) per step. */
int eng_train_seqs_per_step(const eng_train_cfg *t);
int eng_train_accum_steps(const eng_train_cfg *t);
/* Learning rate of 1-based step s. */
double eng_lr_at(const eng_train_cfg *t, int64_t step);
/* Whether a period of `every` tokens ends within step s (every 0: never). */
int eng_period_ends(int64_t every, int64_t batch_tokens, int64_t step);

#endif
