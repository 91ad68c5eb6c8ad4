# tests/engine/cpu/local.mk: the CPU backend beyond its ops (those are
# tests/engine/backend/'s, for every backend): the runtime (BLAS kernel,
# threads), the reproducibility promise.
check_PROGRAMS += tests/engine/cpu/test_runtime
tests_engine_cpu_test_runtime_SOURCES = tests/engine/cpu/test_runtime.c tests/lib/tap.h
tests_engine_cpu_test_runtime_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_cpu_test_runtime_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/cpu/test_runtime

check_PROGRAMS += tests/engine/cpu/blas_kernels
tests_engine_cpu_blas_kernels_SOURCES = tests/engine/cpu/blas_kernels.c
tests_engine_cpu_blas_kernels_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_cpu_blas_kernels_LDADD = $(ENGINE_LIBS)

TESTS += tests/engine/cpu/test_kernels.sh
dist_check_SCRIPTS += tests/engine/cpu/test_kernels.sh
