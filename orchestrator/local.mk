# orchestrator/local.mk: tlmd, the sweep daemon (included by Makefile.am).
# liborc.a holds everything but main() so that the tests, the fuzz targets
# and the benchmark link the same code tlmd runs.
noinst_LIBRARIES += orchestrator/liborc.a
orchestrator_liborc_a_CPPFLAGS = $(AM_CPPFLAGS) $(UV_CFLAGS) $(SQLITE_CFLAGS) $(YAML_CFLAGS)
orchestrator_liborc_a_SOURCES = \
	orchestrator/jsonline.c orchestrator/jsonline.h \
	orchestrator/event.c orchestrator/event.h \
	orchestrator/linebuf.c orchestrator/linebuf.h \
	orchestrator/sweep.c orchestrator/sweep.h \
	orchestrator/jobs.c orchestrator/jobs.h \
	orchestrator/jobinfo.c orchestrator/jobinfo.h \
	orchestrator/plan.c orchestrator/plan.h orchestrator/opts.h \
	orchestrator/inputs.c orchestrator/inputs.h \
	orchestrator/rundir.c orchestrator/rundir.h \
	orchestrator/slots.c orchestrator/slots.h \
	orchestrator/lock.c orchestrator/lock.h \
	orchestrator/pairing.c orchestrator/pairing.h \
	orchestrator/classify.c orchestrator/classify.h \
	orchestrator/shim.c orchestrator/shim.h \
	orchestrator/daemon.c orchestrator/daemon.h orchestrator/exits.h \
	orchestrator/attempt.c \
	orchestrator/ingest.c \
	orchestrator/recover.c \
	orchestrator/progress.c \
	orchestrator/status.c orchestrator/status.h \
	orchestrator/executor.h orchestrator/exec_local.c \
	orchestrator/resources.c orchestrator/resources.h \
	orchestrator/cmd.c orchestrator/cmd.h \
	orchestrator/exec_slurm.c orchestrator/exec_slurm.h orchestrator/slurm_adopt.c \
	orchestrator/slurm_job.c orchestrator/slurm_job.h

bin_PROGRAMS += orchestrator/tlmd
orchestrator_tlmd_CPPFLAGS = $(AM_CPPFLAGS) $(UV_CFLAGS) $(SQLITE_CFLAGS)
orchestrator_tlmd_SOURCES = orchestrator/main.c
# Everything that links the orchestrator links these.
ORC_LIBS = orchestrator/liborc.a $(DB_LIBS) $(CONFIG_LIBS) $(UV_LIBS)
orchestrator_tlmd_LDADD = $(ORC_LIBS)
