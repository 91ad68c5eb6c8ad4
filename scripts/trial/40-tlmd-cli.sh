# 40-tlmd-cli.sh: every option of tlmd and `tlmd status` (docs/tlmd.md,
# "Options") missing, malformed, out of range, repeated and conflicting.
# Usage is checked before anything is read or recorded: exit 2, and no
# results.db appears.  Sourced by trial.sh.

# tu ID WHAT PATTERN ARGS...: in a folder holding the sweep s.yaml, tlmd
# ARGS exits 2 saying PATTERN, and no results.db is made
tu() {
    local id=$1 what=$2 pat=$3
    shift 3
    selected "$id" || return 0
    in_case "$id"
    [ -e s.yaml ] || sweep s.yaml t
    AFTER="${AFTER:+$AFTER && }"'[ ! -e results.db ] && [ ! -e runs ]' AFTER_MSG="${AFTER_MSG:-a refused command made results.db or runs/}" \
        tc "$id" "$what" 2 "$pat" "$T" "$@"
}
# tok ID WHAT STATUS PATTERN ARGS...: tlmd ARGS exits STATUS saying PATTERN
tok() {
    local id=$1 what=$2 st=$3 pat=$4
    shift 4
    selected "$id" || return 0
    in_case "$id"
    [ -e s.yaml ] || sweep s.yaml t
    tc "$id" "$what" "$st" "$pat" "$T" "$@"
}
S=(--sweeps s.yaml)

