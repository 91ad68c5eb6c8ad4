# bench/parallel.mk: data-parallel training on the CPU, 1 rank beside 2 and
# ZeRO-1 (docs/parallel.md).
# Run: make bench/bench_dp && sh ../bench/bench_dp.sh [small|large] [STEPS]  (from the build folder)
noinst_PROGRAMS += bench/bench_dp
bench_bench_dp_SOURCES = bench/bench_dp.c bench/bench_model.h
bench_bench_dp_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
bench_bench_dp_LDADD = $(ENGINE_LIBS)
EXTRA_DIST += bench/bench_dp.sh
