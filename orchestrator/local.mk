# orchestrator/local.mk: build rules for orchestrator/ (included by Makefile.am).
