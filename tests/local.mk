# tests/local.mk: `make check`.  Unit tests are C programs (tests/test_*.c);
# end-to-end tests are shell scripts; parity tests are python with torch.
EXTRA_DIST += tests/tap.h tests/bounded.sh tests/torch-python.sh tests/data

TEST_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)

check_PROGRAMS += tests/test_taper tests/test_config tests/test_safetensors
tests_test_safetensors_SOURCES = tests/test_safetensors.c tests/tap.h
tests_test_safetensors_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_safetensors_LDADD = $(ENGINE_LIBS)
tests_test_taper_SOURCES = tests/test_taper.c tests/tap.h
tests_test_taper_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_taper_LDADD = $(ENGINE_LIBS)
tests_test_config_SOURCES = tests/test_config.c tests/tap.h
tests_test_config_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_config_LDADD = $(ENGINE_LIBS)

TESTS += tests/test_taper tests/test_config tests/test_safetensors tests/test_describe.sh
dist_check_SCRIPTS += tests/test_describe.sh

# The whole product on tiny jobs: tlmd + tlm-worker + tlm-report, every
# number of every table checked against results.db.
TESTS += tests/test_e2e.sh
dist_check_SCRIPTS += tests/test_e2e.sh
EXTRA_DIST += tests/e2e_check.py

# One fragment per area.
include tests/engine.mk
include tests/train.mk
include tests/orchestrator.mk
include tests/data.mk
include tests/report.mk
include tests/eval.mk
include tests/hope.mk
include tests/titans.mk
