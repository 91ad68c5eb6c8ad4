# tests/lib/local.mk: helpers shared by the tests (not tests themselves).
check_PROGRAMS += tests/lib/train_mkshard
tests_lib_train_mkshard_SOURCES = tests/lib/train_mkshard.c
tests_lib_train_mkshard_CPPFLAGS = $(TEST_CPPFLAGS)
tests_lib_train_mkshard_LDADD = $(ENGINE_LIBS)

EXTRA_DIST += tests/lib/train_common.sh

EXTRA_DIST += tests/lib/train_events.py

EXTRA_DIST += tests/lib/slurm_cluster.sh
