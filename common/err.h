/* err.h: the one error contract shared by every TLM module.
 *
 * Library functions return 0 (ENG_OK) or a negative eng_status and, when
 * given an eng_err, fill it with a message the caller can print.  Only
 * programs (main) decide to exit.  Programmer errors are assert()s.
 * The status doubles as the failure class that tlm-worker reports in its
 * `error` events and that tlmd records per attempt. */
#ifndef TLM_ENGINE_ERR_H
#define TLM_ENGINE_ERR_H

#include <stdarg.h>
#include <stddef.h>

typedef enum eng_status {
    ENG_OK = 0,
    ENG_ECONFIG = -1,    /* bad configuration or usage */
    ENG_EDATA = -2,      /* missing/corrupt/mismatched data files */
    ENG_EIO = -3,        /* filesystem or stream failure */
    ENG_ENOMEM = -4,     /* allocation failed (reported as "oom") */
    ENG_EDIVERGED = -5,  /* loss or gradients became NaN/inf */
    ENG_EINTERNAL = -6,  /* a bug or an unexpected state */
    ENG_EINTERRUPTED = -7 /* stopped on request (signal) */
} eng_status;

/* A message holds a path as long as the system allows (PATH_MAX, 4096)
 * and what went wrong with it. */
#define ENG_MSG_MAX 5120

typedef struct eng_err {
    int code;              /* eng_status */
    char msg[ENG_MSG_MAX]; /* human-readable, no trailing newline */
} eng_err;

/* Fill e (if non-NULL) and return code.  Usage: return eng_errf(e, ENG_EIO, "...", ...); */
int eng_errf(eng_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix an existing message: "ctx: old message". Returns e->code. */
int eng_err_prefix(eng_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The failure class name used by the event protocol and results.db:
 * config | data | io | oom | diverged | internal | interrupted. */
const char *eng_status_kind(int code);

/* Text into a fixed message buffer (an eng_err, an event field, a
 * database column).  What does not fit is cut visibly: the text ends in
 * "..." (never silently).  Returns 1 when it was cut, else 0.  Paths that
 * will be used are never cut: they are measured and refused
 * (eng_path_check_len, fileio.h). */
int eng_msg_copy(char *dst, size_t cap, const char *src);
int eng_msg_printf(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int eng_msg_vprintf(char *dst, size_t cap, const char *fmt, va_list ap);

#endif
