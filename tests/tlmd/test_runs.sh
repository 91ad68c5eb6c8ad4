#!/bin/sh
# test_runs.sh: a runs folder belongs to one database, and tlmd never
# deletes a checkpoint.  The first run pairs runs/ with results.db
# (runs/tlmd-runs.json holds its id); a new or mistyped --db on that runs
# folder is refused naming both databases, and changes nothing; the same
# database through a symlink is welcome; a runs folder without the marker
# is claimed only by a database that knows its run folders.  A checkpoint
# newer than the database recorded (tlmd died between a worker's
# checkpoint and its commit) is set aside, not deleted, and the job replays
# the same steps bit for bit; so are the checkpoints of --adopt-runs and
# --rerun, each with a README.txt saying why.  --rerun applies once: after
# a Ctrl-C the same command goes on from the rerun's own checkpoints.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"

# name and inode of every checkpoint folder: a retrained one has a new inode
ckpts() { find runs -path '*/ckpt/step-*' -prune -exec stat -c '%n:%i' {} + | sort | tr '\n' ' '; }

sweep two.yaml two 16 "seeds: [1, 2]"
"$T" --sweeps two.yaml --threads-per-worker 1 >run1.out 2>&1
ok $? "two jobs trained"
id=$(q "select value from meta where key = 'database_id'")
grep -q "\"database_id\": \"$id\", \"database\": \"$PWD/results.db\"" runs/tlmd-runs.json
ok $? "runs/tlmd-runs.json names the database's id ($id) and path: $(cat runs/tlmd-runs.json)"
before=$(ckpts)
ok $([ "$(echo $before | wc -w)" = 4 ] && echo 0 || echo 1) "4 checkpoints on disk ($before)"

# ---- a mistyped --db on the same runs folder: refused, nothing changed
"$T" --sweeps two.yaml --threads-per-worker 1 --db typo.db >typo.out 2>&1
rc=$?
ok $([ $rc = 2 ] && grep -q -- "--runs runs belongs to another database" typo.out && grep -q -- "--db typo.db" typo.out &&
    grep -q "$PWD/results.db" typo.out && echo 0 || echo 1) "a new --db on another's runs folder: exit 2 naming both ($rc: $(cat typo.out))"
ok $([ "$(ckpts)" = "$before" ] && echo 0 || echo 1) "every checkpoint is still there, untouched"
ok $([ ! -e typo.db ] && [ ! -e typo.db-wal ] && echo 0 || echo 1) "typo.db, made by that command, is gone again"

ln -s results.db link.db
"$T" --sweeps two.yaml --threads-per-worker 1 --db link.db >link.out 2>&1
ok $([ $? = 0 ] && [ "$(ckpts)" = "$before" ] && echo 0 || echo 1) "the same database through a symlink: done, nothing to do"

# ---- a runs folder without the marker (made before markers existed)
mv runs/tlmd-runs.json saved.json
"$T" --sweeps two.yaml --threads-per-worker 1 --db typo2.db >legacy.out 2>&1
ok $([ $? = 2 ] && grep -q "holds 2 run folder(s) that --db typo2.db does not know" legacy.out && [ ! -e runs/tlmd-runs.json ] &&
    echo 0 || echo 1) "unmarked, with run folders another database does not know: refused ($(cat legacy.out))"
"$T" --sweeps two.yaml --threads-per-worker 1 >legacy2.out 2>&1
ok $([ $? = 0 ] && cmp -s saved.json runs/tlmd-runs.json && [ "$(ckpts)" = "$before" ] && echo 0 || echo 1) \
    "the database that knows them claims it again"

