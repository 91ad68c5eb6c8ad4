/* daemon.h: tlmd's running state, shared by the files of the event loop:
 * daemon.c (loop, queue, slots, signals, periodic tick, batching, what an
 * attempt's end means for its job, summary), attempt.c (one attempt: its
 * record, its worker's command line, its stops; executor.h), the executors
 * (exec_local.c, exec_slurm.c), ingest.c (event -> results.db), recover.c
 * (after a crash), progress.c (terminal view and log lines).
 * The loop is single-threaded: callbacks are short and never block on
 * anything but SQLite's own (WAL, no reader can hold it up) writes. */
#ifndef TLM_ORC_DAEMON_H
#define TLM_ORC_DAEMON_H

#include <stdint.h>
#include <stdio.h>
#include <uv.h>

#include "db/db.h"
#include "common/err.h"
#include "common/fileio.h"
#include "orchestrator/classify.h"
#include "orchestrator/event.h"
#include "orchestrator/executor.h"
#include "orchestrator/exits.h"
#include "orchestrator/opts.h"
#include "orchestrator/plan.h"
#include "orchestrator/slots.h"

typedef struct orc_daemon orc_daemon;

/* A job waiting for its retry: started no sooner than `at` (monotonic s). */
typedef struct orc_retry {
    uint32_t job;
    double at;
} orc_retry;

/* One attempt of one job, whatever runs it (attempt.c); the executor's
 * own part hangs from `ex`. */
typedef struct orc_run {
    orc_daemon *d;
    size_t job;             /* index into d->plan.jobs */
    int slot;
    int64_t attempt;        /* attempts.id */
    int n;                  /* attempts.n */
    int pid;                /* the worker's process on this machine (attempts.pid), or 0 */
    double started, last_event, term_at; /* monotonic seconds */
    double progress_at;     /* when it last showed progress (an event, or a heartbeat whose counter moved) */
    int64_t progress;       /* the last heartbeat's progress counter (-1: none yet) */
    char phase[16];         /* the last heartbeat's phase */
    char stall_note[96];    /* why it was judged stuck, for the attempt's message */
    int kill_reason;        /* orc_kill_reason */
    int term_sent, kill_sent;
    int exited, eof;        /* handed back: its process ended; its event lines ended */
    int finished;           /* its end is recorded (orc_run_finished) */
    int64_t exit_status;
    int term_signal;        /* 0: it exited with exit_status */
    orc_event_parser *parser;
    int got_start, terminal, saw_done;
    int done_nonfinite;     /* the `done` event's loss or validation loss is NaN or infinite */
    char error_kind[16];
    char message[TLM_MSG_MAX]; /* from the worker's error event */
    int64_t step, tokens, total_tokens, resumed_from, db_tokens;
    double loss, tokens_per_s;
    double final_loss, final_val_loss, elapsed_s; /* from `done` */
    int has_loss;
    int protocol_errors;
    char label[64];
    int64_t seed;           /* the job's, for names (a Slurm job's) */
    char run_dir[TLM_PATH_CAP];
    void *ex;               /* the executor's own part, or NULL */
    char where[48];         /* for log lines where there is no pid: "Slurm job 17" */
} orc_run;

typedef struct orc_slot {
    orc_slot_spec spec;
    orc_run *run;
} orc_slot;

struct orc_daemon {
    const orc_opts *o;
    orc_executor ex;        /* how attempts run (executor.h) */
    uv_loop_t loop;
    db *db;
    db_checkpointer *ckpt;  /* WAL checkpoints off the loop thread */
    orc_plan plan;
    orc_slot slots[ORC_MAX_SLOTS];
    int n_slots, threads;
    size_t q_head;          /* plan.queue[q_head..n_queue) still to start */
    orc_retry *retry;       /* jobs to retry once their delay is over, ahead of the queue (oldest first) */
    size_t retry_n, retry_cap;
    uv_timer_t tick;
    uv_signal_t sig[3];
    int stopping, forced, stop_signal, closing;
    int n_running;
    char worker[4096];
    char host[256];
    int fatal;              /* results.db failed: stop as after a signal */
    tlm_err fatal_err;
    /* counts for the summary and the benchmark */
    uint64_t events, bad_lines, batch_rows, commits, attempts_started;
    double commit_ms_max, commit_ms_total;
    double dispatch_ms_max, dispatch_ms_total;
    uint64_t done_now, failed_now, interrupted_now, retried_now;
    double t0;
    /* progress */
    int tty;
    int drawn;              /* lines of the live view on screen */
    double last_draw, last_plain;
    char readbuf[65536];
};

