# tests/engine/eval/local.mk: the evaluation suites.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/engine/eval/test_eval