# ---- a checkpoint the database did not record is set aside, and replayed
job=$(q "select key from jobs order by key limit 1")
k12=$(echo "$job" | cut -c1-12)
loss16=$(q "select printf('%.17g', loss) from steps where job = '$job' and step = 16")
q "update jobs set status = 'interrupted' where key = '$job'; delete from checkpoints where job = '$job' and step = 16"
"$T" --sweeps two.yaml --threads-per-worker 1 >cw.out 2>cw.err
ok $? "the job whose last checkpoint is unrecorded finishes"
aside=$(ls -d runs/$k12/set-aside/*-unrecorded 2>/dev/null)
ok $([ -n "$aside" ] && [ -f "$aside/step-00000016/MANIFEST.json" ] && grep -q "only up to step 8" "$aside/README.txt" &&
    echo 0 || echo 1) "its step-16 checkpoint was set aside whole, with a README ($aside)"
grep -q "set aside in $aside" cw.out && grep -q "set aside in $aside" cw.err
ok $? "said on stdout and stderr: $(cat cw.err)"
ok $([ "$(q "select count(*) from logs where level = 'warn' and message like '%set aside%'")" = 1 ] && echo 0 || echo 1) \
    "and in the database's logs"
ok $([ "$(q "select resumed_from_step from attempts where job = '$job' order by n desc limit 1")" = 8 ] &&
    [ "$(q "select printf('%.17g', loss) from steps where job = '$job' and step = 16")" = "$loss16" ] &&
    [ "$(q "select count(*) from steps")" = 32 ] && echo 0 || echo 1) "it resumed from step 8 and replayed step 16 bit for bit ($loss16)"

# ---- --adopt-runs: typo.db takes the folder over; what it never recorded goes aside
"$T" --sweeps two.yaml --threads-per-worker 1 --db typo.db --adopt-runs >adopt.out 2>&1
ok $([ $? = 0 ] && grep -q "it now belongs to --db typo.db" adopt.out && echo 0 || echo 1) "--adopt-runs: typo.db trains both jobs"
moved=$(ls -d runs/*/set-aside/*-unrecorded/step-* | wc -l)
ok $([ "$moved" = 5 ] && echo 0 || echo 1) "the 4 checkpoints typo.db never recorded are set aside too ($moved in all)"
want=$(q "select group_concat(printf('%.17g', train_loss)) from (select train_loss from results order by key)")
got=$(sqlite3 typo.db "select group_concat(printf('%.17g', train_loss)) from (select train_loss from results order by key)")
ok $([ "$got" = "$want" ] && echo 0 || echo 1) "same losses as the first database's ($got)"
"$T" --sweeps two.yaml --threads-per-worker 1 >back.out 2>&1
ok $([ $? = 2 ] && grep -q "belongs to another database" back.out && echo 0 || echo 1) "now results.db is the stranger"

# ---- --rerun sets the old checkpoints aside
"$T" --sweeps two.yaml --threads-per-worker 1 --db typo.db --rerun >rerun.out 2>&1
ok $([ $? = 0 ] && [ "$(ls -d runs/*/set-aside/*-rerun/step-* | wc -l)" = 4 ] && grep -q "set aside in runs/" rerun.out &&
    echo 0 || echo 1) "--rerun: the 4 old checkpoints are set aside, and the jobs trained again"
ok $([ "$(ls -d runs/*/ckpt/step-* | wc -l)" = 4 ] && echo 0 || echo 1) "with 4 new ones in ckpt/"

# ---- --rerun applies once: --rerun, Ctrl-C, the same command again goes on
# from what the interrupted rerun trained (issue 26); a finished run ends it
mkdir once && cd once || exit 1
sweep long.yaml long 160
start_tlmd once1.out --sweeps long.yaml --threads-per-worker 1 --rerun --no-progress
wait_for "select count(*) from checkpoints" 120
kill -INT "$tp"
wait "$tp"
rc=$?
k12=$(q "select substr(key, 1, 12) from jobs")
ck=$(ls -d runs/$k12/ckpt/step-* 2>/dev/null | tr '\n' ' ')
ok $([ $rc = 75 ] && [ -n "$ck" ] && [ "$(q "select rerun || status from jobs")" = 1interrupted ] && echo 0 || echo 1) \
    "--rerun stopped by SIGINT after a checkpoint: exit $rc, $ck, job $(q "select rerun || ' ' || status from jobs")"
"$T" --sweeps long.yaml --threads-per-worker 1 --rerun --no-progress >once2.out 2>&1
rc=$?
ok $([ $rc = 0 ] && [ ! -d runs/$k12/set-aside ] && grep -q "reset by an earlier --rerun whose run has not finished" once2.out &&
    [ "$(q "select resumed_from_step > 0 from attempts where n = 2")" = 1 ] && echo 0 || echo 1) \
    "the same command again resumes from step $(q "select resumed_from_step from attempts where n = 2"), nothing set aside (exit $rc: $(grep -m1 -- "--rerun" once2.out))"
ok $([ "$(q "select rerun || status from jobs")" = 0done ] && echo 0 || echo 1) "the finished run ends the rerun"
"$T" --sweeps long.yaml --threads-per-worker 1 --rerun --no-progress >once3.out 2>&1
ok $([ $? = 0 ] && [ "$(ls -d runs/$k12/set-aside/*-rerun/step-* | wc -l)" -ge 1 ] && [ "$(q "select count(*) from attempts")" = 3 ] &&
    echo 0 || echo 1) "a --rerun after that trains it again, its checkpoints set aside"
cd ..
finish
