# tests/engine/format/local.mk: token shards, manifests, safetensors.
check_PROGRAMS += tests/engine/format/test_safetensors
tests_engine_format_test_safetensors_SOURCES = tests/engine/format/test_safetensors.c tests/lib/tap.h
tests_engine_format_test_safetensors_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_format_test_safetensors_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/format/test_safetensors

check_PROGRAMS += tests/engine/format/test_shard
tests_engine_format_test_shard_SOURCES = tests/engine/format/test_shard.c tests/lib/tap.h
tests_engine_format_test_shard_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_format_test_shard_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/format/test_shard
