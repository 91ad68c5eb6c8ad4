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
