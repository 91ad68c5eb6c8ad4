# tests/worker/local.mk: tlm-worker end to end: events, errors, resume, --describe.
EXTRA_DIST += tests/worker/resume_lib.sh
TESTS += tests/worker/test_describe.sh
dist_check_SCRIPTS += tests/worker/test_describe.sh

TESTS += tests/worker/test_resume.sh
dist_check_SCRIPTS += tests/worker/test_resume.sh

TESTS += tests/worker/test_errors.sh
dist_check_SCRIPTS += tests/worker/test_errors.sh

TESTS += tests/worker/test_events.sh
dist_check_SCRIPTS += tests/worker/test_events.sh

TESTS += tests/worker/test_train.sh
dist_check_SCRIPTS += tests/worker/test_train.sh

TESTS += tests/worker/test_hope_resume.sh
dist_check_SCRIPTS += tests/worker/test_hope_resume.sh

TESTS += tests/worker/test_titans_resume.sh
dist_check_SCRIPTS += tests/worker/test_titans_resume.sh
