/* daemon.h: tlmd's running state, shared by the files of the event loop:
 * daemon.c (loop, queue, signals, periodic tick, batching, summary),
 * supervise.c (one worker process: spawn, pipe, silence, kill, exit),
 * ingest.c (event -> results.db), recover.c (after a crash),
 * progress.c (terminal view and log lines).
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
#include "orchestrator/linebuf.h"
#include "orchestrator/opts.h"
#include "orchestrator/plan.h"
#include "orchestrator/slots.h"

typedef struct orc_daemon orc_daemon;

/* A job waiting for its retry: started no sooner than `at` (monotonic s). */
typedef struct orc_retry {
    uint32_t job;
    double at;
} orc_retry;

/* One attempt of one job: a worker process and its events pipe. */
typedef struct orc_run {
    orc_daemon *d;
    uv_process_t proc;
    uv_pipe_t pipe;
    int open_handles;       /* freed when both handles are closed */
    size_t job;             /* index into d->plan.jobs */
    int slot;
    int64_t attempt;        /* attempts.id */
    int n;                  /* attempts.n */
    int pid;
    double started, last_event, term_at, exited_at; /* monotonic seconds */
    double progress_at;     /* when it last showed progress (an event, or a heartbeat whose counter moved) */
    int64_t progress;       /* the last heartbeat's progress counter (-1: none yet) */
    char phase[16];         /* the last heartbeat's phase */
    char stall_note[96];    /* why it was judged stuck, for the attempt's message */
    int kill_reason;        /* orc_kill_reason */
    int term_sent, kill_sent;
    int exited, eof, finished;
    int64_t exit_status;
    int term_signal;
    orc_linebuf lb;
    orc_event_parser *parser;
    int got_start, terminal, saw_done;
    char error_kind[16];
    char message[TLM_MSG_MAX]; /* from the worker's error event */
    int64_t step, tokens, total_tokens, resumed_from, db_tokens;
    double loss, tokens_per_s;
    double final_loss, final_val_loss, elapsed_s; /* from `done` */
    int has_loss;
    int protocol_errors;
    char label[64];
    char run_dir[TLM_PATH_CAP];
    void *ex;               /* the executor's own part (exec_slurm.c), or NULL */
    char where[48];         /* for log lines where there is no pid: "Slurm job 17" */
} orc_run;

typedef struct orc_slot {
    orc_slot_spec spec;
    orc_run *run;
} orc_slot;

struct orc_daemon {
    const orc_opts *o;
    orc_executor ex;        /* how attempts run (executor.h) */
    int64_t start_attempt;  /* a failed start's attempt row, when the executor opened one (else 0) */
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
int orc_daemon_run(const orc_opts *o, tlm_err *e); /* returns tlmd's exit status */
void orc_batch(orc_daemon *d);                     /* opens the batch transaction if none is open */
int orc_commit(orc_daemon *d);                     /* ends the batch; on failure d->fatal */
void orc_fatal(orc_daemon *d, const tlm_err *e);
void orc_run_finished(orc_daemon *d, orc_run *r);  /* supervise.c -> daemon.c */

/* daemon.c: a job to start again after `delay` seconds (ahead of the queue) */
void orc_retry_later(orc_daemon *d, size_t job, double delay);

/* supervise.c */
/* A new run of plan job `job`: its run folder made to agree with the
 * database (config.json, checkpoints it never recorded set aside); every
 * executor starts from it.  NULL with e set on failure. */
orc_run *orc_run_prepare(orc_daemon *d, size_t job, int slot, tlm_err *e);
void orc_run_free_prepared(orc_run *r);
int orc_run_start(orc_daemon *d, size_t job, int slot, tlm_err *e);
void orc_run_signal(orc_run *r, int sig);          /* to the worker's process group */
void orc_run_stop(orc_run *r, int kill_reason);    /* SIGTERM now, SIGKILL after --kill-grace */
void orc_run_tick(orc_run *r, double now);         /* silence and escalation checks */
void orc_run_close(orc_run *r);

/* ingest.c */
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
