# tests/engine/tok/local.mk: tokenizers; test_tokconf.sh and test_tokconf_llama2.sh check Llama 3's and Llama 2's ids against npm references (skip without npm).
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/engine/tok/test_tok

check_PROGRAMS += tests/engine/tok/tokconf_run

TESTS += tests/engine/tok/test_tokconf.sh
dist_check_SCRIPTS += tests/engine/tok/test_tokconf.sh
TESTS += tests/engine/tok/test_tokconf_llama2.sh
dist_check_SCRIPTS += tests/engine/tok/test_tokconf_llama2.sh

EXTRA_DIST += tests/engine/tok/tokconf

TESTS += tests/engine/tok/test_llama2_train.sh
dist_check_SCRIPTS += tests/engine/tok/test_llama2_train.sh
