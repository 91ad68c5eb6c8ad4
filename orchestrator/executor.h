/* executor.h: how tlmd runs an attempt (design.md "Contract: executors").
 * The daemon (daemon.c) decides what runs and records every outcome; an
 * executor starts an attempt, signals it, feeds its event lines to
 * orc_ingest_line, learns its end (and hands it to orc_run_finished), and
 * after a restart takes over the attempts a previous daemon left running.
 *   local: a child process on this machine, events over a pipe
 *          (supervise.c, exec_local.c);
 *   slurm: one sbatch per attempt, events through a file in the shared run
 *          folder (exec_slurm.c, slurm_job.c on the node).
 * Must not: record an attempt's end before every event line it wrote has
 * been ingested. */
#ifndef TLM_ORC_EXECUTOR_H
#define TLM_ORC_EXECUTOR_H

#include <stddef.h>

#include "common/err.h"

struct orc_daemon;
struct orc_run;
struct orc_opts;

typedef struct orc_executor {
    const char *name;  /* "local" | "slurm": attempts.executor */
    void *ctx;         /* the executor's own state */
    /* After the plan is loaded, before the first start: adopt what a
     * previous daemon left running (NULL: nothing to adopt; orc_recover has
     * closed the local attempts already). */
    int (*recover)(struct orc_daemon *d, tlm_err *e);
    /* Start the next attempt of plan job `job` in slot `slot`; on success the
     * slot holds the run.  An error leaves no run behind. */
    int (*start)(struct orc_daemon *d, size_t job, int slot, tlm_err *e);
    void (*signal)(struct orc_run *r, int sig);        /* to the attempt's processes */
    void (*stop)(struct orc_run *r, int kill_reason);  /* TERM now, KILL after --kill-grace */
    void (*tick_run)(struct orc_run *r, double now);   /* per run, every tick: silence, escalation */
    void (*poll)(struct orc_daemon *d, double now);    /* every tick, once (NULL: none) */
    void (*close)(struct orc_run *r);                  /* frees r, now or once its handles are closed */
    void (*shutdown)(struct orc_daemon *d);            /* after the loop (NULL: none) */
} orc_executor;

/* exec_local.c */
void orc_executor_local(orc_executor *x);
/* exec_slurm.c: checks the options and finds the tlmd to run on the nodes */
int orc_executor_slurm(orc_executor *x, const struct orc_opts *o, tlm_err *e);

#endif
