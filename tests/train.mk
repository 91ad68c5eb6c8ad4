# tests/train.mk: tests of trainer, worker, checkpoints, determinism.
check_PROGRAMS += tests/test_loader tests/test_ckpt tests/test_train_lr
tests_test_loader_SOURCES = tests/test_loader.c tests/tap.h
tests_test_loader_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_loader_LDADD = $(ENGINE_LIBS)
tests_test_ckpt_SOURCES = tests/test_ckpt.c tests/tap.h
tests_test_ckpt_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_ckpt_LDADD = $(ENGINE_LIBS)
tests_test_train_lr_SOURCES = tests/test_train_lr.c tests/tap.h
tests_test_train_lr_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_train_lr_LDADD = $(ENGINE_LIBS)

TESTS += tests/test_loader tests/test_ckpt tests/test_train_lr

# The trainer in process; malloc & co. are wrapped to count allocations.
check_PROGRAMS += tests/test_train
tests_test_train_SOURCES = tests/test_train.c tests/tap.h
tests_test_train_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_train_LDADD = $(ENGINE_LIBS)
tests_test_train_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc \
	-Wl,--wrap=aligned_alloc -Wl,--wrap=posix_memalign
TESTS += tests/test_train

# Helper for the worker tests (not a test itself).
check_PROGRAMS += tests/train_mkshard
tests_train_mkshard_SOURCES = tests/train_mkshard.c
tests_train_mkshard_CPPFLAGS = $(TEST_CPPFLAGS)
tests_train_mkshard_LDADD = $(ENGINE_LIBS)

# tlm-worker end to end (shell + python3 reading the events).
EXTRA_DIST += tests/train_common.sh tests/train_events.py
TESTS += tests/test_worker_resume.sh tests/test_worker_errors.sh tests/test_worker_events.sh \
	tests/test_worker_train.sh
dist_check_SCRIPTS += tests/test_worker_resume.sh tests/test_worker_errors.sh tests/test_worker_events.sh \
	tests/test_worker_train.sh

# The reproducibility promise across processes, thread counts and BLAS
# kernels (docs/engine.md); blas_kernels lists the kernels this CPU runs.
check_PROGRAMS += tests/blas_kernels
tests_blas_kernels_SOURCES = tests/blas_kernels.c
tests_blas_kernels_CPPFLAGS = $(TEST_CPPFLAGS)
tests_blas_kernels_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_kernels.sh
dist_check_SCRIPTS += tests/test_kernels.sh
