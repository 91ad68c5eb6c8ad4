/* executor.h: how tlmd runs an attempt (design.md "Contract: executors").
 * One path for every executor, three owners:
 *   daemon.c   what runs where: slots, the queue, the jobs' states and the
 *              counters, and what an attempt's end means for its job;
 *   attempt.c  the attempt itself: its run folder made to agree with the
 *              database, its row in results.db (opened, updated, ended,
 *              followed by the next on a requeue), its label, the worker's
 *              command line and heartbeat period, every stop and kill, and
 *              the way back below;
 *   executor   processes only: it launches the worker attempt.c describes,
 *              signals it, observes it (its event lines, its end), and
 *              hands each observation back through the orc_attempt_*
 *              functions of this header.
 *   local: a child process on this machine, events over a pipe
 *          (exec_local.c);
 *   slurm: one sbatch per attempt, events through a file in the shared run
 *          folder (exec_slurm.c, slurm_adopt.c, and slurm_job.c on the node).
 * A launcher in between (mpirun for a job of several ranks, srun inside a
 * Slurm job) is the executor's business alone: it wraps the worker's
 * command line, and what comes back is still one attempt's events and end.
 * Must not (an executor): write to results.db, touch a slot, a counter or
 * a job's state, or stop a run other than through orc_attempt_stop/kill;
 * hand back an end before every event line it read has been handed back. */
#ifndef TLM_ORC_EXECUTOR_H
#define TLM_ORC_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "db/db.h"

struct orc_daemon;
struct orc_run;
struct orc_opts;
struct orc_plan_needs;

typedef struct orc_executor {
    const char *name;  /* "local" | "slurm": attempts.executor */
    void *ctx;         /* the executor's own state */
    /* 1: the attempt's row is committed before launch (a launched attempt
     * may outlive tlmd and must be found again by the next one: slurm);
     * 0: it is recorded right after the launch, with the process id, and
     * committed with the worker's first events (local). */
    int record_first;
    /* Where the runs go, for tlmd's start-up line: "on 2 slot(s) (cpu" */
    int (*where)(const struct orc_daemon *d, char *buf, size_t n);
    /* Before results.db is opened: refuse, saying what to change, what the
     * sweeps ask for that this executor cannot run (data parallel: nodes,
     * ranks per node, the launcher, GPUs per rank); NULL: one rank a job. */
    int (*check_needs)(const struct orc_daemon *d, const struct orc_plan_needs *n, tlm_err *e);
    /* After the plan is loaded, before the first start: adopt what a
     * previous daemon left running (NULL: nothing to adopt; orc_recover has
     * closed the local attempts already). */
    int (*recover)(struct orc_daemon *d, tlm_err *e);
    /* The executor's part of a new run (r->ex), before its row is opened. */
    int (*prepare)(struct orc_run *r, tlm_err *e);
    /* Its fields of the attempt's row (the rest is attempt.c's). */
    void (*fill_row)(const struct orc_run *r, db_attempt_row *row);
    /* Start the worker (orc_attempt_worker_cmd is its command line); sets
     * r->pid when it is a process of this machine.  On failure r->ex is
     * released with the run. */
    int (*launch)(struct orc_run *r, tlm_err *e);
    void (*signal)(struct orc_run *r, int sig);        /* to the attempt's processes */
    void (*tick_run)(struct orc_run *r, double now);   /* per run, every tick: silence, escalation */
    void (*poll)(struct orc_daemon *d, double now);    /* every tick, once (NULL: none) */
    void (*release)(struct orc_run *r);                /* frees r->ex, now or once its handles are closed */
    void (*shutdown)(struct orc_daemon *d);            /* after the loop (NULL: none) */
} orc_executor;

/* exec_local.c */
void orc_executor_local(orc_executor *x);
/* exec_slurm.c: checks the options and finds the tlmd to run on the nodes */
int orc_executor_slurm(orc_executor *x, const struct orc_opts *o, tlm_err *e);

/* ------------------------------------------------------------ the way back (attempt.c) */
/* An event line (without its newline).  resume_at >= 0: where the
 * executor's stream goes on after it, recorded with the line's rows (a
 * file read from an offset); -1: nothing to record (a pipe). */
void orc_attempt_line(struct orc_run *r, const char *line, size_t len, int64_t resume_at);
/* Bytes that cannot be an event line (why says what), resume_at as above. */
void orc_attempt_bad_line(struct orc_run *r, const char *why, int64_t resume_at);
/* The scheduler's view of the attempt: its job id, state, node (NULL
 * leaves one as it is). */
void orc_attempt_sched(struct orc_run *r, const char *job, const char *state, const char *node);
/* The worker's process ended: its exit status, or the signal that killed
 * it (signal 0: it exited). */
void orc_attempt_exited(struct orc_run *r, int64_t status, int signal);
/* No event line will come any more.  The attempt is recorded as ended once
 * both this and orc_attempt_exited are in (the run is freed then). */
void orc_attempt_stream_end(struct orc_run *r);
/* The scheduler runs the same job again (a requeue): this attempt ends as
 * interrupted with `message`, how the worker ended as above, and the next
 * attempt of the same run begins (fill_row already describes it).
 * 0, or negative when results.db failed (tlmd is stopping). */
int orc_attempt_requeued(struct orc_run *r, int64_t status, int signal, const char *message);

/* ------------------------------------------------------------ stops (attempt.c) */
/* SIGTERM now through the run's executor (the worker checkpoints and
 * exits); kill_reason is why (orc_kill_reason; the first one given stays).
 * Nothing once the process has ended. */
void orc_attempt_stop(struct orc_run *r, int kill_reason);
/* SIGKILL now through the run's executor; kill_reason as above (0: none). */
void orc_attempt_kill(struct orc_run *r, int kill_reason);

/* ------------------------------------------------------------ the worker (attempt.c) */
/* Where and how the executor runs the worker of an attempt. */
typedef struct orc_worker_place {
    const char *run_dir;   /* the run folder as the worker sees it */
    const char *events_fd; /* --events-fd N; NULL: the executor adds its own (slurm: --events-file) */
    const char *device;    /* --device */
    int threads;           /* --threads */
} orc_worker_place;

#define ORC_WORKER_ARGC 20
/* The worker's command line: argv[0] is the worker program, then its
 * options, then NULL; the strings live in the struct. */
typedef struct orc_worker_cmd {
    char *argv[ORC_WORKER_ARGC];
    char config[TLM_PATH_CAP + 64], threads[16], heartbeat[16];
} orc_worker_cmd;
int orc_attempt_worker_cmd(const struct orc_run *r, const orc_worker_place *at, orc_worker_cmd *cmd, tlm_err *e);

#endif
