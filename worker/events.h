/* events.h: the worker's event stream (docs/protocol.md, "Events"): one
 * JSON object per line on a file descriptor, each written whole with one
 * lock held (the heartbeat thread writes too) and flushed per event.
 *
 * An event is built in a fixed buffer on the caller's stack (nothing is
 * allocated), so events can be emitted from the training loop.  Numbers
 * that are not finite become the strings "nan", "inf", "-inf"; finite
 * doubles are written in the shortest form that reads back exactly.
 * Strings are escaped; bytes that are not UTF-8 become \u00XX.
 *
 * Must not: write anything that is not an event to the events fd. */
#ifndef TLM_WORKER_EVENTS_H
#define TLM_WORKER_EVENTS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/protocol.h"

#define WRK_EVENT_MAX TLM_EVENT_LINE_MAX /* the line and its "}\n" */

typedef struct wrk_events {
    int fd;
    char job[128];           /* "" = no "job" field */
    pthread_mutex_t mu;
    double last_emit;        /* monotonic seconds of the last event written */
    int write_failed;        /* the fd stopped accepting (reader gone) */
    int sync;                /* --events-file: fsync after a ckpt event and the run's last one */
} wrk_events;

typedef struct wrk_ev {
    char buf[WRK_EVENT_MAX];
    size_t n;
    int overflow;
    int event;               /* TLM_EV_* */
} wrk_ev;

void wrk_events_init(wrk_events *w, int fd, const char *job);
void wrk_events_clear(wrk_events *w);

/* Start an event (TLM_EV_*, common/protocol.h):
 * {"ev": its name, "v": TLM_PROTOCOL_VERSION, "t": <unix time>, "job": ...} */
void wrk_ev_begin(wrk_ev *ev, const wrk_events *w, int event);
void wrk_ev_str(wrk_ev *ev, const char *key, const char *value); /* NULL -> null */
void wrk_ev_int(wrk_ev *ev, const char *key, int64_t value);
void wrk_ev_num(wrk_ev *ev, const char *key, double value);
void wrk_ev_null(wrk_ev *ev, const char *key);
void wrk_ev_strv(wrk_ev *ev, const char *key, int n, char *const *values); /* array of strings */
/* Close the object and write it as one line.  0, or -1 when the event did
 * not fit WRK_EVENT_MAX or the write failed. */
int wrk_events_emit(wrk_events *w, wrk_ev *ev);

/* The two events a training run and an evaluation of a checkpoint both
 * write (docs/protocol.md): an evaluation's result (stderr NaN: null) and
 * one layer's statistic. */
int wrk_emit_eval(wrk_events *w, int64_t step, int64_t tokens, const char *suite, const char *task,
                  const char *metric, double value, int64_t n, double stderr_);
int wrk_emit_layer(wrk_events *w, int64_t step, int64_t tokens, int layer, const char *name, double value);

/* Seconds since the last event (for heartbeats). */
double wrk_events_silence(wrk_events *w);

#endif
