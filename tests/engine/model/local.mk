# tests/engine/model/local.mk: the model: layout, account, finite differences of whole models, determinism, zero allocations, the four architectures.
check_PROGRAMS += tests/engine/model/test_grad_model
tests_engine_model_test_grad_model_SOURCES = tests/engine/model/test_grad_model.c tests/lib/model_util.h tests/lib/tap.h
tests_engine_model_test_grad_model_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_model_test_grad_model_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/model/test_grad_model

check_PROGRAMS += tests/engine/model/test_model
tests_engine_model_test_model_SOURCES = tests/engine/model/test_model.c tests/lib/model_util.h tests/lib/tap.h
tests_engine_model_test_model_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_model_test_model_LDADD = $(ENGINE_LIBS)
tests_engine_model_test_model_LDFLAGS = $(AM_LDFLAGS) $(ALLOC_WRAP_FLAGS)
TESTS += tests/engine/model/test_model

check_PROGRAMS += tests/engine/model/test_hope
tests_engine_model_test_hope_SOURCES = tests/engine/model/test_hope.c tests/lib/hope_util.h tests/lib/model_util.h tests/lib/tap.h
tests_engine_model_test_hope_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_model_test_hope_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/model/test_hope

check_PROGRAMS += tests/engine/model/test_titans_grad
tests_engine_model_test_titans_grad_SOURCES = tests/engine/model/test_titans_grad.c tests/lib/titans_util.h tests/lib/model_util.h tests/lib/tap.h
tests_engine_model_test_titans_grad_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_model_test_titans_grad_LDADD = $(ENGINE_LIBS)
TESTS += tests/engine/model/test_titans_grad

check_PROGRAMS += tests/engine/model/test_titans
tests_engine_model_test_titans_SOURCES = tests/engine/model/test_titans.c tests/lib/titans_util.h tests/lib/model_util.h tests/lib/tap.h
tests_engine_model_test_titans_CPPFLAGS = $(TEST_CPPFLAGS)
tests_engine_model_test_titans_LDADD = $(ENGINE_LIBS)
tests_engine_model_test_titans_LDFLAGS = $(AM_LDFLAGS) $(ALLOC_WRAP_FLAGS)
TESTS += tests/engine/model/test_titans
