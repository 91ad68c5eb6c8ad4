# engine/comm/local.mk: the communicator of a data-parallel job
# (engine/comm/comm.h): its table and the launcher's environment (comm.c),
# one process (single.c), Open MPI on host memory (mpi.c, when configure
# finds MPI) and NCCL on device memory (nccl.c, with MPI and CUDA), in
# libtlmcomm.a, which tlm-worker links through ENGINE_LIBS.  Uses common/.
noinst_LIBRARIES += engine/libtlmcomm.a
engine_libtlmcomm_a_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
engine_libtlmcomm_a_SOURCES = engine/comm/comm.c engine/comm/comm.h engine/comm/internal.h engine/comm/single.c
EXTRA_DIST += engine/comm/mpi.c engine/comm/nccl.c
if HAVE_MPI
engine_libtlmcomm_a_SOURCES += engine/comm/mpi.c
endif
if HAVE_NCCL
engine_libtlmcomm_a_SOURCES += engine/comm/nccl.c
engine_libtlmcomm_a_CPPFLAGS += $(CUDA_CFLAGS)
endif
