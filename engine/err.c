/* err.c: formatting of eng_err messages (see err.h). */
#include "engine/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int eng_errf(eng_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

int eng_err_prefix(eng_err *e, const char *fmt, ...)
{
    if (!e)
        return ENG_EINTERNAL;
    char head[512], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    /* truncation is acceptable: the head is short, the tail is what gets cut */
    size_t h = strlen(head);
    if (h > sizeof e->msg - 3)
        h = sizeof e->msg - 3;
    memcpy(e->msg, head, h);
    memcpy(e->msg + h, ": ", 2);
    size_t rest = sizeof e->msg - h - 3;
    size_t o = strnlen(old, rest);
    memcpy(e->msg + h + 2, old, o);
    e->msg[h + 2 + o] = '\0';
    return e->code;
}

const char *eng_status_kind(int code)
{
    switch (code) {
    case ENG_OK: return "ok";
    case ENG_ECONFIG: return "config";
    case ENG_EDATA: return "data";
    case ENG_EIO: return "io";
    case ENG_ENOMEM: return "oom";
    case ENG_EDIVERGED: return "diverged";
    case ENG_EINTERRUPTED: return "interrupted";
    default: return "internal";
    }
}

void eng_err_clear(eng_err *e)
{
    if (e) {
        e->code = 0;
        e->msg[0] = '\0';
    }
}
