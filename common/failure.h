/* failure.h: the one table of how a job can fail: the eng_status code, the
 * kind's name (in `error` events, results.db attempts.reason and
 * jobs.reason), tlm-worker's exit status, and what tlmd does next.  The
 * eng_status enum (err.h), eng_status_kind, the worker's exit statuses,
 * tlmd's classification of an exit status, the kinds an `error` event may
 * carry, the reasons --retry-failed is needed for, and the tables of
 * docs/protocol.md and docs/tlmd.md (checked by tests/tlmd/test_events.c)
 * all come from ENG_FAILURE_MAP, after libuv's UV_ERRNO_MAP.
 * Must not: list a kind, an exit status or a retry rule anywhere else. */
#ifndef TLM_COMMON_FAILURE_H
#define TLM_COMMON_FAILURE_H

#include <stddef.h>

/* What tlmd does after an attempt that ended this way. */
typedef enum eng_policy {
    ENG_POLICY_FINAL,   /* failed for good: retrying cannot help (--retry-failed after a fix) */
    ENG_POLICY_RETRY,   /* retried, counted against --max-attempts */
    ENG_POLICY_MACHINE, /* retried, a fault of the machine: counted against --max-machine-faults */
    ENG_POLICY_RESUME   /* stopped on request: resumes (retried and counted when tlmd did not ask) */
} eng_policy;

/* XX(id, code, kind, exit, policy, brief, what), in the order of the exit
 * statuses:
 *   id      names ENG_E<id> (eng_status) and ENG_EXIT_<id>
 *   code    the eng_status value; fixed, never reused
 *   kind    the failure's name in events and results.db
 *   exit    tlm-worker's exit status
 *   policy  ENG_POLICY_*
 *   brief   the words of `tlm-worker --help`
 *   what    the words of tlmd's attempt message: "<what> (exit <exit>)" */
#define ENG_FAILURE_MAP(XX)                                                                                      \
    XX(INTERNAL, -6, "internal", 1, ENG_POLICY_RETRY, "internal error", "internal error")                        \
    XX(CONFIG, -1, "config", 2, ENG_POLICY_FINAL, "config or usage", "configuration or usage error")             \
    XX(DATA, -2, "data", 3, ENG_POLICY_FINAL, "data", "data error")                                              \
    XX(DIVERGED, -5, "diverged", 4, ENG_POLICY_FINAL, "diverged", "loss or gradients not finite")                \
    XX(NOMEM, -4, "oom", 5, ENG_POLICY_RETRY, "out of memory", "out of memory")                                  \
    XX(IO, -3, "io", 6, ENG_POLICY_MACHINE, "I/O", "I/O error")                                                  \
    XX(INTERRUPTED, -7, "interrupted", 75, ENG_POLICY_RESUME, "stopped by SIGTERM/SIGINT after a checkpoint",    \
       "stopped by a signal from outside tlmd")

/* Exit statuses: ENG_EXIT_OK (a `done` job) and one per kind. */
enum {
    ENG_EXIT_OK = 0,
#define ENG_XX_(id, code, kind, exit, policy, brief, what) ENG_EXIT_##id = (exit),
    ENG_FAILURE_MAP(ENG_XX_)
#undef ENG_XX_
};

typedef struct eng_failure {
    int code;           /* eng_status */
    const char *kind;
    int exit;
    int policy;         /* eng_policy */
    const char *brief, *what;
} eng_failure;

/* The rows in the map's order; NULL past the end. */
const eng_failure *eng_failure_at(size_t i);
/* The row of an eng_status; an unknown code (or ENG_OK) is NULL. */
const eng_failure *eng_failure_of_code(int code);
/* The row whose worker exits with `status`; NULL for 0 and for statuses
 * no kind has. */
const eng_failure *eng_failure_of_exit(int status);
/* The row of a kind's name ("oom"); NULL for other names. */
const eng_failure *eng_failure_of_kind(const char *kind);

#endif
