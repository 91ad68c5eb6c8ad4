# tests/local.mk: `make check`.  tests/ mirrors the source tree: the tests
# of engine/model/ are in tests/engine/model/, of orchestrator/ (tlmd) in
# tests/tlmd/, and so on; each folder's local.mk lists its tests.  Unit
# tests are C programs (test_*.c, TAP through tests/lib/tap.h); end-to-end
# tests are shell scripts; parity tests are python with torch
# (tests/parity/).  Every test exits 0 (pass), 1 (fail) or 77 (skip).
EXTRA_DIST += tests/lib/tap.h tests/lib/alloc_count.h tests/lib/model_util.h tests/lib/db_util.h tests/lib/hope_util.h \
	tests/lib/titans_util.h tests/lib/main_evals.h tests/lib/report_checks.py tests/lib/bounded.sh tests/lib/torch-python.sh tests/data

# What a test program gets unless its own _LDADD says otherwise: each
# folder's local.mk lists its test_x.c programs and names only what
# differs (the sources of a program of several files, another library).
# (The product's programs all name their own.)
LDADD = $(ENGINE_LIBS)
# Tests that count the engine's allocations (tests/lib/alloc_count.h)
ALLOC_WRAP_FLAGS = -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc \
	-Wl,--wrap=aligned_alloc -Wl,--wrap=posix_memalign

# Every folder's C unit tests (C_TESTS += ... in its local.mk) are built
# by make check and run by it: said once here, not in each folder.
C_TESTS =

include tests/lib/local.mk
include tests/common/local.mk
include tests/engine/config/local.mk
include tests/engine/format/local.mk
include tests/engine/tok/local.mk
include tests/engine/model/local.mk
include tests/engine/cpu/local.mk
include tests/engine/backend/local.mk
include tests/engine/train/local.mk
include tests/engine/eval/local.mk
include tests/parity/local.mk
include tests/db/local.mk
include tests/tlmd/local.mk
include tests/worker/local.mk
include tests/parallel/local.mk
include tests/report/local.mk
include tests/dashboard/local.mk
include tests/dataprep/local.mk
include tests/e2e/local.mk
include tests/fuzz/local.mk
check_PROGRAMS += $(C_TESTS)
TESTS += $(C_TESTS)

# the layering of README.md's "Where things are"
TESTS += tests/test_layers.sh
EXTRA_DIST += tests/test_layers.sh
