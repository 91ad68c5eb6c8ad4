#!/bin/sh
# test_failures.sh: a worker that hangs (kept stopped with SIGSTOP, so
# it sends nothing and cannot even act on SIGTERM) is detected after
# --heartbeat-timeout, killed with SIGKILL after --kill-grace, recorded as a
# timeout and retried from its checkpoint; a job whose loss goes NaN (lr 10
# with weight decay 10) is recorded as diverged and not retried, and tlmd
# exits 1 because a job failed; --retry-failed tries a job that failed for
# good again after a fix (its data restored), leaving done jobs alone.
# Supervision judges correctly: a long set-up that sends heartbeats of
# phase setup is not a timeout; a worker whose heartbeats keep coming but
# whose progress counter stands still (stuck in a read that never returns)
# is stopped as stuck within --stall-timeout; retries wait --retry-delay,
# doubling; faults of the machine (a run folder that cannot be made, a
# worker's I/O error) do not use up --max-attempts, and a machine that stays
# broken ends the job after --max-machine-faults with a clear message (the
# next run retries it).
. "$TLM_SRCDIR/tests/tlmd/lib.sh"

sweep hang.yaml hang 96 "seeds: [11]"
start_tlmd hang.out --sweeps hang.yaml --threads-per-worker 1 --heartbeat-timeout 3 --kill-grace 2 --retry-delay 0.2
wait_for "select count(*) from steps where step > 20 and exists (select 1 from checkpoints)"
pid=$(q "select pid from attempts where ended_at is null")
t0=$(date +%s)
# keep it stopped: tlmd's SIGCONT (sent with its SIGTERM) lets it run for a
# moment at most, never long enough to finish a step and checkpoint (a busy
# loop of the shell's built-in kill: a `sleep` per round left a window of
# milliseconds on a loaded machine; tests/tlmd/test_signals.sh lost that race)
(while kill -STOP "$pid" 2>/dev/null; do :; done) &
stopper=$!
kids="$kids $stopper"
wait_for "select count(*) from attempts where n = 1 and ended_at is not null" 60
t1=$(date +%s)
wait "$tp"
rc=$?
ok $rc "tlmd finished the job (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' hang.out
grep -q "silent for [0-9]* s; stopping it" hang.out
ok $? "the silence was noticed"
ok $([ "$(q "select reason || ':' || ifnull(signal, '-') from attempts where n = 1")" = "timeout:9" ] && echo 0 || echo 1) \
    "attempt 1: timeout, ended by SIGKILL ($(q "select reason, signal, exit_code from attempts where n = 1"))"
ok $([ $((t1 - t0)) -ge 4 ] && [ $((t1 - t0)) -le 30 ] && echo 0 || echo 1) \
    "killed $((t1 - t0)) s after it stopped (timeout 3 s + grace 2 s)"
ok $([ "$(q "select reason from attempts where n = 2")" = done ] && [ "$(q "select resumed_from_step > 0 from attempts where n = 2")" = 1 ] &&
    echo 0 || echo 1) "attempt 2 resumed from a checkpoint and finished"
ok $([ "$(q "select count(*), max(step) from steps")" = "96|96" ] && echo 0 || echo 1) "every step stored once"

mkdir nan && cd nan || exit 1
LR=10 TRAIN_EXTRA=", weight_decay: 10" sweep nan.yaml nan 96
"$T" --sweeps nan.yaml --threads-per-worker 1 --max-attempts 3 >nan.out 2>&1
rc=$?
ok $([ $rc = 1 ] && echo 0 || echo 1) "a diverged job makes tlmd exit 1 ($rc)"
ok $([ "$(q "select status || ':' || reason || ':' || attempts from jobs")" = "failed:diverged:1" ] && echo 0 || echo 1) \
    "the job failed as diverged after 1 attempt, not retried ($(q "select status, reason, attempts from jobs"))"
ok $([ "$(q "select exit_code from attempts")" = 4 ] && echo 0 || echo 1) "exit status 4 recorded"
q "select message from jobs" | grep -qi "nan\|not finite"
ok $? "the worker's message is kept: $(q "select message from jobs")"
"$T" --sweeps nan.yaml --threads-per-worker 1 >nan2.out 2>&1
ok $([ $? = 1 ] && [ "$(q "select count(*) from attempts")" = 1 ] && echo 0 || echo 1) "a new run does not retry it either"
cd ..

