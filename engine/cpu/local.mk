# engine/cpu/local.mk: the CPU backend (C, OpenMP, a CBLAS): its public
# header (backend.h), its context and op table (backend.c), one op family a
# file, and the process-wide runtime (BLAS kernel, OpenMP's default team).
# Uses model/ops.h, common/.
engine_libtlmengine_a_SOURCES += \
	engine/cpu/internal.h engine/cpu/backend.c engine/cpu/backend.h engine/cpu/blas.c engine/cpu/memory.c \
	engine/cpu/runtime.c engine/cpu/runtime.h \
	engine/cpu/embedding.c engine/cpu/rmsnorm.c engine/cpu/rope.c engine/cpu/attention.c \
	engine/cpu/swiglu.c engine/cpu/gate.c engine/cpu/xent.c engine/cpu/classifier.c engine/cpu/adamw.c engine/cpu/accumulate.c \
	engine/cpu/dconv.c engine/cpu/silu_norm.c engine/cpu/swa.c engine/cpu/titans_mem.c
