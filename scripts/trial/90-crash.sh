# 90-crash.sh: crash and concurrency scenarios (docs/tlmd.md "Stopping and
# crash safety", "Run folders and their database").  kill -9 of tlmd and of
# workers at several moments, signals, a frozen worker, then a restart: every
# job done exactly once and every step, evaluation and checkpoint row equal
# (bit for bit) to an uninterrupted run of the same sweep.  Two daemons on one
# database through other names, a runs folder of another database, --rerun,
# --adopt-runs, an edited sweep or config.json, readers during a run, and full
# disks (a small tmpfs in a private mount namespace).  Sourced by trial.sh.

STEPS3=32
# three FILE: the sweep of these scenarios, three jobs of 32 steps
three() { STEPS=$STEPS3 sweep "$1" three "grid:" "  taper.schedule: [linear, cosine, sigmoid]" "  taper.ratio: [[1.5, 0.5]]"; }
REF=$FX/ref/results.db
need_ref() {
    [ -f "$FX/ref.ok" ] && return 0
    mkdir -p "$FX/ref"
    three "$FX/ref/three.yaml"
    (cd "$FX/ref" && timeout 120 "$T" --sweeps three.yaml --workers 2 --threads-per-worker 1 --no-progress >run.out 2>&1) ||
        { echo "trial.sh: the reference sweep does not train:" >&2; tail -5 "$FX/ref/run.out" >&2; exit 2; }
    : >"$FX/ref.ok"
}
RUN3=(--workers 2 --threads-per-worker 1 --no-progress --retry-delay 0.2)

