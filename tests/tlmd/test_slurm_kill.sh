#!/bin/sh
# test_slurm_kill.sh: the slurm executor survives its daemon and its
# controller.  tlmd is killed with SIGKILL in mid-sweep: its Slurm jobs
# keep running; the next tlmd adopts them (one squeue, no sbatch) and reads
# their events files from the committed offsets; meanwhile the controller
# is stopped for a few seconds (squeue fails: nothing is taken for lost),
# and the sweep ends with every job done exactly once, in one attempt, and
# every step, evaluation and checkpoint row of an uninterrupted local run
# present once with the same numbers.  Skips (77) without Slurm.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
slurm_start_cluster

STEPS=96
schedule_sweep 3 $STEPS
reference three.yaml --workers 3
ok $? "the local executor's run (the reference)"

SL="--executor slurm --slurm-poll 0.3 --cpus-per-job 1"
start_tlmd run1.out --sweeps three.yaml $SL
wait_for "select count(*) from checkpoints where step >= 16"
kill -9 "$tp"
wait "$tp" 2>/dev/null
running=$(squeue -h -o %i | wc -l)
ok $([ "$running" -ge 1 ] && echo 0 || echo 1) "kill -9 of tlmd leaves its Slurm jobs running ($running in squeue)"
ok $([ "$(q "select count(*) from attempts where ended_at is null and executor = 'slurm'")" = 3 ] && echo 0 || echo 1) \
    "3 attempts left open"

start_tlmd run2.out --sweeps three.yaml $SL
i=0
while ! grep -q 'adopted' run2.out 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
grep -q "3 Slurm job(s) of a previous daemon adopted" run2.out
ok $? "the next tlmd adopts the 3 jobs ($(grep -c 'adopted Slurm job' run2.out) lines)"
# the controller goes away for a while: squeue fails, nothing is lost
slurm_ctld_stop
sleep 4
grep -q "the Slurm jobs' states are unknown" run2.out
ok $? "a failed squeue is reported: states unknown"
ok $([ "$(q "select count(*) from attempts where reason is not null and reason <> 'done'")" = 0 ] && echo 0 || echo 1) \
    "while squeue fails no attempt is taken for lost ($(q "select group_concat(reason) from attempts"))"
slurm_ctld_start
ok $? "the controller is back"
wait "$tp"
rc=$?
ok $rc "the sweep completes (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' run2.out | tail -30
grep 'Slurm calls' run2.out | sed 's/^/# second daemon: /'
ok $(grep -q 'Slurm calls: 0 sbatch' run2.out && echo 0 || echo 1) "adopted, not resubmitted: no sbatch"
ok $([ "$(q "select count(*) from attempts")" = 3 ] &&
    [ "$(q "select count(*) from attempts where reason = 'done'")" = 3 ] && echo 0 || echo 1) \
    "each job done exactly once, in one attempt"
ok $([ "$(q "select sum(protocol_errors) from attempts")" = 0 ] &&
    [ "$(q "select count(*) from logs where level = 'error'")" = 0 ] && echo 0 || echo 1) "no protocol error"
steps_once 3 $STEPS
ok $? "every step of every job present once ($(q "select count(*) from steps") rows)"
same_rows "the uninterrupted local run"
events_read_to_end
ok $? "every events file read exactly to its end"
finish
