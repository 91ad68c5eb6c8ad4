# resume_lib.sh: what the resume tests of tlm-worker share (sourced after
# tests/lib/train_common.sh, with the job in $tmp/job.yaml): running the
# job by name, and comparing two runs' events and final checkpoints.  A
# run's 48 steps end in ckpt/step-00000048.

# run NAME [args...]: train into $tmp/NAME, events appended to $tmp/NAME.ev
run() {
    name=$1
    shift
    "$W" --config "$tmp/job.yaml" --out "$tmp/$name" --threads 1 "$@" >>"$tmp/$name.ev" 2>>"$tmp/$name.err"
}
# spawn NAME [args...]: the same in the background; $pid is the worker's
spawn() {
    name=$1
    shift
    "$W" --config "$tmp/job.yaml" --out "$tmp/$name" --threads 1 "$@" >>"$tmp/$name.ev" 2>>"$tmp/$name.err" &
    pid=$!
    kids="$kids $pid"
}
# same REF RUN: every step loss and evaluation of RUN's events (all
# attempts) equals REF's, RUN covers all 48 steps and has evaluations, and
# both end with the same numbers
same() {
    python3 - "$tmp/$1.ev" "$tmp/$2.ev" <<'P'
import json, sys
def load(path):
    steps, evals, ends = {}, {}, []
    for line in open(path):
        e = json.loads(line)
        if e["ev"] == "step":
            if e["step"] in steps and steps[e["step"]] != e["loss"]:
                sys.exit("step %d trained twice with different losses" % e["step"])
            steps[e["step"]] = e["loss"]
        elif e["ev"] == "eval":
            evals[(e["step"], e["metric"])] = e["value"]
        elif e["ev"] in ("done", "stopped", "error"):
            ends.append(e)
    return steps, evals, ends
rs, re_, rend = load(sys.argv[1])
s, ev, end = load(sys.argv[2])
bad = [k for k in s if s[k] != rs.get(k)]
if bad:
    sys.exit("losses differ at steps %s: %r vs %r" % (bad[:5], [s[k] for k in bad[:3]], [rs.get(k) for k in bad[:3]]))
if sorted(s) != sorted(rs) or len(s) != 48:
    sys.exit("steps %s missing" % sorted(set(range(1, 49)) - set(s))[:10])
bad = [k for k in ev if ev[k] != re_.get(k)]
if bad or not ev:
    sys.exit("evaluations differ at %s" % bad[:5])
a, b = rend[-1], end[-1]
if a["ev"] != "done" or b["ev"] != "done" or a["loss"] != b["loss"] or a["val_loss"] != b["val_loss"]:
    sys.exit("final events differ: %r vs %r" % (a, b))
print("# %d steps, loss %r -> %r, val loss %r: identical" % (len(s), s[1], b["loss"], b["val_loss"]))
P
}
# same_files REF RUN: byte-identical final model.safetensors and optim.safetensors
same_files() {
    cmp -s "$tmp/$1/ckpt/step-00000048/model.safetensors" "$tmp/$2/ckpt/step-00000048/model.safetensors" &&
        cmp -s "$tmp/$1/ckpt/step-00000048/optim.safetensors" "$tmp/$2/ckpt/step-00000048/optim.safetensors"
}
# start_field NAME FIELD: FIELD of NAME's last start event
start_field() {
    python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"ev\":\"start\"" in l][-1][sys.argv[2]])' "$tmp/$1.ev" "$2"
}
# rand_step LO HI: a step in [LO, HI]
rand_step() {
    r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
    echo $(($1 + r % ($2 - $1 + 1)))
}
# signal_at NAME K SIG STATUS: NAME started, sent SIG after step K; checks
# that it exits with STATUS (one check)
signal_at() {
    echo "# SIG$3 after step $2"
    spawn "$1"
    wait_step "$tmp/$1.ev" "$2" "$pid"
    kill -"$3" "$pid"
    wait "$pid"
    rc=$?
    ok $((rc == $4 ? 0 : 1)) "run $1 stopped by SIG$3 after step $2: exit status $4 (got $rc)"
}
# kill_resume NAME K: NAME killed with SIGKILL after step K, then run again
# with --resume to the end (two checks).  $killed_at: the last step it
# reported before the signal landed (K or later: it runs on while the
# signal is sent)
kill_resume() {
    signal_at "$1" "$2" KILL 137
    killed_at=$(grep -o '"ev":"step"[^}]*"step":[0-9]*' "$tmp/$1.ev" | sed 's/.*"step"://' | tail -n 1)
    run "$1" --resume
    ok $? "run $1 resumed to the end"
}
