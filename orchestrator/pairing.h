/* pairing.h: a runs folder belongs to one database.  The database holds
 * an identity (meta.database_id, db_database_id); the runs folder holds a
 * marker, <runs>/tlmd-runs.json, that names the identity (and, for
 * people, the path) of the database it belongs to:
 *
 *     {"version": 1, "database_id": "<32 hex digits>", "database": "/abs/results.db"}
 *
 * tlmd claims a folder with no marker when every run folder in it is one of
 * the database's jobs (a new folder, or one made before markers existed),
 * and refuses a folder that belongs to another database, or holds run
 * folders the database does not know, unless told to adopt it (--adopt-runs:
 * the database then takes the folder over; checkpoints it never recorded
 * are set aside by rundir.c, never deleted).  The marker is written
 * atomically (temp file, fsync, rename, fsync of the folder).
 * Must not: change anything in the folder when it refuses. */
#ifndef TLM_ORC_PAIRING_H
#define TLM_ORC_PAIRING_H

#include <stdio.h>

#include "db/db.h"
#include "common/err.h"

#define ORC_PAIRING_FILE "tlmd-runs.json"

/* runs_dir must exist.  Returns 0 (paired; what changed is said on `log`),
 * TLM_ECONFIG when the folder belongs elsewhere (the message names both
 * databases and what to do), or another negative tlm_status. */
int orc_pairing_claim(const char *runs_dir, const char *db_path, db *d, int adopt, FILE *log, tlm_err *e);

#endif
