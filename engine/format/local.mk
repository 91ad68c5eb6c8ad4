# engine/format/local.mk: libtlmformat.a: the files TLM reads and writes
# in bulk: token shards and their manifest, safetensors.  Uses common/ only.
noinst_LIBRARIES += engine/format/libtlmformat.a
engine_format_libtlmformat_a_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
engine_format_libtlmformat_a_CFLAGS = $(AM_CFLAGS) $(KERNEL_CFLAGS)
engine_format_libtlmformat_a_SOURCES = \
	engine/format/shard.c engine/format/shard.h \
	engine/format/manifest.c engine/format/manifest.h \
	engine/format/safetensors.c engine/format/safetensors.h
FORMAT_LIBS = engine/format/libtlmformat.a $(COMMON_LIBS) $(JANSSON_LIBS)
