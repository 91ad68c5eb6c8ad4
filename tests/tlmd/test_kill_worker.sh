#!/bin/sh
# test_kill_worker.sh: a worker killed with SIGKILL in mid-training is
# recorded as a crash and retried; the retry resumes from the last
# checkpoint, and the job ends with exactly the losses of an uninterrupted
# run (same final loss, same loss at every step, each step stored once).
. "$TLM_SRCDIR/tests/tlmd/lib.sh"

STEPS=128
sweep one.yaml one $STEPS "seeds: [5]"
reference one.yaml
ok $? "uninterrupted reference run"

start_tlmd run.out --sweeps one.yaml --threads-per-worker 1 --retry-delay 0.2
# kill once a checkpoint is recorded and training has gone past it
wait_for "select count(*) from steps where step > 20 and exists (select 1 from checkpoints where step >= 16)"
ok $? "training reached step 20 with a checkpoint"
pid=$(q "select pid from attempts where ended_at is null")
at=$(q "select max(step) from steps")
ck=$(q "select max(step) from checkpoints")
kill -9 "$pid"
echo "# killed worker $pid at step ~$at (database behind it), last checkpoint recorded $ck"
wait "$tp"
rc=$?
ok $rc "tlmd finished the job (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' run.out

ok $([ "$(q "select count(*) from attempts")" = 2 ] && echo 0 || echo 1) "two attempts"
ok $([ "$(q "select reason || ':' || signal from attempts where n = 1")" = "crash:9" ] && echo 0 || echo 1) \
    "the first is a crash by signal 9 ($(q "select reason, signal, message from attempts where n = 1"))"
# The worker runs ahead of the database: it may have written a newer
# checkpoint than the last one recorded when the kill landed, never an older.
resumed=$(q "select resumed_from_step from attempts where n = 2")
ok $([ -n "$resumed" ] && [ "$resumed" -ge "$ck" ] && [ "$resumed" -lt $STEPS ] && echo 0 || echo 1) \
    "the second resumed from checkpoint step $resumed (at or after $ck, the last recorded at the kill)"
ok $([ "$(q "select reason from attempts where n = 2")" = done ] && echo 0 || echo 1) "and finished"
ok $([ "$(q "select count(*), min(step), max(step) from steps")" = "$STEPS|1|$STEPS" ] && echo 0 || echo 1) \
    "every step stored once ($(q "select count(*), min(step), max(step) from steps"))"

final=$(q "select printf('%.17g', train_loss) from results")
want=$(q "attach 'ref/results.db' as r; select printf('%.17g', train_loss) from r.results")
ok $([ -n "$final" ] && [ "$final" = "$want" ] && echo 0 || echo 1) "final loss $final equals the uninterrupted run's $want"
diff=$(q "attach 'ref/results.db' as r; select count(*) from steps s join r.steps t using (step) where s.loss is not t.loss")
ok $([ "$diff" = 0 ] && echo 0 || echo 1) "the loss at every step equals the uninterrupted run's ($diff differ)"
vdiff=$(q "attach 'ref/results.db' as r; select count(*) from evals s join r.evals t using (step, suite, task, metric)
           where s.value is not t.value")
ok $([ "$vdiff" = 0 ] && [ "$(q "select count(*) from evals")" -gt 0 ] && echo 0 || echo 1) "so is every evaluation"
finish
