#!/bin/sh
# test_kill_daemon.sh: tlmd killed with SIGKILL in mid-sweep, twice,
# then started again.  Its workers die with it; the next daemon closes the
# attempts left open, resumes the jobs from their last recorded
# checkpoints, and the sweep ends with every job done exactly once, every
# step, evaluation and checkpoint row present once, and the numbers of an
# uninterrupted run.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"

STEPS=96
schedule_sweep 3 $STEPS
reference three.yaml --workers 2
ok $? "uninterrupted reference run"

# dead PID: gone, or a zombie nobody reaped yet (it runs no more code)
dead() {
    [ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

kill_daemon_when() {
    start_tlmd "run$1.out" --sweeps three.yaml --workers 2 --threads-per-worker 1
    wait_for "$2"
    pids=$(q "select pid from attempts where ended_at is null")
    kill -9 "$tp"
    wait "$tp" 2>/dev/null
    gone=0
    for i in $(seq 1 40); do
        gone=1
        for p in $pids; do dead "$p" || gone=0; done
        [ $gone = 1 ] && break
        sleep 0.05
    done
    ok $([ -n "$pids" ] && [ $gone = 1 ] && echo 0 || echo 1) "kill $1: the workers ($(echo $pids)) died with tlmd"
    ok $([ "$(q "select count(*) from jobs where status = 'running'")" -ge 1 ] && echo 0 || echo 1) \
        "kill $1: jobs left 'running' in results.db"
}

kill_daemon_when 1 "select count(*) from checkpoints where step >= 16"
kill_daemon_when 2 "select count(*) from checkpoints where step >= 48"

"$T" --sweeps three.yaml --workers 2 --threads-per-worker 1 >run3.out 2>&1
rc=$?
ok $rc "the third daemon finishes the sweep (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' run3.out
grep -q "recovered from a previous daemon" run3.out
ok $? "it reports the recovery"

ok $([ "$(q "select count(*) from jobs where status = 'done'")" = 3 ] && echo 0 || echo 1) "3 jobs done"
ok $([ "$(q "select count(*) from attempts where reason = 'done'")" = 3 ] &&
    [ "$(q "select count(*) from (select job from attempts where reason = 'done' group by job having count(*) = 1)")" = 3 ] &&
    echo 0 || echo 1) "each job done exactly once"
ok $([ "$(q "select count(*) from attempts where ended_at is null")" = 0 ] && echo 0 || echo 1) "no attempt left open"
ok $([ "$(q "select count(*) from attempts where reason = 'interrupted' and message like 'tlmd stopped%'")" -ge 2 ] &&
    echo 0 || echo 1) "the killed daemons' attempts closed as interrupted"
ok $([ "$(q "select count(*) from attempts where resumed_from_step > 0")" -ge 2 ] && echo 0 || echo 1) \
    "resumed attempts started from checkpoints ($(q "select group_concat(resumed_from_step) from attempts"))"
steps_once 3 $STEPS
ok $? "every step of every job present once ($(q "select count(*) from steps") rows)"
same_rows "the uninterrupted run"
same_final 3
ok $? "final losses equal the uninterrupted run's"
finish
