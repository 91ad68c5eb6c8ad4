# dataprep/local.mk: tlm-data, text -> token shards + manifest, encode and
# decode on the command line, BPE training.
bin_PROGRAMS += dataprep/tlm-data
dataprep_tlm_data_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS) $(PCRE2_CFLAGS)
dataprep_tlm_data_SOURCES = \
	dataprep/dataprep.h \
	dataprep/tlm_data.c \
	dataprep/dp_build.c \
	dataprep/dp_codec.c \
	dataprep/dp_sources.c \
	dataprep/dp_progress.c
dataprep_tlm_data_LDADD = $(TOK_LIBS) $(CONFIG_LIBS)
