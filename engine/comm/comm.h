/* comm.h: the communicator of a data-parallel job (design.md, "Contract:
 * data parallel"; docs/parallel.md): the collectives the trainer needs
 * between the N ranks (processes) of one job, as a table of operations and
 * a context, the way engine/model/ops.h is a backend's.
 *
 * Three implementations fill the table:
 *   single  one process: every collective is the identity (the sum over
 *           one rank), so the trainer has one code path (single.c);
 *   mpi     Open MPI's collectives on host memory, for the CPU (mpi.c;
 *           built when configure finds MPI: TLM_HAVE_MPI);
 *   nccl    NCCL's collectives on device memory, one rank per GPU, its
 *           unique id passed over MPI; libnccl is loaded at run time, so a
 *           binary built with it runs where NCCL is absent (nccl.c; built
 *           with MPI and CUDA).  Its host-scalar operations are MPI's.
 * Code chooses by the table's properties (device_buffers), never by name.
 *
 * Who is who comes from the launcher's environment (eng_comm_env): Open
 * MPI's mpirun (OMPI_COMM_WORLD_*), or any PMIx launcher such as Slurm's
 * `srun --mpi=pmix` (PMIX_RANK with SLURM_STEP_NUM_TASKS / SLURM_NTASKS,
 * SLURM_LOCALID), so the same tlm-worker runs under either; MPI is
 * initialised only when there is more than one rank.
 *
 * Every operation is collective: every rank calls it, in the same order,
 * with the same sizes.  Buffers are fp32 and reduced in place; the sum's
 * order is the library's (so ranks agree bit for bit with each other, and
 * with one process only to rounding).  Errors are returned as values with
 * a message; a rank that cannot go on while the others wait in a
 * collective calls abort, which ends every rank of the job.
 *
 * Must not: know about models, layers or the trainer. */
#ifndef TLM_ENGINE_COMM_H
#define TLM_ENGINE_COMM_H

#include <stddef.h>

#include "common/err.h"

/* Who this process is, from the launcher's environment. */
typedef struct eng_comm_env {
    int rank, size;     /* 0 <= rank < size; size 1 when no launcher said otherwise */
    int local_rank;     /* rank among this node's ranks (picks the GPU) */
    int local_size;     /* ranks on this node (-1: the launcher did not say) */
    const char *launcher; /* "mpirun", "pmix" (srun --mpi=pmix and the like) or "none" */
} eng_comm_env;

/* Reads the environment into *env: 0, or TLM_ECONFIG when the variables
 * contradict each other or are not numbers (named in the message). */
int eng_comm_env_read(eng_comm_env *env, tlm_err *e);

typedef struct eng_comm eng_comm;

typedef struct eng_comm_ops {
    const char *name;   /* "single", "mpi", "nccl": for messages only */
    int device_buffers; /* the fp32 buffer operations take device pointers (CUDA) */

    /* ---- fp32 buffers (host, or device when device_buffers), in place */
    /* x (n) = the sum over ranks of x */
    int (*allreduce_sum)(void *ctx, float *x, size_t n, tlm_err *e);
    /* x (size * n): block r (x + r*n) of rank r = the sum over ranks of
     * their block r; the other blocks are left undefined */
    int (*reduce_scatter_sum)(void *ctx, float *x, size_t n, tlm_err *e);
    /* x (size * n): every rank's block r = rank r's block r */
    int (*all_gather)(void *ctx, float *x, size_t n, tlm_err *e);
    /* Overlap: start x (n) = sum over ranks of x now, and return; wait
     * returns once every one started has completed (x may not be touched
     * in between).  A blocking implementation reduces in start. */
    int (*allreduce_start)(void *ctx, float *x, size_t n, tlm_err *e);
    int (*wait)(void *ctx, tlm_err *e);

    /* ---- host scalars, in place */
    int (*sum_f64)(void *ctx, double *x, int n, tlm_err *e);
    int (*max_int)(void *ctx, int *x, int n, tlm_err *e); /* stop flags, failures */
    /* bytes of rank root's buf to every rank's */
    int (*broadcast)(void *ctx, void *buf, size_t bytes, int root, tlm_err *e);
    int (*barrier)(void *ctx, tlm_err *e);

    /* Ends every rank of the job with exit status `status` (never returns
     * in a job of several ranks; the single implementation returns). */
    void (*abort)(void *ctx, int status);
    /* Frees the context (MPI: finalises). */
    void (*free)(void *ctx);
} eng_comm_ops;

struct eng_comm {
    const eng_comm_ops *ops;
    void *ctx;
    int rank, size, local_rank;
};

/* Where the buffers live: host memory (CPU backend) or CUDA device memory
 * of the current device (one rank per GPU). */
enum { ENG_COMM_HOST = 0, ENG_COMM_CUDA = 1 };

/* The communicator of this process for *env: single when env->size is 1;
 * else MPI (ENG_COMM_HOST) or NCCL over MPI (ENG_COMM_CUDA, `device` the
 * CUDA device the rank trains on).  TLM_ECONFIG when this build lacks what
 * the launch needs (MPI, NCCL, a GPU), with what to install or change. */
int eng_comm_create(eng_comm **out, const eng_comm_env *env, int where, int device, tlm_err *e);
/* NULL: nothing.  Finalises MPI when it was initialised. */
void eng_comm_free(eng_comm *c);
/* Collective: every rank learns whether any rank failed at this point (rc
 * its own outcome, e its message); then every rank returns the error of
 * the lowest failing rank, its message prefixed with "rank N: " on the
 * others, so no rank is left waiting in a collective for one that has
 * given up.  One rank: rc. */
int eng_comm_agree(const eng_comm *c, int rc, tlm_err *e);
/* Fills *c, which the caller owns, as the communicator of one process
 * (nothing to free): what a trainer uses when given none. */
void eng_comm_init_single(eng_comm *c);

/* What this build can do: "mpi nccl", "mpi", or "" (tlm-worker --describe
 * and the messages). */
const char *eng_comm_built(void);

#endif
