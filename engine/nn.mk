# engine/nn.mk: the model, the op interface and its CPU backend, the optimizer step.
engine_libtlmengine_a_SOURCES += \
	engine/ops.h \
	engine/model.c engine/model.h engine/model_impl.h \
	engine/model_pass.c engine/model_attn.c \
	engine/model_hope.c engine/model_hope.h engine/cpu/accumulate.c \
	engine/model_titans.c engine/model_titans.h \
	engine/runtime.c engine/runtime.h \
	engine/cpu/cpu.h engine/cpu/backend.c engine/cpu/blas.c engine/cpu/memory.c \
	engine/cpu/embedding.c engine/cpu/rmsnorm.c engine/cpu/rope.c engine/cpu/attention.c \
	engine/cpu/swiglu.c engine/cpu/gate.c engine/cpu/xent.c engine/cpu/adamw.c \
	engine/cpu/dconv.c engine/cpu/silu_norm.c engine/cpu/swa.c engine/cpu/titans_mem.c
