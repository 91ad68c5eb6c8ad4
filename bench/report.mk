# bench/report.mk: tlm-report's speed on a synthetic results.db of 10,000 jobs.
# Run (from the build folder): make bench/bench_report_gen reports/tlm-report && ../bench/bench_report.sh
noinst_PROGRAMS += bench/bench_report_gen
bench_bench_report_gen_SOURCES = bench/bench_report_gen.c tests/lib/main_evals.h
bench_bench_report_gen_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
bench_bench_report_gen_LDADD = $(DB_LIBS)
EXTRA_DIST += bench/bench_report.sh
CLEANFILES += bench/report-*.db bench/report-*.db-wal bench/report-*.db-shm
