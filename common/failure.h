/* failure.h: the one table of how a job can fail: the tlm_status code, the
 * kind's name (in `error` events, results.db attempts.reason and
 * jobs.reason), tlm-worker's exit status, and what tlmd does next.  The
 * tlm_status enum (err.h), tlm_status_kind, the worker's exit statuses,
 * tlmd's classification of an exit status, the kinds an `error` event may
 * carry, the reasons --retry-failed is needed for, and the tables of
 * docs/protocol.md and docs/tlmd.md (checked by tests/tlmd/test_events.c)
 * all come from TLM_FAILURE_MAP, after libuv's UV_ERRNO_MAP.
 * Must not: list a kind, an exit status or a retry rule anywhere else. */
#ifndef TLM_COMMON_FAILURE_H
#define TLM_COMMON_FAILURE_H

#include <stddef.h>

/* What tlmd does after an attempt that ended this way. */
typedef enum tlm_policy {
    TLM_POLICY_FINAL,   /* failed for good: retrying cannot help (--retry-failed after a fix) */
    TLM_POLICY_RETRY,   /* retried, counted against --max-attempts */
    TLM_POLICY_MACHINE, /* retried, a fault of the machine: counted against --max-machine-faults */
    TLM_POLICY_RESUME   /* stopped on request: resumes (retried and counted when tlmd did not ask) */
} tlm_policy;

/* XX(id, code, kind, exit, policy, brief, what), in the order of the exit
 * statuses:
 *   id      names TLM_E<id> (tlm_status) and TLM_EXIT_<id>
 *   code    the tlm_status value; fixed, never reused
 *   kind    the failure's name in events and results.db
 *   exit    tlm-worker's exit status
 *   policy  TLM_POLICY_*
 *   brief   the words of `tlm-worker --help`
 *   what    the words of tlmd's attempt message: "<what> (exit <exit>)" */
#define TLM_FAILURE_MAP(XX)                                                                                      \
    XX(INTERNAL, -6, "internal", 1, TLM_POLICY_RETRY, "internal error", "internal error")                        \
    XX(CONFIG, -1, "config", 2, TLM_POLICY_FINAL, "config or usage", "configuration or usage error")             \
    XX(DATA, -2, "data", 3, TLM_POLICY_FINAL, "data", "data error")                                              \
    XX(DIVERGED, -5, "diverged", 4, TLM_POLICY_FINAL, "diverged", "loss or gradients not finite")                \
    XX(NOMEM, -4, "oom", 5, TLM_POLICY_RETRY, "out of memory", "out of memory")                                  \
    XX(IO, -3, "io", 6, TLM_POLICY_MACHINE, "I/O", "I/O error")                                                  \
    XX(INTERRUPTED, -7, "interrupted", 75, TLM_POLICY_RESUME, "stopped by SIGTERM/SIGINT after a checkpoint",    \
       "stopped by a signal from outside tlmd")

/* Exit statuses: TLM_EXIT_OK (a `done` job) and one per kind. */
enum {
    TLM_EXIT_OK = 0,
#define TLM_XX_(id, code, kind, exit, policy, brief, what) TLM_EXIT_##id = (exit),
    TLM_FAILURE_MAP(TLM_XX_)
#undef TLM_XX_
};

typedef struct tlm_failure {
    int code;           /* tlm_status */
    const char *kind;
    int exit;
    int policy;         /* tlm_policy */
    const char *brief, *what;
} tlm_failure;

/* The rows in the map's order; NULL past the end. */
const tlm_failure *tlm_failure_at(size_t i);
/* The row of an tlm_status; an unknown code (or TLM_OK) is NULL. */
const tlm_failure *tlm_failure_of_code(int code);
/* The row whose worker exits with `status`; NULL for 0 and for statuses
 * no kind has. */
const tlm_failure *tlm_failure_of_exit(int status);
/* The row of a kind's name ("oom"); NULL for other names. */
const tlm_failure *tlm_failure_of_kind(const char *kind);

#endif
