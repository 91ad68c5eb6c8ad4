# engine/local.mk: libtlmengine.a, the training engine (config, schedules,
# model, ops, optimizer, data, checkpoints, evaluation).
noinst_LIBRARIES += engine/libtlmengine.a
engine_libtlmengine_a_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) $(BLAS_CFLAGS) $(PCRE2_CFLAGS)
engine_libtlmengine_a_CFLAGS = $(AM_CFLAGS) $(KERNEL_CFLAGS) $(OPENMP_CFLAGS)
engine_libtlmengine_a_SOURCES = \
	engine/err.c engine/err.h \
	engine/sha256.c engine/sha256.h \
	engine/cfgtree.c engine/cfgtree.h \
	engine/config.c engine/config.h \
	engine/presets.c engine/presets.h \
	engine/taper.c engine/taper.h \
	engine/account.c engine/account.h \
	engine/shard.c engine/shard.h \
	engine/manifest.c engine/manifest.h \
	engine/fileio.c engine/fileio.h engine/checked.h \
	engine/safetensors.c engine/safetensors.h

# Each area of the engine lists its own sources (one fragment per area, so
# that work on one never touches another's rules).
include engine/nn.mk
include engine/train.mk
include engine/text.mk

# Everything that links the engine links these.
ENGINE_LIBS = engine/libtlmengine.a $(YAML_LIBS) $(JANSSON_LIBS) $(BLAS_LIBS) $(PCRE2_LIBS) $(OPENMP_CFLAGS) -lm
