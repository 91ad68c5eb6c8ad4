# tests/engine/format/local.mk: token shards, manifests, safetensors.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/engine/format/test_safetensors \
	tests/engine/format/test_shard
