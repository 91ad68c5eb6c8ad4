# tests/tlmd/local.mk: tlmd: sweep parsing, events, ingest, and end to end with the real worker (lib.sh).
check_PROGRAMS += tests/tlmd/test_sweep_parse
tests_tlmd_test_sweep_parse_SOURCES = tests/tlmd/test_sweep_parse.c tests/lib/tap.h
tests_tlmd_test_sweep_parse_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_tlmd_test_sweep_parse_LDADD = $(ORC_LIBS)
TESTS += tests/tlmd/test_sweep_parse

check_PROGRAMS += tests/tlmd/test_events
tests_tlmd_test_events_SOURCES = tests/tlmd/test_events.c tests/lib/tap.h
tests_tlmd_test_events_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_tlmd_test_events_LDADD = $(ORC_LIBS)
TESTS += tests/tlmd/test_events

check_PROGRAMS += tests/tlmd/test_ingest
tests_tlmd_test_ingest_SOURCES = tests/tlmd/test_ingest.c tests/lib/tap.h
tests_tlmd_test_ingest_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_tlmd_test_ingest_LDADD = $(ORC_LIBS)
TESTS += tests/tlmd/test_ingest

check_PROGRAMS += tests/tlmd/db_reader
tests_tlmd_db_reader_SOURCES = tests/tlmd/db_reader.c
tests_tlmd_db_reader_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_tlmd_db_reader_LDADD = $(DB_LIBS)

TESTS += tests/tlmd/test_cli.sh
dist_check_SCRIPTS += tests/tlmd/test_cli.sh

TESTS += tests/tlmd/test_sweep.sh
dist_check_SCRIPTS += tests/tlmd/test_sweep.sh

TESTS += tests/tlmd/test_kill_worker.sh
dist_check_SCRIPTS += tests/tlmd/test_kill_worker.sh

TESTS += tests/tlmd/test_kill_daemon.sh
dist_check_SCRIPTS += tests/tlmd/test_kill_daemon.sh

TESTS += tests/tlmd/test_failures.sh
dist_check_SCRIPTS += tests/tlmd/test_failures.sh

TESTS += tests/tlmd/test_signals.sh
dist_check_SCRIPTS += tests/tlmd/test_signals.sh

TESTS += tests/tlmd/test_reader.sh
dist_check_SCRIPTS += tests/tlmd/test_reader.sh

TESTS += tests/tlmd/test_runs.sh
dist_check_SCRIPTS += tests/tlmd/test_runs.sh

TESTS += tests/tlmd/test_slurm.sh
dist_check_SCRIPTS += tests/tlmd/test_slurm.sh

TESTS += tests/tlmd/test_slurm_kill.sh
dist_check_SCRIPTS += tests/tlmd/test_slurm_kill.sh

TESTS += tests/tlmd/test_slurm_faults.sh
dist_check_SCRIPTS += tests/tlmd/test_slurm_faults.sh

TESTS += tests/tlmd/test_slurm_time.sh
dist_check_SCRIPTS += tests/tlmd/test_slurm_time.sh

TESTS += tests/tlmd/test_slurm_preempt.sh
dist_check_SCRIPTS += tests/tlmd/test_slurm_preempt.sh

TESTS += tests/tlmd/test_slurm_protocol.sh
dist_check_SCRIPTS += tests/tlmd/test_slurm_protocol.sh

EXTRA_DIST += tests/tlmd/lib.sh
