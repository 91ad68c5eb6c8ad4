# tests/worker/local.mk: tlm-worker end to end: events, errors, resume, --describe.

# test_gpu_plan: --describe's GPU plan (worker/describe.c) against the
# emulated CUDA backend's own allocations, byte for byte (77 without the
# emulated build)
C_TESTS += tests/worker/test_gpu_plan
# describe.c built as the emulated backend plans (plan.h's ENG_CUDA_EMU:
# the classifier's small chunk), so that the plan is the emulated one's
tests_worker_test_gpu_plan_CPPFLAGS = $(AM_CPPFLAGS) -DENG_CUDA_EMU
tests_worker_test_gpu_plan_SOURCES = tests/worker/test_gpu_plan.c worker/describe.c worker/describe.h tests/lib/tap.h
tests_worker_test_gpu_plan_LDADD = $(CUDA_EMU_A) $(ENGINE_LIBS) $(CUDA_EMU_LIBS)

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
