# tests/engine/train/local.mk: trainer, LR schedule, loader, checkpoints.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/engine/train/test_loader \
	tests/engine/train/test_ckpt \
	tests/engine/train/test_lr \
	tests/engine/train/test_train
tests_engine_train_test_train_LDFLAGS = $(AM_LDFLAGS) $(ALLOC_WRAP_FLAGS)
# test_ckpt_bf16: checkpoints between the CPU (fp32) and the emulated CUDA backend in bf16, through the trainer
#   (77 without the emulator)
C_TESTS += tests/engine/train/test_ckpt_bf16
tests_engine_train_test_ckpt_bf16_LDADD = $(CUDA_EMU_A) $(ENGINE_LIBS) $(CUDA_EMU_LIBS)
