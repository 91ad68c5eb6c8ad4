# db/local.mk: build rules for db/ (included by Makefile.am).
