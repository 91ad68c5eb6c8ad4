/* err.h: the one error contract shared by every TLM module.
 *
 * Library functions return 0 (TLM_OK) or a negative tlm_status and, when
 * given an tlm_err, fill it with a message the caller can print.  Only
 * programs (main) decide to exit.  Programmer errors are assert()s.
 * The status doubles as the failure class that tlm-worker reports in its
 * `error` events and that tlmd records per attempt. */
#ifndef TLM_COMMON_ERR_H
#define TLM_COMMON_ERR_H

#include <stdarg.h>
#include <stddef.h>

#include "common/failure.h"

/* TLM_ECONFIG (bad configuration or usage), TLM_EDATA (missing, corrupt or
 * mismatched data files), TLM_EIO (filesystem or stream), TLM_ENOMEM
 * (allocation; kind "oom"), TLM_EDIVERGED (loss or gradients NaN/inf),
 * TLM_EINTERNAL (a bug or an unexpected state), TLM_EINTERRUPTED (stopped
 * on request): the rows of common/failure.h. */
typedef enum tlm_status {
    TLM_OK = 0,
#define TLM_XX_(id, code, kind, exit, policy, brief, what) TLM_E##id = (code),
    TLM_FAILURE_MAP(TLM_XX_)
#undef TLM_XX_
} tlm_status;

/* A message holds a path as long as the system allows (PATH_MAX, 4096)
 * and what went wrong with it. */
#define TLM_MSG_MAX 5120

typedef struct tlm_err {
    int code;              /* tlm_status */
    char msg[TLM_MSG_MAX]; /* human-readable, no trailing newline */
} tlm_err;

/* Fill e (if non-NULL) and return code.  Usage: return tlm_errf(e, TLM_EIO, "...", ...); */
int tlm_errf(tlm_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix an existing message: "ctx: old message". Returns e->code. */
int tlm_err_prefix(tlm_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The failure kind's name used by the event protocol and results.db
 * (common/failure.h); "ok" for TLM_OK, "internal" for an unknown code. */
const char *tlm_status_kind(int code);
/* tlm-worker's exit status for an tlm_status: 0 for TLM_OK, the kind's
 * (common/failure.h), 1 (internal) for an unknown code. */
int tlm_exit_status(int code);

/* Text into a fixed message buffer (an tlm_err, an event field, a
 * database column).  What does not fit is cut visibly: the text ends in
 * "..." (never silently).  Returns 1 when it was cut, else 0.  Paths that
 * will be used are never cut: they are measured and refused
 * (tlm_path_check_len, fileio.h). */
int tlm_msg_copy(char *dst, size_t cap, const char *src);
int tlm_msg_printf(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int tlm_msg_vprintf(char *dst, size_t cap, const char *fmt, va_list ap);

#endif
