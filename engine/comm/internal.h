/* internal.h: the implementations of the communicator table (comm.h), for
 * comm.c, which chooses one.  Must not: be included outside engine/comm/
 * (tests excepted). */
#ifndef TLM_ENGINE_COMM_INTERNAL_H
#define TLM_ENGINE_COMM_INTERNAL_H

#include "engine/comm/comm.h"

/* single.c: one process, every collective the identity */
void eng__comm_single(eng_comm *c);
/* mpi.c: MPI_COMM_WORLD (MPI_Init here; the context's free finalises) */
int eng__comm_mpi(eng_comm *c, const eng_comm_env *env, tlm_err *e);
/* nccl.c: NCCL on CUDA device `device` for the buffers, over an MPI
 * communicator for the id and the host scalars */
int eng__comm_nccl(eng_comm *c, const eng_comm_env *env, int device, tlm_err *e);

/* mpi.c, for nccl.c: MPI_COMM_WORLD's context (MPI initialised, its size
 * checked against env) and the MPI table, whose host-scalar operations,
 * abort and free the NCCL communicator calls on that context. */
int eng__mpi_open(void **ctx, const eng_comm_env *env, tlm_err *e);
extern const eng_comm_ops eng__comm_mpi_ops;

#endif
