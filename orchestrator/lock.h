/* lock.h: one daemon per results.db.  tlmd holds an exclusive flock on
 * "<db>.lock" (which also holds its pid) for its whole life; the kernel
 * drops it when the process dies, even by kill -9, so a stale lock cannot
 * exist.  `tlmd status` asks without waiting whether a daemon holds it.
 * Must not: let workers inherit the lock (the descriptor is close-on-exec). */
#ifndef TLM_ORC_LOCK_H
#define TLM_ORC_LOCK_H

#include "engine/err.h"

/* Returns the descriptor (keep it open), or a negative eng_status. */
int orc_lock_acquire(const char *db_path, eng_err *e);
/* pid of the daemon holding the lock, 0 if none, -1 if held by an unknown pid. */
long orc_lock_holder(const char *db_path);

#endif
