/* err.c: formatting of eng_err messages (see err.h), and the lookups of
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

int eng_msg_vprintf(char *dst, size_t cap, const char *fmt, va_list ap)
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

int eng_msg_printf(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int cut = eng_msg_vprintf(dst, cap, fmt, ap);
    va_end(ap);
    return cut;
}

int eng_msg_copy(char *dst, size_t cap, const char *src) { return eng_msg_printf(dst, cap, "%s", src ? src : ""); }

int eng_errf(eng_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        eng_msg_vprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

int eng_err_prefix(eng_err *e, const char *fmt, ...)
{
    if (!e)
        return ENG_EINTERNAL;
    char head[1024], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    eng_msg_vprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    eng_msg_printf(e->msg, sizeof e->msg, "%s: %s", head, old);
    return e->code;
}

/* ------------------------------------------------------------ failure table */
static const eng_failure FAILURES[] = {
#define ENG_XX_(id, code, kind, exit, policy, brief, what) {(code), (kind), (exit), (policy), (brief), (what)},
    ENG_FAILURE_MAP(ENG_XX_)
#undef ENG_XX_
};
#define N_FAILURES (sizeof FAILURES / sizeof FAILURES[0])

const eng_failure *eng_failure_at(size_t i) { return i < N_FAILURES ? &FAILURES[i] : NULL; }

const eng_failure *eng_failure_of_code(int code)
{
    for (size_t i = 0; i < N_FAILURES; i++)
        if (FAILURES[i].code == code)
            return &FAILURES[i];
    return NULL;
}

const eng_failure *eng_failure_of_exit(int status)
{
    for (size_t i = 0; i < N_FAILURES; i++)
        if (FAILURES[i].exit == status)
            return &FAILURES[i];
    return NULL;
}

const eng_failure *eng_failure_of_kind(const char *kind)
{
    for (size_t i = 0; kind && i < N_FAILURES; i++)
        if (!strcmp(FAILURES[i].kind, kind))
            return &FAILURES[i];
    return NULL;
}

const char *eng_status_kind(int code)
{
    if (code == ENG_OK)
        return "ok";
    const eng_failure *f = eng_failure_of_code(code);
    return f ? f->kind : eng_failure_of_code(ENG_EINTERNAL)->kind;
}

int eng_exit_status(int code)
{
    if (code == ENG_OK)
        return ENG_EXIT_OK;
    const eng_failure *f = eng_failure_of_code(code);
    return f ? f->exit : ENG_EXIT_INTERNAL;
}
