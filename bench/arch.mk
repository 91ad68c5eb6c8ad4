# bench/arch.mk: throughput of each architecture beside the Transformer of
# the same size (one program per architecture).
# Run: make bench/bench_hope && ./bench/bench_hope [--threads 2] [--repeat 3]
noinst_PROGRAMS += bench/bench_hope
bench_bench_hope_SOURCES = bench/bench_hope.c bench/bench_model.h
bench_bench_hope_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
bench_bench_hope_LDADD = $(ENGINE_LIBS)
# Run: make bench/bench_titans && ./bench/bench_titans [--threads 2] [--config 1m|small|large] [--repeat 3]
noinst_PROGRAMS += bench/bench_titans
bench_bench_titans_SOURCES = bench/bench_titans.c bench/bench_model.h
bench_bench_titans_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
bench_bench_titans_LDADD = $(ENGINE_LIBS)
