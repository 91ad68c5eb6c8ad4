# tests/engine/backend/local.mk: the op interface (engine/model/ops.h): one
# table of cases run against every backend that is built, the CPU's
# against double references and finite differences, any other against the
# CPU's.
# test_cuda_elem: the CUDA kernels' element arithmetic (engine/cuda/elem.h) against the CPU's ops:
#   built and run in every build, GPU or not
# test_cuda_model: whole models on CUDA against the CPU (77 without CUDA or a GPU)
# test_cuda_plans: every cuBLASLt plan and product of one step of the 440m, 760m and 1.3b presets'
#   models, made and checked by the stand-ins in the emulator's plan-only mode (77 without the emulator)
# test_cuda_emu: the CUDA emulator itself (engine/cuda/emu/): its checks on test-only kernels
#   (emu_kernels.cu), bf16, the tensor-core fragments (cuda_frag.cu, also built by nvcc and run on a
#   GPU when there is one), the cuBLASLt stand-ins; 77 without the emulator.  The test kernels compile
#   as the emulated engine does; emu_kernels.o also gives test_backend_ops its deliberately broken op.
# test_flash: the tensor-core flash attention (engine/cuda/flash.cu) on the emulator, and on GPU 0
#   when one is lent, against a host reference from the same bf16 inputs; 77 without the emulator.
#   flash_entry.cu: C entry points to its C++ launchers, built by clang++ and (CUDA build) by nvcc.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/engine/backend/test_backend_ops \
	tests/engine/backend/test_cuda_elem \
	tests/engine/backend/test_cuda_model \
	tests/engine/backend/test_cuda_plans \
	tests/engine/backend/test_cuda_emu \
	tests/engine/backend/test_flash
tests_engine_backend_test_flash_LDADD = $(CUDA_FLASH_TEST_OBJ) $(CUDA_FLASH_GPU_OBJ) $(CUDA_EMU_A) $(ENGINE_LIBS) $(CUDA_EMU_LIBS)
tests_engine_backend_test_backend_ops_SOURCES = tests/engine/backend/test_backend_ops.c tests/engine/backend/harness.h \
	tests/engine/backend/cases_core.h tests/engine/backend/cases_titans.h tests/lib/tap.h
tests_engine_backend_test_backend_ops_LDADD = $(CUDA_EMU_TEST_OBJS) $(CUDA_FLASH_TEST_OBJ) $(CUDA_EMU_A) $(ENGINE_LIBS) \
	$(CUDA_EMU_LIBS)
tests_engine_backend_test_cuda_elem_SOURCES = tests/engine/backend/test_cuda_elem.c engine/cuda/elem.h tests/lib/tap.h
tests_engine_backend_test_cuda_model_LDADD = $(CUDA_EMU_A) $(ENGINE_LIBS) $(CUDA_EMU_LIBS)
tests_engine_backend_test_cuda_plans_LDADD = $(CUDA_EMU_A) $(ENGINE_LIBS) $(CUDA_EMU_LIBS)
tests_engine_backend_test_cuda_emu_LDADD = $(CUDA_EMU_TEST_OBJS) $(CUDA_FRAG_GPU_OBJ) $(CUDA_EMU_A) $(ENGINE_LIBS) \
	$(CUDA_EMU_LIBS)

# the CUDA build's spill check (scripts/ptxas-spills.sh)
TESTS += tests/engine/backend/test_ptxas_spills.sh
dist_check_SCRIPTS += tests/engine/backend/test_ptxas_spills.sh

EXTRA_DIST += tests/engine/backend/emu_kernels.cu tests/engine/backend/cuda_frag.cu

EXTRA_DIST += tests/engine/backend/flash_entry.cu
CLEANFILES += tests/engine/backend/flash_entry_emu.o tests/engine/backend/flash_entry.o
CLEANFILES += tests/engine/backend/emu_kernels.o tests/engine/backend/cuda_frag_emu.o tests/engine/backend/cuda_frag.o
if HAVE_CUDA_EMU
CUDA_EMU_TEST_OBJS = tests/engine/backend/emu_kernels.o tests/engine/backend/cuda_frag_emu.o
CUDA_FLASH_TEST_OBJ = tests/engine/backend/flash_entry_emu.o
tests/engine/backend/flash_entry_emu.o: tests/engine/backend/flash_entry.cu $(CUDA_EMU_HDRS) engine/cuda/internal.h \
	engine/cuda/elem.h engine/cuda/mma.h engine/cuda/plan.h engine/model/ops.h common/err.h config.h
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(CLANGXX) $(CUDA_EMU_CXXFLAGS) -x c++ -c $< -o $@
$(CUDA_EMU_TEST_OBJS): $(CUDA_EMU_HDRS) engine/cuda/internal.h engine/cuda/elem.h engine/cuda/mma.h engine/cuda/plan.h \
	engine/cuda/backend.h engine/model/ops.h common/err.h config.h
tests/engine/backend/emu_kernels.o: tests/engine/backend/emu_kernels.cu
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(CLANGXX) $(CUDA_EMU_CXXFLAGS) $(CUDA_EMU_INSTR) -x c++ -c $< -o $@
tests/engine/backend/cuda_frag_emu.o: tests/engine/backend/cuda_frag.cu
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(CLANGXX) $(CUDA_EMU_CXXFLAGS) $(CUDA_EMU_INSTR) -x c++ -c $< -o $@
if HAVE_CUDA
CUDA_FRAG_GPU_OBJ = tests/engine/backend/cuda_frag.o
tests/engine/backend/cuda_frag.o: engine/cuda/internal.h engine/cuda/elem.h engine/cuda/mma.h engine/cuda/plan.h
CUDA_FLASH_GPU_OBJ = tests/engine/backend/flash_entry.o
tests/engine/backend/flash_entry.o: engine/cuda/internal.h engine/cuda/elem.h engine/cuda/mma.h engine/cuda/plan.h
else
CUDA_FRAG_GPU_OBJ =
CUDA_FLASH_GPU_OBJ =
endif
else
CUDA_EMU_TEST_OBJS =
CUDA_FLASH_TEST_OBJ =
CUDA_FLASH_GPU_OBJ =
CUDA_FRAG_GPU_OBJ =
endif
