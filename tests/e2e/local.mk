# tests/e2e/local.mk: the whole product on tiny jobs: tlmd + tlm-worker + tlm-report, every number of every table checked against results.db.
TESTS += tests/e2e/test_e2e.sh
dist_check_SCRIPTS += tests/e2e/test_e2e.sh

EXTRA_DIST += tests/e2e/e2e_check.py
