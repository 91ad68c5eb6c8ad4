# tests/parallel/local.mk: data-parallel training (engine/comm/, the
# trainer's ranks, tlm-worker under mpirun; docs/parallel.md).  The scripts
# skip (77) where mpirun is missing; scripts/setup.sh --test installs it.
EXTRA_DIST += tests/parallel/dp_lib.sh
TESTS += tests/parallel/test_dp_losses.sh
dist_check_SCRIPTS += tests/parallel/test_dp_losses.sh
TESTS += tests/parallel/test_dp_resume.sh
dist_check_SCRIPTS += tests/parallel/test_dp_resume.sh
TESTS += tests/parallel/test_dp_refuse.sh
dist_check_SCRIPTS += tests/parallel/test_dp_refuse.sh

# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/parallel/test_comm

# the NCCL communicator: built with MPI and CUDA, skips (77) without a GPU
if HAVE_NCCL
check_PROGRAMS += tests/parallel/test_nccl
TESTS += tests/parallel/test_nccl
endif
