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

#include "common/failure.h"

/* ENG_ECONFIG (bad configuration or usage), ENG_EDATA (missing, corrupt or
 * mismatched data files), ENG_EIO (filesystem or stream), ENG_ENOMEM
 * (allocation; kind "oom"), ENG_EDIVERGED (loss or gradients NaN/inf),
 * ENG_EINTERNAL (a bug or an unexpected state), ENG_EINTERRUPTED (stopped
 * on request): the rows of common/failure.h. */
typedef enum eng_status {
    ENG_OK = 0,
#define ENG_XX_(id, code, kind, exit, policy, brief, what) ENG_E##id = (code),
    ENG_FAILURE_MAP(ENG_XX_)
#undef ENG_XX_
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

/* The failure kind's name used by the event protocol and results.db
 * (common/failure.h); "ok" for ENG_OK, "internal" for an unknown code. */
const char *eng_status_kind(int code);
/* tlm-worker's exit status for an eng_status: 0 for ENG_OK, the kind's
 * (common/failure.h), 1 (internal) for an unknown code. */
int eng_exit_status(int code);

/* Text into a fixed message buffer (an eng_err, an event field, a
 * database column).  What does not fit is cut visibly: the text ends in
 * "..." (never silently).  Returns 1 when it was cut, else 0.  Paths that
 * will be used are never cut: they are measured and refused
 * (eng_path_check_len, fileio.h). */
int eng_msg_copy(char *dst, size_t cap, const char *src);
int eng_msg_printf(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int eng_msg_vprintf(char *dst, size_t cap, const char *fmt, va_list ap);

#endif
