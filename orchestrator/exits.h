/* exits.h: tlmd's exit statuses, one table (after common/failure.h's
 * TLM_FAILURE_MAP): the statuses main() and the daemon return, and the
 * words of docs/tlmd.md's "Exit status" (tests/tlmd/test_events.c checks
 * that the docs list these).
 * Must not: give an exit status as a bare number anywhere else in tlmd. */
#ifndef TLM_ORC_EXITS_H
#define TLM_ORC_EXITS_H

#include "common/err.h"

/* XX(id, status, when): ORC_EXIT_<id> = status; `when` is the docs' words. */
#define ORC_EXIT_MAP(XX)                                                                                         \
    XX(OK, 0, "every job of the given sweeps is done")                                                          \
    XX(FAILED, 1, "some job failed for good")                                                                    \
    XX(USAGE, 2,                                                                                                 \
       "bad usage, a bad sweep file, a database that is not TLM's (or is newer than this tlmd), another daemon " \
       "on the database or the runs folder, or a runs folder of another database (nothing was recorded)")       \
    XX(ERROR, 3, "a database or internal error")                                                                 \
    XX(STOPPED, 75, "stopped by a signal (run the same command again to resume)")

enum {
#define ORC_XX_(id, status, when) ORC_EXIT_##id = (status),
    ORC_EXIT_MAP(ORC_XX_)
#undef ORC_XX_
};

/* The exit status of a failure with this tlm_status: a configuration or
 * usage error is the user's (2), any other a database or internal one (3). */
static inline int orc_exit_error(int code) { return code == TLM_ECONFIG ? ORC_EXIT_USAGE : ORC_EXIT_ERROR; }
/* The same for a step that returned rc: 0 when it succeeded. */
static inline int orc_exit_of(int rc) { return rc == 0 ? ORC_EXIT_OK : orc_exit_error(rc); }

#endif
