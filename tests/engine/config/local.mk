# tests/engine/config/local.mk: the job config (every key, bound and message), tapers.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
tests_engine_config_C = tests/engine/config/test_taper \
	tests/engine/config/test_config
check_PROGRAMS += $(tests_engine_config_C)
TESTS += $(tests_engine_config_C)
