# engine/text.mk: tokenizers and evaluation suites.
engine_libtlmengine_a_SOURCES += \
	engine/tokenizer.h engine/tok_internal.h \
	engine/tok_core.c engine/tok_utf8.c engine/tok_pretok.c \
	engine/tok_hash.c engine/tok_bpe.c engine/tok_train.c
engine_libtlmengine_a_SOURCES += \
	engine/eval.h engine/eval_internal.h engine/eval.c engine/eval_util.c engine/eval_score.c \
	engine/eval_wikitext.c engine/eval_lambada.c engine/eval_commonsense.c engine/eval_niah.c \
	engine/eval_alignment.c engine/model_probe.c engine/model_probe.h engine/gpt2.c engine/gpt2.h
