/* jobs.h: the daemon's in-memory table of the jobs it was asked to run,
 * kept small (about 100 bytes a job: a 100,000-job sweep fits in ~10 MiB)
 * with a hash index by key.  Everything else about a job lives in
 * results.db and is read when the job starts.
 * Must not: hold configs or results (the database has them). */
#ifndef TLM_ORC_JOBS_H
#define TLM_ORC_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

/* The job states of results.db (db/db.h DB_JOB_STATUS_MAP). */
typedef enum orc_job_status {
    ORC_PENDING = DB_JOB_PENDING,
    ORC_RUNNING = DB_JOB_RUNNING,
    ORC_DONE = DB_JOB_DONE,
    ORC_FAILED = DB_JOB_FAILED,
    ORC_INTERRUPTED = DB_JOB_INTERRUPTED
} orc_job_status;

typedef struct orc_job {
    char key[65];
    uint8_t status;      /* orc_job_status */
    uint8_t queued;      /* in the run queue */
    uint8_t reset;       /* --rerun reset it in this run (its checkpoints go aside) */
    uint16_t sweep;      /* the first sweep of this run that lists it */
    uint8_t arch;        /* eng_arch */
    int32_t attempts;    /* all attempts so far (results.db jobs.attempts) */
    int32_t failures;    /* failed attempts counted against --max-attempts */
    uint16_t streak;     /* attempts failed in a row in this run (the retry delay doubles with it) */
    uint16_t machine_faults; /* of those, the machine's, in a row (against --max-machine-faults) */
    int64_t tokens_total;
} orc_job;

typedef struct orc_jobs {
    orc_job *v;
    size_t n, cap;
    uint32_t *slot;      /* open addressing: index + 1, 0 = empty */
    size_t slot_cap;
} orc_jobs;

/* Index of the job with this key, adding it if new (*added = 1).
 * Returns 0, or -1 out of memory. */
int orc_jobs_add(orc_jobs *t, const char *key, size_t *idx, int *added);
void orc_jobs_clear(orc_jobs *t);

int orc_status_from_name(const char *name); /* -1 if unknown */

#endif
