# tests/engine/train/local.mk: trainer, LR schedule, loader, checkpoints.
check_PROGRAMS += tests/engine/train/test_loader
tests_engine_train_test_loader_SOURCES = tests/engine/train/test_loader.c tests/lib/tap.h
tests_engine_train_test_loader_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_train_test_loader_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/train/test_loader

check_PROGRAMS += tests/engine/train/test_ckpt
tests_engine_train_test_ckpt_SOURCES = tests/engine/train/test_ckpt.c tests/lib/tap.h
tests_engine_train_test_ckpt_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_train_test_ckpt_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/train/test_ckpt

check_PROGRAMS += tests/engine/train/test_lr
tests_engine_train_test_lr_SOURCES = tests/engine/train/test_lr.c tests/lib/tap.h
tests_engine_train_test_lr_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_train_test_lr_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/train/test_lr

check_PROGRAMS += tests/engine/train/test_train
tests_engine_train_test_train_SOURCES = tests/engine/train/test_train.c tests/lib/tap.h
tests_engine_train_test_train_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_train_test_train_LDADD = $(ENGINE_LIBS)
tests_engine_train_test_train_LDFLAGS = $(AM_LDFLAGS) $(ALLOC_WRAP_FLAGS)
TESTS += tests/engine/train/test_train
