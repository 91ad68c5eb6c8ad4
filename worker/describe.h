/* describe.h: `tlm-worker --describe`: the resolved config, per-layer widths
 * and the parameter/FLOP account as one JSON document (docs/protocol.md). */
#ifndef TLM_WORKER_DESCRIBE_H
#define TLM_WORKER_DESCRIBE_H

#include <stdio.h>

#include "engine/config/config.h"
#include "common/err.h"

int wrk_describe(const eng_config *cfg, FILE *out, tlm_err *e);

#endif
