# tests/engine/config/local.mk: the job config (every key, bound and message), tapers.
check_PROGRAMS += tests/engine/config/test_taper
tests_engine_config_test_taper_SOURCES = tests/engine/config/test_taper.c tests/lib/tap.h
tests_engine_config_test_taper_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_config_test_taper_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/config/test_taper

check_PROGRAMS += tests/engine/config/test_config
tests_engine_config_test_config_SOURCES = tests/engine/config/test_config.c tests/lib/tap.h
tests_engine_config_test_config_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_config_test_config_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/config/test_config
