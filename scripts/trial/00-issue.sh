# 00-issue.sh: the cases issue 10 names that need a scenario of their own
# (the others are cases of the later files, with ids issue.*): what the engine
# guarantees across BLAS kernels and thread counts, the kernel advice, a
# tlm-data build stopped by a signal, a 1,000-byte --runs, the schema version
# in the docs, and the fuzz corpora fed to the real programs.  Sourced by
# trial.sh.

need_run
J=$FX/job.yaml
# losses FILE: the loss of every step event, one per line (as written)
losses() { grep '"ev":"step"' "$1" | sed 's/.*"loss":\([^,]*\),.*/\1/'; }
# within FILE1 FILE2 TOL: every step's loss agrees to |a - b| / max(1, |a|) <= TOL
within() {
    python3 - "$1" "$2" "$3" <<'P'
import json, sys
def l(p): return {e["step"]: e["loss"] for e in map(json.loads, open(p)) if e["ev"] == "step"}
a, b, tol = l(sys.argv[1]), l(sys.argv[2]), float(sys.argv[3])
assert sorted(a) == sorted(b) and a, "different steps"
d = max(abs(a[k] - b[k]) / max(1, abs(a[k])) for k in a)
print("max relative difference %.3g" % d)
sys.exit(0 if d <= tol else 1)
P
}
# kernel ID WHAT KERNEL-A THREADS-A KERNEL-B THREADS-B TOL: two runs of the job agree (TOL 0: bit for bit)
kernel() {
    local id=$1 what=$2 ka=$3 ta=$4 kb=$5 tb=$6 tol=$7 ra rb msg
    selected "$id" || return 0
    in_case "$id"
    env -u OPENBLAS_CORETYPE ${ka:+OPENBLAS_CORETYPE=$ka} timeout 60 "$W" --config "$J" --out a --threads "$ta" >a.ev 2>a.err
    ra=$?
    env -u OPENBLAS_CORETYPE ${kb:+OPENBLAS_CORETYPE=$kb} timeout 60 "$W" --config "$J" --out b --threads "$tb" >b.ev 2>b.err
    rb=$?
    if [ $ra != 0 ] || [ $rb != 0 ]; then verdict "$id" "$what" wrong "$ra/$rb" "$(tail -1 a.err)" "a run failed"; return; fi
    if [ "$tol" = 0 ]; then
        if [ "$(losses a.ev)" = "$(losses b.ev)" ] && cmp -s a/ckpt/step-00000016/model.safetensors b/ckpt/step-00000016/model.safetensors; then
            verdict "$id" "$what" clear 0 "losses and the final checkpoint bit-identical"
        else verdict "$id" "$what" wrong 0 "$(losses a.ev | tail -1) vs $(losses b.ev | tail -1)" "not bit-identical"; fi
    elif msg=$(within a.ev b.ev "$tol"); then verdict "$id" "$what" clear 0 "$msg (at most $tol)"
    else verdict "$id" "$what" wrong 0 "$msg" "beyond the stated tolerance $tol (docs/engine.md)"; fi
}
kernel issue.kernel-same "OPENBLAS_CORETYPE=Haswell twice on 1 thread: bit-identical" Haswell 1 Haswell 1 0
kernel issue.kernel-same-2t "OPENBLAS_CORETYPE=Haswell twice on 2 threads: bit-identical" Haswell 2 Haswell 2 0
kernel issue.kernel-threads "Haswell, 1 thread against 2: within 1e-5" Haswell 1 Haswell 2 1e-5
kernel issue.kernel-sandybridge "Sandybridge against the automatic kernel: within 1e-5" Sandybridge 1 "" 1 1e-5
kernel issue.kernel-auto-threads "the automatic kernel, 1 thread against 2: within 1e-5" "" 1 "" 2 1e-5
# a resume under Haswell equals the uninterrupted Haswell run
selected issue.kernel-resume && { in_case issue.kernel-resume
    STEPS=48 job j.yaml
    OPENBLAS_CORETYPE=Haswell timeout 60 "$W" --config j.yaml --out full --threads 1 >full.ev 2>/dev/null
    OPENBLAS_CORETYPE=Haswell "$W" --config j.yaml --out part --threads 1 >part.ev 2>part.err &
    p=$!
    while kill -0 $p 2>/dev/null && ! grep -q '"step":20,' part.ev; do sleep 0.01; done
    kill -TERM $p; wait $p; rc1=$?
    OPENBLAS_CORETYPE=Haswell timeout 60 "$W" --config j.yaml --out part --threads 1 --resume >rest.ev 2>/dev/null
    rc2=$?
    if [ $rc1 = 75 ] && [ $rc2 = 0 ] && python3 - full.ev part.ev rest.ev <<'P'
import json, sys
def l(p): return {e["step"]: e["loss"] for e in map(json.loads, open(p)) if e["ev"] == "step"}
full, got = l(sys.argv[1]), {**l(sys.argv[2]), **l(sys.argv[3])}
sys.exit(0 if got == full else 1)
P
    then verdict issue.kernel-resume "Haswell: SIGTERM at step ~20, then --resume: the uninterrupted run's losses bit for bit" clear 0 "stopped with 75, resumed to the same losses"
    else verdict issue.kernel-resume "Haswell: SIGTERM, then --resume" wrong "$rc1/$rc2" "$(tail -1 part.err)" "exit $rc1 (75) and $rc2 (0), or other losses than the uninterrupted run"; fi; }
