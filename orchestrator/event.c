/* event.c: checks an event line against docs/protocol.md (see event.h).
 * The table below is the protocol's field list; a field it names as
 * required must be present with its type, or the whole line is refused. */
#include "orchestrator/event.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"

const char *orc_ev_name(int kind) { return tlm_event_name(kind); }

typedef struct {
    const orc_json_object *o;
    char *err;
    size_t err_cap;
    const char *ev;
} ctx;

static int bad(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(ctx *c, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    tlm_msg_vprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tlm_msg_printf(c->err, c->err_cap, "%s%s%s", c->ev ? c->ev : "", c->ev ? " event: " : "", msg);
    return -1;
}

enum { REQ = 1, OPT = 0 };

/* A number, or "nan" / "inf" / "-inf". Absent optional: *out untouched. */
static int num(ctx *c, const char *key, int req, double *out)
{
    const orc_json_member *m = orc_json_get(c->o, key);
    if (!m)
        return req ? bad(c, "missing '%s'", key) : 0;
    if (m->type == ORC_JSON_NUMBER) {
        *out = m->num;
        return 0;
    }
    if (m->type == ORC_JSON_STRING) {
        if (!strcmp(m->str, "nan")) {
            *out = NAN;
            return 0;
        }
        if (!strcmp(m->str, "inf")) {
            *out = INFINITY;
            return 0;
        }
        if (!strcmp(m->str, "-inf")) {
            *out = -INFINITY;
            return 0;
        }
    }
    return bad(c, "'%s' must be a number", key);
}

/* A number or null (-> NaN). */
static int num_or_null(ctx *c, const char *key, int req, double *out)
{
    const orc_json_member *m = orc_json_get(c->o, key);
    if (m && m->type == ORC_JSON_NULL) {
        *out = NAN;
        return 0;
    }
    return num(c, key, req, out);
}

/* A non-negative integer (written integral, below 2^53). */
static int count(ctx *c, const char *key, int req, int64_t *out)
{
    const orc_json_member *m = orc_json_get(c->o, key);
    if (!m)
        return req ? bad(c, "missing '%s'", key) : 0;
    if (m->type != ORC_JSON_NUMBER || !m->integral || m->inum < 0 || m->inum > (1LL << 53))
        return bad(c, "'%s' must be a non-negative integer", key);
    *out = m->inum;
    return 0;
}

static int count_or_null(ctx *c, const char *key, int req, int64_t *out)
{
    const orc_json_member *m = orc_json_get(c->o, key);
    if (m && m->type == ORC_JSON_NULL) {
        *out = -1;
        return 0;
    }
    return count(c, key, req, out);
}

static int str(ctx *c, const char *key, int req, const char **out)
{
    const orc_json_member *m = orc_json_get(c->o, key);
    if (!m)
        return req ? bad(c, "missing '%s'", key) : 0;
    if (m->type != ORC_JSON_STRING)
        return bad(c, "'%s' must be a string", key);
    *out = m->str;
    return 0;
}

static int str_or_null(ctx *c, const char *key, int req, const char **out)
{
    const orc_json_member *m = orc_json_get(c->o, key);
    if (m && m->type == ORC_JSON_NULL) {
        *out = NULL;
        return 0;
    }
    return str(c, key, req, out);
}

static int unknown_value(ctx *c, const char *key, const char *v)
{
    return bad(c, "'%s' has an unknown value '%.40s'", key, v);
}

/* A failure kind of common/failure.h that ends a run with an `error`; an
 * interruption ends it with `stopped` instead. */
static int error_kind_known(const char *kind)
{
    const tlm_failure *f = tlm_failure_of_kind(kind);
    return f && f->policy != TLM_POLICY_RESUME;
}

static int is_hex64(const char *s)
{
    if (strlen(s) != 64)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

static int parse_start(ctx *c, orc_event *ev)
{
    int64_t threads = -1;
    if (count(c, "pid", OPT, &ev->pid) || str(c, "config_id", REQ, &ev->config_id) ||
        count_or_null(c, "resumed_from_step", OPT, &ev->resumed_from_step) ||
        count(c, "total_steps", OPT, &ev->total_steps) || count(c, "total_tokens", OPT, &ev->total_tokens) ||
        count(c, "params", OPT, &ev->params) || num(c, "flops_per_token", OPT, &ev->flops_per_token) ||
        str(c, "device", OPT, &ev->device) || count(c, "threads", OPT, &threads) ||
        str_or_null(c, "blas", OPT, &ev->blas) || str_or_null(c, "blas_kernel", OPT, &ev->blas_kernel) ||
        str_or_null(c, "compiler", OPT, &ev->compiler) || str_or_null(c, "tlm_version", OPT, &ev->tlm_version) ||
        str_or_null(c, "git_commit", OPT, &ev->git_commit) || str_or_null(c, "host", OPT, &ev->host) ||
        str_or_null(c, "os", OPT, &ev->os) || str_or_null(c, "cuda", OPT, &ev->cuda) ||
        str_or_null(c, "driver", OPT, &ev->driver))
        return -1;
    if (!is_hex64(ev->config_id))
        return bad(c, "'config_id' must be 64 lowercase hex digits");
    if (threads > 1 << 20)
        return bad(c, "'threads' out of range");
    ev->threads = (int)threads;
    const orc_json_member *argv = orc_json_get(c->o, "argv");
    if (argv) {
        if (argv->type != ORC_JSON_ARRAY)
            return bad(c, "'argv' must be an array");
        ev->argv = argv->str;
    }
    return 0;
}

static int parse_kind(ctx *c, orc_event *ev)
{
    switch (ev->kind) {
    case ORC_EV_START:
        return parse_start(c, ev);
    case ORC_EV_STEP:
        return num(c, "loss", REQ, &ev->loss) || num(c, "lr", REQ, &ev->lr) ||
                       num(c, "grad_norm", REQ, &ev->grad_norm) || num(c, "tokens_per_s", REQ, &ev->tokens_per_s) ||
                       num(c, "step_ms", REQ, &ev->step_ms)
                   ? -1
                   : 0;
    case ORC_EV_EVAL:
        if (str(c, "suite", REQ, &ev->suite) || str(c, "task", REQ, &ev->task) ||
            str(c, "metric", REQ, &ev->metric) || num(c, "value", REQ, &ev->value) ||
            count_or_null(c, "n", OPT, &ev->n) || num_or_null(c, "stderr", OPT, &ev->stderr_))
            return -1;
        if (!*ev->suite || !*ev->task || !*ev->metric)
            return bad(c, "empty suite, task or metric");
        return 0;
    case ORC_EV_LAYER: {
        int64_t layer;
        if (count(c, "layer", REQ, &layer) || str(c, "name", REQ, &ev->name) || num(c, "value", REQ, &ev->value))
            return -1;
        if (layer > 65535)
            return bad(c, "'layer' out of range");
        if (!*ev->name)
            return bad(c, "empty 'name'");
        ev->layer = (int)layer;
        return 0;
    }
    case ORC_EV_CKPT:
        return str(c, "path", REQ, &ev->path);
    case ORC_EV_HEARTBEAT:
        if (str(c, "phase", REQ, &ev->phase) || count(c, "progress", OPT, &ev->progress))
            return -1;
        return tlm_phase_find(ev->phase) < 0 ? unknown_value(c, "phase", ev->phase) : 0;
    case ORC_EV_STOPPED: {
        /* the signal as a number (15) or a name ("SIGTERM"): the protocol allows either */
        int64_t sig = 0;
        const orc_json_member *m = orc_json_get(c->o, "signal");
        if (m && m->type == ORC_JSON_STRING) {
            /* SIGUSR2: the ranks of a Slurm job are stopped with it (srun forwards it; orchestrator/slurm_job.c) */
            sig = !strcmp(m->str, "SIGTERM")   ? 15
                  : !strcmp(m->str, "SIGINT")  ? 2
                  : !strcmp(m->str, "SIGHUP")  ? 1
                  : !strcmp(m->str, "SIGUSR2") ? 12
                                               : 0;
            if (!sig)
                return bad(c, "'signal' names an unknown signal '%.20s'", m->str);
        } else if (count(c, "signal", OPT, &sig)) {
            return -1;
        }
        if (str_or_null(c, "ckpt", OPT, &ev->path))
            return -1;
        if (sig > 128)
            return bad(c, "'signal' out of range");
        ev->signal = (int)sig;
        return 0;
    }
    case ORC_EV_DONE: {
        const orc_json_member *vl = orc_json_get(c->o, "val_loss");
        ev->has_val_loss = vl && vl->type != ORC_JSON_NULL;
        return num(c, "loss", REQ, &ev->loss) || num_or_null(c, "val_loss", OPT, &ev->val_loss) ||
                       num(c, "elapsed_s", OPT, &ev->elapsed_s)
                   ? -1
                   : 0;
    }
    case ORC_EV_ERROR:
        if (str(c, "kind", REQ, &ev->error_kind) || str(c, "message", REQ, &ev->message))
            return -1;
        return error_kind_known(ev->error_kind) ? 0 : unknown_value(c, "kind", ev->error_kind);
    }
    return bad(c, "unhandled kind");
}

int orc_event_parse(orc_event_parser *p, const char *line, size_t len, orc_event *ev, char *err, size_t err_cap)
{
    if (len > ORC_EVENT_MAX) {
        snprintf(err, err_cap, "line longer than %d bytes", ORC_EVENT_MAX);
        return -1;
    }
    if (orc_json_parse_object(line, len, &p->obj, p->scratch, sizeof p->scratch, err, err_cap))
        return -1;
    memset(ev, 0, sizeof *ev);
    ev->step = ev->tokens = -1;
    ev->resumed_from_step = -1;
    ev->total_steps = ev->total_tokens = ev->params = -1;
    ev->flops_per_token = NAN;
    ev->threads = -1;
    ev->n = -1;
    ev->progress = -1;
    ev->stderr_ = ev->val_loss = ev->elapsed_s = NAN;
    ev->loss = ev->lr = ev->grad_norm = ev->tokens_per_s = ev->step_ms = ev->value = NAN;

    ctx c = {.o = &p->obj, .err = err, .err_cap = err_cap};
    const char *name = NULL;
    if (str(&c, "ev", REQ, &name))
        return -1;
    ev->kind = tlm_event_find(name);
    if (ev->kind < 0)
        return bad(&c, "unknown event '%.40s'", name);
    c.ev = tlm_event_name(ev->kind);

    const orc_json_member *v = orc_json_get(&p->obj, "v");
    if (!v)
        return bad(&c, "missing protocol version 'v'");
    if (v->type != ORC_JSON_NUMBER || !v->integral || v->inum != ORC_PROTOCOL_VERSION)
        return bad(&c, "protocol version must be %d", ORC_PROTOCOL_VERSION);
    if (num(&c, "t", REQ, &ev->t))
        return -1;
    if (!isfinite(ev->t))
        return bad(&c, "'t' must be a finite number");
    if (str(&c, "job", OPT, &ev->job))
        return -1;
    /* every event says where the run stands; an error may come before that is known */
    int req = ev->kind == ORC_EV_ERROR ? OPT : REQ;
    if (count(&c, "step", req, &ev->step) || count(&c, "tokens", req, &ev->tokens))
        return -1;
    return parse_kind(&c, ev);
}
