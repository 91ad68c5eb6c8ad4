# tests/report.mk: tests of tlm-report.
# test_report_mkdb writes a results.db with known values through the db
# API; test_report.sh renders every table, format and figure from it and
# test_report_check.py checks them against the database with its own SQL.
check_PROGRAMS += tests/test_report_mkdb tests/test_report_unit
tests_test_report_mkdb_SOURCES = tests/test_report_mkdb.c
tests_test_report_mkdb_CPPFLAGS = $(TEST_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_report_mkdb_LDADD = $(DB_LIBS) $(ENGINE_LIBS)
tests_test_report_unit_SOURCES = tests/test_report_unit.c tests/tap.h
tests_test_report_unit_CPPFLAGS = $(TEST_CPPFLAGS) $(SQLITE_CFLAGS) $(PLPLOT_CFLAGS)
tests_test_report_unit_LDADD = $(RPT_LIBS)

TESTS += tests/test_report_unit tests/test_report.sh
dist_check_SCRIPTS += tests/test_report.sh
EXTRA_DIST += tests/test_report_check.py tests/test_report.lsan
