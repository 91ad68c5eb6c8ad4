# engine/cuda/local.mk: the CUDA backend (built when configure finds the
# toolkit: HAVE_CUDA): its public header (backend.h), the per-element
# arithmetic shared with the CPU tests (elem.h), the tensor-core wrappers
# (mma.h), and the kernels in .cu files compiled by nvcc for $(CUDA_ARCH)
# into engine/libtlmcuda.a; and their emulated build (below).  Uses
# model/ops.h, common/.
#
# The object's folder is made first (a build outside the source tree, as
# make distcheck's, has none yet).  Every .cu is compiled with ptxas's report (-Xptxas -v) kept beside its
# object (X.o.ptxas); scripts/ptxas-spills.sh fails the build when a kernel
# spills more than PTXAS_SPILL_BUDGET bytes (stores or loads), and lists
# every kernel's registers and spills with `make V=1`.  The budget
# is 0: none of these kernels needs local memory (docs/engine.md, "CUDA").
SUFFIXES += .cu
CUDA_SRCS = engine/cuda/backend.cu engine/cuda/matmul.cu engine/cuda/ops.cu engine/cuda/attention.cu \
	engine/cuda/flash.cu engine/cuda/sdpa_cudnn.cu engine/cuda/titans.cu engine/cuda/titans_mem.cu \
	engine/cuda/classifier.cu
EXTRA_DIST += $(CUDA_SRCS) engine/cuda/internal.h engine/cuda/backend.h engine/cuda/elem.h engine/cuda/plan.h \
	engine/cuda/mma.h
PTXAS_SPILL_BUDGET = 0
NVCC_FLAGS = -arch=$(CUDA_ARCH) -O3 -std=c++17 -Xptxas -v --expt-relaxed-constexpr \
	-Xcompiler -Wall,-Wextra,-Wno-unused-parameter -D_GNU_SOURCE -I$(top_srcdir) -I$(top_builddir)
CLEANFILES += engine/cuda/*.o.ptxas engine/cuda/*.o

if HAVE_CUDA
CUDA_OBJS = $(CUDA_SRCS:.cu=.o)
noinst_LIBRARIES += engine/libtlmcuda.a
engine_libtlmcuda_a_SOURCES = engine/cuda/backend.h engine/cuda/elem.h engine/cuda/plan.h engine/cuda/internal.h \
	engine/cuda/mma.h
engine_libtlmcuda_a_LIBADD = $(CUDA_OBJS)
engine_libtlmcuda_a_DEPENDENCIES = $(CUDA_OBJS)
CUDA_ENGINE_A = engine/libtlmcuda.a
$(CUDA_OBJS): engine/cuda/internal.h engine/cuda/elem.h engine/cuda/mma.h engine/cuda/plan.h engine/model/ops.h \
	engine/cuda/backend.h common/err.h \
	config.h $(top_srcdir)/scripts/ptxas-spills.sh
else
CUDA_ENGINE_A =
endif

.cu.o:
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) $(NVCCFLAGS) -c $< -o $@ 2>$@.ptxas || { cat $@.ptxas >&2; rm -f $@; exit 1; }; \
	$(SHELL) $(top_srcdir)/scripts/ptxas-spills.sh $@.ptxas $(PTXAS_SPILL_BUDGET) `$(AM_V_P) && echo -v` || \
	{ rm -f $@; exit 1; }

# The emulated build (engine/libtlmcuda_emu.a, when configure finds clang++:
# HAVE_CUDA_EMU; docs/engine.md, "The emulated CUDA build"): the same .cu
# files compiled as C++ by clang++ with -DENG_CUDA_EMU against
# engine/cuda/emu/cuda.h, every load and store instrumented for the
# emulator's checks (CUDA_EMU_INSTR), plus the emulator itself (emu/*.cc,
# not instrumented).  No CUDA toolkit needed.  Vectorisation is off so each
# access the hooks see is one a GPU thread makes (a 16-byte vector load of
# 4-byte aligned floats would read as misaligned).  The same flags in every
# build, the sanitizer build's included: clang's objects are never built
# with -fsanitize=address (its runtime is not gcc's), the emulator checks
# the device and shared memory itself, and it announces its fiber switches
# to gcc's AddressSanitizer when the program has it (emu/exec.cc).
CUDA_EMU_RT_SRCS = engine/cuda/emu/memory.cc engine/cuda/emu/exec.cc engine/cuda/emu/check.cc \
	engine/cuda/emu/cublaslt.cc engine/cuda/emu/cudnn.cc engine/cuda/emu/graph.cc
CUDA_EMU_HDRS = engine/cuda/emu/cuda.h engine/cuda/emu/bf16.h engine/cuda/emu/cublaslt.h engine/cuda/emu/cudnn.h \
	engine/cuda/emu/internal.h
EXTRA_DIST += $(CUDA_EMU_RT_SRCS) $(CUDA_EMU_HDRS)
CUDA_EMU_CXXFLAGS = -std=c++17 -O2 -g -fPIE -fno-exceptions -fno-rtti -fno-vectorize -fno-slp-vectorize \
	-Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -DENG_CUDA_EMU -I$(top_srcdir) -I$(top_builddir)
CUDA_EMU_INSTR = -fsanitize-coverage=trace-loads,trace-stores,inline-8bit-counters
CUDA_EMU_KOBJS = engine/cuda/emu/backend.o engine/cuda/emu/matmul.o engine/cuda/emu/ops.o engine/cuda/emu/attention.o \
	engine/cuda/emu/flash.o engine/cuda/emu/sdpa_cudnn.o engine/cuda/emu/titans.o engine/cuda/emu/titans_mem.o \
	engine/cuda/emu/classifier.o
CUDA_EMU_RTOBJS = engine/cuda/emu/memory.o engine/cuda/emu/exec.o engine/cuda/emu/check.o engine/cuda/emu/cublaslt.o \
	engine/cuda/emu/cudnn.o engine/cuda/emu/graph.o
CLEANFILES += engine/cuda/emu/*.o

if HAVE_CUDA_EMU
noinst_LIBRARIES += engine/libtlmcuda_emu.a
engine_libtlmcuda_emu_a_SOURCES = $(CUDA_EMU_HDRS) engine/cuda/backend.h engine/cuda/elem.h engine/cuda/plan.h \
	engine/cuda/internal.h engine/cuda/mma.h
engine_libtlmcuda_emu_a_LIBADD = $(CUDA_EMU_KOBJS) $(CUDA_EMU_RTOBJS)
engine_libtlmcuda_emu_a_DEPENDENCIES = $(CUDA_EMU_KOBJS) $(CUDA_EMU_RTOBJS)
CUDA_EMU_A = engine/libtlmcuda_emu.a
$(CUDA_EMU_KOBJS) $(CUDA_EMU_RTOBJS): $(CUDA_EMU_HDRS) engine/cuda/internal.h engine/cuda/elem.h engine/cuda/mma.h \
	engine/cuda/plan.h \
	engine/cuda/backend.h engine/model/ops.h common/err.h config.h
$(CUDA_EMU_KOBJS): engine/cuda/emu/%.o: engine/cuda/%.cu
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(CLANGXX) $(CUDA_EMU_CXXFLAGS) $(CUDA_EMU_INSTR) -x c++ -c $< -o $@
$(CUDA_EMU_RTOBJS): engine/cuda/emu/%.o: engine/cuda/emu/%.cc
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(CLANGXX) $(CUDA_EMU_CXXFLAGS) -c $< -o $@
else
CUDA_EMU_A =
endif
