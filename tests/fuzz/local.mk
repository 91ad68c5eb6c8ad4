# tests/fuzz/local.mk: fuzz targets: each saved corpus tests/fuzz/corpus/NAME/ is replayed in every make check; tests/fuzz/run.sh runs libFuzzer on them (docs/data.md, "Fuzzing").
check_PROGRAMS += tests/fuzz/replay_event
tests_fuzz_replay_event_SOURCES = tests/fuzz/fuzz_event.c tests/fuzz/replay.c
tests_fuzz_replay_event_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"event"'
tests_fuzz_replay_event_LDADD = $(ORC_LIBS)
TESTS += tests/fuzz/replay_event

check_PROGRAMS += tests/fuzz/replay_sweep
tests_fuzz_replay_sweep_SOURCES = tests/fuzz/fuzz_sweep.c tests/fuzz/replay.c
tests_fuzz_replay_sweep_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"sweep"'
tests_fuzz_replay_sweep_LDADD = $(ORC_LIBS)
TESTS += tests/fuzz/replay_sweep

check_PROGRAMS += tests/fuzz/replay_shard
tests_fuzz_replay_shard_SOURCES = tests/fuzz/fuzz_shard.c tests/fuzz/fuzz_util.h tests/fuzz/replay.c
tests_fuzz_replay_shard_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"shard"'
TESTS += tests/fuzz/replay_shard

check_PROGRAMS += tests/fuzz/replay_manifest
tests_fuzz_replay_manifest_SOURCES = tests/fuzz/fuzz_manifest.c tests/fuzz/replay.c
tests_fuzz_replay_manifest_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"manifest"'
TESTS += tests/fuzz/replay_manifest

check_PROGRAMS += tests/fuzz/replay_safetensors
tests_fuzz_replay_safetensors_SOURCES = tests/fuzz/fuzz_safetensors.c tests/fuzz/fuzz_util.h tests/fuzz/replay.c
tests_fuzz_replay_safetensors_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"safetensors"'
TESTS += tests/fuzz/replay_safetensors

check_PROGRAMS += tests/fuzz/replay_state
tests_fuzz_replay_state_SOURCES = tests/fuzz/fuzz_state.c tests/fuzz/replay.c
tests_fuzz_replay_state_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"state"'
TESTS += tests/fuzz/replay_state

check_PROGRAMS += tests/fuzz/replay_tiktoken
tests_fuzz_replay_tiktoken_SOURCES = tests/fuzz/fuzz_tiktoken.c tests/fuzz/replay.c
tests_fuzz_replay_tiktoken_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"tiktoken"'
TESTS += tests/fuzz/replay_tiktoken

check_PROGRAMS += tests/fuzz/replay_spm
tests_fuzz_replay_spm_SOURCES = tests/fuzz/fuzz_spm.c tests/fuzz/replay.c
tests_fuzz_replay_spm_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"spm"'
TESTS += tests/fuzz/replay_spm

check_PROGRAMS += tests/fuzz/replay_config
tests_fuzz_replay_config_SOURCES = tests/fuzz/fuzz_config.c tests/fuzz/replay.c
tests_fuzz_replay_config_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"config"'
TESTS += tests/fuzz/replay_config

EXTRA_DIST += tests/fuzz/run.sh

EXTRA_DIST += tests/fuzz/corpus

EXTRA_DIST += tests/fuzz/make_seeds.py

FUZZ_SECONDS = 60
fuzz:
	FUZZ_OUT='$(abs_top_builddir)/tests/fuzz/out' $(SHELL) $(top_srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS)
.PHONY: fuzz
