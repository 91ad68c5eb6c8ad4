/* event.h: one worker event line (docs/protocol.md "Events") checked and
 * turned into a typed struct.  A line is trusted only if it is a JSON
 * object of protocol version 1 with a known "ev" and every field that
 * event requires, each of the right type; anything else is refused with a
 * reason that tlmd records as a protocol error.  Numbers accept the
 * strings "nan", "inf" and "-inf".  Unknown extra fields are ignored (later
 * workers may add some).  Pointers in orc_event point into the parser and
 * stay valid until its next parse.
 * Must not: allocate per line, or accept a line longer than ORC_EVENT_MAX. */
#ifndef TLM_ORC_EVENT_H
#define TLM_ORC_EVENT_H

#include <stdint.h>

#include "common/protocol.h"
#include "orchestrator/jsonline.h"

#define ORC_EVENT_MAX TLM_EVENT_LINE_MAX /* bytes per line, newline excluded */
#define ORC_PROTOCOL_VERSION TLM_PROTOCOL_VERSION

/* The events of common/protocol.h, under tlmd's prefix. */
typedef enum orc_ev_kind {
#define ORC_XX_(id, name) ORC_EV_##id = TLM_EV_##id,
    TLM_EVENT_MAP(ORC_XX_)
#undef ORC_XX_
    ORC_EV_COUNT = TLM_EV_COUNT
} orc_ev_kind;

typedef struct orc_event {
    int kind;          /* orc_ev_kind */
    double t;          /* worker's clock, Unix seconds */
    const char *job;   /* NULL when absent */
    int64_t step, tokens;
    /* start */
    int64_t pid;
    const char *config_id;
    int64_t resumed_from_step; /* -1: null (fresh) */
    int64_t total_steps, total_tokens, params; /* -1 when absent */
    double flops_per_token;
    const char *device, *blas, *blas_kernel, *compiler, *tlm_version, *git_commit, *host, *os, *cuda, *driver;
    int threads;       /* -1 when absent */
    const char *argv;  /* raw JSON array, NULL when absent */
    /* step */
    double loss, lr, grad_norm, tokens_per_s, step_ms;
    /* eval */
    const char *suite, *task, *metric;
    double value;
    int64_t n;         /* -1: absent */
    double stderr_;    /* NaN: null or absent */
    /* layer */
    int layer;
    const char *name;
    /* ckpt: path; stopped: signal, ckpt (NULL if none) */
    const char *path;
    int signal;
    /* heartbeat */
    const char *phase;
    int64_t progress;  /* the worker's progress counter; -1 when absent (older workers) */
    /* done: loss (above), val_loss (NaN when null), elapsed_s */
    double val_loss, elapsed_s;
    int has_val_loss;  /* done: val_loss given and not null (then "nan" is a NaN loss, not none) */
    /* error */
    const char *error_kind, *message;
} orc_event;

typedef struct orc_event_parser {
    orc_json_object obj;
    char scratch[ORC_EVENT_MAX + 2 * ORC_JSON_MAX_MEMBERS + 16];
} orc_event_parser;

/* Returns 0, or -1 with the reason in err. */
int orc_event_parse(orc_event_parser *p, const char *line, size_t len, orc_event *ev, char *err, size_t err_cap);

const char *orc_ev_name(int kind);

#endif