# ---- a `done` whose final loss is not finite is no success, even with exit 0
# (a worker that says so: the real one's events, its done's loss made "nan")
mkdir nandone && cd nandone || exit 1
sweep nd.yaml nd 16
cat >nandone.sh <<S
#!/bin/sh
"$W" "\$@" 3>&1 >&2 | sed -u '/"ev":"done"/s/"loss":[-0-9.e+]*/"loss":"nan"/' >&3
S
chmod +x nandone.sh
"$T" --sweeps nd.yaml --threads-per-worker 1 --worker "$PWD/nandone.sh" >nd.out 2>&1
rc=$?
ok $([ $rc = 1 ] && [ "$(q "select status || ':' || reason || ':' || attempts from jobs")" = "failed:diverged:1" ] &&
    [ "$(q "select exit_code from attempts")" = 0 ] && q "select message from jobs" | grep -q "final loss nan" && echo 0 || echo 1) \
    "done with a NaN loss, exit 0: failed as diverged ($rc: $(q "select j.status, j.reason, a.exit_code, j.message from jobs j join attempts a on a.job = j.key"))"
cd ..

# ---- --retry-failed: a job that failed for good (its data was missing) is
# tried again once fixed; a done job is not retrained
mkdir fixed && cd fixed || exit 1
sweep good.yaml good 8
sweep bad.yaml bad 8
sed -i "s|train: $tmp/text.tlmtok|train: $tmp/fixed/later.tlmtok|" bad.yaml
"$T" --sweeps good.yaml --sweeps bad.yaml --threads-per-worker 1 >f1.out 2>&1
ok $([ $? = 1 ] && [ "$(q "select group_concat(status || ':' || ifnull(reason, '-'), ' ') from (select * from jobs order by sweep)")" = \
    "failed:data done:-" ] && echo 0 || echo 1) "missing data: the job failed for good ($(q "select sweep, status, reason from jobs"))"
cp "$tmp/text.tlmtok" later.tlmtok
"$T" --sweeps good.yaml --sweeps bad.yaml --threads-per-worker 1 >f2.out 2>&1
ok $([ $? = 1 ] && [ "$(q "select count(*) from attempts")" = 2 ] && echo 0 || echo 1) "after the fix, a plain run leaves it failed"
"$T" --sweeps good.yaml --sweeps bad.yaml --threads-per-worker 1 --retry-failed >f3.out 2>&1
rc=$?
ok $([ $rc = 0 ] && [ "$(q "select count(*) from jobs where status = 'done'")" = 2 ] &&
    [ "$(q "select attempts from jobs where sweep = 'good'")" = 1 ] && echo 0 || echo 1) \
    "--retry-failed trains it ($rc), and retrains nothing done ($(q "select sweep, status, attempts from jobs"))"
cd ..

# ---- a long set-up with heartbeats of phase setup (docs/protocol.md) is no timeout
mkdir setup && cd setup || exit 1
sweep slow.yaml slow 16
cat >slow.sh <<S
#!/bin/sh
# 4 s of set-up before the real worker, a heartbeat every 0.3 s
i=0
while [ \$i -lt 13 ]; do
    printf '{"ev":"heartbeat","v":1,"t":%s,"step":0,"tokens":0,"phase":"setup","progress":%d}\\n' "\$(date +%s)" \$i >&3
    sleep 0.3
    i=\$((i + 1))
done
exec "$W" "\$@"
S
chmod +x slow.sh
"$T" --sweeps slow.yaml --threads-per-worker 1 --heartbeat-timeout 2 --stall-timeout 2 --worker "$PWD/slow.sh" >slow.out 2>&1
rc=$?
ok $([ $rc = 0 ] && [ "$(q "select count(*) || ':' || sum(protocol_errors) || ':' || min(reason) from attempts")" = "1:0:done" ] &&
    echo 0 || echo 1) "4 s of set-up heartbeats, timeouts of 2 s: done in one attempt, no protocol error ($rc: $(q "select n, reason, protocol_errors, message from attempts"))"
cd ..

# ---- stuck: heartbeats keep coming, progress stands still (a read of a FIFO nobody writes)
mkdir stuck && cd stuck || exit 1
sweep stuck.yaml stuck 16
mkfifo fifo
cat >stuck.sh <<S
#!/bin/sh
(while :; do
    printf '{"ev":"heartbeat","v":1,"t":%s,"step":0,"tokens":0,"phase":"setup","progress":2}\\n' "\$(date +%s)" >&3 || exit
    sleep 0.2
done) &
read x <"$PWD/fifo"
S
chmod +x stuck.sh
"$T" --sweeps stuck.yaml --threads-per-worker 1 --heartbeat-timeout 1 --stall-timeout 2 --kill-grace 1 --max-attempts 1 \
    --worker "$PWD/stuck.sh" >stuck.out 2>&1
rc=$?
ok $([ $rc = 1 ] && [ "$(q "select reason || ':' || protocol_errors from attempts")" = "timeout:0" ] &&
    q "select message from attempts" | grep -q "no progress for [0-9]* s in phase setup" && echo 0 || echo 1) \
    "a worker stuck in set-up is stopped as stuck ($rc: $(q "select reason, protocol_errors, message from attempts"))"
