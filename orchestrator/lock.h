/* lock.h: one daemon per database, and per runs folder.  tlmd holds an
 * exclusive flock on the database file itself (its own descriptor, opened
 * through whatever path --db gives: a symlink, a hard link or another
 * spelling all reach the same inode, hence the same lock) and one on the
 * --runs folder, for its whole life.  The kernel drops both when the
 * process dies, even by kill -9, so a stale lock cannot exist.  On Linux
 * flock locks are independent of the POSIX byte-range locks SQLite takes
 * on the same file, so readers (`tlmd status`, tlm-report, sqlite3) are
 * never held up (on local file systems: NFS emulates flock with POSIX
 * locks, but results.db does not belong there anyway, its WAL needs shared
 * memory).  The holder's pid is read from /proc/locks.
 * Must not: let workers inherit a lock (the descriptors are close-on-exec);
 * close the database's descriptor while a SQLite connection of this process
 * is open on the file (closing any descriptor of a file drops the process's
 * POSIX locks on it, SQLite's included): keep it until after db_close. */
#ifndef TLM_ORC_LOCK_H
#define TLM_ORC_LOCK_H

#include "common/err.h"

/* The database file must exist (db_create).  Returns the descriptor (keep
 * it open), or a negative tlm_status: TLM_ECONFIG when another daemon holds
 * it (the message names its pid). */
int orc_lock_acquire(const char *db_path, tlm_err *e);
/* pid of the daemon holding the database's lock, 0 if none, -1 if held by
 * a process whose pid cannot be read.  Takes no lock that could stop a
 * daemon from starting (a shared probe lasts microseconds: tlmd retries). */
long orc_lock_holder(const char *db_path);
/* The same for a --runs folder (which must exist). */
int orc_lock_runs(const char *runs_dir, tlm_err *e);

#endif
