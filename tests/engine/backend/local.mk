# tests/engine/backend/local.mk: the op interface (engine/model/ops.h): one
# table of cases run against every backend that is built, the CPU's
# against double references and finite differences, any other against the
# CPU's.
check_PROGRAMS += tests/engine/backend/test_backend_ops
tests_engine_backend_test_backend_ops_SOURCES = tests/engine/backend/test_backend_ops.c tests/engine/backend/harness.h \
	tests/engine/backend/cases_core.h tests/engine/backend/cases_titans.h tests/lib/tap.h
tests_engine_backend_test_backend_ops_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_backend_test_backend_ops_LDADD = $(CUDA_EMU_A) $(ENGINE_LIBS) $(CUDA_EMU_LIBS)
TESTS += tests/engine/backend/test_backend_ops

# the CUDA kernels' element arithmetic (engine/cuda/elem.h) against the
# CPU's ops: built and run in every build, GPU or not
check_PROGRAMS += tests/engine/backend/test_cuda_elem
tests_engine_backend_test_cuda_elem_SOURCES = tests/engine/backend/test_cuda_elem.c engine/cuda/elem.h tests/lib/tap.h
tests_engine_backend_test_cuda_elem_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_backend_test_cuda_elem_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/backend/test_cuda_elem

# whole models on CUDA against the CPU (77 without CUDA or a GPU)
check_PROGRAMS += tests/engine/backend/test_cuda_model
tests_engine_backend_test_cuda_model_SOURCES = tests/engine/backend/test_cuda_model.c tests/lib/model_util.h tests/lib/tap.h
tests_engine_backend_test_cuda_model_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_backend_test_cuda_model_LDADD = $(CUDA_EMU_A) $(ENGINE_LIBS) $(CUDA_EMU_LIBS)
TESTS += tests/engine/backend/test_cuda_model

# the CUDA build's spill check (scripts/ptxas-spills.sh)
TESTS += tests/engine/backend/test_ptxas_spills.sh
dist_check_SCRIPTS += tests/engine/backend/test_ptxas_spills.sh
