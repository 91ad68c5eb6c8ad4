# tests/parallel/local.mk: data-parallel training (engine/comm/, the
# trainer's ranks, tlm-worker under mpirun; docs/parallel.md).  The scripts
# skip (77) where mpirun is missing; scripts/setup.sh --test installs it.
EXTRA_DIST += tests/parallel/dp_lib.sh
TESTS += tests/parallel/test_dp_losses.sh
dist_check_SCRIPTS += tests/parallel/test_dp_losses.sh
TESTS += tests/parallel/test_dp_resume.sh
dist_check_SCRIPTS += tests/parallel/test_dp_resume.sh