/* daemon.c */
int orc_daemon_run(const orc_opts *o, tlm_err *e); /* returns tlmd's exit status (exits.h) */
void orc_batch(orc_daemon *d);                     /* opens the batch transaction if none is open */
int orc_commit(orc_daemon *d);                     /* ends the batch; on failure d->fatal */
void orc_fatal(orc_daemon *d, const tlm_err *e);
/* A free slot, or -1; grow: else a new one like the others (adoption may
 * find more Slurm jobs than --slurm-max-jobs). */
int orc_slot_find(orc_daemon *d, int grow);
/* The books of a run that occupies its slot: started (a new attempt) or adopted. */
void orc_run_placed(orc_daemon *d, orc_run *r, int started);
void orc_run_finished(orc_daemon *d, orc_run *r);  /* attempt.c -> daemon.c: records the end, frees r */

/* daemon.c: a job to start again after `delay` seconds (ahead of the queue) */
void orc_retry_later(orc_daemon *d, size_t job, double delay);

/* attempt.c (with the executor's side in executor.h) */
/* The next attempt of plan job `job` in slot `slot`: its run folder made
 * to agree with the database, its row opened, its worker launched by the
 * executor, the run placed in its slot.  On failure no run is left;
 * *row is the attempt row opened before the launch (else 0), for the
 * caller to close. */
int orc_attempt_start(orc_daemon *d, size_t job, int slot, int64_t *row, tlm_err *e);
/* A run for an attempt a previous daemon left open (row `attempt`, number
 * n): what the database knows of it; the caller adds the executor's part
 * and places it.  NULL with e set on failure. */
orc_run *orc_attempt_adopt(orc_daemon *d, size_t job, int slot, int64_t attempt, int n, tlm_err *e);
/* The attempt's message: why it ended, in words (what the worker said, or
 * the last line of its stderr), its protocol errors. */
void orc_attempt_message(const orc_run *r, const orc_outcome *out, char *message, size_t cap);
/* How the worker ended, for orc_classify. */
void orc_attempt_exit(const orc_run *r, orc_exit *x);
/* The end of the attempt's row (and the job's tokens), in the batch. */
int orc_attempt_record_end(orc_run *r, const char *reason, const char *message, tlm_err *e);
/* A start that got no process (nothing ran): its row (`row`, or a new one)
 * ended as `reason` with `message`; *n is its number. */
int orc_attempt_record_unstarted(orc_daemon *d, size_t job, int64_t row, const char *reason, const char *message,
                                 int *n, tlm_err *e);
/* An open attempt without a process any more (a previous daemon's):
 * ended as interrupted with `message`. */
int orc_attempt_close_open(db *dbh, int64_t id, const char *message, tlm_err *e);
void orc_attempt_free(orc_run *r);

/* ingest.c: a line the executor handed back (attempt.c) */
void orc_ingest_line(orc_run *r, const char *line, size_t len);
void orc_ingest_protocol_error(orc_run *r, const char *why, const char *line, size_t len);

/* recover.c: close attempts a dead daemon left open; returns 0 or tlm_status */
int orc_recover(db *d, FILE *log, tlm_err *e);

/* progress.c */
void orc_say(orc_daemon *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* orc_say, and on stderr (unless it is the same file as stdout) and as a
 * 'warn' row in results.db's logs (job may be NULL): for what a user must
 * hear of even in a quiet run, such as checkpoints set aside. */
void orc_notice(orc_daemon *d, const char *job, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void orc_progress_tick(orc_daemon *d, double now);
void orc_summary(orc_daemon *d, FILE *out);

#endif
