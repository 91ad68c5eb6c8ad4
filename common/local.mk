# common/local.mk: libtlmcommon.a, the base library every part of TLM links
# (db, orchestrator, reports, dataprep, the engine): the error contract,
# durable file I/O and path checks, SHA-256, the YAML/JSON config tree,
# checked arithmetic, UTF-8, number and duration text, clocks, growable
# arrays, the JSON string escape, the command-line parser (cli), starting a
# helper program (spawn).  It links nothing of TLM's own.
noinst_LIBRARIES += common/libtlmcommon.a
common_libtlmcommon_a_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS)
# -O3 like the kernels: SHA-256 verifies every shard at each job start
common_libtlmcommon_a_CFLAGS = $(AM_CFLAGS) $(KERNEL_CFLAGS)
common_libtlmcommon_a_SOURCES = \
	common/err.c common/err.h \
	common/fileio.c common/fileio.h \
	common/sha256.c common/sha256.h \
	common/cfgtree.c common/cfgtree.h \
	common/failure.h \
	common/protocol.c common/protocol.h \
	common/utf8.c common/utf8.h \
	common/fmt.c common/fmt.h \
	common/clock.c common/clock.h \
	common/vec.c common/vec.h \
	common/json.c common/json.h \
	common/cli.c common/cli.h \
	common/spawn.c common/spawn.h \
	common/checked.h
COMMON_LIBS = common/libtlmcommon.a $(YAML_LIBS) -lm
