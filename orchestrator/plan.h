/* plan.h: from --sweeps arguments to the jobs of this run.  Reads every
 * sweep file, checks names across files, expands each, and either lists
 * the jobs (--dry-run, read-only) or records sweeps, jobs and membership
 * in results.db in one transaction and builds the in-memory job table and
 * run queue.  A sweep whose jobs changed since the database last saw it is
 * reconciled: jobs it no longer lists become inactive, new ones are added.
 * Must not: write anything in --dry-run, or leave half a sweep recorded. */
#ifndef TLM_ORC_PLAN_H
#define TLM_ORC_PLAN_H

#include <stdio.h>

#include "db/db.h"
#include "common/err.h"
#include "orchestrator/jobs.h"
#include "orchestrator/opts.h"
#include "orchestrator/resources.h"

typedef struct orc_plan_sweep {
    char name[128];
    char *file;
    uint32_t *jobs;     /* indices into the job table, expansion order */
    size_t n_jobs, n_dups;
    int changed;        /* 0 as stored, 1 different from the stored version, 2 new */
    int64_t added, removed;
    orc_resources res;  /* the sweep's resources: block (the slurm executor's) */
} orc_plan_sweep;

typedef struct orc_plan {
    orc_jobs jobs;
    orc_plan_sweep *sweeps;
    size_t n_sweeps;
    uint32_t *queue;    /* jobs to run, in order */
    size_t n_queue;
    size_t n_done, n_failed; /* settled before this run started */
    size_t n_rerun_kept;     /* --rerun: jobs an unfinished earlier --rerun reset, which go on */
    unsigned arch_mask;      /* bit a: some job of this run has arch a (log lines name
                              * the architecture when there are several) */
} orc_plan;


/* Run mode.  `log` receives one line per sweep. */
int orc_plan_load(orc_plan *p, const orc_opts *o, db *d, FILE *log, tlm_err *e);
/* What the sweeps ask of the executor beyond one process per job (data
 * parallel: resources nodes and ranks_per_node, over --gpus & co.): the
 * most nodes and ranks per node any sweep asks for, and a sweep that asks
 * for the most ranks (for messages). */
typedef struct orc_plan_needs {
    int nodes, ranks_per_node, ranks;
    char sweep[128];
    /* a sweep of several ranks whose GPUs per node are not one a rank
     * ("" when none), and its numbers */
    char gpu_sweep[128];
    int gpus, gpu_ranks_per_node;
} orc_plan_needs;

/* Every sweep file read and expanded, every job config resolved, nothing
 * written: run mode calls it before it creates results.db or the runs
 * folder, so that a mistyped or bad sweep leaves neither behind.  A job
 * whose batch does not divide among its sweep's ranks is refused here
 * (and in the dry run).  needs (may be NULL) receives what the sweeps ask
 * for. */
int orc_plan_check(const orc_opts *o, orc_plan_needs *needs, tlm_err *e);
/* --dry-run: the listing on `out`; reads o->db_path if it exists. */
int orc_plan_dry_run(const orc_opts *o, FILE *out, tlm_err *e);
void orc_plan_clear(orc_plan *p);

/* Non-retriable failure classes: a new run does not retry them (--rerun does). */
int orc_reason_is_final(const char *reason);

#endif
