/* jobinfo.h: what tlmd shows and stores about a job besides its config:
 * the axis columns of results.db (schedule, ratios, groups), a short label
 * ("cosine 1.5->0.5", "wider-early"), the per-layer d_ff widths and their
 * summary, parameters and training FLOPs per token.
 * Must not: differ from what the worker will train (it calls the engine's
 * own taper and account code). */
#ifndef TLM_ORC_JOBINFO_H
#define TLM_ORC_JOBINFO_H

#include <stdint.h>

#include "engine/config/config.h"
#include "common/err.h"

typedef struct orc_jobinfo {
    char label[64];          /* cut visibly ("...") when longer: a name for people */
    char groups[ENG_MAX_GROUPS * TLM_NUMBER_TEXT]; /* "1.5,1,0.5", exact; "" unless blocks */
    double ratio_start, ratio_end; /* NaN unless linear/cosine/sigmoid */
    char widths[ENG_MAX_LAYERS * 8 + 4]; /* JSON array */
    char dff[64];            /* "384..128 (6)", "256x6", "384x2 256x2 128x2" */
    int64_t params;
    double flops_per_token;  /* training */
} orc_jobinfo;

int orc_jobinfo_compute(const eng_config *c, orc_jobinfo *out, tlm_err *e);

#endif
