#!/bin/sh
# test_sweep.sh: a 4-job sweep trained by the real tlm-worker to the
# end.  results.db then holds every job's steps, evaluations, per-layer
# widths, checkpoints and environment; `select * from results` has one row
# per job; a second run trains nothing; an edited sweep is reconciled
# (new jobs added, dropped ones inactive, nothing duplicated); --dry-run
# and `tlmd status` tell the state.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"

sweep four.yaml four 24 \
    "grid:" \
    "  taper.schedule: [linear, cosine]" \
    "  taper.ratio: [[1.5, 0.5], [1.25, 0.75]]"

"$T" --dry-run --sweeps four.yaml >dry.out 2>&1
ok $? "--dry-run exits 0"
grep -q "total: 4 distinct jobs: 4 new" dry.out
ok $? "--dry-run lists 4 new jobs"
grep -q "cosine 1.25->0.75 .*taper.schedule=cosine taper.ratio=\[1.25,0.75\]" dry.out
ok $? "--dry-run shows label and axes"
[ ! -e results.db ]
ok $? "--dry-run writes nothing"

"$T" --sweeps four.yaml --workers 2 --threads-per-worker 1 >run1.out 2>&1
rc=$?
ok $rc "4 jobs trained, exit 0"
[ $rc = 0 ] || sed 's/^/# /' run1.out

ok $([ "$(q "select count(*) from results")" = 4 ] && echo 0 || echo 1) "results: one row per job"
ok $([ "$(q "select count(*) from results where status = 'done' and attempts = 1")" = 4 ] && echo 0 || echo 1) \
    "every job done in one attempt"
ok $([ "$(q "select count(*) from results where train_loss > 0 and train_loss < 6 and val_loss > 0 and val_ppl > 1")" = 4 ] &&
    echo 0 || echo 1) "results: train_loss, val_loss and val_ppl for every job"
ok $([ "$(q "select count(*) from steps")" = 96 ] && [ "$(q "select count(distinct job || step) from steps")" = 96 ] &&
    echo 0 || echo 1) "steps: 24 per job, each once ($(q "select count(*) from steps"))"
ok $([ "$(q "select count(*) from metrics where name = 'loss'")" = 96 ] && echo 0 || echo 1) "metrics view: a loss per step"
ok $([ "$(q "select count(distinct job) from evals where suite = 'val' and metric = 'loss'")" = 4 ] && echo 0 || echo 1) \
    "evals: validation loss for every job"
ok $([ "$(q "select count(*) from layer_stats where name = 'd_ff'")" = 16 ] && echo 0 || echo 1) "layer_stats: d_ff of 4 layers x 4 jobs"
# the widths the worker reports are the ones the daemon computed for the job
bad=$(q "select count(*) from jobs j where widths <> (select '[' || group_concat(cast(value as int), ',') || ']'
        from (select value from layer_stats l where l.job = j.key and l.name = 'd_ff' order by layer))")
ok $([ "$bad" = 0 ] && echo 0 || echo 1) "layer widths from the worker equal jobs.widths"
ok $([ "$(q "select count(*) from checkpoints")" -ge 12 ] && echo 0 || echo 1) "checkpoints recorded"
ok $([ "$(q "select count(*) from environment where blas is not null and git_commit is not null and cmdline like '[%--job%'")" = 4 ] &&
    echo 0 || echo 1) "environment captured per attempt (BLAS, git commit, argv)"
ok $([ "$(q "select count(*) from attempts where pid > 0 and device like 'cpu:%' and exit_code = 0 and reason = 'done' and ended_at > started_at")" = 4 ] &&
    echo 0 || echo 1) "attempts: pid, slot, times, exit code, reason"
ok $([ "$(q "select count(*) from logs")" = 0 ] && echo 0 || echo 1) "no protocol error"
ok $([ "$(q "select count(*) from jobs where tokens_done = tokens_total")" = 4 ] && echo 0 || echo 1) "progress recorded"
[ -s runs/"$(q "select substr(key, 1, 12) from jobs limit 1")"/worker.log ]
ok $? "worker stderr kept in runs/<id>/worker.log"