# a user's kernel slower than one this CPU runs: kept, and said once (stderr and the start event)
selected issue.blas-advice && { in_case issue.blas-advice
    if grep -q -w avx2 /proc/cpuinfo; then
        AFTER='[ "$(grep -c -i "GFLOP/s" "$OUT/$id.err")" = 1 ] && grep "\"ev\":\"start\"" "$OUT/$id.out" | grep -q "\"blas_kernel\":\"Prescott\".*\"blas_advice\":\"[^\"]*GFLOP/s"' \
            AFTER_MSG="the advice is not said exactly once on stderr and in start.blas_advice, or the kernel was not kept" \
            OPENBLAS_CORETYPE=Prescott tc issue.blas-advice "OPENBLAS_CORETYPE=Prescott on a CPU with AVX2: kept, the faster kernel's rate said once" 0 \
            "Prescott.*GFLOP/s" "$W" --config "$J" --out r --threads 1
    else notried issue.blas-advice "the kernel advice" "this CPU has no AVX2: no faster kernel to advise"; fi; }
selected issue.blas-sigill && { in_case issue.blas-sigill
    if ! grep -q -w avx512f /proc/cpuinfo; then
        AFTER='grep "\"ev\":\"start\"" "$OUT/$id.out" | grep -q "\"blas_advice\":\"[^\"]*SkylakeX"' AFTER_MSG="start.blas_advice does not say why SkylakeX was replaced" \
            OPENBLAS_CORETYPE=SkylakeX tc issue.blas-sigill "OPENBLAS_CORETYPE=SkylakeX on a CPU without AVX-512: no SIGILL, replaced and said" 0 \
            "SkylakeX" "$W" --config "$J" --out r --threads 1
    else notried issue.blas-sigill "a kernel this CPU cannot run" "this CPU has AVX-512: SkylakeX runs here"; fi; }

# ---- tlm-data stopped by a signal: no DIR.tmp.PID left; a SIGKILLed one is cleaned by the next build
selected issue.data-sigterm && { in_case issue.data-sigterm
    yes "All work and no play makes a dataset slow to build, sentence after sentence." | head -c 60000000 >big.txt
    "$D" build --tokenizer bytes --out ds "$FX/corpus/GPL-2" >/dev/null 2>&1; cp ds/manifest.json keep.json
    for sig in TERM INT KILL; do
        env --default-signal=INT "$D" build --tokenizer bytes --out ds big.txt >"$sig.out" 2>&1 &
        p=$!
        i=0; while [ $i -lt 500 ] && ! ls "ds.tmp.$p/train/" 2>/dev/null | grep -q tmp; do sleep 0.01; i=$((i + 1)); done
        { kill -$sig $p; wait $p; echo $? >"$sig.rc"; } 2>/dev/null
        echo $p >"$sig.pid"
    done
    rc=$(cat TERM.rc) p=$(cat TERM.pid)
    if [ "$rc" = 143 ] && [ ! -e "ds.tmp.$p" ] && cmp -s ds/manifest.json keep.json && grep -q "stopped by SIGTERM" TERM.out; then
        verdict issue.data-sigterm "tlm-data build stopped by SIGTERM: exit 143, no ds.tmp.PID, the old dataset kept" clear 143 "$(grep -m1 stopped TERM.out)"
    else verdict issue.data-sigterm "tlm-data build stopped by SIGTERM" wrong "$rc" "$(tail -1 TERM.out)" "exit $rc (143), left: $(ls -d ds.tmp.* 2>/dev/null)"; fi
    rc=$(cat INT.rc) p=$(cat INT.pid)
    if [ "$rc" = 130 ] && [ ! -e "ds.tmp.$p" ]; then verdict issue.data-sigint "tlm-data build stopped by SIGINT: exit 130, no temp folder" clear 130 "$(grep -m1 stopped INT.out)"
    else verdict issue.data-sigint "tlm-data build stopped by SIGINT" wrong "$rc" "$(tail -1 INT.out)" "exit $rc (130), left: $(ls -d ds.tmp.* 2>/dev/null)"; fi
    p=$(cat KILL.pid)
    if [ -d "ds.tmp.$p" ]; then
        AFTER='[ ! -e "ds.tmp.'"$p"'" ]' AFTER_MSG="the SIGKILLed build's temp folder is still there" \
            tc issue.data-sigkill "the build after a SIGKILLed one removes its ds.tmp.PID and says so" 0 "removed (\./)?ds\.tmp\.$p, left by an interrupted build \(process $p is gone\)" \
            "$D" build --tokenizer bytes --out ds "$FX/corpus/GPL-2"
    else notried issue.data-sigkill "the build after a SIGKILLed one" "the killed build had not made its temp folder yet"; fi; }

