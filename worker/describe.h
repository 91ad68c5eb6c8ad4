/* describe.h: `tlm-worker --describe`: the resolved config, per-layer widths
 * and the parameter/FLOP account as one JSON document (docs/protocol.md). */
#ifndef TLM_WORKER_DESCRIBE_H
#define TLM_WORKER_DESCRIBE_H

#include <stdio.h>

#include "engine/config/config.h"
#include "common/err.h"

/* The storage precision a GPU run of cfg has in this build: *prec
 * ENG_PREC_FP32 or ENG_PREC_BF16.  train.precision resolved for a GPU
 * (eng_precision_resolve: auto is bf16), kept bf16 only when this build's
 * CUDA backend stores bf16 (ENG_CU_STORES_BF16, engine/cuda/plan.h); else
 * auto runs fp32 (*fell_back 1: the worker says so) and bf16 asked for in
 * words is TLM_ECONFIG.  The worker trains on a GPU in it and every GPU
 * estimate here (gpu_memory, gpu_fit, wrk_memory_need,
 * wrk_fit_micro_batch) plans in it, so they follow when bf16 turns on. */
int wrk_gpu_precision(const eng_config *cfg, int *prec, int *fell_back, tlm_err *e);

/* gpu_budget: GPU memory in bytes to fit the micro-batch to ("gpu_fit");
 * 0: no fit. */
int wrk_describe(const eng_config *cfg, size_t gpu_budget, FILE *out, tlm_err *e);
/* The memory a training run of cfg needs on the CPU (gpu 0) or a GPU, in
 * bytes: *total as --describe reports it (cpu_memory / gpu_memory total,
 * the GPU's in wrk_gpu_precision's precision), *state the part that does
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
