/* heartbeat.h: a thread that emits `heartbeat` events whenever the event
 * stream has been silent for the heartbeat period, so tlmd can tell a long
 * step or evaluation from a hung worker.  The training loop only records
 * where it is (phase, step, tokens); the thread does the writing, so a
 * single long BLAS call cannot starve it.
 *
 * Must not: touch the model or the trainer. */
#ifndef TLM_WORKER_HEARTBEAT_H
#define TLM_WORKER_HEARTBEAT_H

#include <pthread.h>
#include <stdint.h>

#include "worker/events.h"

typedef struct wrk_heartbeat {
    wrk_events *events;
    double period;           /* seconds */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running, stop;
    const char *phase;       /* a string literal: "train", "eval", "ckpt", "setup" */
    int64_t step, tokens;
} wrk_heartbeat;

/* 0, or -1 when the thread cannot start. */
int wrk_heartbeat_start(wrk_heartbeat *hb, wrk_events *events, double period);
void wrk_heartbeat_set(wrk_heartbeat *hb, const char *phase, int64_t step, int64_t tokens);
void wrk_heartbeat_stop(wrk_heartbeat *hb);

#endif
