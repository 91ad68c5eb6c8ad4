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
