#!/bin/sh
# test_kernels.sh: what docs/engine.md ("What is reproducible") promises,
# through tlm-worker: the same job on the same thread count and BLAS kernel
# gives bit-identical losses and checkpoints, in separate processes; on
# another thread count or another kernel (every OpenBLAS kernel this CPU
# executes, the automatic choice, and the generic SSE one) its 48 losses
# agree within 1e-5 relative (measured on an EPYC: at most 2e-7).
. "$TLM_SRCDIR/tests/lib/train_common.sh"

small_job "$tmp/job.yaml"
# train LABEL THREADS [KERNEL]: KERNEL empty is the automatic choice
train() {
    if [ -n "${3:-}" ]; then
        OPENBLAS_CORETYPE=$3 "$W" --config "$tmp/job.yaml" --out "$tmp/r-$1" --threads "$2" >"$tmp/$1.ev" 2>"$tmp/$1.err"
    else
        env -u OPENBLAS_CORETYPE "$W" --config "$tmp/job.yaml" --out "$tmp/r-$1" --threads "$2" >"$tmp/$1.ev" 2>"$tmp/$1.err"
    fi
}
# kernel LABEL: the kernel its start event names
kernel() { sed -n 's/.*"blas_kernel":"\([^"]*\)".*/\1/p' "$tmp/$1.ev" | head -n 1; }
# compare A B TOL: "max_rel" of the losses; exit 1 beyond TOL or on a count mismatch
compare() {
    python3 - "$tmp/$1.ev" "$tmp/$2.ev" "$3" <<'P'
import json, sys
def losses(p):
    return [e["loss"] for e in map(json.loads, open(p)) if e["ev"] == "step"]
a, b, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
d = max(abs(x - y) / max(1.0, abs(x)) for x, y in zip(a, b)) if a and len(a) == len(b) else float("inf")
print("%d losses, max rel %.2e" % (len(a), d))
sys.exit(0 if len(a) == 48 and d <= tol else 1)
P
}

train auto2 2 && train auto2b 2
ok $? "the job twice on 2 threads, automatic kernel ($(kernel auto2))"
msg=$(compare auto2 auto2b 0)
ok $? "same kernel, same threads, another process: bit-identical losses ($msg)"
cmp -s "$tmp/r-auto2/ckpt/step-00000048/model.safetensors" "$tmp/r-auto2b/ckpt/step-00000048/model.safetensors"
ok $? "... and bit-identical final weights"
train auto1 1
msg=$(compare auto2 auto1 1e-5)
ok $? "1 thread against 2: within 1e-5 ($msg)"

kernels=$("$TLM_BUILDDIR/tests/engine/cpu/blas_kernels")
if [ -z "$kernels" ]; then
    echo "# not OpenBLAS: no other kernel to compare"
    finish
fi
for k in $kernels Prescott; do
    train "k$k" 2 "$k"
    ok $? "the job on OpenBLAS's $k kernel ($(kernel "k$k"))"
    [ "$(kernel "k$k")" = "$k" ]
    ok $? "... which is the kernel that ran"
    msg=$(compare auto2 "k$k" 1e-5)
    ok $? "$k against the automatic choice: within 1e-5 ($msg)"
done
finish
