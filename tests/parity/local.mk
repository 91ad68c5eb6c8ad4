# tests/parity/local.mk: whole models and suites against independent PyTorch implementations (skip without torch); the *_dump and eval_run programs are the engine's side.
check_PROGRAMS += tests/parity/parity_dump
tests_parity_parity_dump_SOURCES = tests/parity/parity_dump.c tests/parity/dump_util.h tests/lib/model_util.h

check_PROGRAMS += tests/parity/eval_run

check_PROGRAMS += tests/parity/parity_hope_dump
tests_parity_parity_hope_dump_SOURCES = tests/parity/parity_hope_dump.c tests/parity/dump_util.h tests/lib/hope_util.h tests/lib/model_util.h

check_PROGRAMS += tests/parity/parity_titans_dump
tests_parity_parity_titans_dump_SOURCES = tests/parity/parity_titans_dump.c tests/parity/dump_util.h tests/lib/titans_util.h tests/lib/model_util.h

TESTS += tests/parity/parity_torch.py
dist_check_SCRIPTS += tests/parity/parity_torch.py

TESTS += tests/parity/parity_eval.py
dist_check_SCRIPTS += tests/parity/parity_eval.py

TESTS += tests/parity/parity_align.py
dist_check_SCRIPTS += tests/parity/parity_align.py

TESTS += tests/parity/parity_hope.py
dist_check_SCRIPTS += tests/parity/parity_hope.py

TESTS += tests/parity/parity_titans.py
dist_check_SCRIPTS += tests/parity/parity_titans.py
