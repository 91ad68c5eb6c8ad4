/* err.c: formatting of eng_err messages (see err.h). */
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
