# tests/engine/format/local.mk: token shards, manifests, safetensors.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
tests_engine_format_C = tests/engine/format/test_safetensors \
	tests/engine/format/test_shard
check_PROGRAMS += $(tests_engine_format_C)
TESTS += $(tests_engine_format_C)
