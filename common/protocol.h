/* protocol.h: the names of the worker's event protocol (docs/protocol.md,
 * "Events"), shared by the side that writes events (tlm-worker) and the
 * side that reads them (tlmd): the protocol version every event carries,
 * the longest line, the events and the phases of a heartbeat.  The fields
 * of each event are the writer's and the reader's own (worker/run.c,
 * orchestrator/event.c) and are checked by the tests of both.
 * Must not: hold anything that is not on the wire. */
#ifndef TLM_COMMON_PROTOCOL_H
#define TLM_COMMON_PROTOCOL_H

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

/* Names by value ("?" out of range), and values by name (-1 if unknown). */
const char *eng_event_name(int ev);
int eng_event_find(const char *name);
const char *eng_phase_name(int phase);
int eng_phase_find(const char *name);

#endif
