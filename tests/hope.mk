# tests/hope.mk: Hope-attention (arch hope_attn, docs/hope.md): the level
# split, config, layout, finite differences, the multi-frequency optimizer,
# PyTorch parity with the multi-frequency updates, resume equality.
check_PROGRAMS += tests/test_hope
tests_test_hope_SOURCES = tests/test_hope.c tests/hope_util.h tests/test_model_util.h tests/tap.h
tests_test_hope_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_hope_LDADD = $(ENGINE_LIBS)
TESTS += tests/test_hope
