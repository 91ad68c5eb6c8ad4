/* describe.h: `tlm-worker --describe`: the resolved config, per-layer widths
 * and the parameter/FLOP account as one JSON document (docs/protocol.md). */
#ifndef TLM_WORKER_DESCRIBE_H
#define TLM_WORKER_DESCRIBE_H

#include <stdio.h>

#include "engine/config/config.h"
#include "common/err.h"

int wrk_describe(const eng_config *cfg, FILE *out, tlm_err *e);
/* The memory a training run of cfg needs on the CPU (gpu 0) or a GPU, in
 * bytes: *total as --describe reports it (cpu_memory / gpu_memory total),
 * *state the part that does not shrink with the micro-batch (weights,
 * gradients, AdamW state). */
int wrk_memory_need(const eng_config *cfg, int gpu, size_t *total, size_t *state, tlm_err *e);

#endif
