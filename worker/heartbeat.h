/* heartbeat.h: a thread that emits `heartbeat` events whenever the event
 * stream has been silent for the heartbeat period, so tlmd can tell a long
 * step or evaluation from a hung worker.  The training loop only records
 * where it is (phase, step, tokens); the thread does the writing, so a
 * single long BLAS call cannot starve it.  Because the thread speaks even
 * when the main thread is stuck (a read that never returns), a heartbeat
 * alone proves nothing but that the process lives: each one also carries
 * `progress`, a counter the main thread advances at every point of real
 * work (each set-up stage, micro-batch, evaluation batch, checkpoint), so
 * that tlmd can see a stream of heartbeats whose counter stands still.
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
    const char *phase;       /* a static name: tlm_phase_name() of common/protocol.h */
    int64_t step, tokens;
    int64_t progress;        /* advanced by every wrk_heartbeat_set and wrk_heartbeat_progress */
} wrk_heartbeat;

/* 0, or -1 when the thread cannot start. */
int wrk_heartbeat_start(wrk_heartbeat *hb, wrk_events *events, double period);
/* Where the main thread is; each call also advances the progress counter. */
void wrk_heartbeat_set(wrk_heartbeat *hb, const char *phase, int64_t step, int64_t tokens);
/* Progress without a change of place (a set-up stage done). */
void wrk_heartbeat_progress(wrk_heartbeat *hb);
void wrk_heartbeat_stop(wrk_heartbeat *hb);

#endif
