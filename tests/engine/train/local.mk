# tests/engine/train/local.mk: trainer, LR schedule, loader, checkpoints.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
tests_engine_train_C = tests/engine/train/test_loader \
	tests/engine/train/test_ckpt \
	tests/engine/train/test_lr \
	tests/engine/train/test_train
check_PROGRAMS += $(tests_engine_train_C)
TESTS += $(tests_engine_train_C)
tests_engine_train_test_train_LDFLAGS = $(AM_LDFLAGS) $(ALLOC_WRAP_FLAGS)