# ---- a --runs of about 1,000 characters: the run folder, run_dir and messages whole
selected issue.runs-1000 && { in_case issue.runs-1000; sweep s.yaml long
    long=$(mkpath "$PWD/runs" 1000)
    AFTER='d=$(q results.db "select run_dir from jobs"); [ "$d" = "'"$long"'/$(q results.db "select substr(key, 1, 12) from jobs")" ] && [ -d "$d/ckpt/step-00000016" ]' \
        AFTER_MSG="the run folder or the stored run_dir is not whole" \
        tc issue.runs-1000 "tlmd --runs of 1,000 characters" 0 "" "$T" --sweeps s.yaml --runs "$long" --threads-per-worker 1 --no-progress; }

# ---- the schema version the docs give is the databases'
selected issue.docs-schema && { need_db
    v=$(q "$FX/db/results.db" "pragma user_version")
    d=$(grep -o -m1 'schema version [0-9]*' "$SRC/docs/tlmd.md" | grep -o '[0-9]*$')
    if [ -n "$v" ] && [ "$v" = "$d" ]; then verdict issue.docs-schema "docs/tlmd.md gives the schema version databases have" clear 0 "docs $d, results.db $v"
    else verdict issue.docs-schema "docs/tlmd.md gives the schema version databases have" wrong 0 "docs ${d:-none}, results.db $v" "docs and database disagree"; fi; }

# ---- the fuzz corpora (tests/fuzz/corpus/, 10M-execution runs' inputs) through the real programs
# corpus ID WHAT NAME OK-STATUSES NAME-PATTERN CMD...: every input FILE of the
# corpus is copied to the case folder as $IN_NAME and CMD run on it: it must
# exit with one of OK-STATUSES in 10 s, without a signal or sanitizer, and a
# refusal's message must start with NAME-PATTERN (it names the file)
corpus() {
    local id=$1 what=$2 name=$3 oks=$4 pat=$5 f rc n=0 bad='' unc='' hung=''
    shift 5
    selected "$id" || return 0
    in_case "$id"
    [ -d "$SRC/tests/fuzz/corpus/$name" ] || { notried "$id" "$what" "no corpus in tests/fuzz/corpus/$name"; return; }
    for f in "$SRC/tests/fuzz/corpus/$name"/*; do
        n=$((n + 1))
        case $name in tiktoken) tail -c +2 "$f" >"$IN_NAME" ;; *) cp "$f" "$IN_NAME" ;; esac
        echo "the text" | timeout -k 2 10 "$@" >o 2>e
        rc=$?
        if [ $rc = 124 ] || [ $rc = 137 ]; then hung="$hung $(basename "$f")"
        elif ! [[ "|$oks|" == *"|$rc|"* ]] || [ -n "$(sanitizer o e)" ]; then bad="$bad $(basename "$f"):$rc"
        elif [ $rc != 0 ] && ! grep -q -E -m1 "$pat" e; then unc="$unc $(basename "$f"): $(head -c 120 e | oneline)"
        fi
    done
    if [ -n "$hung" ]; then verdict "$id" "$what ($n inputs)" hang - "no answer in 10 s for:$hung"
    elif [ -n "$bad" ]; then verdict "$id" "$what ($n inputs)" wrong - "$bad" "crashed or an undocumented exit status"
    elif [ -n "$unc" ]; then verdict "$id" "$what ($n inputs)" unclear - "$(echo "$unc" | cut -c1-300)" "refusals that do not name the file"
    else verdict "$id" "$what ($n inputs)" clear 0 "every input read or refused with its file named"; fi
}
IN_NAME=c.yaml corpus issue.fuzz-config "the config fuzz corpus through tlm-worker --describe" config "0|2" "^tlm-worker: c\.yaml" "$W" --describe --config c.yaml
IN_NAME=s.yaml corpus issue.fuzz-sweep "the sweep fuzz corpus through tlmd --dry-run" sweep "0|2" "^tlmd: s\.yaml" "$T" --dry-run --sweeps s.yaml
IN_NAME=r.tiktoken corpus issue.fuzz-tiktoken "the tiktoken fuzz corpus through tlm-data encode" tiktoken "0|1" "r\.tiktoken" "$D" encode --tokenizer "$tmp/c/issue.fuzz-tiktoken/r.tiktoken"
notried issue.make-check-kernels "make check under OPENBLAS_CORETYPE=Haswell, SkylakeX and auto (make check-kernels)" \
    "the test suite is not part of the trial (4 min alone); issue.kernel-* check the guarantee through the worker"
notried issue.fuzz-10m "10 million libFuzzer executions per target under ASan+UBSan" "hours of CPU; the corpora those runs left are fed to the programs by issue.fuzz-*"
