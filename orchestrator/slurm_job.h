/* slurm_job.h: the batch job of the slurm executor, on the node.  tlmd
 * submits a one-line batch script, "#!<this tlmd> --slurm-job", so that the
 * node runs tlmd itself (no shell) as
 *     tlmd --slurm-job SCRIPT RUN_DIR TOKEN WORKER [WORKER ARGS...]
 * which starts the worker with --events-file RUN_DIR/slurm/TOKEN.R.events
 * (R: SLURM_RESTART_COUNT, so that a requeued job writes a new file),
 * passes the stop signals on to it (SIGUSR1, sent by Slurm --signal before
 * the time limit, and SIGTERM/SIGINT, become SIGTERM: checkpoint and exit
 * 75), waits for it, and writes how it ended to RUN_DIR/slurm/TOKEN.R.end
 * atomically (temp, fsync, rename): tlmd learns an attempt's end from that
 * file, never from sacct.
 * Must not: run a shell, or exit before the end file is on disk. */
#ifndef TLM_ORC_SLURM_JOB_H
#define TLM_ORC_SLURM_JOB_H

#include <stdint.h>

#include "common/err.h"

#define ORC_SLURM_JOB_ARG "--slurm-job"
#define ORC_SLURM_END_MAGIC "tlmd-slurm-end 1"

/* What the end file says. */
typedef struct orc_slurm_end {
    int64_t restart;
    int exited;           /* 1: exit status known; 0: killed by a signal */
    int status, signal;
    char slurm_signal[8]; /* "USR1" (time limit near), "TERM", "INT", or "" */
    char node[64], job[32];
} orc_slurm_end;

/* main() of tlmd --slurm-job; returns the exit status. */
int orc_slurm_job_main(int argc, char **argv);

/* Paths of an attempt's files in the run folder ("" .. ".events" / ".end"). */
int orc_slurm_file(char *out, size_t cap, const char *run_dir, const char *token, int64_t restart,
                   const char *ext, tlm_err *e);
/* Reads an end file: 1 read, 0 absent, negative (e set) unreadable or malformed. */
int orc_slurm_end_read(const char *path, orc_slurm_end *end, tlm_err *e);

#endif
