# tests/engine/tok/local.mk: tokenizers; test_tokconf.sh and test_tokconf_llama2.sh check Llama 3's and Llama 2's ids against npm references (skip without npm).
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
TESTS += tests/engine/tok/test_tokconf_llama2.sh
dist_check_SCRIPTS += tests/engine/tok/test_tokconf_llama2.sh

EXTRA_DIST += tests/engine/tok/tokconf

TESTS += tests/engine/tok/test_llama2_train.sh
dist_check_SCRIPTS += tests/engine/tok/test_llama2_train.sh
