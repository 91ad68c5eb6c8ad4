# worker/local.mk: tlm-worker, one training job per process.
bin_PROGRAMS += worker/tlm-worker
worker_tlm_worker_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
worker_tlm_worker_SOURCES = \
	worker/main.c \
	worker/describe.c worker/describe.h
worker_tlm_worker_LDADD = $(ENGINE_LIBS)
