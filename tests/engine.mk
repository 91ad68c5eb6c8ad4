# tests/engine.mk: tests of ops, model, gradients, parity.
check_PROGRAMS += tests/test_ops
tests_test_ops_SOURCES = tests/test_ops.c tests/tap.h
tests_test_ops_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_ops_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_ops
check_PROGRAMS += tests/test_grad_model
tests_test_grad_model_SOURCES = tests/test_grad_model.c tests/test_model_util.h tests/tap.h
tests_test_grad_model_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_grad_model_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_grad_model
check_PROGRAMS += tests/test_model
tests_test_model_SOURCES = tests/test_model.c tests/test_model_util.h tests/tap.h
tests_test_model_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_model_LDADD = $(ENGINE_LIBS)
tests_test_model_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc \
	-Wl,--wrap=aligned_alloc -Wl,--wrap=posix_memalign
TESTS += tests/test_model
# PyTorch parity: parity_dump writes the engine's numbers, parity_torch.py
# rebuilds the models in PyTorch and compares (skips without torch).
check_PROGRAMS += tests/parity_dump
tests_parity_dump_SOURCES = tests/parity_dump.c tests/parity_dump_util.h tests/test_model_util.h
tests_parity_dump_CPPFLAGS = $(TEST_CPPFLAGS)
tests_parity_dump_LDADD = $(ENGINE_LIBS)
TESTS += tests/parity_torch.py
dist_check_SCRIPTS += tests/parity_torch.py
check_PROGRAMS += tests/test_ops_runtime
tests_test_ops_runtime_SOURCES = tests/test_ops_runtime.c tests/tap.h
tests_test_ops_runtime_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_ops_runtime_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_ops_runtime
