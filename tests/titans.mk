# tests/titans.mk: Titans (arch titans, docs/titans.md): its ops against
# double references and finite differences, whole tiny models (both
# variants, tapered) by finite differences, layout/account/determinism,
# and PyTorch parity.
check_PROGRAMS += tests/test_titans_ops
tests_test_titans_ops_SOURCES = tests/test_titans_ops.c tests/tap.h
tests_test_titans_ops_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_titans_ops_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_titans_ops
check_PROGRAMS += tests/test_titans_grad
tests_test_titans_grad_SOURCES = tests/test_titans_grad.c tests/titans_util.h tests/test_model_util.h tests/tap.h
tests_test_titans_grad_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_titans_grad_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_titans_grad
