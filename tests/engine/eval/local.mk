# tests/engine/eval/local.mk: the evaluation suites.
check_PROGRAMS += tests/engine/eval/test_eval
tests_engine_eval_test_eval_SOURCES = tests/engine/eval/test_eval.c tests/lib/tap.h
tests_engine_eval_test_eval_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_eval_test_eval_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/eval/test_eval
