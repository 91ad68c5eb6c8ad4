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

#define ENG_PROTOCOL_VERSION 1
#define ENG_EVENT_LINE_MAX 65536 /* bytes of one event line, its newline excluded */

/* XX(id, name): ENG_EV_<id>, in the order of docs/protocol.md's table. */
#define ENG_EVENT_MAP(XX)                                                                                        \
    XX(START, "start")                                                                                           \
    XX(STEP, "step")                                                                                             \
    XX(EVAL, "eval")                                                                                             \
    XX(LAYER, "layer")                                                                                           \
    XX(CKPT, "ckpt")                                                                                             \
    XX(HEARTBEAT, "heartbeat")                                                                                   \
    XX(STOPPED, "stopped")                                                                                       \
    XX(DONE, "done")                                                                                             \
    XX(ERROR, "error")

typedef enum eng_event {
#define ENG_XX_(id, name) ENG_EV_##id,
    ENG_EVENT_MAP(ENG_XX_)
#undef ENG_XX_
    ENG_EV_COUNT
} eng_event;

/* XX(id, name): what a worker is doing when it sends a heartbeat. */
#define ENG_PHASE_MAP(XX)                                                                                        \
    XX(SETUP, "setup")                                                                                           \
    XX(TRAIN, "train")                                                                                           \
    XX(EVAL, "eval")                                                                                             \
    XX(CKPT, "ckpt")

typedef enum eng_phase {
#define ENG_XX_(id, name) ENG_PHASE_##id,
    ENG_PHASE_MAP(ENG_XX_)
#undef ENG_XX_
    ENG_PHASE_COUNT
} eng_phase;

/* The run folder: the resolved config tlmd hands the worker, the folder
 * of its checkpoints, and a checkpoint's name there: "step-" and the step,
 * 8 digits at least ("step-00000120"); one being written is ".tmp-" and
 * that name. */
#define ENG_RUN_CONFIG "config.json"
#define ENG_RUN_CKPT "ckpt"
#define ENG_CKPT_PREFIX "step-"
#define ENG_CKPT_TMP_PREFIX ".tmp-" ENG_CKPT_PREFIX
#define ENG_CKPT_NAME_MAX 32

void eng_ckpt_name(int64_t step, char out[ENG_CKPT_NAME_MAX]);
/* The step of a checkpoint's name ("step-" and decimal digits, at most
 * INT64_MAX); -1 for any other name. */
int64_t eng_ckpt_step_of(const char *name);

/* Names by value ("?" out of range), and values by name (-1 if unknown). */
const char *eng_event_name(int ev);
int eng_event_find(const char *name);
const char *eng_phase_name(int phase);
int eng_phase_find(const char *name);

#endif
