# engine/model/local.mk: the model (layout, memory plan, forward and
# backward over the stack, the four token mixers, per-layer probes) and
# the op table a backend fills (ops.h).  Uses config/, common/; reaches
# numbers only through the op table.
engine_libtlmengine_a_SOURCES += \
	engine/model/ops.h \
	engine/model/model.c engine/model/model.h engine/model/internal.h \
	engine/model/pass.c engine/model/attn.c \
	engine/model/hope.c engine/model/hope.h \
	engine/model/titans.c engine/model/titans.h \
	engine/model/probe.c engine/model/probe.h
