# tests/engine/model/local.mk: the model: layout, account, finite differences of whole models, determinism, zero allocations, the four architectures.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/engine/model/test_grad_model \
	tests/engine/model/test_model \
	tests/engine/model/test_hope \
	tests/engine/model/test_titans_grad \
	tests/engine/model/test_titans
tests_engine_model_test_model_LDFLAGS = $(AM_LDFLAGS) $(ALLOC_WRAP_FLAGS)
tests_engine_model_test_titans_LDFLAGS = $(AM_LDFLAGS) $(ALLOC_WRAP_FLAGS)
