# tests/orchestrator.mk: tests of tlmd, sweeps, results.db.
ORC_TEST_CPPFLAGS = $(TEST_CPPFLAGS) $(SQLITE_CFLAGS) $(UV_CFLAGS)

check_PROGRAMS += tests/test_db
tests_test_db_SOURCES = tests/test_db.c tests/tap.h
tests_test_db_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_test_db_LDADD = $(DB_LIBS) $(ENGINE_LIBS)

TESTS += tests/test_db

check_PROGRAMS += tests/test_db_migrate
tests_test_db_migrate_SOURCES = tests/test_db_migrate.c tests/tap.h
tests_test_db_migrate_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_test_db_migrate_LDADD = $(DB_LIBS) $(ENGINE_LIBS)
TESTS += tests/test_db_migrate

check_PROGRAMS += tests/test_sweep
tests_test_sweep_SOURCES = tests/test_sweep.c tests/tap.h
tests_test_sweep_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_test_sweep_LDADD = $(ORC_LIBS)
TESTS += tests/test_sweep

check_PROGRAMS += tests/test_tlmd_events
tests_test_tlmd_events_SOURCES = tests/test_tlmd_events.c tests/tap.h
tests_test_tlmd_events_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_test_tlmd_events_LDADD = $(ORC_LIBS)
TESTS += tests/test_tlmd_events

check_PROGRAMS += tests/test_tlmd_ingest
tests_test_tlmd_ingest_SOURCES = tests/test_tlmd_ingest.c tests/tap.h
tests_test_tlmd_ingest_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_test_tlmd_ingest_LDADD = $(ORC_LIBS)
TESTS += tests/test_tlmd_ingest

# Helper of test_tlmd_reader.sh (not a test itself).
check_PROGRAMS += tests/test_db_reader
tests_test_db_reader_SOURCES = tests/test_db_reader.c
tests_test_db_reader_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_test_db_reader_LDADD = $(DB_LIBS) $(ENGINE_LIBS)

# End to end, with the real tlm-worker on tiny configs.
EXTRA_DIST += tests/test_tlmd_lib.sh
TLMD_E2E = tests/test_tlmd_cli.sh tests/test_tlmd_sweep.sh tests/test_tlmd_kill_worker.sh tests/test_tlmd_kill_daemon.sh \
	tests/test_tlmd_failures.sh tests/test_tlmd_signals.sh tests/test_tlmd_reader.sh tests/test_tlmd_runs.sh
TESTS += $(TLMD_E2E)
dist_check_SCRIPTS += $(TLMD_E2E)

# Fuzz targets: their saved corpora replayed in every `make check` (under
# ASan/UBSan in check-sanitizers); `make fuzz` runs libFuzzer on them
# (clang), FUZZ_SECONDS each.
check_PROGRAMS += tests/fuzz/replay_event tests/fuzz/replay_sweep
tests_fuzz_replay_event_SOURCES = tests/fuzz/fuzz_event.c tests/fuzz/replay.c
tests_fuzz_replay_event_CPPFLAGS = $(ORC_TEST_CPPFLAGS) -DCORPUS='"event"'
tests_fuzz_replay_event_LDADD = $(ORC_LIBS)
tests_fuzz_replay_sweep_SOURCES = tests/fuzz/fuzz_sweep.c tests/fuzz/replay.c
tests_fuzz_replay_sweep_CPPFLAGS = $(ORC_TEST_CPPFLAGS) -DCORPUS='"sweep"'
tests_fuzz_replay_sweep_LDADD = $(ORC_LIBS)
TESTS += tests/fuzz/replay_event tests/fuzz/replay_sweep
EXTRA_DIST += tests/fuzz/run.sh tests/fuzz/corpus

FUZZ_SECONDS = 60
fuzz:
	FUZZ_OUT='$(abs_top_builddir)/tests/fuzz/out' $(SHELL) $(top_srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS)
.PHONY: fuzz
