# tests/tlmd/local.mk: tlmd: sweep parsing, events, ingest, and end to end with the real worker (lib.sh).
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/tlmd/test_sweep_parse \
	tests/tlmd/test_events \
	tests/tlmd/test_ingest
tests_tlmd_test_sweep_parse_LDADD = $(ORC_LIBS)
tests_tlmd_test_events_LDADD = $(ORC_LIBS)
tests_tlmd_test_ingest_LDADD = $(ORC_LIBS)

check_PROGRAMS += tests/tlmd/db_reader
tests_tlmd_db_reader_LDADD = $(DB_LIBS)

# the end-to-end tests with the real worker (lib.sh); test_slurm*: the
# slurm executor on a private cluster (77 without Slurm)
TLMD_SH_TESTS = \
	tests/tlmd/test_cli.sh tests/tlmd/test_sweep.sh tests/tlmd/test_kill_worker.sh \
	tests/tlmd/test_kill_daemon.sh tests/tlmd/test_failures.sh tests/tlmd/test_signals.sh \
	tests/tlmd/test_reader.sh tests/tlmd/test_runs.sh tests/tlmd/test_slurm.sh \
	tests/tlmd/test_slurm_kill.sh tests/tlmd/test_slurm_faults.sh tests/tlmd/test_slurm_time.sh \
	tests/tlmd/test_slurm_preempt.sh tests/tlmd/test_slurm_protocol.sh
TESTS += $(TLMD_SH_TESTS)
dist_check_SCRIPTS += $(TLMD_SH_TESTS)

EXTRA_DIST += tests/tlmd/lib.sh

TESTS += tests/tlmd/test_dp_local.sh
dist_check_SCRIPTS += tests/tlmd/test_dp_local.sh

TESTS += tests/tlmd/test_dp_slurm.sh
dist_check_SCRIPTS += tests/tlmd/test_dp_slurm.sh
