# tests/engine/config/local.mk: the job config (every key, bound and message), tapers.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/engine/config/test_taper \
	tests/engine/config/test_config