tu tlmd.no-args "no arguments" "--sweeps FILE\|DIR is required"
tu tlmd.unknown "an unknown option" "unrecognized option '--bogus'" "${S[@]}" --bogus
tu tlmd.positional "a stray argument" "(unexpected argument|unknown command) 'extra'" "${S[@]}" extra
tu tlmd.sweeps-novalue "--sweeps without its value" "option '--sweeps' requires an argument" --sweeps
tu tlmd.db-novalue "--db without its value" "option '--db' requires an argument" "${S[@]}" --db
tu tlmd.runs-novalue "--runs without its value" "option '--runs' requires an argument" "${S[@]}" --runs
tu tlmd.workers-novalue "--workers without its value" "option '--workers' requires an argument" "${S[@]}" --workers
tu tlmd.sweeps-missing "a sweep file that does not exist" "nope\.yaml: .*(No such file|does not exist)" --sweeps nope.yaml
tu tlmd.db-twice "--db twice" "--db is given twice; give it once" "${S[@]}" --db a.db --db b.db
tu tlmd.runs-twice "--runs twice" "--runs is given twice; give it once" "${S[@]}" --runs a --runs b
tu tlmd.workers-twice "--workers twice" "--workers is given twice; give it once" "${S[@]}" --workers 1 --workers 2
tu tlmd.devices-twice "--devices twice" "--devices is given twice; give it once" "${S[@]}" --devices cpu --devices cpu
tu tlmd.worker-twice "--worker twice" "--worker is given twice; give it once" "${S[@]}" --worker "$W" --worker "$W"
tu tlmd.kill-grace-twice "--kill-grace twice" "--kill-grace is given twice; give it once" "${S[@]}" --kill-grace 1 --kill-grace 2
tu tlmd.progress-both "--progress with --no-progress" "--progress and --no-progress contradict" "${S[@]}" --progress --no-progress
tu tlmd.workers-0 "--workers 0" "--workers 0: out of range \(expected an integer from 1 to 256\)" "${S[@]}" --workers 0
tu tlmd.workers-257 "--workers 257" "--workers 257: out of range \(expected an integer from 1 to 256\)" "${S[@]}" --workers 257
tu tlmd.workers-frac "--workers 1.5" "--workers 1.5: not an integer \(expected an integer from 1 to 256\)" "${S[@]}" --workers 1.5
tu tlmd.workers-neg "--workers -2" "--workers -2: out of range \(expected an integer from 1 to 256\)" "${S[@]}" --workers -2
tu tlmd.workers-word "--workers many" "--workers many: not an integer" "${S[@]}" --workers many
tu tlmd.tpw-0 "--threads-per-worker 0" "--threads-per-worker 0: out of range \(expected an integer from 1 to 4096\)" "${S[@]}" --threads-per-worker 0
tu tlmd.tpw-5000 "--threads-per-worker 5000" "--threads-per-worker 5000: out of range \(expected an integer from 1 to 4096\)" "${S[@]}" --threads-per-worker 5000
tu tlmd.attempts-0 "--max-attempts 0" "--max-attempts 0: out of range \(expected an integer from 1 to 1000\)" "${S[@]}" --max-attempts 0
tu tlmd.attempts-int64 "--max-attempts 9223372036854775807" "--max-attempts 9223372036854775807: out of range \(expected an integer from 1 to 1000\)" "${S[@]}" --max-attempts 9223372036854775807
tu tlmd.attempts-26 "--max-attempts of 26 digits" "--max-attempts 12345678901234567890123456: out of range" "${S[@]}" --max-attempts 12345678901234567890123456
tu tlmd.attempts-1e30 "--max-attempts 1e30" "--max-attempts 1e30: (out of range|not an integer)" "${S[@]}" --max-attempts 1e30
tu tlmd.faults-0 "--max-machine-faults 0" "--max-machine-faults 0: out of range \(expected an integer from 1 to 1000\)" "${S[@]}" --max-machine-faults 0
tu tlmd.retry-neg "--retry-delay -1" "--retry-delay -1: out of range \(expected a number from 0 to 86400\)" "${S[@]}" --retry-delay -1
tu tlmd.retry-nan "--retry-delay nan" "--retry-delay nan: not a number \(expected a number from 0 to 86400\)" "${S[@]}" --retry-delay nan
tu tlmd.retry-max-inf "--retry-delay-max inf" "--retry-delay-max inf: not a number" "${S[@]}" --retry-delay-max inf
tu tlmd.hb-0 "--heartbeat-timeout 0" "--heartbeat-timeout 0: out of range \(expected a number from 1 to 1e6\)" "${S[@]}" --heartbeat-timeout 0
tu tlmd.hb-small "--heartbeat-timeout 0.001" "--heartbeat-timeout 0.001: out of range \(expected a number from 1 to 1e6\)" "${S[@]}" --heartbeat-timeout 0.001
tu tlmd.stall-neg "--stall-timeout -1" "--stall-timeout -1: out of range \(expected a number from 0 to 1e7\)" "${S[@]}" --stall-timeout -1
tu tlmd.grace-big "--kill-grace 1e9" "--kill-grace 1e9: out of range \(expected a number from 0 to 1e6\)" "${S[@]}" --kill-grace 1e9
tu tlmd.grace-hex "--kill-grace 0x10" "--kill-grace 0x10: not a number" "${S[@]}" --kill-grace 0x10
tu tlmd.grace-comma "--kill-grace 1,5 (a decimal comma)" "--kill-grace 1,5: not a number" "${S[@]}" --kill-grace 1,5
tu tlmd.devices-bad "--devices 0,x" "--devices 0,x: expected auto, cpu, or GPU ids" "${S[@]}" --devices 0,x
tu tlmd.devices-mixed "--devices cpu,0" "--devices cpu,0: expected auto, cpu, or GPU ids separated by commas" "${S[@]}" --devices cpu,0
tu tlmd.devices-dup "--devices 0,0" "--devices 0,0: GPU 0 is listed twice" "${S[@]}" --devices 0,0
tu issue.devices-0 "--devices 0 on a build without a GPU backend or a machine without GPUs" "--devices 0: (this build cannot train on GPUs|the NVIDIA driver lists no GPU 0)" "${S[@]}" --devices 0
tu tlmd.devices-empty "--devices '' (empty)" "--devices : (expected auto, cpu, or GPU ids|is empty)" "${S[@]}" --devices ""
tu tlmd.devices-neg "--devices -1" "--devices -1: expected auto, cpu, or GPU ids" "${S[@]}" --devices -1
tu tlmd.worker-missing "--worker that does not exist" "worker $tmp/none/tlm-worker" "${S[@]}" --worker "$tmp/none/tlm-worker"
tu tlmd.status-twice "tlmd status --db twice" "--db is given twice" status --db a.db --db b.db
tu tlmd.status-unknown "tlmd status --bogus" "unrecognized option '--bogus'" status --bogus
tu tlmd.status-sweeps "tlmd status --sweeps (an option of a run)" "unrecognized option '--sweeps'" status --sweeps s.yaml
tu tlmd.status-nodb "tlmd status without a database" "results\.db does not exist \(tlmd --sweeps FILE creates it\)" status
tu tlmd.status-sweep-novalue "tlmd status --sweep without its value" "option '--sweep' requires an argument" status --sweep
tok tlmd.help "--help" 0 "^usage: tlmd --sweeps FILE" --help
tok tlmd.dry-ignored "--dry-run with --workers and --runs: named as ignored" 0 "--workers does nothing with --dry-run" --dry-run "${S[@]}" --workers 2 --runs elsewhere
tok tlmd.dry-twice "--dry-run given twice (a flag)" 0\|2 "total: 1 distinct jobs|--dry-run is given twice" --dry-run --dry-run "${S[@]}"
tok tlmd.retry-over-max "--retry-delay 20 above --retry-delay-max 10 (the wait is capped)" 0 "total: 1 distinct jobs" --dry-run "${S[@]}" --retry-delay 20 --retry-delay-max 10
tok tlmd.sweeps-twice "the same sweep file given twice" 0 "total: 1 distinct jobs" --dry-run "${S[@]}" "${S[@]}"
selected tlmd.status-unknown-sweep && { need_db; in_case tlmd.status-unknown-sweep
    tc tlmd.status-unknown-sweep "tlmd status --sweep nope" 2 "no sweep named 'nope'" "$T" status --db "$FX/db/results.db" --sweep nope; }
