# reports/local.mk: build rules for reports/ (included by Makefile.am).
