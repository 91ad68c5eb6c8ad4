# bench/orchestrator.mk: tlmd overhead and ingestion.
# Run: make bench/bench_tlmd bench/bench_tlmd_flood && ./bench/bench_tlmd
#      && sh ../bench/bench_tlmd.sh        (from the build folder)
noinst_PROGRAMS += bench/bench_tlmd bench/bench_tlmd_flood
bench_bench_tlmd_SOURCES = bench/bench_tlmd.c
bench_bench_tlmd_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
bench_bench_tlmd_LDADD = $(ORC_LIBS)
bench_bench_tlmd_flood_SOURCES = bench/bench_tlmd_flood.c
EXTRA_DIST += bench/bench_tlmd.sh bench/bench_slurm.sh