# same_as_ref DB [ONCE]: "" when DB holds what the uninterrupted run holds
# (every job done; with ONCE=1 each by exactly one attempt; no attempt open;
# the same steps, evaluations and final losses; every checkpoint row of the
# uninterrupted run: a stopped worker adds one at its stop), else why not
same_as_ref() {
    local once=${2:-1} r
    r=$(sqlite3 -batch -cmd '.timeout 5000' "$1" "attach '$REF' as r; select
        (select count(*) from jobs where status = 'done') = 3,
        $once = 0 or ((select count(*) from attempts where reason = 'done') = 3 and
                      (select count(distinct job) from attempts where reason = 'done') = 3),
        (select count(*) from attempts where ended_at is null) = 0,
        (select count(*) from steps) = (select count(*) from r.steps),
        (select count(*) from steps a join r.steps b using (job, step) where a.loss is b.loss and a.tokens = b.tokens
            and a.grad_norm is b.grad_norm) = (select count(*) from r.steps),
        (select count(*) from evals) = (select count(*) from r.evals),
        (select count(*) from evals a join r.evals b using (job, step, suite, task, metric) where a.value is b.value)
            = (select count(*) from r.evals),
        (select count(*) from checkpoints a join r.checkpoints b using (job, step) where a.tokens = b.tokens)
            = (select count(*) from r.checkpoints),
        (select count(*) from layer_stats) = (select count(*) from r.layer_stats),
        (select count(*) from results a join r.results b using (key) where a.train_loss = b.train_loss and a.val_loss = b.val_loss) = 3" 2>&1)
    [ "$r" = "1|1|1|1|1|1|1|1|1|1" ] ||
        echo "not as the uninterrupted run (all done | done once | none open | steps | step values | evals | eval values | checkpoints | layer rows | final losses = $r)"
}
# dead PIDS...: every pid gone (or a zombie) within 2 s
dead() {
    local i p gone
    for i in $(seq 40); do
        gone=1
        for p in "$@"; do [ -e "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && gone=0; done
        [ $gone = 1 ] && return 0
        sleep 0.05
    done
    return 1
}
# finish_run ID WHAT [ONCE [EXTRA-ARGS...]]: a last tlmd run in the current
# folder must finish the sweep (exit 0) with the uninterrupted run's rows
finish_run() {
    local id=$1 what=$2 once=${3:-1} rc why
    shift 2
    [ $# -gt 0 ] && shift
    timeout -k 3 120 "$T" --sweeps s.yaml "${RUN3[@]}" "$@" >final.out 2>&1
    rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then verdict "$id" "$what" hang $rc "$(tail -1 final.out)" "the restart did not finish in 120 s"; return; fi
    if [ $rc != 0 ]; then verdict "$id" "$what" wrong $rc "$(grep -m1 'tlmd: .*\(error\|failed\)' final.out)" "the restart exited $rc"; return; fi
    why=$(same_as_ref results.db "$once")
    if [ -n "$why" ]; then verdict "$id" "$what" wrong 0 "$(tail -1 final.out)" "$why"; else
        verdict "$id" "$what" clear 0 "$(grep -m1 'recovered\|resum\|summary' final.out || tail -1 final.out)"; fi
}

# ---- tlmd killed with -9 at several moments, then restarted
# kill_tlmd ID WHAT SQL...: start the sweep, kill -9 tlmd when each SQL holds
# in turn (restarting it in between), then finish
kill_tlmd() {
    local id=$1 what=$2 cond pids n=0
    shift 2
    selected "$id" || return 0
    need_ref
    in_case "$id"
    three s.yaml
    for cond in "$@"; do
        n=$((n + 1))
        bg "$T" --sweeps s.yaml "${RUN3[@]}" >"run$n.out" 2>&1
        if ! wait_sql results.db "$cond" 60; then
            kill -9 "$bgp" 2>/dev/null; wait "$bgp" 2>/dev/null
            verdict "$id" "$what" wrong - "$(tail -1 "run$n.out")" "the moment to kill never came: $cond"; return
        fi
        pids=$(q results.db "select pid from attempts where ended_at is null")
        kill -9 "$bgp"
        wait "$bgp" 2>/dev/null
        # shellcheck disable=SC2086
        if [ -n "$pids" ] && ! dead $pids; then
            verdict "$id" "$what" wrong - "workers $(echo $pids) still alive" "the workers outlived a kill -9 of tlmd"; return
        fi
    done
    finish_run "$id" "$what"
}
kill_tlmd crash.tlmd-at-spawn "kill -9 of tlmd as soon as a worker is started, then a restart" \
    "select count(*) from attempts where ended_at is null"
kill_tlmd crash.tlmd-mid-steps "kill -9 of tlmd after a few steps, before any checkpoint" \
    "select count(*) from steps where step >= 3"
kill_tlmd crash.tlmd-after-ckpt "kill -9 of tlmd after the first checkpoints" \
    "select count(*) >= 2 from checkpoints"
kill_tlmd crash.tlmd-twice "kill -9 of tlmd twice (after 1 and after 4 checkpoints)" \
    "select count(*) >= 1 from checkpoints" "select count(*) >= 4 from checkpoints"
kill_tlmd crash.tlmd-one-done "kill -9 of tlmd once a job is done and others run" \
    "select count(*) >= 1 from jobs where status = 'done'"
kill_tlmd crash.tlmd-at-eval "kill -9 of tlmd right after an evaluation row" \
    "select count(*) >= 2 from evals"

# ---- workers killed with -9 at several moments; tlmd retries them
# kill_worker ID WHAT SQL [TIMES]: kill -9 the worker of the first open
# attempt when SQL holds (TIMES times), let tlmd finish
kill_worker() {
    local id=$1 what=$2 cond=$3 times=${4:-1} pid i rc
    selected "$id" || return 0
    need_ref
    in_case "$id"
    three s.yaml
    bg "$T" --sweeps s.yaml "${RUN3[@]}" >run.out 2>&1
    for i in $(seq "$times"); do
        if ! wait_sql results.db "$cond and exists (select 1 from attempts where ended_at is null and pid is not null and n = $i)" 60; then
            kill -9 "$bgp" 2>/dev/null; wait "$bgp" 2>/dev/null
            verdict "$id" "$what" wrong - "$(tail -1 run.out)" "the moment to kill never came: $cond"; return
        fi
        pid=$(q results.db "select pid from attempts where ended_at is null and n = $i order by id limit 1")
        kill -9 "$pid" 2>/dev/null
    done
    timeout 120 tail --pid="$bgp" -f /dev/null
    wait "$bgp"
    rc=$?
    if [ $rc != 0 ]; then verdict "$id" "$what" wrong $rc "$(tail -1 run.out)" "tlmd exited $rc after the worker was killed"; return; fi
    local why crashes
    why=$(same_as_ref results.db)
    crashes=$(q results.db "select count(*) from attempts where reason = 'crash' and signal = 9")
    [ -z "$why" ] && [ "$crashes" -lt "$times" ] && why="$crashes attempts recorded as crash by signal 9, $times expected"
    if [ -n "$why" ]; then verdict "$id" "$what" wrong 0 "$(grep -m1 crash run.out)" "$why"; else
        verdict "$id" "$what" clear 0 "$(grep -m1 'crash\|signal' run.out)"; fi
}
kill_worker crash.worker-setup "kill -9 of a worker in its set-up (before its start event)" "select 1"
kill_worker crash.worker-mid "kill -9 of a worker in mid-training" "select count(*) from steps where step >= 5"
kill_worker crash.worker-after-ckpt "kill -9 of a worker right after its first checkpoint" "select count(*) from checkpoints where 1"
kill_worker crash.worker-twice "kill -9 of a worker, then of its retry" "select count(*) from steps where step >= 2" 2

# ---- a worker that keeps crashing: the job fails after --max-attempts, a later run retries it
selected crash.worker-always && { need_ref; in_case crash.worker-always; three s.yaml
    cat >w.sh <<EOF
#!/bin/sh
# the linear job's worker is killed by signal 9 after a few steps, every time
case \$(cat "\$2") in *linear*) "$W" "\$@" & p=\$!; sleep 0.4; kill -9 \$p; wait \$p; kill -9 \$\$ ;; esac
exec "$W" "\$@"
EOF
    chmod +x w.sh
    timeout 120 "$T" --sweeps s.yaml --workers 1 --threads-per-worker 1 --no-progress --retry-delay 0.1 --max-attempts 2 --worker "$PWD/w.sh" >run1.out 2>&1
    rc=$?
    failed=$(q results.db "select count(*) from jobs where status = 'failed' and reason = 'crash'")
    if [ $rc != 1 ] || [ "$failed" != 1 ]; then
        verdict crash.worker-always "a worker that crashes at every attempt, then a run with a sound worker" wrong $rc "$(tail -1 run1.out)" \
            "expected exit 1 with one job failed as crash (got exit $rc, $failed failed)"
    else
        finish_run crash.worker-always "a worker that crashes at every attempt, then a run with a sound worker" 0
    fi; }

# ---- signals
selected crash.sigterm && { need_ref; in_case crash.sigterm; three s.yaml
    bg "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    if wait_sql results.db "select count(*) >= 2 from checkpoints" 60; then
        kill -TERM "$bgp"; timeout 60 tail --pid="$bgp" -f /dev/null; wait "$bgp"; rc=$?
        ints=$(q results.db "select count(*) from attempts where reason = 'interrupted' and exit_code = 75")
        if [ $rc != 75 ] || [ "$ints" -lt 1 ]; then
            verdict crash.sigterm "SIGTERM to tlmd mid-sweep, then a restart" wrong $rc "$(tail -1 run1.out)" "expected exit 75 with interrupted attempts (exit $rc, $ints)"
        else finish_run crash.sigterm "SIGTERM to tlmd mid-sweep, then a restart"; fi
    else kill -9 "$bgp"; verdict crash.sigterm "SIGTERM to tlmd mid-sweep" wrong - "" "no checkpoint came"; fi; }
selected crash.sigint-twice && { need_ref; in_case crash.sigint-twice; three s.yaml
    bg "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    if wait_sql results.db "select count(*) from steps where step >= 4" 60; then
        kill -INT "$bgp"; kill -INT "$bgp"; timeout 60 tail --pid="$bgp" -f /dev/null; wait "$bgp"; rc=$?
        if [ $rc != 75 ]; then verdict crash.sigint-twice "SIGINT twice to tlmd, then a restart" wrong $rc "$(tail -1 run1.out)" "expected exit 75"
        else finish_run crash.sigint-twice "SIGINT twice to tlmd (workers killed at once), then a restart"; fi
    else kill -9 "$bgp"; verdict crash.sigint-twice "SIGINT twice" wrong - "" "no step came"; fi; }
selected crash.sighup && { need_ref; in_case crash.sighup; three s.yaml
    bg "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    if wait_sql results.db "select count(*) from steps where step >= 4" 60; then
        kill -HUP "$bgp"; timeout 60 tail --pid="$bgp" -f /dev/null; wait "$bgp"; rc=$?
        if [ $rc != 75 ]; then verdict crash.sighup "SIGHUP to tlmd (its terminal closed), then a restart" wrong $rc "$(tail -1 run1.out)" "expected exit 75"
        else finish_run crash.sighup "SIGHUP to tlmd (its terminal closed), then a restart"; fi
    else kill -9 "$bgp"; verdict crash.sighup "SIGHUP" wrong - "" "no step came"; fi; }
# a frozen worker (SIGSTOP, kept stopped): stopped for silence, retried from its checkpoint
selected crash.worker-frozen && { need_ref; in_case crash.worker-frozen; three s.yaml
    bg "$T" --sweeps s.yaml "${RUN3[@]}" --heartbeat-timeout 2 --kill-grace 1 >run.out 2>&1
    if wait_sql results.db "select count(*) from checkpoints" 60; then
        pid=$(q results.db "select pid from attempts where ended_at is null order by id limit 1")
        # a busy loop: tlmd's SIGCONT must not let it run long enough to finish a step
        (while kill -STOP "$pid" 2>/dev/null; do :; done) &
        stopper=$!
        timeout 120 tail --pid="$bgp" -f /dev/null; wait "$bgp"; rc=$?
        kill "$stopper" 2>/dev/null; wait "$stopper" 2>/dev/null
        to=$(q results.db "select count(*) from attempts where reason = 'timeout'")
        why=$(same_as_ref results.db)
        [ -z "$why" ] && [ "$to" -lt 1 ] && why="no attempt recorded as a timeout"
        if [ $rc != 0 ] || [ -n "$why" ]; then verdict crash.worker-frozen "a frozen worker (SIGSTOP)" wrong $rc "$(grep -m1 silent run.out)" "exit $rc; $why"
        else verdict crash.worker-frozen "a frozen worker (SIGSTOP): stopped after --heartbeat-timeout, retried" clear 0 "$(grep -m1 silent run.out)"; fi
    else kill -9 "$bgp"; verdict crash.worker-frozen "a frozen worker" wrong - "" "no checkpoint came"; fi; }

# ---- two daemons on one database, whatever the path; a copy on the same runs
selected conc.two-daemons && { in_case conc.two-daemons; sweep s.yaml two "grid:" "  taper.schedule: [linear, cosine]" "  taper.ratio: [[1.5, 0.5]]"
    # stand-in workers that never finish keep the first daemon busy
    printf '#!/bin/sh\ntrap "" TERM INT\nwhile :; do sleep 0.05; done\n' >stubborn.sh; chmod +x stubborn.sh
    bg "$T" --sweeps s.yaml --workers 2 --threads-per-worker 1 --no-progress --worker "$PWD/stubborn.sh" --kill-grace 1 >run.out 2>&1
    tp=$bgp
    if wait_sql results.db "select count(*) = 2 from attempts where ended_at is null" 30; then
        workers=$(q results.db "select group_concat(pid, ' ') from attempts where ended_at is null")
        ln -s results.db link.db; ln results.db hard.db; mkdir sub
        # other ID WHAT DB PATTERN: a second tlmd on DB is refused (2) naming the first one's pid
        other() {
            tc "$1" "$2" 2 "$4" "$T" --sweeps s.yaml --db "$3" --no-progress --worker "$PWD/stubborn.sh"
        }
        other issue.lock-symlink "a second tlmd on a symlink to the running daemon's database" link.db "another tlmd \(pid $tp\) is running on the database link\.db"
        other conc.lock-hardlink "a second tlmd on a hard link to it" hard.db "another tlmd \(pid $tp\) is running on the database hard\.db"
        other conc.lock-dotdot "a second tlmd on sub/../results.db" sub/../results.db "another tlmd \(pid $tp\) is running on the database sub/\.\./results\.db"
        other conc.lock-absolute "a second tlmd on the absolute path" "$PWD/results.db" "another tlmd \(pid $tp\) is running on the database"
        sqlite3 results.db ".backup copy.db"
        other conc.lock-copy-runs "a copy of the database on the same --runs" copy.db "another tlmd \(pid $tp\) is running on the runs folder runs"
        tc conc.status-running "tlmd status while the daemon runs" 0 "tlmd is running on link\.db \(pid $tp\)" "$T" status --summary --db link.db
        tc conc.report-running "tlm-report while the daemon runs" 0 "" "$R" --db results.db --table runs
        alive=0
        for p in $workers; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
        if [ $alive = 2 ]; then verdict conc.first-untouched "the first daemon's 2 workers survive the refused daemons" clear 0 "2 alive"
        else verdict conc.first-untouched "the first daemon's workers survive the refused daemons" wrong 0 "$alive of 2 alive" "a refused daemon touched the running one's workers"; fi
        kill -INT "$tp"; sleep 0.5; kill -TERM "$tp"
        timeout 20 tail --pid="$tp" -f /dev/null; wait "$tp"; rc=$?
        if [ $rc = 75 ] && [ "$(q results.db "select count(*) from jobs where status = 'interrupted'")" = 2 ]; then
            verdict conc.second-signal "a second signal kills stubborn workers at once: exit 75, jobs interrupted" clear 75 "$(grep -m1 again run.out)"
        else verdict conc.second-signal "a second signal to tlmd with stubborn workers" wrong $rc "$(tail -1 run.out)" "expected exit 75 and 2 interrupted jobs"; fi
    else kill -9 "$tp"; verdict conc.two-daemons "two daemons" wrong - "$(tail -1 run.out)" "the first daemon never started its workers"; fi; }

# ---- a runs folder belongs to one database
# ckpts: name and inode of every checkpoint folder (a retrained one has a new inode)
ckpts() { find runs -path '*/ckpt/step-*' -prune -exec stat -c '%n:%i' {} + 2>/dev/null | sort | tr '\n' ' '; }
selected issue.runs-new-db && { need_ref; in_case issue.runs-new-db; three s.yaml
    timeout 120 "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    before=$(ckpts)
    AFTER='[ "$(ckpts)" = "$before" ] && [ ! -e typo.db ] && [ -n "$before" ]' AFTER_MSG="checkpoints were changed, or typo.db left behind" \
        tc issue.runs-new-db "a new, mistyped --db on a runs folder of finished jobs" 2 "--runs runs belongs to another database.*--db typo\.db" \
        "$T" --sweeps s.yaml "${RUN3[@]}" --db typo.db
    : >empty.db
    AFTER='[ "$(ckpts)" = "$before" ]' AFTER_MSG="checkpoints were changed" \
        tc conc.runs-empty-db "an empty --db file on a runs folder of finished jobs" 2 "--runs runs belongs to another database|empty\.db" \
        "$T" --sweeps s.yaml "${RUN3[@]}" --db empty.db
    mv runs/tlmd-runs.json saved.json
    AFTER='[ "$(ckpts)" = "$before" ] && [ ! -e runs/tlmd-runs.json ]' AFTER_MSG="checkpoints were changed, or the folder claimed" \
        tc conc.runs-unmarked "a runs folder without its marker and a database that does not know it" 2 "holds [0-9]+ run folder\(s\) that --db typo2\.db does not know" \
        "$T" --sweeps s.yaml "${RUN3[@]}" --db typo2.db
    mv saved.json runs/tlmd-runs.json
    # --adopt-runs: typo3.db takes it over; what it never recorded is set aside, never deleted
    AFTER='[ "$(ls -d runs/*/set-aside/*-unrecorded/step-* | wc -l)" -ge 6 ] && [ -z "$(same_as_ref typo3.db)" ]' \
        AFTER_MSG="the adopted checkpoints were not all set aside, or typo3.db differs from the uninterrupted run" \
        tc conc.adopt-runs "--adopt-runs: another database takes the runs folder over" 0 "it now belongs to --db typo3\.db" \
        "$T" --sweeps s.yaml "${RUN3[@]}" --db typo3.db --adopt-runs
    # now results.db is the stranger; --rerun on typo3.db retrains, setting the old checkpoints aside
    tc conc.runs-back "the first database after the runs folder was adopted away" 2 "belongs to another database" "$T" --sweeps s.yaml "${RUN3[@]}"
    AFTER='[ "$(ls -d runs/*/set-aside/*-rerun/step-* | wc -l)" -ge 6 ] && [ "$(ls -d runs/*/ckpt/step-* | wc -l)" = 6 ] && [ -z "$(same_as_ref typo3.db 0)" ]' \
        AFTER_MSG="--rerun did not set the old checkpoints aside, or its results differ from the uninterrupted run" \
        tc conc.rerun "--rerun of a finished sweep: checkpoints set aside, retrained to the same numbers" 0 "set aside in runs/" \
        "$T" --sweeps s.yaml "${RUN3[@]}" --db typo3.db --rerun; }

# ---- issue 26: --rerun applies once: --rerun, Ctrl-C, the same command again
# goes on from what the interrupted rerun trained (nothing more set aside)
selected issue26.rerun-once && { need_ref; in_case issue26.rerun-once; three s.yaml
    timeout 120 "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    bg "$T" --sweeps s.yaml "${RUN3[@]}" --rerun >run2.out 2>&1
    if ! wait_sql results.db "select count(*) >= 2 from checkpoints" 60; then
        kill -9 "$bgp" 2>/dev/null; wait "$bgp" 2>/dev/null
        verdict issue26.rerun-once "--rerun, SIGINT, the same command again" wrong - "$(tail -1 run2.out)" "the rerun wrote no checkpoint"
    else
        kill -INT "$bgp"; wait "$bgp"; rc2=$?
        aside1=$(ls -d runs/*/set-aside/*-rerun 2>/dev/null | wc -l)
        timeout 120 "$T" --sweeps s.yaml "${RUN3[@]}" --rerun >run3.out 2>&1; rc3=$?
        aside2=$(ls -d runs/*/set-aside/*-rerun 2>/dev/null | wc -l)
        why=$(same_as_ref results.db 0)
        msg=$(grep -m1 "reset by an earlier --rerun whose run has not finished" run3.out)
        if [ "$rc2" = 75 ] && [ "$rc3" = 0 ] && [ "$aside2" = "$aside1" ] && [ -n "$msg" ] && [ -z "$why" ] &&
            [ "$(q results.db "select count(*) from attempts where resumed_from_step > 0")" -ge 1 ]; then
            verdict issue26.rerun-once "--rerun, SIGINT, the same command again: it goes on, nothing more set aside, the same numbers" clear 0 "$msg"
        else
            verdict issue26.rerun-once "--rerun, SIGINT, the same command again" wrong "$rc3" "$(tail -1 run3.out)" \
                "exit $rc2 then $rc3, set-aside folders $aside1 then $aside2, '$msg', $why"
        fi
    fi; }

# ---- a checkpoint the database never recorded (tlmd died between the write and its commit)
selected conc.unrecorded && { need_ref; in_case conc.unrecorded; three s.yaml
    timeout 120 "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    job=$(q results.db "select key from jobs order by key limit 1"); k12=${job:0:12}
    q results.db "update jobs set status = 'interrupted' where key = '$job'; delete from checkpoints where job = '$job' and step = 32"
    AFTER='ls -d runs/'"$k12"'/set-aside/*-unrecorded/step-00000032 >/dev/null && [ -z "$(same_as_ref results.db 0)" ]' \
        AFTER_MSG="the unrecorded checkpoint was not set aside whole, or the replayed steps differ" \
        tc conc.unrecorded "a checkpoint newer than the database knows: set aside, the steps replayed" 0 "set aside in runs/$k12" \
        "$T" --sweeps s.yaml "${RUN3[@]}"; }
# ---- an edited config.json in a run folder: set aside, rewritten from the database
selected conc.config-json && { need_ref; in_case conc.config-json; three s.yaml
    bg "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    wait_sql results.db "select count(*) >= 2 from checkpoints" 60; kill -9 "$bgp"; wait "$bgp" 2>/dev/null
    for f in runs/*/config.json; do sed -i 's/0\.003/0.3/' "$f"; done
    AFTER='ls -d runs/*/set-aside/*-config >/dev/null 2>&1 && [ -z "$(same_as_ref results.db)" ]' \
        AFTER_MSG="the edited config.json was not set aside, or the results differ" \
        tc conc.config-json "config.json edited in the run folders of interrupted jobs" 0 "" "$T" --sweeps s.yaml "${RUN3[@]}"; }
# ---- an edited sweep: dropped jobs keep their results, new ones train, nothing twice
selected conc.edit-sweep && { need_ref; in_case conc.edit-sweep; three s.yaml
    timeout 120 "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    STEPS=$STEPS3 sweep s.yaml three "grid:" "  taper.schedule: [linear, cosine]" "  taper.ratio: [[1.5, 0.5]]" "include:" "  - {taper.schedule: uniform}"
    AFTER='[ "$(q results.db "select count(*) from jobs where status = '"'done'"'")" = 4 ] &&
           [ "$(q results.db "select count(*) from sweep_jobs where active = 0")" = 1 ] &&
           [ "$(q results.db "select count(*) from attempts")" = 4 ]' \
        AFTER_MSG="the edited sweep lost a job's results or retrained one" \
        tc conc.edit-sweep "a finished sweep edited (one job dropped, one added)" 0 "" "$T" --sweeps s.yaml "${RUN3[@]}"; }
# ---- readers during a run never see "database is locked"
selected conc.readers && { need_ref; in_case conc.readers; three s.yaml
    bg "$T" --sweeps s.yaml "${RUN3[@]}" >run.out 2>&1
    wait_sql results.db "select count(*) from jobs" 30
    bad=0 n=0
    while kill -0 "$bgp" 2>/dev/null && [ $n -lt 400 ]; do
        "$R" --db results.db --table runs --format csv >/dev/null 2>r.err || { grep -q . r.err && bad=$((bad + 1)); }
        "$T" status --summary >/dev/null 2>>s.err || bad=$((bad + 1))
        n=$((n + 1))
    done
    wait "$bgp"
    if [ $bad = 0 ] && [ $n -ge 3 ]; then verdict conc.readers "tlm-report and tlmd status in a loop during a run" clear 0 "$n rounds, no failure"
    else verdict conc.readers "readers during a run" wrong - "$(head -1 r.err s.err)" "$bad of $n rounds failed"; fi; }

# ---- supervision: --retry-failed, a long set-up, a stuck worker, growing retry delays
selected conc.retry-failed && { need_ref; in_case conc.retry-failed; three s.yaml
    mkdir ds; cp -a "$FX/ds/." ds/
    sed -i "s|$FX/ds/|$PWD/ds/|g" s.yaml
    mv ds/val ds/val.away
    timeout 60 "$T" --sweeps s.yaml "${RUN3[@]}" >run1.out 2>&1
    mv ds/val.away ds/val
    timeout 60 "$T" --sweeps s.yaml "${RUN3[@]}" >run2.out 2>&1
    rc2=$?
    AFTER='[ $rc2 = 1 ] && [ "$(q results.db "select count(*) from jobs where status = '"'done'"'")" = 3 ]' \
        AFTER_MSG="a plain run retried the failed jobs, or --retry-failed did not train them" \
        tc conc.retry-failed "jobs that failed for missing data: a plain run leaves them, --retry-failed trains them" 0 "" "$T" --sweeps s.yaml "${RUN3[@]}" --retry-failed; }
selected issue.setup-heartbeats && { in_case issue.setup-heartbeats; sweep s.yaml slow
    cat >slow.sh <<EOF
#!/bin/sh
# 4 s of set-up before the real worker, a heartbeat of phase setup every 0.3 s
i=0
while [ \$i -lt 13 ]; do
    printf '{"ev":"heartbeat","v":1,"t":%s,"step":0,"tokens":0,"phase":"setup","progress":%d}\n' "\$(date +%s)" \$i >&3
    sleep 0.3; i=\$((i + 1))
done
exec "$W" "\$@"
EOF
    chmod +x slow.sh
    AFTER='[ "$(q results.db "select count(*) || \":\" || sum(protocol_errors) || \":\" || min(reason) from attempts")" = "1:0:done" ]' \
        AFTER_MSG="the long set-up was not one clean attempt" \
        tc issue.setup-heartbeats "4 s of set-up heartbeats with --heartbeat-timeout 2 and --stall-timeout 2" 0 "" \
        "$T" --sweeps s.yaml --threads-per-worker 1 --heartbeat-timeout 2 --stall-timeout 2 --worker "$PWD/slow.sh" --no-progress; }
selected issue.heartbeat-progress && { in_case issue.heartbeat-progress; sweep s.yaml stuck; mkfifo fifo
    cat >stuck.sh <<EOF
#!/bin/sh
# heartbeats keep coming, progress stands still: stuck in a read of a FIFO
(while :; do printf '{"ev":"heartbeat","v":1,"t":%s,"step":0,"tokens":0,"phase":"setup","progress":2}\n' "\$(date +%s)" >&3 || exit; sleep 0.2; done) &
read x <"$PWD/fifo"
EOF
    chmod +x stuck.sh
    AFTER='q results.db "select message from attempts" | grep -q "no progress for [0-9]* s in phase setup"' AFTER_MSG="the attempt is not a timeout saying no progress" \
        tc issue.heartbeat-progress "a worker whose heartbeats show no progress (stuck on a FIFO)" 1 "heartbeats, but no progress for" \
        "$T" --sweeps s.yaml --threads-per-worker 1 --heartbeat-timeout 1 --stall-timeout 2 --kill-grace 1 --max-attempts 1 --worker "$PWD/stuck.sh" --no-progress
    # release the reader: the stuck script may have been killed already
    (timeout 1 sh -c 'echo >fifo' 2>/dev/null &); }
selected issue.retry-delay && { in_case issue.retry-delay; sweep s.yaml io "seeds: [3]"
    k12=$("$T" --dry-run --sweeps s.yaml | awk '$1 ~ /^[0-9a-f]+$/ && length($1) == 12 { print $1; exit }')
    mkdir runs && : >"runs/$k12" # a file where its run folder must go: a fault of the machine
    bg "$T" --sweeps s.yaml --threads-per-worker 1 --max-attempts 1 --retry-delay 0.4 --retry-delay-max 10 --no-progress >run.out 2>&1
    sleep 2.5; rm "runs/$k12"
    timeout 60 tail --pid="$bgp" -f /dev/null; wait "$bgp"; rc=$?
    gaps=$(q results.db "select group_concat(printf('%.2f', g), ' ') from (select started_at - lag(started_at) over (order by n) g from attempts) where g is not null")
    st=$(q results.db "select status || ':' || failures from jobs")
    if [ $rc = 0 ] && [ "$st" = done:0 ] && echo "$gaps" | awk '{ d = 0.4; for (i = 1; i <= NF; i++) { if ($i < d * 0.95) exit 1; d *= 2 } exit NF < 2 }'; then
        verdict issue.retry-delay "the run folder blocked for 2.5 s: retries wait 0.4 s, doubling, and count as the machine's" clear 0 "waits $gaps s; $st"
    else verdict issue.retry-delay "retries of machine faults" wrong $rc "$(tail -1 run.out)" "exit $rc, job $st, waits $gaps"; fi; }
selected issue.fifo-data-tlmd && { in_case issue.fifo-data-tlmd; mkfifo f.tlmtok
    printf 'name: fifo\nbase:\n  model: {d_model: 64, layers: 2, heads: 2, d_ff: 128, vocab: 256}\n  data: {train: %s/f.tlmtok}\n  train: {tokens: 16384, seq_len: 32, batch_tokens: 1024}\n' "$PWD" >s.yaml
    AFTER='[ "$(q results.db "select status || \":\" || reason from jobs")" = failed:data ]' AFTER_MSG="the job is not failed as data" \
        TO=30 tc issue.fifo-data-tlmd "a sweep whose data is a FIFO: the job fails at once as data, not retried" 1 "is not a regular file \(a FIFO\)" \
        "$T" --sweeps s.yaml --threads-per-worker 1 --no-progress; }
selected issue.shard-flip-tlmd && { in_case issue.shard-flip-tlmd; cp "$SHARD" s.tlmtok
    printf '\001\002' | dd of=s.tlmtok bs=1 seek=5000 conv=notrunc 2>/dev/null
    printf 'name: flip\nbase:\n  model: {d_model: 64, layers: 2, heads: 2, d_ff: 128, vocab: 256}\n  data: {train: %s/s.tlmtok}\n  train: {tokens: 16384, seq_len: 32, batch_tokens: 1024}\n' "$PWD" >s.yaml
    AFTER='[ "$(q results.db "select status || \":\" || reason || \":\" || attempts from jobs")" = failed:data:1 ] && [ "$(q results.db "select count(*) from steps")" = 0 ]' \
        AFTER_MSG="the job trained, or was retried" \
        tc issue.shard-flip-tlmd "a sweep on a shard with flipped bytes: failed as data, no step recorded" 1 "SHA-256" \
        "$T" --sweeps s.yaml --threads-per-worker 1 --no-progress; }

# ---- full disks: a tmpfs of a few MB in a private mount namespace (root only)
if [ $MOUNT_OK = 1 ]; then
    # in_ns SCRIPT: run the shell SCRIPT in a private mount namespace (its mounts vanish with it)
    in_ns() { unshare -m --propagation private sh -c "$1"; }
    selected disk.runs-full && { need_ref; in_case disk.runs-full; three s.yaml; mkdir runs
        # runs/ on 1.5 MB: the first checkpoints (1.2 MB each) do not fit; then 64 MB, and the same command again
        in_ns "mount -t tmpfs -o size=1536k tmpfs runs &&
            timeout 120 '$T' --sweeps s.yaml --workers 2 --threads-per-worker 1 --no-progress --retry-delay 0 --max-machine-faults 2 >run1.out 2>&1; echo \$? >rc1
            mount -o remount,size=64m runs &&
            timeout 120 '$T' --sweeps s.yaml --workers 2 --threads-per-worker 1 --no-progress --retry-delay 0 >run2.out 2>&1; echo \$? >rc2" 2>ns.err
        rc1=$(cat rc1 2>/dev/null) rc2=$(cat rc2 2>/dev/null)
        msg=$(grep -m1 -i 'space\|machine' run1.out)
        why=$(same_as_ref results.db 0)
        if [ "$rc1" = 1 ] && grep -q -i "No space left on device" run1.out && grep -q "fix the machine" run1.out && [ "$rc2" = 0 ] && [ -z "$why" ]; then
            verdict disk.runs-full "runs/ on a full 1.5 MB disk: jobs fail as the machine's, then finish once space is back" clear 1 "$msg"
        elif [ "$rc1" = 1 ] && [ "$rc2" = 0 ] && [ -z "$why" ]; then
            verdict disk.runs-full "runs/ on a full disk" unclear "$rc1" "$msg" "the messages do not say 'No space left on device' and 'fix the machine'"
        else verdict disk.runs-full "runs/ on a full disk" wrong "$rc1/$rc2" "$msg" "first run exit $rc1 (1 expected), second $rc2 (0 expected); $why $(head -c 200 ns.err)"; fi; }
    selected disk.db-full && { need_ref; in_case disk.db-full; three s.yaml; mkdir dbdir
        # results.db alone on 8 MB, a filler leaving 20 KB free: the database fills up mid-run
        in_ns "mount -t tmpfs -o size=8m tmpfs dbdir &&
            timeout 120 '$T' --sweeps s.yaml --db dbdir/results.db --workers 2 --threads-per-worker 1 --no-progress --retry-delay 0 >run0.out 2>&1 &
            p=\$!; for i in \$(seq 100); do [ -s dbdir/results.db ] && break; sleep 0.02; done
            head -c \$(( \$(df -k --output=avail dbdir | tail -1) * 1024 - 20000 )) /dev/zero >dbdir/filler 2>/dev/null; wait \$p; echo \$? >rc1
            rm -f dbdir/filler
            timeout 120 '$T' --sweeps s.yaml --db dbdir/results.db --workers 2 --threads-per-worker 1 --no-progress --retry-delay 0 >run2.out 2>&1; echo \$? >rc2
            sqlite3 dbdir/results.db 'pragma integrity_check' >integrity
            cp dbdir/results.db final.db" 2>ns.err
        rc1=$(cat rc1 2>/dev/null) rc2=$(cat rc2 2>/dev/null)
        msg=$(grep -m1 -i 'full\|space' run0.out)
        why=$(same_as_ref final.db 0)
        if [ "$rc1" = 3 ] && [ -n "$msg" ] && [ "$rc2" = 0 ] && [ "$(cat integrity 2>/dev/null)" = ok ] && [ -z "$why" ]; then
            verdict disk.db-full "results.db on a disk that fills up mid-run: exit 3 saying so, then the restart finishes" clear 3 "$msg"
        elif [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ -z "$why" ]; then
            verdict disk.db-full "results.db on a disk that fills up mid-run (it fitted: nothing to judge)" clear 0 "the database fitted in 20 KB"
        else verdict disk.db-full "results.db on a full disk" wrong "$rc1/$rc2" "$msg" "first run exit $rc1 (3 expected), second $rc2 (0), integrity $(cat integrity 2>/dev/null); $why $(head -c 200 ns.err)"; fi; }
    selected disk.worker-full && { need_run; in_case disk.worker-full; mkdir out
        in_ns "mount -t tmpfs -o size=1m tmpfs out &&
            timeout 60 '$W' --config '$FX/job.yaml' --out out/r --threads 1 >w.ev 2>w.err; echo \$? >rc
            ls out/r/ckpt >ckpts 2>&1" 2>ns.err
        rc=$(cat rc 2>/dev/null)
        msg=$(grep -m1 'error' w.err)
        if [ "$rc" = 6 ] && grep -q "No space left on device" w.err && tail -1 w.ev | grep -q '"kind":"io"' && ! grep -q '^\.tmp' ckpts; then
            verdict disk.worker-full "tlm-worker on a full 1 MB disk: exit 6, io, no half checkpoint" clear 6 "$msg"
        else verdict disk.worker-full "tlm-worker on a full disk" wrong "$rc" "$msg" "expected exit 6, an io error naming ENOSPC, no .tmp-step left ($(tr '\n' ' ' <ckpts))"; fi; }
    selected disk.data-full && { in_case disk.data-full; mkdir out
        yes "All work and no play makes a dataset slow to build." | head -c 3000000 >big.txt
        in_ns "mount -t tmpfs -o size=2m tmpfs out &&
            '$D' build --tokenizer bytes --out out/ds '$FX/corpus/GPL-2' >/dev/null 2>&1 && cp out/ds/manifest.json keep.json &&
            timeout 60 '$D' build --tokenizer bytes --out out/ds big.txt >d.out 2>&1; echo \$? >rc
            ls -a out >left; cmp -s out/ds/manifest.json keep.json; echo \$? >same" 2>ns.err
        rc=$(cat rc 2>/dev/null)
        if [ "$rc" = 1 ] && grep -q "No space left on device" d.out && [ "$(cat same)" = 0 ] && ! grep -q '\.tmp\.' left; then
            verdict disk.data-full "tlm-data build on a full disk: exit 1, the previous dataset kept, no temp folder" clear 1 "$(grep -m1 error d.out)"
        else verdict disk.data-full "tlm-data build on a full disk" wrong "$rc" "$(grep -m1 error d.out)" "expected exit 1 naming ENOSPC, the old dataset intact ($(cat same)), no .tmp. left ($(tr '\n' ' ' <left))"; fi; }
    selected disk.readonly-runs && { need_ref; in_case disk.readonly-runs; three s.yaml; mkdir runs
        in_ns "mount -t tmpfs -o size=8m tmpfs runs && mount -o remount,ro runs &&
            timeout 60 '$T' --sweeps s.yaml --workers 2 --threads-per-worker 1 --no-progress --retry-delay 0 --max-machine-faults 2 >run.out 2>&1; echo \$? >rc" 2>ns.err
        rc=$(cat rc 2>/dev/null)
        msg=$(grep -m1 -i 'read-only' run.out)
        if [ "$rc" = 1 ] || [ "$rc" = 2 ] || [ "$rc" = 3 ]; then
            if [ -n "$msg" ]; then verdict disk.readonly-runs "runs/ on a read-only file system" clear "$rc" "$msg"
            else verdict disk.readonly-runs "runs/ on a read-only file system" unclear "$rc" "$(grep -m1 tlmd run.out)" "the messages do not say read-only"; fi
        else verdict disk.readonly-runs "runs/ on a read-only file system" wrong "$rc" "$(tail -1 run.out)" "expected a failure (1, 2 or 3)"; fi; }
else
    for c in disk.runs-full disk.db-full disk.worker-full disk.data-full disk.readonly-runs; do
        notried "$c" "a full or read-only disk" "needs root and unshare for a private tmpfs"
    done
fi
