# engine/train/local.mk: the trainer (steps, accumulation, clipping, AdamW
# through the model), the LR schedule, the data loader, checkpoints and the
# RNG.  Uses model/, format/, tok/, config/, common/.
engine_libtlmengine_a_SOURCES += \
	engine/train/rng.c engine/train/rng.h \
	engine/train/loader.c engine/train/loader.h \
	engine/train/lr.c engine/train/lr.h \
	engine/train/ckpt.c engine/train/ckpt.h \
	engine/train/train.c engine/train/train.h
