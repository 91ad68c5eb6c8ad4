# tests/eval.mk: tests of the evaluation suites (engine/eval*.c, engine/gpt2.c).
# eval_run is the engine's side of the PyTorch parity scripts (not a test itself).
check_PROGRAMS += tests/eval_run tests/test_eval
tests_eval_run_SOURCES = tests/eval_run.c
tests_eval_run_CPPFLAGS = $(TEST_CPPFLAGS)
tests_eval_run_LDADD = $(ENGINE_LIBS)
tests_test_eval_SOURCES = tests/test_eval.c tests/tap.h
tests_test_eval_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_eval_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_eval tests/parity_eval.py tests/parity_align.py
dist_check_SCRIPTS += tests/parity_eval.py tests/parity_align.py
