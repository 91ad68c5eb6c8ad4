# tests/common/local.mk: the base library's helpers.
check_PROGRAMS += tests/common/test_sha256
tests_common_test_sha256_SOURCES = tests/common/test_sha256.c tests/lib/tap.h
tests_common_test_sha256_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_sha256_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_sha256
# tests/common/local.mk: the base library (common/): one test program per
# helper, linked against libtlmcommon.a alone.
check_PROGRAMS += tests/common/test_utf8
tests_common_test_utf8_SOURCES = tests/common/test_utf8.c tests/lib/tap.h
tests_common_test_utf8_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_utf8_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_utf8

check_PROGRAMS += tests/common/test_fmt
tests_common_test_fmt_SOURCES = tests/common/test_fmt.c tests/lib/tap.h
tests_common_test_fmt_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_fmt_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_fmt

check_PROGRAMS += tests/common/test_clock
tests_common_test_clock_SOURCES = tests/common/test_clock.c tests/lib/tap.h
tests_common_test_clock_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_clock_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_clock

check_PROGRAMS += tests/common/test_fileio
tests_common_test_fileio_SOURCES = tests/common/test_fileio.c tests/lib/tap.h
tests_common_test_fileio_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_fileio_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_fileio

check_PROGRAMS += tests/common/test_vec
tests_common_test_vec_SOURCES = tests/common/test_vec.c tests/lib/tap.h
tests_common_test_vec_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_vec_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_vec

check_PROGRAMS += tests/common/test_cli
tests_common_test_cli_SOURCES = tests/common/test_cli.c tests/lib/tap.h
tests_common_test_cli_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_cli_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_cli

check_PROGRAMS += tests/common/test_json
tests_common_test_json_SOURCES = tests/common/test_json.c tests/lib/tap.h
tests_common_test_json_CPPFLAGS = $(TEST_CPPFLAGS)
tests_common_test_json_LDADD = $(COMMON_LIBS)
TESTS += tests/common/test_json
