/* exec_slurm.h: the slurm executor's parts shared by its two files:
 * exec_slurm.c (submission, events, ends, polls) and slurm_adopt.c (the
 * adoption of a previous daemon's Slurm jobs at start-up).  Private to
 * them; see exec_slurm.c for how the executor works.
 * Must not: be included by anything else. */
#ifndef TLM_ORC_EXEC_SLURM_H
#define TLM_ORC_EXEC_SLURM_H

#include <limits.h>
#include <stdint.h>

#include "orchestrator/daemon.h"
#include "orchestrator/slurm_job.h"

typedef struct orc_slurm_ctx {
    orc_daemon *d;
    char tlmd[PATH_MAX];      /* this program, run on the nodes */
    char abs_runs[PATH_MAX];  /* --runs, absolute: the nodes' working folder may differ */
    char cwd[PATH_MAX];       /* the folder tlmd runs in: its batch jobs run there too (--chdir), so that a
                               * sweep's relative paths mean on the nodes what they mean here */
    char script[PATH_MAX];    /* runs/tlmd-slurm-job: "#!<tlmd> --slurm-job" */
    char dbid[DB_ID_LEN + 1];
    char user[64];
    char srun[PATH_MAX];      /* srun, for a job of several ranks (check_needs finds it) */
    double next_poll;         /* monotonic */
    uint64_t polls_ok;        /* squeue answers so far */
    int squeue_failing;       /* failures in a row */
    uint64_t sbatch_calls, squeue_calls, scancel_calls;
    char *buf;                /* READ_CHUNK + 1 */
} orc_slurm_ctx;

/* One squeue line of ours: tlmd:<dbid>:<token> in the comment. */
typedef struct orc_sq_job {
    char id[32], state[24], node[64], token[40];
} orc_sq_job;

typedef struct orc_slurm_run {
    char token[40];
    char job[32];             /* Slurm job id; "" until known */
    int64_t restart;          /* SLURM_RESTART_COUNT of this attempt */
    int64_t offset;           /* bytes of the events file ingested (and committed with their rows) */
    char state[24];           /* submitting, PENDING, RUNNING, ... (squeue), unknown */
    char node[64];
    char events[TLM_PATH_CAP + 64], end[TLM_PATH_CAP + 64];
    int gone_polls;           /* good squeues in a row without it */
    uint64_t end_poll;        /* polls_ok when its end file was seen */
    int have_end;
    orc_slurm_end endinfo;
    int want_term, want_kill; /* scancel in this tick's batch */
    int ever_running;
} orc_slurm_run;

static inline orc_slurm_ctx *orc__slurm_ctx(orc_daemon *d) { return d->ex.ctx; }

/* One squeue for all of this user's jobs: 0 answered (*jobs: this
 * database's, malloc'd), else failed (e set): "unknown", never "gone". */
int orc__squeue(orc_slurm_ctx *c, orc_sq_job **jobs, size_t *n, tlm_err *e);
const orc_sq_job *orc__sq_find(const orc_sq_job *v, size_t n, const char *token);
/* The run's events and end paths for its token and restart count. */
void orc__slurm_set_paths(orc_run *r);
void orc__slurm_set_where(orc_run *r);
/* squeue's view of a run's job into the run and its attempt row. */
void orc__slurm_update_state(orc_run *r, const orc_sq_job *q);
/* runs/tlmd-slurm-job, the batch script whose interpreter is tlmd. */
int orc__slurm_write_script(orc_slurm_ctx *c, const orc_opts *o, tlm_err *e);
/* slurm_adopt.c: the executor's recover (also its set-up that needs the
 * database and the runs folder). */
int orc__slurm_recover(orc_daemon *d, tlm_err *e);

#endif
