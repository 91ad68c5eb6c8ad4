/* describe.h: `tlm-worker --describe`: the resolved config, per-layer widths
 * and the parameter/FLOP account as one JSON document (docs/protocol.md). */
#ifndef TLM_WORKER_DESCRIBE_H
#define TLM_WORKER_DESCRIBE_H

#include <stdio.h>

#include "engine/config/config.h"
#include "common/err.h"

/* gpu_budget: GPU memory in bytes to fit the micro-batch to ("gpu_fit");
 * 0: no fit. */
int wrk_describe(const eng_config *cfg, size_t gpu_budget, FILE *out, tlm_err *e);
/* The memory a training run of cfg needs on the CPU (gpu 0) or a GPU, in
 * bytes: *total as --describe reports it (cpu_memory / gpu_memory total,
 * the GPU's in the precision a GPU run of cfg has: eng_precision_resolve
 * for a GPU, as the worker trains in), *state the part that does
 * not shrink with the micro-batch (weights and their bf16 copy,
 * gradients, AdamW state). */
int wrk_memory_need(const eng_config *cfg, int gpu, size_t *total, size_t *state, tlm_err *e);

/* The largest micro-batch (a divisor of the batch's sequences, at most
 * the configured one) whose GPU plan (gpu_memory total) fits 95% of
 * `budget` bytes (the rest for the CUDA context and allocations the plan
 * does not see): *mb and its *total, or *mb 0 when even one sequence per pass does
 * not fit.  Nonzero only when the estimate itself fails. */
int wrk_fit_micro_batch(const eng_config *cfg, size_t budget, int *mb, size_t *total, tlm_err *e);

#endif
