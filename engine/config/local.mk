# engine/config/local.mk: libtlmconfig.a: a job config from YAML/JSON to a
# resolved eng_config (every key, default and bound), the scale presets,
# the taper schedules, the architectures' shape facts and the parameter and
# FLOP account.  Uses common/ only.
noinst_LIBRARIES += engine/config/libtlmconfig.a
engine_config_libtlmconfig_a_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
engine_config_libtlmconfig_a_SOURCES = \
	engine/config/config.c engine/config/config.h \
	engine/config/presets.c engine/config/presets.h \
	engine/config/taper.c engine/config/taper.h \
	engine/config/arch.c engine/config/arch.h \
	engine/config/account.c engine/config/account.h \
	engine/config/suites.c engine/config/suites.h \
	engine/config/ranks.c engine/config/ranks.h \
	engine/config/build.h
CONFIG_LIBS = engine/config/libtlmconfig.a $(COMMON_LIBS) $(JANSSON_LIBS)
