#!/bin/sh
# test_live.sh: the dashboard follows tlmd while it trains: a job page opened
# while the job runs grows its loss curve and turns to done without a
# reload, the jobs table follows, and the page's JS heap and DOM stay
# bounded over many polls (Chromium, as in test_browser.sh).
. "$TLM_SRCDIR/tests/dashboard/lib.sh"
need_browser

steps=${LIVE_STEPS:-160}
sweep live.yaml live $steps
start_tlmd tlmd.out --sweeps live.yaml --workers 1 --threads-per-worker 1
wait_for "select count(*) from steps" 60
ok $? "tlmd is training (steps arrive in results.db)"
# the worker stopped until browser.mjs lets it run a few steps at a time,
# each drawn before the next (the page's pace, whatever the machine's load)
WORKER_PID=$(q "select pid from attempts where ended_at is null")
kill -STOP "$WORKER_PID"
ok $? "tlm-worker (pid $WORKER_PID) stopped after its first steps ($(q "select count(*) from steps") in results.db)"
kids="$kids $WORKER_PID"
KEY=$(q "select key from jobs")
DB=$tmp/results.db
export KEY DB WORKER_PID
start_dash dash.out --db results.db --vendor "$VENDOR"
ok $? "tlm-dash started beside the running tlmd"
browser live
kill -CONT "$WORKER_PID" 2>/dev/null # browser.mjs did, unless it was stopped itself
wait "$tp"
ok $? "tlmd finished the sweep (status 0), never blocked by the dashboard"
[ "$(q "select count(*) from steps")" = "$steps" ]
ok $? "every step recorded ($(q "select count(*) from steps") of $steps)"
finish
