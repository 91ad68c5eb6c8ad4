# tests/data.mk: tests of tokenizers, shards, tlm-data, evaluation.
EXTRA_DIST += tests/tokconf
check_PROGRAMS += tests/test_tok tests/test_shard tests/test_tokconf_run
tests_test_tok_SOURCES = tests/test_tok.c tests/tap.h
tests_test_tok_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_tok_LDADD = $(ENGINE_LIBS)
tests_test_shard_SOURCES = tests/test_shard.c tests/tap.h
tests_test_shard_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_shard_LDADD = $(ENGINE_LIBS)
# the TLM side of test_tokconf.sh (not a test by itself)
tests_test_tokconf_run_SOURCES = tests/test_tokconf_run.c
tests_test_tokconf_run_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_tokconf_run_LDADD = $(ENGINE_LIBS)

TESTS += tests/test_tok tests/test_shard tests/test_tlmdata.sh tests/test_tokconf.sh
dist_check_SCRIPTS += tests/test_tlmdata.sh tests/test_tokconf.sh

# Fuzz targets of the readers of untrusted files (shards with their
# manifest, the manifest alone, safetensors, trainer.json, tiktoken rank
# files, job configs): each saved corpus tests/fuzz/corpus/NAME/ (seeds from
# tests/fuzz/make_seeds.py plus crashers found) is replayed in every `make
# check`; tests/fuzz/run.sh runs libFuzzer on them (docs/data.md, "Fuzzing").

check_PROGRAMS += tests/fuzz/replay_shard tests/fuzz/replay_manifest tests/fuzz/replay_safetensors \
	tests/fuzz/replay_state tests/fuzz/replay_tiktoken tests/fuzz/replay_config
tests_fuzz_replay_shard_SOURCES = tests/fuzz/fuzz_shard.c tests/fuzz/fuzz_util.h tests/fuzz/replay.c
tests_fuzz_replay_shard_CPPFLAGS = $(TEST_CPPFLAGS) -DCORPUS='"shard"'
tests_fuzz_replay_shard_LDADD = $(ENGINE_LIBS)
tests_fuzz_replay_manifest_SOURCES = tests/fuzz/fuzz_manifest.c tests/fuzz/replay.c
tests_fuzz_replay_manifest_CPPFLAGS = $(TEST_CPPFLAGS) -DCORPUS='"manifest"'
tests_fuzz_replay_manifest_LDADD = $(ENGINE_LIBS)
tests_fuzz_replay_safetensors_SOURCES = tests/fuzz/fuzz_safetensors.c tests/fuzz/fuzz_util.h tests/fuzz/replay.c
tests_fuzz_replay_safetensors_CPPFLAGS = $(TEST_CPPFLAGS) -DCORPUS='"safetensors"'
tests_fuzz_replay_safetensors_LDADD = $(ENGINE_LIBS)
tests_fuzz_replay_state_SOURCES = tests/fuzz/fuzz_state.c tests/fuzz/replay.c
tests_fuzz_replay_state_CPPFLAGS = $(TEST_CPPFLAGS) -DCORPUS='"state"'
tests_fuzz_replay_state_LDADD = $(ENGINE_LIBS)
tests_fuzz_replay_tiktoken_SOURCES = tests/fuzz/fuzz_tiktoken.c tests/fuzz/replay.c
tests_fuzz_replay_tiktoken_CPPFLAGS = $(TEST_CPPFLAGS) -DCORPUS='"tiktoken"'
tests_fuzz_replay_tiktoken_LDADD = $(ENGINE_LIBS)
tests_fuzz_replay_config_SOURCES = tests/fuzz/fuzz_config.c tests/fuzz/replay.c
tests_fuzz_replay_config_CPPFLAGS = $(TEST_CPPFLAGS) -DCORPUS='"config"'
tests_fuzz_replay_config_LDADD = $(ENGINE_LIBS)
TESTS += tests/fuzz/replay_shard tests/fuzz/replay_manifest tests/fuzz/replay_safetensors \
	tests/fuzz/replay_state tests/fuzz/replay_tiktoken tests/fuzz/replay_config
EXTRA_DIST += tests/fuzz/make_seeds.py