selected tlmd.status-ok && { need_db; in_case tlmd.status-ok
    tc tlmd.status-ok "tlmd status of a finished sweep" 0 "sweep two" "$T" status --db "$FX/db/results.db"; }
selected tlmd.false-worker && { in_case tlmd.false-worker; sweep s.yaml t
    AFTER='[ "$(q results.db "select status || \":\" || attempts from jobs")" = "failed:2" ]' AFTER_MSG="the job is not failed after 2 attempts" \
        tc tlmd.false-worker "/bin/false as the worker (exit 1 at once)" 1 "exit 1|internal" "$T" "${S[@]}" --worker /bin/false --retry-delay 0 --max-attempts 2 --no-progress; }
selected tlmd.true-worker && { in_case tlmd.true-worker; sweep s.yaml t
    AFTER='[ "$(q results.db "select reason from attempts order by n limit 1")" = protocol ]' AFTER_MSG="the attempt is not a protocol failure" \
        tc tlmd.true-worker "/bin/true as the worker (exit 0, no event)" 1 "protocol|without .*done" "$T" "${S[@]}" --worker /bin/true --retry-delay 0 --max-attempts 2 --no-progress; }
selected tlmd.noexec-worker && { in_case tlmd.noexec-worker; sweep s.yaml t; printf '#!/bin/sh\nexit 0\n' >w.sh; chmod 644 w.sh
    tc tlmd.noexec-worker "a worker file that is not executable" 2 "w\.sh.*(not executable|Permission denied)" "$T" "${S[@]}" --worker "$PWD/w.sh" --no-progress; }
