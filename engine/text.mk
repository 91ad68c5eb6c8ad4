# engine/text.mk: tokenizers and evaluation suites.
engine_libtlmengine_a_SOURCES += \
	engine/tokenizer.h engine/tok_internal.h \
	engine/tok_core.c engine/tok_utf8.c engine/tok_pretok.c \
	engine/tok_hash.c engine/tok_bpe.c engine/tok_train.c
