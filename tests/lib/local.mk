# tests/lib/local.mk: helpers shared by the tests (not tests themselves).
check_PROGRAMS += tests/lib/train_mkshard

EXTRA_DIST += tests/lib/train_common.sh tests/lib/tap.sh tests/lib/mpi_env.sh tests/lib/mpi.lsan

EXTRA_DIST += tests/lib/train_events.py

EXTRA_DIST += tests/lib/slurm_cluster.sh
