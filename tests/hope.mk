# tests/hope.mk: Hope-attention (arch hope_attn, docs/hope.md): the level
# split, config, layout, finite differences, the multi-frequency optimizer,
# PyTorch parity with the multi-frequency updates, resume equality.
check_PROGRAMS += tests/test_hope
tests_test_hope_SOURCES = tests/test_hope.c tests/hope_util.h tests/test_model_util.h tests/tap.h
tests_test_hope_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_hope_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_hope
# PyTorch parity: parity_hope_dump writes the engine's numbers (10 steps
# with chunks 1, 2, 4), parity_hope.py rebuilds the models and the
# multi-frequency optimizer in PyTorch and compares (skips without torch).
check_PROGRAMS += tests/parity_hope_dump
tests_parity_hope_dump_SOURCES = tests/parity_hope_dump.c tests/parity_dump_util.h tests/hope_util.h tests/test_model_util.h
tests_parity_hope_dump_CPPFLAGS = $(TEST_CPPFLAGS)
tests_parity_hope_dump_LDADD = $(ENGINE_LIBS)
TESTS += tests/parity_hope.py
dist_check_SCRIPTS += tests/parity_hope.py
# tlm-worker: a hope_attn run killed or stopped mid-chunk resumes bit for bit.
TESTS += tests/test_hope_resume.sh
dist_check_SCRIPTS += tests/test_hope_resume.sh
