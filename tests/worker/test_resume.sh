#!/bin/sh
# test_resume.sh: determinism of tlm-worker on the CPU.  The same
# config and seed give bit-identical losses (and final checkpoints) in two
# runs; a run killed with SIGKILL at a random step, or stopped with SIGTERM
# or SIGINT (exit 75, `stopped` with its checkpoint), or whose parent dies
# under --die-with-parent, then continued with --resume, gives exactly the
# losses, validation losses and final weights of the uninterrupted run.
. "$TLM_SRCDIR/tests/lib/train_common.sh"
. "$TLM_SRCDIR/tests/worker/resume_lib.sh"

small_job "$tmp/job.yaml"

run A
ok $? "uninterrupted run A"
events "$tmp/A.ev" --end done >/dev/null
ok $? "A's events follow the protocol"
run B
ok $? "run B of the same config"
same A B
ok $? "two runs: bit-identical losses and validation losses"
same_files A B
ok $? "two runs: byte-identical final model.safetensors and optim.safetensors"

# ---- SIGKILL at a random step, then --resume
k=$(rand_step 3 36)
kill_resume C "$k"
from=$(start_field C resumed_from_step)
echo "# resumed from step $from"
ok $([ "$from" = None ] || [ "$from" -le "$killed_at" ]; echo $?) "it resumed from a checkpoint at or before step $killed_at, the last it reported ($from)"
same A C
ok $? "killed + resumed: the uninterrupted run's losses, bit for bit"
same_files A C
ok $? "killed + resumed: byte-identical final weights and moments"

# ---- SIGTERM: finish the step, checkpoint, stopped, exit 75
k=$(rand_step 2 36)
signal_at D "$k" TERM 75
events "$tmp/D.ev" --end stopped >"$tmp/D.sum"
ok $? "SIGTERM: the stream ends with one stopped event"
python3 - "$tmp/D.sum" "$k" <<'P'
import json, os, sys
d = json.load(open(sys.argv[1]))
e = d["end"]
assert e["signal"] == "SIGTERM", e
assert e["step"] >= int(sys.argv[2]), e
assert e["ckpt"] and e["ckpt"].endswith("step-%08d" % e["step"]) and os.path.isfile(e["ckpt"] + "/MANIFEST.json"), e
assert d["ckpts"][-1]["path"] == e["ckpt"], d["ckpts"][-1]
print("# stopped at step", e["step"], "->", e["ckpt"])
P
ok $? "stopped: SIGTERM, after the step, with the checkpoint of that step"
stopped_at=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["step"])' "$tmp/D.sum")
run D --resume
ok $? "run D resumed"
ok $([ "$(start_field D resumed_from_step)" = "$stopped_at" ]; echo $?) "it resumed from the stop's checkpoint (step $stopped_at)"
same A D
ok $? "stopped + resumed: identical losses"
same_files A D
ok $? "stopped + resumed: identical final weights"

# ---- SIGINT behaves the same
spawn E
wait_step "$tmp/E.ev" 5 "$pid"
kill -INT "$pid"
wait "$pid"
rc=$?
events "$tmp/E.ev" --end stopped | grep -q '"signal": "SIGINT"'
ok $((rc == 75 ? $? : 1)) "SIGINT: exit 75 and a stopped event naming SIGINT (status $rc)"

# ---- --die-with-parent: the parent dies, the worker stops cleanly
sh -c '"$1" --config "$2" --out "$3" --threads 1 --die-with-parent >"$3.ev" 2>"$3.err" & echo $! >"$3.pid"; wait' \
    sh "$W" "$tmp/job.yaml" "$tmp/F" &
parent=$!
kids="$kids $parent"
while [ ! -s "$tmp/F.pid" ]; do sleep 0.02; done
wpid=$(cat "$tmp/F.pid")
kids="$kids $wpid"
wait_step "$tmp/F.ev" 4 "$wpid"
kill -9 "$parent"
wait "$parent" 2>/dev/null
i=0
while kill -0 "$wpid" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$wpid" 2>/dev/null
ok $((1 - $?)) "--die-with-parent: the worker exits when its parent is killed"
events "$tmp/F.ev" --end stopped | grep -q '"signal": "SIGTERM"'
ok $? "--die-with-parent: it stopped on SIGTERM with a checkpoint"
run F --resume
same A F
ok $? "--die-with-parent + resume: identical losses"

# ---- resuming a finished run does nothing but report
run A --resume
rc=$?
python3 - "$tmp/A.ev" <<'P'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
last = ev[ev.index([e for e in ev if e["ev"] == "start"][-1]):]
assert last[0]["resumed_from_step"] == 48 and last[0]["step"] == 48, last[0]
assert not [e for e in last if e["ev"] == "step"], "steps trained again"
assert last[-1]["ev"] == "done" and last[-1]["step"] == 48
P
ok $((rc == 0 ? $? : 1)) "--resume of a finished run: start at step 48, no steps, done (status $rc)"
finish
