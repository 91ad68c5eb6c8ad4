/* status.h: `tlmd status`: the state of every sweep and job in results.db,
 * read-only, whether or not a daemon is running (WAL: it never waits for
 * the daemon and never holds it up). */
#ifndef TLM_ORC_STATUS_H
#define TLM_ORC_STATUS_H

#include <stdio.h>

#include "common/err.h"

/* sweep: only this sweep (NULL: all); jobs: also list each job. */
int orc_status(const char *db_path, const char *sweep, int jobs, FILE *out, tlm_err *e);

#endif
