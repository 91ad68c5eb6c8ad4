# engine/eval/local.mk: the evaluation suites (validation, WikiText,
# LAMBADA, commonsense, NIAH, alignment) and the GPT-2 reader they can also
# score.  Uses model/, train/ (checkpoints), tok/, format/, config/, common/.
engine_libtlmengine_a_SOURCES += \
	engine/eval/eval.h engine/eval/internal.h engine/eval/eval.c engine/eval/util.c engine/eval/score.c \
	engine/eval/wikitext.c engine/eval/lambada.c engine/eval/commonsense.c engine/eval/niah.c \
	engine/eval/alignment.c engine/eval/gpt2.c engine/eval/gpt2.h
