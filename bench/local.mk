# bench/local.mk: build rules for bench/ (included by Makefile.am).
