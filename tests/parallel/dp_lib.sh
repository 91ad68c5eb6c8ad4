# dp_lib.sh: what the data-parallel tests share (sourced after
# tests/lib/train_common.sh): Open MPI's mpirun or a skip (77), a small job
# per architecture, running a job on N ranks, and comparing two runs' losses.
command -v mpirun >/dev/null 2>&1 || { echo "# mpirun is missing (Debian: openmpi-bin; scripts/setup.sh --test): skip"; exit 77; }
# root allowed (Open MPI refuses it unless told twice), the sanitizers' view of Open MPI
. "$TLM_SRCDIR/tests/lib/mpi_env.sh"
# no binding: two ranks share the machine with whatever else runs; no
# network interfaces but loopback needed
MPIRUN="mpirun --oversubscribe --bind-to none"

# dp_job FILE ARCH: tests/lib/train_common.sh's small job as ARCH, cut to
# 16 steps of 32 sequences (micro_batch 8: one process passes 4
# micro-batches a step, each of 2 ranks 2), an evaluation every 8 steps,
# a checkpoint every 4
dp_job() {
    small_job "$1" "arch: $2"
    sed -i -e 's/tokens: 49152,/tokens: 16384,/' -e 's/ckpt_every_tokens: 8192/ckpt_every_tokens: 4096/' \
        -e 's/^eval: {every_tokens: 16384,/eval: {every_tokens: 8192,/' "$1"
    case $2 in
    hope_attn) sed -i 's/^model: {\(.*\)}$/model: {\1, hope: {levels: 3, chunks: [1, 2, 4]}}/' "$1" ;;
    titans) sed -i 's/^model: {\(.*\)}$/model: {\1, titans: {window: 8, chunk: 5, persistent: 2}}/' "$1" ;;
    esac
    grep -q 'tokens: 16384,' "$1" || { echo "not ok - cannot write the $2 job"; exit 1; }
}

# one NAME JOB [args]: one process, into $tmp/NAME (events $tmp/NAME.ev)
one() {
    name=$1 job=$2
    shift 2
    "$W" --config "$job" --out "$tmp/$name" --threads 1 "$@" >>"$tmp/$name.ev" 2>>"$tmp/$name.err"
}
# ranks N NAME JOB [args]: N ranks under mpirun
ranks() {
    np=$1 name=$2 job=$3
    shift 3
    $MPIRUN -np "$np" "$W" --config "$job" --out "$tmp/$name" --threads 1 "$@" >>"$tmp/$name.ev" 2>>"$tmp/$name.err"
}
# children PID: the processes whose parent is PID (mpirun's ranks)
children() {
    cat /proc/"$1"/task/*/children 2>/dev/null
}

# close REF RUN [N]: RUN's step losses (all attempts) equal REF's within
# 1e-6 relative, over N steps (16), every step once (a step recorded
# twice must have the same loss), both end done with validation losses
# within 1e-6
close() {
    python3 - "$tmp/$1.ev" "$tmp/$2.ev" "${3:-16}" <<'P'
import json, sys
def load(path):
    steps, ends, vals = {}, [], {}
    for line in open(path):
        e = json.loads(line)
        if e["ev"] == "step":
            if e["step"] in steps and abs(steps[e["step"]] - e["loss"]) > 1e-6 * abs(e["loss"]):
                sys.exit("step %d trained twice with different losses" % e["step"])
            steps[e["step"]] = e["loss"]
        elif e["ev"] == "eval" and e["metric"] == "loss":
            vals[e["step"]] = e["value"]
        elif e["ev"] in ("done", "stopped", "error"):
            ends.append(e)
    return steps, vals, ends
rs, rv, rend = load(sys.argv[1])
s, v, end = load(sys.argv[2])
n = int(sys.argv[3])
if sorted(s) != list(range(1, n + 1)) or sorted(rs) != list(range(1, n + 1)):
    sys.exit("steps missing: %s / %s" % (sorted(set(range(1, n + 1)) - set(rs)), sorted(set(range(1, n + 1)) - set(s))))
worst = max(abs(s[k] - rs[k]) / abs(rs[k]) for k in s)
if worst > 1e-6:
    k = max(s, key=lambda k: abs(s[k] - rs[k]) / abs(rs[k]))
    sys.exit("step %d: loss %r vs %r (relative %.3g > 1e-6)" % (k, s[k], rs[k], worst))
if sorted(v) != sorted(rv) or any(abs(v[k] - rv[k]) > 1e-6 * abs(rv[k]) for k in v):
    sys.exit("validation losses differ: %r vs %r" % (v, rv))
if not end or not rend or end[-1]["ev"] != "done" or rend[-1]["ev"] != "done":
    sys.exit("a run did not end done: %r / %r" % (end[-1:], rend[-1:]))
print("# %d steps, loss %r -> %r, largest relative difference %.2g; validation %r" % (n, s[1], s[n], worst, v[max(v)]))
P
}
