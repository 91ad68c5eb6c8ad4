/* events.c: JSON-line events on a file descriptor (events.h). */
#include "worker/events.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fmt.h"
#include "common/json.h"

void wrk_events_init(wrk_events *w, int fd, const char *job)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    snprintf(w->job, sizeof w->job, "%s", job ? job : "");
    pthread_mutex_init(&w->mu, NULL);
    w->last_emit = tlm_clock_mono();
}

void wrk_events_clear(wrk_events *w) { pthread_mutex_destroy(&w->mu); }

/* Shortest decimal that reads back exactly ("0.1", "1e-05"); "nan", "inf",
 * "-inf" for non-finite values (without quotes). */
static void format_double(double x, char out[32])
{
    if (isnan(x))
        strcpy(out, "nan");
    else if (isinf(x))
        strcpy(out, x > 0 ? "inf" : "-inf");
    else
        tlm_fmt_shortest(out, 32, x);
}

static void put(wrk_ev *ev, const char *s, size_t n)
{
    if (ev->overflow || ev->n + n + 2 > sizeof ev->buf) { /* room for "}\n" */
        ev->overflow = 1;
        return;
    }
    memcpy(ev->buf + ev->n, s, n);
    ev->n += n;
}

static void puts_(wrk_ev *ev, const char *s) { put(ev, s, strlen(s)); }

static void put_sink(void *ev, const char *s, size_t n) { put(ev, s, n); }

/* \n and \t as such; bytes that are not UTF-8 as their Latin-1 code points,
 * so that every event line is valid UTF-8 (docs/protocol.md) */
static void put_string(wrk_ev *ev, const char *s)
{
    tlm_json_escape(s, TLM_JSON_QUOTE | TLM_JSON_NL | TLM_JSON_TAB | TLM_JSON_DEL | TLM_JSON_UTF8, put_sink, ev);
}

static void key(wrk_ev *ev, const char *k)
{
    puts_(ev, ",");
    put_string(ev, k);
    puts_(ev, ":");
}

void wrk_ev_begin(wrk_ev *ev, const wrk_events *w, int event)
{
    ev->n = 0;
    ev->overflow = 0;
    ev->event = event;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char head[128];
    puts_(ev, "{\"ev\":");
    put_string(ev, tlm_event_name(event));
    snprintf(head, sizeof head, ",\"v\":%d,\"t\":%lld.%03ld", TLM_PROTOCOL_VERSION, (long long)ts.tv_sec,
             ts.tv_nsec / 1000000);
    puts_(ev, head);
    if (w->job[0])
        wrk_ev_str(ev, "job", w->job);
}

void wrk_ev_str(wrk_ev *ev, const char *k, const char *value)
{
    key(ev, k);
    if (value)
        put_string(ev, value);
    else
        puts_(ev, "null");
}

void wrk_ev_int(wrk_ev *ev, const char *k, int64_t value)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, value);
    key(ev, k);
    puts_(ev, b);
}

void wrk_ev_num(wrk_ev *ev, const char *k, double value)
{
    char b[32];
    format_double(value, b);
    key(ev, k);
    if (isfinite(value)) {
        puts_(ev, b);
    } else {
        puts_(ev, "\"");
        puts_(ev, b);
        puts_(ev, "\"");
    }
}

void wrk_ev_null(wrk_ev *ev, const char *k)
{
    key(ev, k);
    puts_(ev, "null");
}

void wrk_ev_strv(wrk_ev *ev, const char *k, int n, char *const *values)
{
    key(ev, k);
    puts_(ev, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            puts_(ev, ",");
        put_string(ev, values[i]);
    }
    puts_(ev, "]");
}

int wrk_events_emit(wrk_events *w, wrk_ev *ev)
{
    if (ev->overflow)
        return -1;
    ev->buf[ev->n++] = '}';
    ev->buf[ev->n++] = '\n';
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    for (size_t off = 0; off < ev->n && !w->write_failed;) {
        ssize_t k = write(w->fd, ev->buf + off, ev->n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->write_failed = 1;
            rc = -1;
            break;
        }
        off += (size_t)k;
    }
    /* A reader of an events file (tlmd on another machine, after a crash
     * of this one) may act on a checkpoint event, or on the run's end: the
     * lines before them must be on disk when they are. */
    int durable = ev->event == TLM_EV_CKPT || ev->event == TLM_EV_STOPPED || ev->event == TLM_EV_DONE ||
                  ev->event == TLM_EV_ERROR;
    if (!rc && w->sync && durable && fsync(w->fd) != 0) {
        w->write_failed = 1;
        rc = -1;
    }
    w->last_emit = tlm_clock_mono();
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* an event about the model at step (after tokens) */
static void begin_at(wrk_ev *ev, const wrk_events *w, int event, int64_t step, int64_t tokens)
{
    wrk_ev_begin(ev, w, event);
    wrk_ev_int(ev, "step", step);
    wrk_ev_int(ev, "tokens", tokens);
}

int wrk_emit_eval(wrk_events *w, int64_t step, int64_t tokens, const char *suite, const char *task,
                  const char *metric, double value, int64_t n, double stderr_)
{
    wrk_ev ev;
    begin_at(&ev, w, TLM_EV_EVAL, step, tokens);
    wrk_ev_str(&ev, "suite", suite);
    wrk_ev_str(&ev, "task", task);
    wrk_ev_str(&ev, "metric", metric);
    wrk_ev_num(&ev, "value", value);
    wrk_ev_int(&ev, "n", n);
    if (isnan(stderr_))
        wrk_ev_null(&ev, "stderr");
    else
        wrk_ev_num(&ev, "stderr", stderr_);
    return wrk_events_emit(w, &ev);
}

int wrk_emit_layer(wrk_events *w, int64_t step, int64_t tokens, int layer, const char *name, double value)
{
    wrk_ev ev;
    begin_at(&ev, w, TLM_EV_LAYER, step, tokens);
    wrk_ev_int(&ev, "layer", layer);
    wrk_ev_str(&ev, "name", name);
    wrk_ev_num(&ev, "value", value);
    return wrk_events_emit(w, &ev);
}

double wrk_events_silence(wrk_events *w)
{
    pthread_mutex_lock(&w->mu);
    double s = tlm_clock_mono() - w->last_emit;
    pthread_mutex_unlock(&w->mu);
    return s;
}