sqlite3 results.db 'select * from results' >all.out
ok $([ "$(wc -l <all.out)" = 4 ] && echo 0 || echo 1) "sqlite3 results.db 'select * from results' prints 4 rows"

"$T" status >status.out 2>&1
grep -q "sweep four (four.yaml): 4 jobs: 4 done" status.out && [ "$(grep -c ' done ' status.out)" = 4 ]
ok $? "tlmd status lists the sweep and its 4 jobs"
grep -q "^  id  *status  *arch  *scale  *label  *seed  *trained  *attempts  *loss  *val ppl  *note" status.out
ok $? "...under a header row: $(grep -m1 '^  id ' status.out)"
want=$(q "select group_concat(printf('%.2f', val_ppl), ' ') from (select val_ppl from results r join sweep_jobs s on s.job = r.key order by s.ord)")
got=$(awk '$2 == "done" { print $(NF) }' status.out | tr '\n' ' ' | sed 's/ $//')
ok $([ -n "$want" ] && [ "$got" = "$want" ] && echo 0 || echo 1) "each job's validation perplexity ($got; results: $want)"
# a done job whose last batch was partial trained fewer tokens than asked: still 100%
q "update jobs set tokens_done = tokens_total - 512"
"$T" status >status3.out 2>&1
ok $([ "$(grep -c ' done .* 100% ' status3.out)" = 4 ] && grep -q "; 100.0% of its tokens trained" status3.out && echo 0 || echo 1) \
    "a finished job counts as 100%, however many tokens its last batch had: $(grep -m1 ' done ' status3.out)"
q "update jobs set tokens_done = tokens_total"

"$T" --sweeps four.yaml --workers 2 >run2.out 2>&1
rc=$?
ok $([ $rc = 0 ] && [ "$(q "select count(*) from attempts")" = 4 ] && echo 0 || echo 1) \
    "a second run trains nothing (exit $rc, $(q "select count(*) from attempts") attempts)"

# the sweep edited: cosine replaced by sigmoid, a seed added
sweep four.yaml four 24 \
    "grid:" \
    "  taper.schedule: [linear, sigmoid]" \
    "  taper.ratio: [[1.5, 0.5], [1.25, 0.75]]"
"$T" --dry-run --sweeps four.yaml >dry2.out 2>&1
grep -q "total: 4 distinct jobs: 2 new, 2 done" dry2.out && grep -q "will be reconciled" dry2.out
ok $? "--dry-run of the edited sweep: 2 new, 2 done, reconciliation announced"
"$T" --sweeps four.yaml --workers 2 --threads-per-worker 1 >run3.out 2>&1
ok $? "the edited sweep runs"
grep -q "reconciled with the stored sweep: 2 added, 2 no longer listed" run3.out
ok $? "reconciliation reported"
ok $([ "$(q "select count(*) from jobs")" = 6 ] && [ "$(q "select count(*) from sweep_jobs where active")" = 4 ] &&
    [ "$(q "select count(*) from sweep_jobs where not active")" = 2 ] && [ "$(q "select count(*) from attempts")" = 6 ] &&
    echo 0 || echo 1) "6 jobs, 4 active in the sweep, 2 inactive, only the 2 new ones trained"
"$T" status --summary >status2.out 2>&1
grep -q "4 jobs: 4 done.*2 job(s) no longer listed" status2.out
ok $? "status counts active jobs and notes the dropped ones"

# a second sweep naming a job the first already trained: not trained again
sweep other.yaml other 24 "grid:" "  taper.schedule: [linear]" "  taper.ratio: [[1.5, 0.5]]"
"$T" --sweeps other.yaml >run4.out 2>&1
ok $([ $? = 0 ] && [ "$(q "select count(*) from attempts")" = 6 ] && echo 0 || echo 1) "a job done by another sweep is not retrained"

"$T" --sweeps other.yaml --rerun --threads-per-worker 1 >run5.out 2>&1
ok $([ $? = 0 ] && [ "$(q "select count(*) from attempts")" = 7 ] && [ "$(q "select count(*) from steps")" = 144 ] &&
    echo 0 || echo 1) "--rerun trains it again, its rows replaced, not doubled"
finish
