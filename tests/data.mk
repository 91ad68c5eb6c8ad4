# tests/data.mk: tests of tokenizers, shards, tlm-data, evaluation.
EXTRA_DIST += tests/tokconf
check_PROGRAMS += tests/test_tok tests/test_shard tests/test_tokconf_run
tests_test_tok_SOURCES = tests/test_tok.c tests/tap.h
tests_test_tok_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_tok_LDADD = $(ENGINE_LIBS)
tests_test_shard_SOURCES = tests/test_shard.c tests/tap.h
tests_test_shard_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_shard_LDADD = $(ENGINE_LIBS)
# the TLM side of test_tokconf.sh (not a test by itself)
tests_test_tokconf_run_SOURCES = tests/test_tokconf_run.c
tests_test_tokconf_run_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_tokconf_run_LDADD = $(ENGINE_LIBS)

TESTS += tests/test_tok tests/test_shard tests/test_tlmdata.sh tests/test_tokconf.sh
dist_check_SCRIPTS += tests/test_tlmdata.sh tests/test_tokconf.sh
