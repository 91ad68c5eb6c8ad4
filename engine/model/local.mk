# engine/model/local.mk: the model (layout, memory plan, forward and
# backward over the stack, the token-mixer table and its rows, per-layer
# probes) and the op table a backend fills (ops.h, with the titans_mem
# op's layout in titans_mem.h).  Uses config/, common/; reaches numbers
# only through the op table.
engine_libtlmengine_a_SOURCES += \
	engine/model/ops.h engine/model/titans_mem.h \
	engine/model/model.c engine/model/model.h engine/model/internal.h \
	engine/model/pass.c engine/model/mlp.c engine/model/attn.c \
	engine/model/hope.c engine/model/titans.c \
	engine/model/probe.c engine/model/probe.h
