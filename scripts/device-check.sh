#!/bin/bash
# device-check.sh: everything about the CUDA backend that needs a GPU, in one
# run on the GPU machine (an H200 with the NVIDIA driver, PyTorch with its
# cuBLAS/cuDNN/NCCL wheels, compute-sanitizer; no network, no -dev
# packages), from binaries built and packed here.  Must not: build anything
# there, write more than three files under $OUT, or stop at a failed stage.
usage() {
    cat <<'EOF'
usage: scripts/device-check.sh --pack            (here: build and pack)
       build-device/device-check.sh [--budget S] [--only REGEX]
                                                 (there: run the stages)
       scripts/device-check.sh --try-chroot [BASE]   (here: the pack on a bare Debian)
       scripts/device-check.sh --help

--pack     build the GPU binaries here (--disable-native, --with-cuda=yes)
           into build-device/ and build-device.tar.gz (both ignored by git;
           the tarball, about 16 MiB, is what the device call carries): the
           programs, every shared library they need that is not glibc's
           (OpenBLAS, libgomp, libgfortran, libyaml, jansson, PCRE2, ...;
           lib/; libstdc++ and libgcc_s in lib/fallback/, used only where
           the machine has none), this script and the PyTorch peers.
--try-chroot [BASE]
           unpack build-device.tar.gz into a copy of BASE, a minimal Debian
           root with no -dev packages and no GPU (default /tmp/fresh-root,
           which ../shared/tools/fresh-machine makes), and run --help and a
           whole run there: every library must resolve and every stage
           say "no GPU".  As root (chroot).
--budget S the whole run's seconds (default 420: one 8-minute device call
           holds it with the machine's start); each stage has its own
           limit, cut to what the budget has left.
--only R   run only the stages whose names match the extended regex R.

Stages, the most important first, so a short budget still yields the 440m
row:
  env        the GPU, the driver, torch, where cuBLASLt/cuDNN/NCCL come from
  bench440   bench_cuda on the 440m preset at seq 4096 in bf16 (tokens/s,
             MFU, peak memory), with flash.cu's attention and with cuDNN's,
             and with flash.cu's as one CUDA graph a step (--graph on),
             then PyTorch on the same model (bf16 autocast, SDPA, fused
             AdamW; compiled)
  ops        test_backend_ops: every op of the cuda row against the CPU
  model      test_cuda_model: 10 training steps per architecture, CUDA vs CPU
  elem       test_cuda_elem (the kernels' element arithmetic, on the CPU)
  memcheck   compute-sanitizer memcheck over test_backend_ops (small shapes)
  racecheck  compute-sanitizer racecheck over test_backend_ops (small shapes)
  bench20    bench_cuda on the 20m preset (seq 512): bench440's three
             rows, then the four
             architectures (each one's time per token against the
             transformer's: target within 1.5x), then PyTorch eager and
             compiled on the same model
  nccl       test_nccl: the NCCL communicator as one rank (libnccl from
             PyTorch's wheel, its id through MPI as a singleton: Open MPI's
             components travel in the pack), every collective, and the
             all-reduce of 440m's fp32 gradients timed (docs/parallel.md)

Without a GPU every stage still starts its binaries (so a missing library
shows) and reports "no GPU".  Output: one table on stdout, and under $OUT
(or the current folder): device-check.txt (the table), device-check.csv
(stage, check, result: pass/fail/error/skip, measured) and
device-check-logs.tar.gz (every stage's full output).  Exit 1 when a check
failed or erred, else 0.
EOF
}
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
-h | --help)
    usage
    exit 0
    ;;
esac

# ------------------------------------------------------------------ --pack
# The shared libraries a program needs, as ldd resolves them here, except
# glibc's own (the machine's loader must be the one it runs with).
pack_libs() { # lib-dir fallback-dir programs...
    local lib=$1 fb=$2
    shift 2
    ldd "$@" | awk '/=> \//{print $3}' | sort -u | while read -r so; do
        case "$(basename "$so")" in
        libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
        libstdc++.so.* | libgcc_s.so.*) cp -L "$so" "$fb/" ;;
        *) cp -L "$so" "$lib/" ;;
        esac
    done
}

