# tests/engine/tok/local.mk: tokenizers; test_tokconf.sh checks Llama 3 ids against an npm reference (skips without npm).
check_PROGRAMS += tests/engine/tok/test_tok
tests_engine_tok_test_tok_SOURCES = tests/engine/tok/test_tok.c tests/lib/tap.h
tests_engine_tok_test_tok_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_tok_test_tok_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/tok/test_tok

check_PROGRAMS += tests/engine/tok/tokconf_run
tests_engine_tok_tokconf_run_SOURCES = tests/engine/tok/tokconf_run.c
tests_engine_tok_tokconf_run_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_tok_tokconf_run_LDADD = $(ENGINE_LIBS)

TESTS += tests/engine/tok/test_tokconf.sh
dist_check_SCRIPTS += tests/engine/tok/test_tokconf.sh

EXTRA_DIST += tests/engine/tok/tokconf
