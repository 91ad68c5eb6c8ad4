# engine/train.mk: trainer, data loader, checkpoints.
engine_libtlmengine_a_SOURCES += \
	engine/rng.c engine/rng.h \
	engine/loader.c engine/loader.h \
	engine/train_lr.c engine/train_lr.h \
	engine/ckpt.c engine/ckpt.h \
	engine/train.c engine/train.h
