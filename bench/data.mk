# bench/data.mk: tokenizer encoding speed beside tiktoken (WebAssembly) and the JavaScript references.
# Run (from the build folder): make bench/bench_tok && ../bench/bench_tok.sh
noinst_PROGRAMS += bench/bench_tok
bench_bench_tok_SOURCES = bench/bench_tok.c
bench_bench_tok_CPPFLAGS = $(AM_CPPFLAGS)
bench_bench_tok_LDADD = $(ENGINE_LIBS)
EXTRA_DIST += bench/bench_tok.sh bench/bench_tok_ref.mjs

# SHA-256 (every shard is hashed at each job start) beside coreutils' sha256sum.
noinst_PROGRAMS += bench/bench_sha256
bench_bench_sha256_SOURCES = bench/bench_sha256.c
bench_bench_sha256_CPPFLAGS = $(AM_CPPFLAGS)
bench_bench_sha256_LDADD = $(COMMON_LIBS)
