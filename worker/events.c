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

double wrk_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void wrk_events_init(wrk_events *w, int fd, const char *job)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    snprintf(w->job, sizeof w->job, "%s", job ? job : "");
    pthread_mutex_init(&w->mu, NULL);
    w->last_emit = wrk_monotonic();
}

void wrk_events_destroy(wrk_events *w) { pthread_mutex_destroy(&w->mu); }

void wrk_format_double(double x, char out[32])
{
    if (isnan(x)) {
        strcpy(out, "nan");
        return;
    }
    if (isinf(x)) {
        strcpy(out, x > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, 32, "%.*g", prec, x);
        if (strtod(out, NULL) == x)
            return;
    }
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

/* Length of the valid UTF-8 sequence at p (1..4), 0 if invalid. */
static int utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    int n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (!n)
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
        return 0; /* overlong, surrogate */
    if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
        return 0;
    return n;
}

static void put_string(wrk_ev *ev, const char *s)
{
    puts_(ev, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p;
            put(ev, esc, 2);
            p++;
        } else if (*p == '\n') {
            puts_(ev, "\\n"), p++;
        } else if (*p == '\t') {
            puts_(ev, "\\t"), p++;
        } else if (*p < 0x20 || *p == 0x7f) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            puts_(ev, esc), p++;
        } else {
            int n = utf8_len(p);
            if (n) {
                put(ev, (const char *)p, (size_t)n);
                p += n;
            } else { /* not UTF-8: keep the byte as its Latin-1 code point */
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(ev, esc), p++;
            }
        }
    }
    puts_(ev, "\"");
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
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char head[128];
    puts_(ev, "{\"ev\":");
    put_string(ev, eng_event_name(event));
    snprintf(head, sizeof head, ",\"v\":%d,\"t\":%lld.%03ld", ENG_PROTOCOL_VERSION, (long long)ts.tv_sec,
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
    wrk_format_double(value, b);
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
    w->last_emit = wrk_monotonic();
    pthread_mutex_unlock(&w->mu);
    return rc;
}

double wrk_events_silence(wrk_events *w)
{
    pthread_mutex_lock(&w->mu);
    double s = wrk_monotonic() - w->last_emit;
    pthread_mutex_unlock(&w->mu);
    return s;
}
