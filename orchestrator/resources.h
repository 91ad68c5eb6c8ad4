/* resources.h: what a job of a sweep asks for (the sweep's
 * `resources:` block, docs/sweeps.md; tlmd's --gpus, --time, --partition,
 * --account, --qos, --cpus-per-job and --sbatch-arg give the defaults).
 * Every value reaches sbatch as one argv element, never through a shell,
 * and is checked first: Slurm would take a stray option from a partition
 * name, and a bad value must be refused before anything is submitted.
 * Must not: run anything. */
#ifndef TLM_ORC_RESOURCES_H
#define TLM_ORC_RESOURCES_H

#include "common/cfgtree.h"
#include "common/err.h"

#define ORC_RES_EXTRA_MAX 16  /* extra sbatch arguments */
#define ORC_RES_ARG_MAX 128   /* bytes of one, with its NUL */

typedef struct orc_resources {
    int gpus;                  /* GPUs per job (--gres=gpu:N); -1: not given */
    int cpus;                  /* --cpus-per-task, the worker's threads; -1: not given */
    char time[32];             /* sbatch --time ("" : not given): minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]] */
    char partition[64], account[64], qos[64];
    int n_extra;               /* -1: not given (0: given, empty) */
    char extra[ORC_RES_EXTRA_MAX][ORC_RES_ARG_MAX];
    /* data parallel (docs/parallel.md): one attempt is one job of nodes x
     * ranks_per_node ranks (GPUs: one rank per GPU), under mpirun (local)
     * or srun --mpi=pmix (slurm); -1: not given (1) */
    int nodes, ranks_per_node;
} orc_resources;

/* The ranks a job of these resources runs on (nodes x ranks_per_node, 1
 * when neither is given). */
int orc_resources_ranks(const orc_resources *r);

void orc_resources_init(orc_resources *r); /* nothing given */
/* The sweep's block (a mapping; unknown keys are errors at their line). */
int orc_resources_parse(const tlm_cfg_node *block, orc_resources *r, tlm_err *e);
/* over: what `over` gives replaces what `base` gives (sweep over CLI). */
void orc_resources_merge(orc_resources *out, const orc_resources *base, const orc_resources *over);

/* Checks of single values, for the command line and the sweep alike; `what`
 * names the value in the message ("--partition", "resources.partition"). */
int orc_res_check_name(const char *what, const char *v, tlm_err *e);
int orc_res_check_time(const char *what, const char *v, tlm_err *e);
int orc_res_check_extra(const char *what, const char *v, tlm_err *e);

#endif
