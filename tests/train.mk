# tests/train.mk: tests of trainer, worker, checkpoints, determinism.
check_PROGRAMS += tests/test_loader tests/test_ckpt tests/test_train_lr
tests_test_loader_SOURCES = tests/test_loader.c tests/tap.h
tests_test_loader_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_loader_LDADD = $(ENGINE_LIBS)
tests_test_ckpt_SOURCES = tests/test_ckpt.c tests/tap.h
tests_test_ckpt_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_ckpt_LDADD = $(ENGINE_LIBS)
tests_test_train_lr_SOURCES = tests/test_train_lr.c tests/tap.h
tests_test_train_lr_CPPFLAGS = $(TEST_CPPFLAGS)
tests_test_train_lr_LDADD = $(ENGINE_LIBS)

TESTS += tests/test_loader tests/test_ckpt tests/test_train_lr