took=$(q "select ended_at - started_at from attempts")
ok $(awk -v t="$took" 'BEGIN { exit !(t >= 2 && t < 8) }' && echo 0 || echo 1) "within the limit: $took s (stall 2 s, grace 1 s)"
grep -q "heartbeats, but no progress for" stuck.out
ok $? "tlmd says why it stopped it"
cd ..

# ---- retries wait, doubling; faults of the machine do not use up --max-attempts
mkdir io && cd io || exit 1
sweep io.yaml io 16 "seeds: [3]"
k12=$("$T" --dry-run --sweeps io.yaml | awk '$1 ~ /^[0-9a-f]+$/ && length($1) == 12 { print $1; exit }')
mkdir runs && : >"runs/$k12" # a file where its run folder must go: tlmd cannot prepare it
start_tlmd io.out --sweeps io.yaml --threads-per-worker 1 --max-attempts 1 --retry-delay 0.4 --retry-delay-max 10
sleep 2.5
rm "runs/$k12"
wait "$tp"
rc=$?
ok $([ $rc = 0 ] && [ "$(q "select status || ':' || failures from jobs")" = "done:0" ] && echo 0 || echo 1) \
    "the run folder could not be made for 2.5 s: the job is done, no attempt counted against it ($rc: $(q "select status, failures, attempts from jobs"))"
nio=$(q "select count(*) from attempts where reason = 'io'")
ok $([ "$nio" -ge 2 ] && [ "$nio" -le 4 ] && q "select message from attempts where reason = 'io'" | grep -q "fault of the machine" &&
    echo 0 || echo 1) "$nio machine faults recorded, each said to be the machine's ($(q "select message from attempts limit 1"))"
gaps=$(q "select group_concat(printf('%.2f', g), ' ') from (select started_at - lag(started_at) over (order by n) g from attempts) where g is not null")
ok $(echo "$gaps" | awk '{ d = 0.4; for (i = 1; i <= NF; i++) { if ($i < d * 0.95) exit 1; d *= 2 } }' && echo 0 || echo 1) \
    "the waits double from 0.4 s ($gaps s)"
cd ..

# a worker's I/O error (exit 6) is the machine's fault too
mkdir wio && cd wio || exit 1
sweep wio.yaml wio 16 "seeds: [4]"
cat >flaky.sh <<S
#!/bin/sh
# an I/O error the first two times, then the real worker
n=\$(cat "$PWD/count" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$PWD/count"
if [ "\$n" -lt 2 ]; then
    printf '{"ev":"error","v":1,"t":1,"kind":"io","message":"write: No space left on device (a stand-in)"}\\n' >&3
    exit 6
fi
exec "$W" "\$@"
S
chmod +x flaky.sh
"$T" --sweeps wio.yaml --threads-per-worker 1 --max-attempts 1 --retry-delay 0.1 --worker "$PWD/flaky.sh" >wio.out 2>&1
rc=$?
ok $([ $rc = 0 ] && [ "$(q "select group_concat(reason, ' ') from (select reason from attempts order by n)")" = "io io done" ] &&
    [ "$(q "select failures from jobs")" = 0 ] && echo 0 || echo 1) \
    "two worker I/O errors with --max-attempts 1: done at the third attempt ($rc: $(q "select group_concat(reason) from attempts"))"
cd ..

# a machine that stays broken: the job fails after --max-machine-faults, a later run retries it
mkdir perm && cd perm || exit 1
sweep perm.yaml perm 16 "seeds: [6]"
k12=$("$T" --dry-run --sweeps perm.yaml | awk '$1 ~ /^[0-9a-f]+$/ && length($1) == 12 { print $1; exit }')
mkdir runs && : >"runs/$k12"
"$T" --sweeps perm.yaml --threads-per-worker 1 --max-machine-faults 3 --retry-delay 0.1 >perm.out 2>&1
rc=$?
ok $([ $rc = 1 ] && [ "$(q "select status || ':' || reason || ':' || attempts from jobs")" = "failed:io:3" ] &&
    q "select message from jobs" | grep -q "max-machine-faults); fix the machine" && echo 0 || echo 1) \
    "3 machine faults in a row: failed, saying what to do ($rc: $(q "select status, reason, attempts, message from jobs"))"
rm "runs/$k12"
"$T" --sweeps perm.yaml --threads-per-worker 1 >perm2.out 2>&1
ok $([ $? = 0 ] && [ "$(q "select status from jobs")" = done ] && echo 0 || echo 1) "once it is fixed, the next run trains it"
finish
