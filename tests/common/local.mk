# tests/common/local.mk: the base library's helpers.
# test_utf8: tests/common/local.mk: the base library (common/): one test program per helper, linked
#   against libtlmcommon.a alone.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/common/test_sha256 \
	tests/common/test_utf8 \
	tests/common/test_fmt \
	tests/common/test_clock \
	tests/common/test_fileio \
	tests/common/test_vec \
	tests/common/test_cli \
	tests/common/test_json
tests_common_test_sha256_LDADD = $(COMMON_LIBS)
tests_common_test_utf8_LDADD = $(COMMON_LIBS)
tests_common_test_fmt_LDADD = $(COMMON_LIBS)
tests_common_test_clock_LDADD = $(COMMON_LIBS)
tests_common_test_fileio_LDADD = $(COMMON_LIBS)
tests_common_test_vec_LDADD = $(COMMON_LIBS)
tests_common_test_cli_LDADD = $(COMMON_LIBS)
tests_common_test_json_LDADD = $(COMMON_LIBS)
