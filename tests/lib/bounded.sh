#!/bin/sh
# bounded.sh: runs one test with a time limit (TLM_TEST_TIMEOUT seconds,
# default 900), so a hung test fails instead of hanging `make check`.
exec timeout --kill-after=10 "${TLM_TEST_TIMEOUT:-900}" "$@"
