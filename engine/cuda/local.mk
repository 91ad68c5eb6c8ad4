# engine/cuda/local.mk: the CUDA backend (built when configure finds the
# toolkit: HAVE_CUDA): its public header (backend.h), the per-element
# arithmetic shared with the CPU tests (elem.h), and the kernels in .cu
# files compiled by nvcc for $(CUDA_ARCH) into engine/libtlmcuda.a.  Uses
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
	engine/cuda/titans.cu engine/cuda/titans_mem.cu
EXTRA_DIST += $(CUDA_SRCS) engine/cuda/internal.h engine/cuda/backend.h engine/cuda/elem.h engine/cuda/plan.h
PTXAS_SPILL_BUDGET = 0
NVCC_FLAGS = -arch=$(CUDA_ARCH) -O3 -std=c++17 -Xptxas -v --expt-relaxed-constexpr \
	-Xcompiler -Wall,-Wextra,-Wno-unused-parameter -D_GNU_SOURCE -I$(top_srcdir) -I$(top_builddir)
CLEANFILES += engine/cuda/*.o.ptxas engine/cuda/*.o

if HAVE_CUDA
CUDA_OBJS = $(CUDA_SRCS:.cu=.o)
noinst_LIBRARIES += engine/libtlmcuda.a
engine_libtlmcuda_a_SOURCES = engine/cuda/backend.h engine/cuda/elem.h engine/cuda/plan.h engine/cuda/internal.h
engine_libtlmcuda_a_LIBADD = $(CUDA_OBJS)
engine_libtlmcuda_a_DEPENDENCIES = $(CUDA_OBJS)
CUDA_ENGINE_A = engine/libtlmcuda.a
$(CUDA_OBJS): engine/cuda/internal.h engine/cuda/elem.h engine/cuda/plan.h engine/model/ops.h engine/cuda/backend.h common/err.h \
	config.h $(top_srcdir)/scripts/ptxas-spills.sh
else
CUDA_ENGINE_A =
endif

.cu.o:
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) $(NVCCFLAGS) -c $< -o $@ 2>$@.ptxas || { cat $@.ptxas >&2; rm -f $@; exit 1; }; \
	$(SHELL) $(top_srcdir)/scripts/ptxas-spills.sh $@.ptxas $(PTXAS_SPILL_BUDGET) `$(AM_V_P) && echo -v` || \
	{ rm -f $@; exit 1; }
