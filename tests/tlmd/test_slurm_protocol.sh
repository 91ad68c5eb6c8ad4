#!/bin/sh
# test_slurm_protocol.sh: a worker that breaks the protocol under the slurm
# executor is stopped through the slurm executor, as a local one is through
# the local executor.  The worker here trains the job's config with another
# seed, so its start event's config_id is not the job's key: tlmd stops it
# at once (SIGTERM through the batch job), the worker checkpoints and exits
# 75, and the job fails as a protocol failure, not retried.  --kill-grace is
# far longer than the training: a stop that never sent SIGTERM would let the
# worker run to its end instead.  Skips (77) without Slurm.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
. "$TLM_SRCDIR/tests/lib/slurm_cluster.sh"
slurm_start_cluster 1 0

STEPS=480
sweep one.yaml one $STEPS
cat >liar.sh <<S
#!/bin/sh
# the real worker on the job's config with another seed
cfg=
prev=
for a in "\$@"; do [ "\$prev" = --config ] && cfg=\$a; prev=\$a; done
python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
c["seed"] = c.get("seed", 0) + 1
json.dump(c, open(sys.argv[2], "w"))' "\$cfg" "\$cfg.other" || exit 1
first=1
for a in "\$@"; do
    [ \$first = 1 ] && set --
    first=0
    if [ "\$a" = "\$cfg" ]; then set -- "\$@" "\$cfg.other"; else set -- "\$@" "\$a"; fi
done
exec "$W" "\$@"
S
chmod +x liar.sh
"$T" --sweeps one.yaml --executor slurm --slurm-poll 0.3 --cpus-per-job 1 --kill-grace 600 --retry-delay 0 \
    --worker "$PWD/liar.sh" >run.out 2>&1
rc=$?
q "select n, reason, exit_code, signal, step, ended_at - started_at, message from attempts" | sed 's/^/# /'
ok $([ $rc = 1 ] && [ "$(q "select status || ':' || reason || ':' || attempts from jobs")" = "failed:protocol:1" ] &&
    echo 0 || echo 1) "the job fails as a protocol failure, not retried (exit $rc)"
grep -q "the worker trains another config" run.out
ok $? "tlmd says why it stops the worker"
ok $([ "$(q "select count(*) from attempts where reason = 'protocol' and exit_code = 75 and message like '%config_id%'")" = 1 ] &&
    echo 0 || echo 1) "the worker exited 75: it was stopped by a signal and checkpointed"
ev=$(ls runs/*/slurm/*.0.events)
stopped=$(python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"stopped\"" in l]
c = [json.loads(l)["step"] for l in open(sys.argv[1]) if "\"ckpt\"" in l]
if s and s[0]["ckpt"] and s[0]["step"] in c:
    print(s[0]["signal"], s[0]["step"], s[0]["ckpt"])' "$ev")
echo "# stopped event: $stopped"
set -- $stopped
ok $([ "${1:-}" = SIGTERM ] && [ "${2:-$STEPS}" -lt $STEPS ] && echo 0 || echo 1) \
    "the worker got SIGTERM at step ${2:-?} of $STEPS, and its stopped event names the checkpoint of that step"
ok $([ -n "${3:-}" ] && { [ -d "$3" ] || [ -d "$(dirname "$ev")/../$3" ]; } && echo 0 || echo 1) "that checkpoint is on disk (${3:-none})"
finish