if [ "${1:-}" = "--pack" ]; then
    set -e
    pack="$here/build-device"
    src=$(mktemp -d "${TMPDIR:-/tmp}/tlm-device.XXXXXX")
    trap 'rm -rf "$src"' EXIT
    # the working tree as it is (committed or not), not its build outputs
    (cd "$here" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$src"
    cd "$src"
    ./autogen.sh >/dev/null
    # no emulated backend: its rows belong to make check, and on the GPU
    # machine (or a bare root) they would spend the stages' time on the CPU
    ./configure -q --disable-native --with-cuda=yes --disable-cuda-emu >configure.log
    progs="tests/engine/backend/test_backend_ops tests/engine/backend/test_cuda_elem
           tests/engine/backend/test_cuda_model bench/bench_cuda worker/tlm-worker"
    # the NCCL communicator's test, where configure found MPI (HAVE_NCCL)
    grep -q '^#define TLM_HAVE_NCCL 1' config.h && progs="$progs tests/parallel/test_nccl"
    make -j"${JOBS:-2}" $progs >make.log 2>&1 || {
        tail -40 make.log >&2
        exit 1
    }
    rm -rf "$pack"
    mkdir -p "$pack/bin" "$pack/lib/fallback"
    for p in $progs; do
        cp "$p" "$pack/bin/"
        strip --strip-debug "$pack/bin/$(basename "$p")"
    done
    pack_libs "$pack/lib" "$pack/lib/fallback" "$pack"/bin/*
    # Open MPI's and PMIx's components (dlopen'd at MPI_Init, from the
    # folders Debian built in: the run points Open MPI at these copies)
    if [ -x "$pack/bin/test_nccl" ]; then
        ompi=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
        pmixd=$(ls -d /usr/lib/*/pmix2/lib/pmix 2>/dev/null | head -1)
        mkdir -p "$pack/ompi/ompi" "$pack/ompi/pmix"
        [ -d "$ompi" ] && cp -L "$ompi"/*.so "$pack/ompi/ompi/"
        [ -n "$pmixd" ] && cp -L "$pmixd"/*.so "$pack/ompi/pmix/"
        pack_libs "$pack/lib" "$pack/lib/fallback" "$pack"/ompi/*/*.so 2>/dev/null || true
    fi
    cp bench/bench_cuda_torch.py scripts/device-check.sh "$pack/"
    cat engine/cuda/*.o.ptxas >"$pack/ptxas.txt"
    sh scripts/ptxas-spills.sh "$pack/ptxas.txt" 0 -v >"$pack/ptxas-kernels.txt"
    git -C "$here" describe --always --dirty --abbrev=40 >"$pack/commit" 2>/dev/null || true
    # one file to carry (16 MiB, where the folder is 56): the device tool
    # sends at most 64 MiB with the working tree
    tar -czf "$here/build-device.tar.gz" -C "$here" build-device
    du -sh "$pack" "$here/build-device.tar.gz"
    echo "device-check: packed into $pack and build-device.tar.gz; run there:"
    echo "    tar -xzf build-device.tar.gz && build-device/device-check.sh"
    exit 0
fi

# ------------------------------------------------------------------ --try-chroot
if [ "${1:-}" = "--try-chroot" ]; then
    base=${2:-/tmp/fresh-root}
    tarball="$here/build-device.tar.gz"
    [ -f "$tarball" ] || { echo "device-check: no $tarball: run --pack first" >&2; exit 2; }
    [ -x "$base/bin/bash" ] || {
        echo "device-check: no Debian root at $base (../shared/tools/fresh-machine true makes one)" >&2
        exit 2
    }
    root=$(mktemp -d "${TMPDIR:-/tmp}/tlm-devroot.XXXXXX")
    trap 'umount "$root/proc" "$root/dev" 2>/dev/null; rm -rf --one-file-system "$root"' EXIT
    cp -a "$base/." "$root/"
    mkdir -p "$root/proc" "$root/dev" "$root/pack" "$root/out"
    mount --bind /proc "$root/proc" && mount --bind /dev "$root/dev" || exit 2
    tar -xzf "$tarball" -C "$root/pack"
    ok=0
    echo "== --help in the bare root"
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin /pack/build-device/device-check.sh --help \
        >"$root/help.txt" 2>&1 && head -1 "$root/help.txt" | grep -q '^usage:' ||
        { echo "   FAIL: --help"; cat "$root/help.txt"; ok=1; }
    echo "== a whole run in the bare root"
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin OUT=/out \
        /pack/build-device/device-check.sh --budget 300 | sed 's/^/   /'
    n_out=$(ls "$root/out" | wc -l)
    echo "== checks"
    echo "   files under \$OUT: $n_out (at most 8): $(ls "$root/out" | tr '\n' ' ')"
    [ "$n_out" -le 8 ] || ok=1
    # every row of a GPU stage skips, saying why (no GPU; no python3 for
    # PyTorch; no compute-sanitizer); env's library row and the CPU-only
    # elem stage pass
    awk '/^(env|bench440|ops|model|memcheck|racecheck|bench20|nccl) / && !/^env +(libraries|python3) / &&
         !/ skip +(no GPU|no NVIDIA driver or GPU|no python3|no compute-sanitizer)/ { print "   FAIL: " $0; bad = 1 }
         /^(env +libraries|elem) / && !/ pass / { print "   FAIL: " $0; bad = 1 } END { exit bad }' \
        "$root/out/device-check.txt" || ok=1
    for s in env bench440 ops model elem memcheck racecheck bench20 nccl; do
        grep -q "^$s " "$root/out/device-check.txt" || { echo "   FAIL: no row for stage $s"; ok=1; }
    done
    [ $ok = 0 ] && echo "device-check: the pack runs on a bare Debian: every library resolves, every stage says no GPU"
    exit $ok
fi

# ------------------------------------------------------------------ the run
budget=420
only=.
while [ $# -gt 0 ]; do
    case "$1" in
    --budget)
        budget=${2:?--budget needs seconds}
        shift 2
        ;;
    --only)
        only=${2:?--only needs a regex}
        shift 2
        ;;
    *)
        echo "device-check: unknown argument '$1' (try --help)" >&2
        exit 2
        ;;
    esac
done
case "$budget" in
'' | *[!0-9]*)
    echo "device-check: --budget takes whole seconds, not '$budget'" >&2
    exit 2
    ;;
esac
# run from the pack (build-device/device-check.sh) or from the tree
me=$(cd "$(dirname "$0")" && pwd)
if [ -x "$me/bin/test_backend_ops" ]; then
    pack=$me
    torchbench="$me/bench_cuda_torch.py"
else
    pack="$here/build-device"
    torchbench="$here/bench/bench_cuda_torch.py"
fi
bin="$pack/bin"
libpath="$pack/lib"
# libstdc++/libgcc_s only where the machine has none (a newer one there
# serves our binaries and the libraries PyTorch's wheels bring alike)
if ! /sbin/ldconfig -p 2>/dev/null | grep -q 'libstdc++\.so\.6 '; then
    libpath="$libpath:$pack/lib/fallback"
fi
export LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-$PWD}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/tlm-devcheck.XXXXXX")
logs="$work/logs"
mkdir -p "$logs"
trap 'rm -rf "$work"' EXIT
csv="$out/device-check.csv"
start=$(date +%s)
echo "stage,check,result,measured" >"$csv"

# one row of the table
row() { # stage check result measured
    printf '%s,"%s",%s,"%s"\n' "$1" "$(printf %s "$2" | tr '"' "'")" "$3" "$(printf %s "$4" | tr '"' "'")" >>"$csv"
}
# seconds a stage may take: its own limit, cut to what the budget has left
limit() {
    local left=$((budget - ($(date +%s) - start)))
    [ "$left" -lt "$1" ] && echo $((left > 5 ? left : 5)) || echo "$1"
}
# run NAME LIMIT COMMAND...: one command of a stage, its output in
# $logs/NAME.log, its status in $rc; a time-out is a row of its own
run() {
    local name=$1 lim
    lim=$(limit "$2")
    shift 2
    echo "== $name (limit ${lim}s)"
    timeout --kill-after=10 "$lim" "$@" >"$logs/$name.log" 2>&1
    rc=$?
    case $rc in
    124 | 137) row "$name" "(command)" error "timed out after ${lim}s" ;;
    esac
    tail -n 3 "$logs/$name.log" | sed 's/^/   /'
    return 0
}
# why a program skipped (77): the last line it wrote, "no GPU" first
why_skip() { # log
    grep -m1 -oiE 'no (gpu|nvidia).*' "$1" || grep -v '^$' "$1" | tail -1
}
# TAP lines of a log into rows: ok/not ok, the figure after "worst"/"within"
tap_rows() { # stage log filter-regex
    local st=$1 log=$2 re=${3:-.} l r name fig
    grep -E '^(ok|not ok) ' "$log" | grep -E -- "$re" | while IFS= read -r l; do
        case "$l" in
        "not ok"*) r=fail ;;
        *) r=pass ;;
        esac
        name=$(printf %s "$l" | sed -E 's/^(not )?ok [0-9]+ - //')
        fig=$(printf %s "$name" | grep -oE '(worst [^ ]+ [0-9.e+-]+|within [0-9.e+-]+)' | head -1)
        row "$st" "$name" "$r" "${fig:--}"
    done
}
# the status of a test program when its log has no TAP line of its own
rc_row() { # stage what log
    case $rc in
    0) grep -qE '^(ok|not ok) ' "$3" || row "$1" "$2" pass "exit 0" ;;
    77) row "$1" "$2" skip "$(why_skip "$3")" ;;
    124 | 137) ;;
    *) row "$1" "$2" error "exit $rc: $(grep -v '^$' "$3" | tail -1)" ;;
    esac
}
# a bench program's key=value line into a row
bench_row() { # stage what log
    local l
    l=$(grep -E '^engine=' "$3" | tail -1)
    if [ -n "$l" ]; then
        row "$1" "$2" pass "$(printf %s "$l" | grep -oE '(tokens_per_s|mfu|peak_mib|step_ms)=[^ ]+' | tr '\n' ' ')"
    else
        case $rc in
        124 | 137) ;;
        77) row "$1" "$2" skip "$(why_skip "$3")" ;;
        *) row "$1" "$2" error "exit $rc: $(grep -v '^$' "$3" | tail -1)" ;;
        esac
    fi
}
# mem_row STAGE PRESET DESCRIBE-JSON BENCH-LOG: --describe's gpu_memory total
# against what bench_cuda's run held on the GPU (issue 24: within 10%)
mem_row() {
    local used
    used=$(grep -E '^engine=' "$4" 2>/dev/null | tail -1 | grep -oE 'device_used_mib=[0-9.]+' | cut -d= -f2)
    [ -n "$used" ] || return 0 # the bench row says why
    if [ -z "$py" ]; then
        row "$1" "$2 memory vs --describe" skip "no python3 to read the describe document"
        return
    fi
    "$py" - "$3" "$used" >"$work/mem-$2.txt" 2>&1 <<'P'
import json, sys
g = json.load(open(sys.argv[1]))["gpu_memory"]
plan, used = g["total"] / 1048576, float(sys.argv[2])
r = used / plan
print("%s describe %.0f MiB (%s, micro-batch %d), device used %.0f MiB, ratio %.3f" % (
    "pass" if abs(r - 1) <= 0.10 else "fail", plan, g["precision"], g["micro_batch"], used, r))
P
    local l
    l=$(tail -1 "$work/mem-$2.txt")
    case $l in
    pass*) row "$1" "$2 memory vs --describe" pass "${l#pass }" ;;
    fail*) row "$1" "$2 memory vs --describe" fail "${l#fail } (target within 10%)" ;;
    *) row "$1" "$2 memory vs --describe" error "$l" ;;
    esac
}
tps_of() { grep -E '^engine=' "$1" 2>/dev/null | tail -1 | grep -oE 'tokens_per_s=[0-9.]+' | cut -d= -f2; }
py=$(command -v python3 || command -v python || true)

# ---- the stages
stage_env() {
    local libs=""
    if [ -n "$py" ]; then
        # cuBLASLt, cuDNN and NCCL from PyTorch's wheels (dlopen'd by name)
        libs=$("$py" - 2>/dev/null <<'P'
import importlib, os
out = []
for m in ("nvidia.cublas", "nvidia.cudnn", "nvidia.cuda_runtime", "nvidia.cu13", "nvidia.nccl"):
    try:
        mod = importlib.import_module(m)
    except Exception:
        continue
    for p in getattr(mod, "__path__", []):
        for sub in ("lib", "lib64"):
            d = os.path.join(p, sub)
            if os.path.isdir(d):
                out.append(d)
print(":".join(out))
P
)
    fi
    [ -n "$libs" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$libs"
    {
        echo "commit $(cat "$pack/commit" 2>/dev/null || echo ?)"
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
        [ -n "$py" ] && "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' 2>&1
        echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
        ls "$bin" 2>&1
        for b in "$bin"/*; do
            ldd "$b" 2>&1 | grep -E '=> not found' | sed "s|^|$(basename "$b"): |"
        done
    } >"$logs/env.log" 2>&1
    sed 's/^/   /' "$logs/env.log"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    row env gpu "$([ -n "$gpu" ] && echo pass || echo skip)" "${gpu:-no GPU (nvidia-smi lists none)}"
    if [ ! -x "$bin/test_backend_ops" ]; then
        row env binaries error "no $bin/test_backend_ops: run --pack first"
    elif grep -q '=> not found' "$logs/env.log"; then
        row env libraries error "missing: $(grep '=> not found' "$logs/env.log" | awk '{print $2}' | sort -u | tr '\n' ' ')"
    else
        row env libraries pass "every library the binaries need resolves"
    fi
    [ -n "$py" ] || row env python3 skip "no python3: the PyTorch rows will not run"
}

# bench_pair STAGE PRESET SEQ MICRO LIMIT STEPS: the engine, then PyTorch, on one model
bench_pair() {
    local st=$1 p=$2 T=$3 B=$4 lim=$5 steps=$6 y="$work/$2.yaml"
    printf 'scale: %s\narch: transformer\ntrain: {seq_len: %s, micro_batch: %s}\n' "$p" "$T" "$B" >"$y"
    "$bin/tlm-worker" --describe --config "$y" >"$work/$p.json" 2>"$work/$p.err" ||
        row "$st" "$p describe" error "$(tail -1 "$work/$p.err")"
    run "$st-$p-tlm" "$lim" "$bin/bench_cuda" --preset "$p" --seq "$T" --micro-batch "$B" --steps "$steps"
    bench_row "$st" "$p seq $T tlm bf16 flash" "$logs/$st-$p-tlm.log"
    mem_row "$st" "$p" "$work/$p.json" "$logs/$st-$p-tlm.log"
    # the other attention candidate on the same model: the faster becomes
    # train.attention's default (docs/engine.md)
    run "$st-$p-tlm-cudnn" "$lim" "$bin/bench_cuda" --preset "$p" --seq "$T" --micro-batch "$B" --steps "$steps" \
        --attention cudnn
    bench_row "$st" "$p seq $T tlm bf16 cudnn" "$logs/$st-$p-tlm-cudnn.log"
    # each step as one CUDA graph (train.cuda_graph on) against the flash
    # row above (off): on becomes the setting's auto if it is faster
    # (docs/engine.md "The training step as a CUDA graph")
    run "$st-$p-tlm-graph" "$lim" "$bin/bench_cuda" --preset "$p" --seq "$T" --micro-batch "$B" --steps "$steps" \
        --graph on
    bench_row "$st" "$p seq $T tlm bf16 flash graph" "$logs/$st-$p-tlm-graph.log"
    if [ -z "$py" ]; then
        row "$st" "$p seq $T torch" skip "no python3"
        return
    fi
    local mode
    for mode in compile eager; do
        run "$st-$p-torch-$mode" 150 "$py" "$torchbench" --describe "$work/$p.json" --micro-batch "$B" --steps 5 \
            $([ $mode = compile ] && echo --compile)
        bench_row "$st" "$p seq $T torch $mode (bf16)" "$logs/$st-$p-torch-$mode.log"
    done
}

stage_bench440() {
    bench_pair bench440 440m 4096 1 120 2
}

stage_ops() {
    run ops 90 "$bin/test_backend_ops"
    tap_rows ops "$logs/ops.log" '(cuda|^Bail)'
    local skipped
    skipped=$(grep -m1 '^# cuda: every case skipped' "$logs/ops.log")
    if [ -n "$skipped" ]; then
        row ops "cuda row" skip "${skipped#\# cuda: every case skipped: }"
    elif ! grep -qE '^(ok|not ok) [0-9]+ - cuda' "$logs/ops.log"; then
        rc_row ops test_backend_ops "$logs/ops.log"
        [ "$rc" = 0 ] && row ops "cuda row" error "no case of the cuda row ran"
    else
        rc_row ops test_backend_ops "$logs/ops.log"
        # the Titans group (dconv, silu_norm, swa, titans_mem) is optional
        # in the op table: none of it on the cuda row is an error
        grep -qE '^(ok|not ok) [0-9]+ - cuda: (dconv|silu_norm|swa|titans_mem) ' "$logs/ops.log" ||
            row ops "cuda Titans group" error "no dconv/silu_norm/swa/titans_mem case ran on the cuda row"
    fi
}

stage_model() {
    run model 90 "$bin/test_cuda_model"
    tap_rows model "$logs/model.log"
    rc_row model test_cuda_model "$logs/model.log"
}

stage_elem() {
    run elem 30 "$bin/test_cuda_elem"
    tap_rows elem "$logs/elem.log"
    rc_row elem test_cuda_elem "$logs/elem.log"
}

# compute-sanitizer's tools over the op test's small shapes
sanitize() { # tool
    local tool=$1 errs
    PATH=$PATH:/usr/local/cuda/bin
    if ! command -v compute-sanitizer >/dev/null 2>&1; then
        row "$tool" "$tool test_backend_ops" skip "no compute-sanitizer on PATH"
        return
    fi
    if [ -z "$gpu" ]; then
        row "$tool" "$tool test_backend_ops" skip "no GPU"
        return
    fi
    run "$tool" 120 compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin/test_backend_ops"
    errs=$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$logs/$tool.log" | tail -1)
    case $rc in
    0) row "$tool" "$tool test_backend_ops" pass "${errs:-0 errors}" ;;
    124 | 137) ;;
    *) row "$tool" "$tool test_backend_ops" fail "${errs:-exit $rc}" ;;
    esac
}
stage_memcheck() { sanitize memcheck; }
stage_racecheck() { sanitize racecheck; }

stage_bench20() {
    bench_pair bench20 20m 512 8 60 3
    local base a t r
    base=$(tps_of "$logs/bench20-20m-tlm.log")
    for a in gated_attn hope_attn titans; do
        run "bench20-$a" 45 "$bin/bench_cuda" --preset 20m --arch "$a" --seq 512 --micro-batch 8 --steps 3
        bench_row bench20 "20m seq 512 $a tlm" "$logs/bench20-$a.log"
        t=$(tps_of "$logs/bench20-$a.log")
        if [ -z "$base" ] || [ -z "$t" ]; then
            [ -z "$gpu" ] && continue # the rows above say "no GPU"
            row bench20 "20m $a time/token vs transformer" error "no tokens/s for ${base:+$a}${base:-the transformer}"
        else
            r=$(awk -v b="$base" -v t="$t" 'BEGIN { printf "%.2f", b / t }')
            row bench20 "20m $a time/token vs transformer" \
                "$(awk -v r="$r" 'BEGIN { print (r <= 1.5 ? "pass" : "fail") }')" "x$r (target <= 1.5)"
        fi
    done
}

# the NCCL communicator as one rank: its id goes through MPI, here a
# singleton (no mpirun: isolated, so no orted is needed either)
stage_nccl() {
    if [ ! -x "$bin/test_nccl" ]; then
        row nccl test_nccl skip "not in the pack (built without MPI: Debian libopenmpi-dev)"
        return
    fi
    local ms
    [ -d "$pack/ompi/ompi" ] && export OMPI_MCA_mca_base_component_path="$pack/ompi/ompi"
    [ -d "$pack/ompi/pmix" ] && export PMIX_MCA_mca_base_component_path="$pack/ompi/pmix"
    export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_btl=self OMPI_MCA_pml=ob1
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    run nccl 90 "$bin/test_nccl"
    tap_rows nccl "$logs/nccl.log"
    rc_row nccl test_nccl "$logs/nccl.log"
    ms=$(grep -oE "^ok [0-9]+ - all-reduce of 440m's .*: [0-9.]+ ms" "$logs/nccl.log" | grep -oE '[0-9.]+ ms$')
    [ -n "$ms" ] && row nccl "440m gradients all-reduce, 1 rank (fp32)" pass "$ms"
    return 0
}

gpu=""
for s in env bench440 ops model elem memcheck racecheck bench20 nccl; do
    [ "$s" = env ] || printf %s "$s" | grep -qE -- "$only" || continue
    "stage_$s"
done
grep -h '^engine=' "$logs"/*.log >"$logs/bench-lines.txt" 2>/dev/null
cp "$pack/ptxas-kernels.txt" "$logs/" 2>/dev/null

# ---- the table: stdout, device-check.txt, and the logs' tarball
{
    echo "device check: $(($(date +%s) - start)) s of a ${budget} s budget; commit $(cat "$pack/commit" 2>/dev/null || echo ?)"
    awk -F'"' 'NR > 1 {
        split($1, a, ","); stage = a[1]; check = $2; split($3, b, ","); result = b[2]; measured = $4
        printf "%-10s %-60.60s %-5s %s\n", stage, check, result, measured; n[result]++
    }
    END { s = ""; for (k in n) s = s sprintf("%s%s %d", s == "" ? "" : ", ", k, n[k]); print "totals: " s }' "$csv"
} | tee "$out/device-check.txt"
tar -czf "$out/device-check-logs.tar.gz" -C "$work" logs
grep -q ',\(fail\|error\),' "$csv" && exit 1
exit 0
