/* protocol.h: the names of the contract between tlm-worker and tlmd
 * (docs/protocol.md), for both sides: the event protocol ("Events": the
 * protocol version every event carries, the longest line, the events, the
 * phases of a heartbeat) and the run folder's layout ("Run folder": its
 * config, its checkpoint folder and the names of the checkpoints in it).
 * The fields of each event are the writer's and the reader's own
 * (worker/run.c, orchestrator/event.c) and are checked by the tests of
 * both.
 * Must not: hold anything that is not on the wire or in the run folder. */
#ifndef TLM_COMMON_PROTOCOL_H
#define TLM_COMMON_PROTOCOL_H

#include <stdint.h>

#define TLM_PROTOCOL_VERSION 1
#define TLM_EVENT_LINE_MAX 65536 /* bytes of one event line, its newline excluded */

/* XX(id, name): TLM_EV_<id>, in the order of docs/protocol.md's table. */
#define TLM_EVENT_MAP(XX)                                                                                        \
    XX(START, "start")                                                                                           \
    XX(STEP, "step")                                                                                             \
    XX(EVAL, "eval")                                                                                             \
    XX(LAYER, "layer")                                                                                           \
    XX(CKPT, "ckpt")                                                                                             \
    XX(HEARTBEAT, "heartbeat")                                                                                   \
    XX(STOPPED, "stopped")                                                                                       \
    XX(DONE, "done")                                                                                             \
    XX(ERROR, "error")

typedef enum tlm_event {
#define TLM_XX_(id, name) TLM_EV_##id,
    TLM_EVENT_MAP(TLM_XX_)
#undef TLM_XX_
    TLM_EV_COUNT
} tlm_event;

/* XX(id, name): what a worker is doing when it sends a heartbeat. */
#define TLM_PHASE_MAP(XX)                                                                                        \
    XX(SETUP, "setup")                                                                                           \
    XX(TRAIN, "train")                                                                                           \
    XX(EVAL, "eval")                                                                                             \
    XX(CKPT, "ckpt")

typedef enum tlm_phase {
#define TLM_XX_(id, name) TLM_PHASE_##id,
    TLM_PHASE_MAP(TLM_XX_)
#undef TLM_XX_
    TLM_PHASE_COUNT
} tlm_phase;

/* The run folder: the resolved config tlmd hands the worker, the folder
 * of its checkpoints, and a checkpoint's name there: "step-" and the step,
 * 8 digits at least ("step-00000120"); one being written is ".tmp-" and
 * that name. */
#define TLM_RUN_CONFIG "config.json"
#define TLM_RUN_CKPT "ckpt"
#define TLM_CKPT_PREFIX "step-"
#define TLM_CKPT_TMP_PREFIX ".tmp-" TLM_CKPT_PREFIX
#define TLM_CKPT_NAME_MAX 32

void tlm_ckpt_name(int64_t step, char out[TLM_CKPT_NAME_MAX]);
/* The step of a checkpoint's name ("step-" and decimal digits, at most
 * INT64_MAX); -1 for any other name. */
int64_t tlm_ckpt_step_of(const char *name);

/* Names by value ("?" out of range), and values by name (-1 if unknown). */
const char *tlm_event_name(int ev);
int tlm_event_find(const char *name);
const char *tlm_phase_name(int phase);
int tlm_phase_find(const char *name);

#endif
