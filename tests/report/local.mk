# tests/report/local.mk: tlm-report: every table, format and figure checked against the database.
check_PROGRAMS += tests/report/report_mkdb
tests_report_report_mkdb_SOURCES = tests/report/report_mkdb.c tests/report/mkdb_profiles.c tests/report/mkdb.h tests/lib/main_evals.h
tests_report_report_mkdb_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_report_report_mkdb_LDADD = $(DB_LIBS)

# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/report/test_unit
tests_report_test_unit_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_report_test_unit_LDADD = $(RPT_LIBS)

TESTS += tests/report/test_report.sh
dist_check_SCRIPTS += tests/report/test_report.sh

EXTRA_DIST += tests/report/report_check.py tests/report/figure_check.py

EXTRA_DIST += tests/report/test_report.lsan
