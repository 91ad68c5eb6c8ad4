# tests/engine/cpu/local.mk: the CPU backend beyond its ops (those are
# tests/engine/backend/'s, for every backend): the runtime (BLAS kernel,
# threads), the reproducibility promise.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/engine/cpu/test_runtime

check_PROGRAMS += tests/engine/cpu/blas_kernels

TESTS += tests/engine/cpu/test_kernels.sh
dist_check_SCRIPTS += tests/engine/cpu/test_kernels.sh
