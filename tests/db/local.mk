# tests/db/local.mk: results.db: the API, migrations.
check_PROGRAMS += tests/db/test_db
tests_db_test_db_SOURCES = tests/db/test_db.c tests/lib/db_util.h tests/lib/tap.h
tests_db_test_db_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_db_test_db_LDADD = $(DB_LIBS)
TESTS += tests/db/test_db

check_PROGRAMS += tests/db/test_migrate
tests_db_test_migrate_SOURCES = tests/db/test_migrate.c tests/lib/db_util.h tests/lib/tap.h
tests_db_test_migrate_CPPFLAGS = $(ORC_TEST_CPPFLAGS)
tests_db_test_migrate_LDADD = $(DB_LIBS)
TESTS += tests/db/test_migrate
