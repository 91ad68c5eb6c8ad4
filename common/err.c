/* err.c: formatting of tlm_err messages (see err.h), and the lookups of
 * the failure table (common/failure.h). */
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The end of a cut message; its room is kept free by the writers below. */
static const char CUT[] = "...";

static int mark_cut(char *dst, size_t cap)
{
    if (cap < sizeof CUT)
        return 1;
    memcpy(dst + cap - sizeof CUT, CUT, sizeof CUT);
    return 1;
}

int tlm_msg_vprintf(char *dst, size_t cap, const char *fmt, va_list ap)
{
    if (cap == 0)
        return 1;
    int n = vsnprintf(dst, cap, fmt, ap);
    if (n < 0) {
        dst[0] = '\0';
        return 1;
    }
    return (size_t)n >= cap ? mark_cut(dst, cap) : 0;
}

int tlm_msg_printf(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int cut = tlm_msg_vprintf(dst, cap, fmt, ap);
    va_end(ap);
    return cut;
}

int tlm_msg_copy(char *dst, size_t cap, const char *src) { return tlm_msg_printf(dst, cap, "%s", src ? src : ""); }

int tlm_errf(tlm_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        tlm_msg_vprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

int tlm_err_prefix(tlm_err *e, const char *fmt, ...)
{
    if (!e)
        return TLM_EINTERNAL;
    char head[1024], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    tlm_msg_vprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    tlm_msg_printf(e->msg, sizeof e->msg, "%s: %s", head, old);
    return e->code;
}

/* ------------------------------------------------------------ failure table */
static const tlm_failure FAILURES[] = {
#define TLM_XX_(id, code, kind, exit, policy, brief, what) {(code), (kind), (exit), (policy), (brief), (what)},
    TLM_FAILURE_MAP(TLM_XX_)
#undef TLM_XX_
};
#define N_FAILURES (sizeof FAILURES / sizeof FAILURES[0])

const tlm_failure *tlm_failure_at(size_t i) { return i < N_FAILURES ? &FAILURES[i] : NULL; }

const tlm_failure *tlm_failure_of_code(int code)
{
    for (size_t i = 0; i < N_FAILURES; i++)
        if (FAILURES[i].code == code)
            return &FAILURES[i];
    return NULL;
}

const tlm_failure *tlm_failure_of_exit(int status)
{
    for (size_t i = 0; i < N_FAILURES; i++)
        if (FAILURES[i].exit == status)
            return &FAILURES[i];
    return NULL;
}

const tlm_failure *tlm_failure_of_kind(const char *kind)
{
    for (size_t i = 0; kind && i < N_FAILURES; i++)
        if (!strcmp(FAILURES[i].kind, kind))
            return &FAILURES[i];
    return NULL;
}

const char *tlm_status_kind(int code)
{
    if (code == TLM_OK)
        return "ok";
    const tlm_failure *f = tlm_failure_of_code(code);
    return f ? f->kind : tlm_failure_of_code(TLM_EINTERNAL)->kind;
}

int tlm_exit_status(int code)
{
    if (code == TLM_OK)
        return TLM_EXIT_OK;
    const tlm_failure *f = tlm_failure_of_code(code);
    return f ? f->exit : TLM_EXIT_INTERNAL;
}
