/* classify.h: how an attempt ended -> its reason and what happens next,
 * per docs/protocol.md "Exit statuses" (the worker's statuses and their
 * policies are the rows of common/failure.h).  The exit status (reported by the
 * kernel) decides; the worker's own terminal event only adds its message
 * and must agree (exit 0 without a `done` event is a protocol failure).
 * Retriable failures are of two kinds: the job's (a crash, a timeout, oom,
 * an internal error: counted against --max-attempts) and the machine's
 * (io: disk full, permissions, a read-only file system, EIO on the run
 * folder; 127: the worker could not be started), which say nothing about
 * the job and count against --max-machine-faults instead.
 * Must not: retry config, data or diverged failures. */
#ifndef TLM_ORC_CLASSIFY_H
#define TLM_ORC_CLASSIFY_H

typedef enum orc_kill_reason {
    ORC_KILL_NONE = 0,
    ORC_KILL_TIMEOUT,   /* silent past --heartbeat-timeout */
    ORC_KILL_STALL,     /* heartbeats, but no progress past --stall-timeout */
    ORC_KILL_SHUTDOWN,  /* tlmd was asked to stop */
    ORC_KILL_PROTOCOL,  /* the worker trains something else (config_id mismatch) */
    ORC_KILL_TIMELIMIT  /* slurm: stopped (and checkpointed, exit 75) by the signal before its time limit */
} orc_kill_reason;

typedef enum orc_next {
    ORC_NEXT_DONE,        /* job done */
    ORC_NEXT_RETRY,       /* retriable: counts as a failure, resumes if attempts remain */
    ORC_NEXT_FAIL,        /* failed for good */
    ORC_NEXT_INTERRUPTED, /* stopped on our request: resumes on the next run */
    ORC_NEXT_REQUEUE      /* slurm: its time limit came; submitted again at once, not a failure */
} orc_next;

typedef struct orc_exit {
    int exited;          /* 1: exit status known; 0: killed by a signal */
    int status;          /* exit status */
    int signal;          /* terminating signal (0 if none) */
    int kill_reason;     /* orc_kill_reason: why tlmd signalled it, if it did */
    int saw_done;        /* a valid `done` event arrived */
    const char *error_kind; /* from an `error` event, or NULL */
    int done_nonfinite;  /* the `done` event's loss or validation loss is NaN or infinite */
} orc_exit;

typedef struct orc_outcome {
    const char *reason;  /* attempts.reason */
    int next;            /* orc_next */
    int machine;         /* ORC_NEXT_RETRY: a fault of the machine, not of the job */
    char message[256];   /* why, in words (the worker's message is added by the caller) */
} orc_outcome;

void orc_classify(const orc_exit *x, orc_outcome *out);

#endif
