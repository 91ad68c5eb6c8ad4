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
# tlm-worker: a titans run checkpoints its tensors and resumes bit for bit.
TESTS += tests/test_titans_resume.sh
dist_check_SCRIPTS += tests/test_titans_resume.sh
check_PROGRAMS += tests/test_titans
tests_test_titans_SOURCES = tests/test_titans.c tests/titans_util.h tests/test_model_util.h tests/tap.h
tests_test_titans_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_titans_LDADD = $(ENGINE_LIBS)
tests_test_titans_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc \
	-Wl,--wrap=aligned_alloc -Wl,--wrap=posix_memalign
TESTS += tests/test_titans
# PyTorch parity: parity_titans_dump writes the engine's numbers,
# parity_titans.py rebuilds the models in PyTorch (the memory's inner
# gradients by autograd) and compares (skips without torch).
check_PROGRAMS += tests/parity_titans_dump
tests_parity_titans_dump_SOURCES = tests/parity_titans_dump.c tests/parity_dump_util.h tests/titans_util.h tests/test_model_util.h
tests_parity_titans_dump_CPPFLAGS = $(TEST_CPPFLAGS)
tests_parity_titans_dump_LDADD = $(ENGINE_LIBS)
TESTS += tests/parity_titans.py
dist_check_SCRIPTS += tests/parity_titans.py
