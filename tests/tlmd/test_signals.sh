#!/bin/sh
# test_signals.sh: SIGINT to tlmd stops its workers gracefully (each
# writes a checkpoint and exits 75), marks their jobs interrupted, and tlmd
# exits 75; the next start resumes them from those very steps.  A second
# signal forces: workers that cannot stop in time are killed at once.
# A second daemon on the same database is refused, whatever path names it
# (a symlink, a hard link, another spelling), and so is a second daemon on
# the same runs folder; the first one's workers are left alone.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"

schedule_sweep 2 96
start_tlmd run1.out --sweeps two.yaml --workers 2 --threads-per-worker 1
wait_for "select count(*) = 2 from (select job from steps group by job having max(step) > 10)"

"$T" --sweeps two.yaml >second.out 2>&1
ok $([ $? = 2 ] && grep -q "another tlmd (pid $tp) is running" second.out && echo 0 || echo 1) \
    "a second daemon on the same database is refused: $(cat second.out)"
"$T" status --summary >status.out 2>&1
grep -q "tlmd is running on results.db (pid $tp)" status.out && grep -q "2 running" status.out
ok $? "tlmd status sees the running daemon and its 2 running jobs"

kill -INT "$tp"
wait "$tp"
rc=$?
ok $([ $rc = 75 ] && echo 0 || echo 1) "SIGINT: tlmd exits 75 ($rc)"
[ $rc = 75 ] || sed 's/^/# /' run1.out
ok $([ "$(q "select count(*) from jobs where status = 'interrupted'")" = 2 ] && echo 0 || echo 1) "both jobs interrupted"
ok $([ "$(q "select count(*) from attempts where reason = 'interrupted' and exit_code = 75")" = 2 ] && echo 0 || echo 1) \
    "both workers checkpointed and exited 75"
stopped_at=$(q "select group_concat(step) from (select step from attempts order by job)")
ck=$(q "select group_concat(s) from (select (select max(step) from checkpoints c where c.job = a.job) s from attempts a order by job)")
ok $([ "$stopped_at" = "$ck" ] && echo 0 || echo 1) "each stopped at its last checkpoint (steps $stopped_at, checkpoints $ck)"
# tlmd status says why an interrupted job stopped (its last attempt's end)
"$T" status >status2.out 2>&1
ok $([ "$(grep -c ' interrupted .* interrupted: stopped by tlmd after a checkpoint' status2.out)" = 2 ] && echo 0 || echo 1) \
    "tlmd status shows each interrupted job's reason: $(grep -m1 ' interrupted ' status2.out)"

"$T" --sweeps two.yaml --workers 2 --threads-per-worker 1 >run2.out 2>&1
ok $? "the next start finishes the sweep"
resumed=$(q "select group_concat(resumed_from_step) from (select resumed_from_step from attempts where n = 2 order by job)")
ok $([ "$resumed" = "$stopped_at" ] && echo 0 || echo 1) "and resumes where they stopped ($resumed)"
ok $([ "$(q "select count(*) from steps")" = 192 ] && [ "$(q "select count(*) from jobs where status = 'done'")" = 2 ] &&
    echo 0 || echo 1) "every step once, both done"

# a second signal forces: workers that do not stop when asked (here a
# stand-in that ignores SIGTERM and SIGINT and says nothing; freezing real
# workers with SIGSTOP raced with tlmd's SIGCONT on a loaded machine) are
# killed at once
mkdir force && cd force || exit 1
schedule_sweep 2 96
cat >stubborn.sh <<'S'
#!/bin/sh
trap '' TERM INT
while :; do sleep 0.05; done
S
chmod +x stubborn.sh
start_tlmd run.out --sweeps two.yaml --workers 2 --threads-per-worker 1 --worker "$PWD/stubborn.sh"
wait_for "select count(*) = 2 from attempts where ended_at is null"
# the lock is on the database file, whatever path names it (checked beside
# these stand-ins, which never finish)
workers=$(q "select group_concat(pid, ' ') from attempts where ended_at is null")
ln -s results.db link.db
ln results.db hard.db
mkdir sub
for db in link.db hard.db sub/../results.db "$PWD/results.db"; do
    "$T" --sweeps two.yaml --db "$db" >other.out 2>&1
    ok $([ $? = 2 ] && grep -q "another tlmd (pid $tp) is running on the database $db" other.out && echo 0 || echo 1) \
        "--db $db (the same file) is refused too: $(cat other.out)"
done
alive=0
for p in $workers; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
ok $([ $alive = 2 ] && [ "$(q "select count(*) from attempts where ended_at is null")" = 2 ] && echo 0 || echo 1) \
    "the running daemon's 2 workers were left alone ($alive alive)"
"$T" status --summary --db link.db >status2.out 2>&1
grep -q "tlmd is running on link.db (pid $tp)" status2.out
ok $? "tlmd status through the symlink sees it too"
# a copy of the database (the same id) must not share the runs folder with it
sqlite3 results.db ".backup copy.db"
"$T" --sweeps two.yaml --db copy.db >copy.out 2>&1
ok $([ $? = 2 ] && grep -q "another tlmd (pid $tp) is running on the runs folder runs" copy.out && echo 0 || echo 1) \
    "a copy of the database on the same --runs is refused: $(cat copy.out)"
sleep 0.2
kill -INT "$tp"
sleep 1
t0=$(date +%s)
kill -TERM "$tp"
wait "$tp"
rc=$?
t1=$(date +%s)
ok $([ $rc = 75 ] && [ $((t1 - t0)) -le 3 ] && echo 0 || echo 1) "second signal: tlmd exits 75 at once ($rc, $((t1 - t0)) s)"
grep -q "again: killing 2 worker(s) now" run.out
ok $? "it says it kills the workers"
grep -q "again: killing 2 worker(s) now" run.out || sed 's/^/# /' run.out
ok $([ "$(q "select count(*) from attempts where reason = 'interrupted' and signal = 9")" = 2 ] &&
    [ "$(q "select count(*) from jobs where status = 'interrupted'")" = 2 ] && echo 0 || echo 1) \
    "their attempts: interrupted, SIGKILL; jobs interrupted"
"$T" --sweeps two.yaml --workers 2 --threads-per-worker 1 >run2.out 2>&1
ok $([ $? = 0 ] && [ "$(q "select count(*) from steps")" = 192 ] && echo 0 || echo 1) "the next start finishes them"
finish
