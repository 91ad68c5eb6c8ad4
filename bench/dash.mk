# bench/dash.mk: tlm-dash's server time, answer sizes and memory on a synthetic results.db of 100,000 jobs.
# Run (from the build folder): make bench/bench_report_gen dashboard/tlm-dash && ../bench/bench_dash.sh
EXTRA_DIST += bench/bench_dash.sh
CLEANFILES += bench/dash-*.db bench/dash-*.db-wal bench/dash-*.db-shm
