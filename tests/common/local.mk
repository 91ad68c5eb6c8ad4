# tests/common/local.mk: the base library's helpers.
check_PROGRAMS += tests/common/test_sha256
tests_common_test_sha256_SOURCES = tests/common/test_sha256.c tests/lib/tap.h
tests_common_test_sha256_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_sha256_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_sha256
