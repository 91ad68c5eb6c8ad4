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
selected tlmd.flood-worker && { in_case tlmd.flood-worker; sweep s.yaml t
    # a worker that writes 10 MB of junk on the events pipe, then exits 0
    printf '#!/bin/sh\nhead -c 10000000 /dev/urandom >&3\nexit 0\n' >w.sh; chmod +x w.sh
    TO=40 AFTER='[ "$(q results.db "select count(*) from logs")" -le 200 ] && [ "$(q results.db "select status from jobs")" = failed ]' \
        AFTER_MSG="the junk was not bounded, or the job not failed" \
        tc tlmd.flood-worker "a worker writing 10 MB of random bytes as events" 1 "protocol" "$T" "${S[@]}" --worker "$PWD/w.sh" --retry-delay 0 --max-attempts 2 --no-progress; }
