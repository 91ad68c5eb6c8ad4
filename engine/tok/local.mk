# engine/tok/local.mk: libtlmtok.a: the tokenizers (bytes, trained BPE,
# Llama 3's tiktoken ranks): pre-tokenising, merging, BPE training, and
# the check that shards match a job's tokenizer.  Uses format/, config/ (the
# tokenizers' names and vocabularies), common/.
noinst_LIBRARIES += engine/tok/libtlmtok.a
engine_tok_libtlmtok_a_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS) $(PCRE2_CFLAGS)
engine_tok_libtlmtok_a_CFLAGS = $(AM_CFLAGS) $(KERNEL_CFLAGS)
engine_tok_libtlmtok_a_SOURCES = \
	engine/tok/tokenizer.h engine/tok/internal.h \
	engine/tok/core.c engine/tok/pretok.c \
	engine/tok/hash.c engine/tok/bpe.c engine/tok/bpe_train.c engine/tok/spm.c
TOK_LIBS = engine/tok/libtlmtok.a $(CONFIG_LIBS) $(FORMAT_LIBS) $(PCRE2_LIBS)
