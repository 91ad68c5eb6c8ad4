/* comm.c: who this process is (the launcher's environment) and which
 * communicator it gets (comm.h). */
#include "engine/comm/comm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/comm/internal.h"

/* An environment variable as a number in [lo, hi]: 1 read, 0 absent,
 * negative (message in e) when it is set but not such a number. */
static int env_int(const char *name, long lo, long hi, int *out, tlm_err *e)
{
    const char *v = getenv(name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi)
        return tlm_errf(e, TLM_ECONFIG, "%s='%.40s': expected a whole number from %ld to %ld (set by the launcher)",
                        name, v, lo, hi);
    *out = (int)x;
    return 1;
}

int eng_comm_env_read(eng_comm_env *env, tlm_err *e)
{
    const long big = 1L << 24;
    *env = (eng_comm_env){0, 1, 0, 1, "none"};
    int rc, size = -1, rank = -1, local = 0, lsize = -1;
    /* Open MPI's mpirun (and its orted on other nodes) */
    if ((rc = env_int("OMPI_COMM_WORLD_SIZE", 1, big, &size, e)) < 0)
        return rc;
    if (rc) {
        env->launcher = "mpirun";
        if ((rc = env_int("OMPI_COMM_WORLD_RANK", 0, big, &rank, e)) <= 0)
            return rc < 0 ? rc : tlm_errf(e, TLM_ECONFIG, "OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not");
        if ((rc = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0, big, &local, e)) < 0 ||
            (rc = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1, big, &lsize, e)) < 0)
            return rc;
    } else {
        /* a PMIx launcher (srun --mpi=pmix): PMIX_RANK, and Slurm says the
         * step's size.  Slurm variables alone are not enough: a shell of an
         * allocation (salloc, a batch script) has them without being a rank. */
        if ((rc = env_int("PMIX_RANK", 0, big, &rank, e)) < 0)
            return rc;
        if (!rc)
            return 0; /* one process */
        env->launcher = "pmix";
        if ((rc = env_int("SLURM_STEP_NUM_TASKS", 1, big, &size, e)) < 0)
            return rc;
        if (!rc && (rc = env_int("SLURM_NTASKS", 1, big, &size, e)) <= 0)
            return rc < 0 ? rc
                          : tlm_errf(e, TLM_ECONFIG, "PMIX_RANK is set, but neither SLURM_STEP_NUM_TASKS nor "
                                                     "SLURM_NTASKS says how many ranks the job has");
        if ((rc = env_int("SLURM_LOCALID", 0, big, &local, e)) < 0)
            return rc;
    }
    if (rank >= size)
        return tlm_errf(e, TLM_ECONFIG, "the launcher says rank %d of %d ranks", rank, size);
    if (lsize > 0 && local >= lsize)
        return tlm_errf(e, TLM_ECONFIG, "the launcher says local rank %d of %d on this node", local, lsize);
    env->rank = rank;
    env->size = size;
    env->local_rank = local;
    env->local_size = lsize;
    return 0;
}

const char *eng_comm_built(void)
{
#if defined(TLM_HAVE_NCCL)
    return "mpi nccl";
#elif defined(TLM_HAVE_MPI)
    return "mpi";
#else
    return "";
#endif
}

int eng_comm_create(eng_comm **out, const eng_comm_env *env, int where, int device, tlm_err *e)
{
    *out = NULL;
    eng_comm *c = calloc(1, sizeof *c);
    if (!c)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    c->rank = env->rank;
    c->size = env->size;
    c->local_rank = env->local_rank;
    int rc = 0;
    if (env->size == 1) {
        eng__comm_single(c);
    } else if (where == ENG_COMM_CUDA) {
        rc = eng__comm_nccl(c, env, device, e);
    } else {
        rc = eng__comm_mpi(c, env, e);
    }
    if (rc) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int eng_comm_agree(const eng_comm *c, int rc, tlm_err *e)
{
    if (c->size == 1)
        return rc;
    int who = rc ? c->size - c->rank : 0; /* the maximum names the lowest failing rank */
    tlm_err ce = {0};
    if (c->ops->max_int(c->ctx, &who, 1, &ce))
        return rc ? rc : (*e = ce, ce.code);
    if (!who)
        return 0;
    const int src = c->size - who;
    static tlm_err m; /* 5 KiB: not on the stack of every caller */
    memset(&m, 0, sizeof m);
    if (c->rank == src)
        m = *e, m.code = m.code ? m.code : rc;
    if (c->ops->broadcast(c->ctx, &m, sizeof m, src, &ce))
        return rc ? rc : (*e = ce, ce.code);
    if (c->rank != src)
        tlm_errf(e, m.code, "rank %d: %s", src, m.msg);
    return m.code;
}

void eng_comm_free(eng_comm *c)
{
    if (!c)
        return;
    if (c->ops && c->ops->free)
        c->ops->free(c->ctx);
    free(c);
}

#ifndef TLM_HAVE_MPI
/* A build without MPI: one rank only, and a launch of several says what to
 * install. */
int eng__comm_mpi(eng_comm *c, const eng_comm_env *env, tlm_err *e)
{
    (void)c;
    return tlm_errf(e, TLM_ECONFIG,
                    "launched as rank %d of %d by %s, but this build has no MPI: install libopenmpi-dev and "
                    "openmpi-bin (scripts/setup.sh does), run ./configure --with-mpi and make again",
                    env->rank, env->size, env->launcher);
}
#endif
#ifndef TLM_HAVE_NCCL
int eng__comm_nccl(eng_comm *c, const eng_comm_env *env, int device, tlm_err *e)
{
    (void)c, (void)device;
#ifdef TLM_HAVE_MPI
    return tlm_errf(e, TLM_ECONFIG,
                    "launched as rank %d of %d on a GPU, but this build has no NCCL communicator: ./configure "
                    "needs the CUDA toolkit (with its include/nccl.h) besides MPI",
                    env->rank, env->size);
#else
    return eng__comm_mpi(c, env, e);
#endif
}
#endif