selected tlmd.liar-worker && { in_case tlmd.liar-worker; sweep s.yaml t
    # a worker that claims another job's config_id, then done
    cat >w.sh <<'EOF'
#!/bin/sh
job=; while [ $# -gt 0 ]; do [ "$1" = --job ] && job=$2; shift; done
printf '{"ev":"start","v":1,"t":1,"job":"%s","pid":1,"config_id":"%064d","step":0,"tokens":0,"resumed_from_step":null,"total_steps":1,"total_tokens":1,"params":1,"flops_per_token":1,"device":"cpu","threads":1,"blas":"x","blas_kernel":"x","blas_advice":null,"compiler":"x","tlm_version":"x","git_commit":"x","host":"x","os":"x","argv":[]}\n' "$job" 0 >&3
printf '{"ev":"done","v":1,"t":1,"job":"%s","step":1,"tokens":1,"loss":1,"val_loss":null,"elapsed_s":1}\n' "$job" >&3
EOF
    chmod +x w.sh
    AFTER='[ "$(q results.db "select status from jobs")" = failed ]' AFTER_MSG="a job whose worker reported another config is not failed" \
        tc tlmd.liar-worker "a worker reporting another job's config_id" 1 "config_id" "$T" "${S[@]}" --worker "$PWD/w.sh" --retry-delay 0 --no-progress; }
# issue 26: a done whose final loss is not finite is no success (the real worker, its done's loss made "nan")
selected issue26.nonfinite-done && { in_case issue26.nonfinite-done; sweep s.yaml t
    printf '#!/bin/sh\n"%s" "$@" 3>&1 >&2 | sed -u '"'"'/"ev":"done"/s/"loss":[-0-9.e+]*/"loss":"nan"/'"'"' >&3\n' "$W" >w.sh; chmod +x w.sh
    AFTER='[ "$(q results.db "select status || \":\" || reason from jobs")" = failed:diverged ]' AFTER_MSG="a done with a NaN loss is not failed as diverged" \
        tc issue26.nonfinite-done "a worker whose done event reports a NaN loss (exit 0)" 1 "failed \(diverged, not retried\): the worker reported done with a final number that is not finite" \
        "$T" "${S[@]}" --worker "$PWD/w.sh" --retry-delay 0 --no-progress --threads-per-worker 1; }
selected tlmd.flood-worker && { in_case tlmd.flood-worker; sweep s.yaml t
    # a worker that writes 10 MB of junk on the events pipe, then exits 0
    printf '#!/bin/sh\nhead -c 10000000 /dev/urandom >&3\nexit 0\n' >w.sh; chmod +x w.sh
    TO=40 AFTER='[ "$(q results.db "select count(*) from logs")" -le 200 ] && [ "$(q results.db "select status from jobs")" = failed ]' \
        AFTER_MSG="the junk was not bounded, or the job not failed" \
        tc tlmd.flood-worker "a worker writing 10 MB of random bytes as events" 1 "protocol" "$T" "${S[@]}" --worker "$PWD/w.sh" --retry-delay 0 --max-attempts 2 --no-progress; }

# ---- issue 26: tlmd migrate and tlmd backup; what tlmd makes of a database
# that is damaged, stamped with the wrong version or older; a dry run whose
# data cannot be read; tlmd status's columns
tu issue26.migrate-nodb "tlmd migrate without --db" "tlmd migrate: --db FILE is required" migrate
tu issue26.migrate-missing "tlmd migrate --db of a file that does not exist" "nope\.db does not exist" migrate --db nope.db
tu issue26.migrate-unknown "tlmd migrate --bogus" "unrecognized option '--bogus' \(try tlmd migrate --help\)" migrate --db x.db --bogus
tu issue26.backup-noout "tlmd backup without --out" "--db FILE and --out FILE are required" backup --db x.db
selected issue26.backup-exists && { need_db; in_case issue26.backup-exists; : >b.db
    tc issue26.backup-exists "tlmd backup onto a file that exists" 2 "--out b\.db: exists; a backup never replaces a file" "$T" backup --db "$FX/db/results.db" --out b.db; }
selected issue26.backup-ok && { need_db; in_case issue26.backup-ok
    AFTER='[ "$(q b.db "select count(*) from jobs where status = \"done\"")" = 2 ] && [ ! -e b.db-wal ]' AFTER_MSG="the backup does not hold the 2 done jobs in one file" \
        tc issue26.backup-ok "tlmd backup of the finished sweep's database" 0 "results\.db copied to b\.db" "$T" backup --db "$FX/db/results.db" --out b.db; }
selected issue26.migrate-current && { need_db; in_case issue26.migrate-current; cp "$FX/db/results.db" r.db
    AFTER='cmp -s r.db "$FX/db/results.db" && [ ! -e r.db.v5.bak ]' AFTER_MSG="a current database was changed, or backed up for nothing" \
        tc issue26.migrate-current "tlmd migrate of a current database" 0 "r\.db is at schema version [0-9]+ already; nothing to do" "$T" migrate --db r.db; }
# an older database (version 5, as db/history keeps it): the read-only commands name tlmd migrate
old5() { sqlite3 old.db <"$SRC/db/history/v5.sql" && sqlite3 old.db "pragma user_version = 5"; }
selected issue26.status-older && { in_case issue26.status-older; old5
    tc issue26.status-older "tlmd status of an older database" 2 "old\.db: schema version 5 is older than this program's \([0-9]+\); upgrade it with: tlmd migrate --db old\.db" "$T" status --db old.db; }
selected issue26.dry-older && { in_case issue26.dry-older; old5; sweep s.yaml t
    tc issue26.dry-older "tlmd --dry-run on an older database" 2 "upgrade it with: tlmd migrate --db old\.db" "$T" --dry-run --sweeps s.yaml --db old.db; }
selected issue26.report-older && { in_case issue26.report-older; old5
    tc issue26.report-older "tlm-report of an older database" 1\|2 "upgrade it with: tlmd migrate --db old\.db" "$R" --db old.db --list; }
selected issue26.migrate-older && { in_case issue26.migrate-older; old5
    AFTER='[ "$(q old.db.v5.bak "pragma user_version")" = 5 ] && [ "$(q old.db "pragma user_version")" -gt 5 ]' AFTER_MSG="no version-5 backup beside a migrated file" \
        tc issue26.migrate-older "tlmd migrate of a version-5 database" 0 "old\.db migrated from schema version 5 to [0-9]+; the old file is kept as old\.db\.v5\.bak" "$T" migrate --db old.db; }
selected issue26.migrate-locked && { in_case issue26.migrate-locked; old5
    bg python3 -c 'import fcntl, time; f = open("old.db"); fcntl.flock(f, fcntl.LOCK_EX); open("locked", "w"); time.sleep(60)'
    i=0; while [ ! -e locked ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    AFTER='[ "$(q old.db "pragma user_version")" = 5 ]' AFTER_MSG="the database was migrated under a running daemon" \
        tc issue26.migrate-locked "tlmd migrate of a database a daemon holds" 2 "another tlmd \(pid [0-9]+\) is running on the database old\.db" "$T" migrate --db old.db
    { kill -9 -- "-$bgp"; wait "$bgp"; } 2>/dev/null; }
selected issue26.db-stamped && { need_db; in_case issue26.db-stamped; cp "$FX/db/results.db" r.db; sqlite3 r.db "pragma user_version = 4"; sweep s.yaml t
    AFTER='[ "$(q r.db "pragma user_version")" = 4 ]' AFTER_MSG="the stamped file was changed" \
        tc issue26.db-stamped "tlmd on a database whose version was set back to 4 by hand" 2 "r\.db: its tables are not those of schema version 4, the version the file says it has \(PRAGMA user_version\).*nothing was changed" \
        "$T" --sweeps s.yaml --db r.db --no-progress; }
selected issue26.db-damaged && { need_db; in_case issue26.db-damaged; cp "$FX/db/results.db" r.db; sweep s.yaml t
    python3 -c '
import sqlite3, sys
c = sqlite3.connect("r.db"); root = c.execute("select rootpage from sqlite_master where name = \"steps\"").fetchone()[0]
size = c.execute("pragma page_size").fetchone()[0]; c.close()
f = open("r.db", "r+b"); f.seek((root - 1) * size); f.write(b"\x0d" + b"\xff" * 11); f.close()'
    cp r.db r.orig
    AFTER='cmp -s r.db r.orig' AFTER_MSG="the damaged database was written to" \
        tc issue26.db-damaged "tlmd on a database with a damaged table" 3 "r\.db: the database is damaged \(SQLite's quick_check: .*sqlite3 r\.db \.recover \| sqlite3 recovered\.db" \
        "$T" --sweeps s.yaml --db r.db --no-progress; }
selected issue26.backup-damaged && { need_db; in_case issue26.backup-damaged; cp "$FX/db/results.db" r.db
    python3 -c '
import sqlite3
c = sqlite3.connect("r.db"); root = c.execute("select rootpage from sqlite_master where name = \"jobs\"").fetchone()[0]
size = c.execute("pragma page_size").fetchone()[0]; c.close()
f = open("r.db", "r+b"); f.seek((root - 1) * size); f.write(b"\x0d" + b"\xff" * 11); f.close()'
    AFTER='[ ! -e b.db ]' AFTER_MSG="a backup of the damaged database was written" \
        tc issue26.backup-damaged "tlmd backup of a damaged database" 3 "r\.db: the database is damaged .*no backup written" "$T" backup --db r.db --out b.db; }
# relative data paths: a dry run checks that they can be read, from the folder tlmd runs in
selected issue26.dry-data-missing && { in_case issue26.dry-data-missing; sweep s.yaml t; sed -i "s|train: $FX/ds/train, val: $FX/ds/val|train: data/train|" s.yaml
    AFTER='grep -q "total: 1 distinct jobs" "$OUT/$id.out"' AFTER_MSG="the jobs were not listed" \
        tc issue26.dry-data-missing "tlmd --dry-run of a sweep whose (relative) data is missing" 2 "s\.yaml: data\.train data/train: No such file or directory \(a relative path is read from $PWD, the folder tlmd runs in\)" \
        "$T" --dry-run --sweeps s.yaml; }
selected issue26.rel-data-run && { in_case issue26.rel-data-run; sweep s.yaml t; mkdir data; cp -a "$FX/ds/train" "$FX/ds/val" data/
    sed -i "s|train: $FX/ds/train, val: $FX/ds/val|train: data/train, val: data/val|" s.yaml
    AFTER='[ "$(q results.db "select status from jobs")" = done ]' AFTER_MSG="the job with relative data paths is not done" \
        tc issue26.rel-data-run "a sweep with relative data paths, run from their folder" 0 "" "$T" --sweeps s.yaml --no-progress --threads-per-worker 1; }
selected issue26.status-columns && { need_db; in_case issue26.status-columns
    AFTER='[ "$(grep -c " done .* 100% .*[0-9]\.[0-9][0-9]$" "$OUT/$id.out")" = 2 ]' AFTER_MSG="not two done rows at 100% with a val ppl" \
        tc issue26.status-columns "tlmd status: a header row, 100% and val ppl per done job" 0 "^  id  +status  +arch  +scale  +label  +seed +trained +attempts  +loss  +val ppl" "$T" status --db "$FX/db/results.db"; }
notried issue26.slurm-rel-data "relative data paths and job names under --executor slurm" \
    "needs a Slurm cluster; tests/tlmd/test_slurm.sh runs both on a private one"
# issue 25: a job of several ranks refused before anything is recorded
# (as root, mpirun's own refusal would come first: told to allow it)
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
selected issue25.ranks-batch && { in_case issue25.ranks-batch; sweep s.yaml t "resources: {ranks_per_node: 3}"
    tu issue25.ranks-batch "3 ranks for a batch of 32 sequences" "s\.yaml:[0-9]+: sweep t, job [0-9a-f]+ .* on 3 ranks \(resources\): train\.batch_tokens 1024 is 32 sequences of 32 tokens, which do not divide among 3 ranks: make it a multiple of 3 sequences \(batch_tokens 960 or 1056\)" \
        --sweeps s.yaml; }
selected issue25.ranks-nodes && { in_case issue25.ranks-nodes; sweep s.yaml t "resources: {nodes: 2, ranks_per_node: 1}"
    tu issue25.ranks-nodes "nodes: 2 on the local executor" "sweep t: resources\.nodes 2: the local executor runs on this machine only; run it with --executor slurm, or set nodes: 1" \
        --sweeps s.yaml; }
selected issue25.ranks-no-mpirun && { in_case issue25.ranks-no-mpirun; sweep s.yaml t "resources: {ranks_per_node: 2}"
    AFTER='[ ! -e results.db ] && [ ! -e runs ]' AFTER_MSG="a refused command made results.db or runs/" \
        tc issue25.ranks-no-mpirun "2 ranks with no mpirun on PATH" 2 "sweep t asks for 2 ranks a job, which the local executor starts with Open MPI's mpirun: mpirun is not on PATH \(Debian: apt-get install openmpi-bin" \
        env PATH=/nonexistent "$T" --sweeps s.yaml; }
notried issue25.ranks-no-gpu "2 ranks on --device cuda:0 where the ranks have no GPU each" \
    "tests/parallel/test_dp_refuse.sh runs it under mpirun (the worker's refusal, per rank); tlmd's GPU slots need a driver"
