/* opts.h: tlmd's settings, as parsed from its command line (main.c). */
#ifndef TLM_ORC_OPTS_H
#define TLM_ORC_OPTS_H

#include <stddef.h>

#include "orchestrator/resources.h"

/* Every field is an option of orchestrator/main.c's OPTS table, its default
 * and range there too (common/cli.h). */
typedef struct orc_opts {
    const char **sweeps;       /* --sweeps FILE|DIR, in order */
    size_t n_sweeps;
    const char *db_path;       /* --db */
    const char *runs_dir;      /* --runs */
    const char *devices;       /* --devices auto|cpu|0,1,... */
    int workers;               /* --workers (0: automatic) */
    int threads_per_worker;    /* --threads-per-worker (0: automatic) */
    int max_attempts;          /* --max-attempts: failed attempts of the job's own making */
    int max_machine_faults;    /* --max-machine-faults: attempts in a row the machine failed (io, spawn) */
    double retry_delay;        /* --retry-delay seconds: before the first retry, doubling after */
    double retry_delay_max;    /* --retry-delay-max seconds */
    int dry_run, rerun, retry_failed, adopt_runs;
    double heartbeat_timeout;  /* --heartbeat-timeout seconds */
    double stall_timeout;      /* --stall-timeout seconds (0: off): heartbeats without progress */
    double kill_grace;         /* --kill-grace seconds between SIGTERM and SIGKILL */
    const char *worker;        /* --worker PATH (default: found beside tlmd) */
    int progress;              /* --progress / --no-progress; -1: when stdout is a terminal */
    const char *executor;      /* --executor local|slurm */
    /* --executor slurm */
    orc_resources res;         /* --gpus, --cpus-per-job, --time, --partition, --account, --qos, --sbatch-arg:
                                * the defaults of a sweep's resources: */
    double slurm_poll;         /* --slurm-poll seconds: one squeue for the whole sweep this often */
    int slurm_max_jobs;        /* --slurm-max-jobs: Slurm jobs queued or running at a time */
    double slurm_signal;       /* --slurm-signal-before seconds: the checkpoint signal before the time limit */
} orc_opts;

#endif
