#!/bin/sh
# cuda_mutants.sh: is every barrier and warp shuffle of engine/cuda/ needed,
# and would the emulated tests notice it gone?  For each __syncthreads()
# and each __shfl_*_sync call in engine/cuda/*.cu and *.h, one mutant
# deletes it (the barrier statement goes; a shuffle becomes the lane's own
# value, as if no lane exchanged anything), rebuilds only the emulated
# library (engine/libtlmcuda_emu.a) and the emulated tests, and runs them
# fastest first (test_backend_ops, test_flash, then test_cuda_model) until one fails.
# Prints a markdown table: the call, the first test that failed and its
# first failing line (racecheck, synccheck or a number against the CPU), or
# SURVIVED (the emulator's report when one of its checks fired).  A
# benchmark of the tests, not a test (about half a minute a mutant on 2
# cores; a survivor also runs test_cuda_model, about a minute).
#
# It never edits the tree it runs from: it copies the distributed sources
# (make distdir) to a scratch folder, configures them there without CUDA
# (the emulated build needs no toolkit) and mutates that copy.
#
# Run from the build folder of a configured tree (an in-tree build: the
# repository root):
#   sh bench/cuda_mutants.sh [--only FILE:LINE ...] [--out FILE] [--keep]
#                            [--reuse DIR]
#   --only   mutate only these calls (as the table lists them), in the
#            order given
#   --out    also write the table to FILE
#   --keep   keep the scratch folder (printed)
#   --reuse  use a scratch folder an earlier run kept (its sources are as
#            that run copied them; no copy, configure or baseline again)
#   --list   print the calls and exit
# Exit status: 0 every mutant was caught, 1 some survived, 2 usage or a
# failed build.
set -eu
only=""
out=""
keep=0
list=0
reuse=""
usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case $1 in
    --only) only="$only $2"; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --reuse) reuse=$2; shift 2 ;;
    --list) list=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
[ -f Makefile ] && [ -f config.status ] || { echo "cuda_mutants.sh: run it from a configured build folder" >&2; exit 2; }
command -v python3 >/dev/null || { echo "cuda_mutants.sh: needs python3" >&2; exit 2; }

# The calls, one a line: FILE LINE COLUMN KIND (sync|shfl), from the sources.
calls() {
    python3 - "$1" <<'P'
import re, sys, glob, os
root = sys.argv[1]
for f in sorted(glob.glob(os.path.join(root, "engine/cuda/*.cu")) + glob.glob(os.path.join(root, "engine/cuda/*.h"))):
    rel = os.path.relpath(f, root)
    for ln, line in enumerate(open(f, encoding="utf-8"), 1):
        code = line.split("//")[0]
        if code.lstrip().startswith(("*", "/*")):
            continue
        for m in re.finditer(r"\b(__syncthreads\s*\(\s*\)|__shfl(_up|_down|_xor)?_sync\s*\()", code):
            print(rel, ln, m.start() + 1, "sync" if m.group(0).startswith("__syncthreads") else "shfl")
P
}

# Deletes the call at FILE LINE COLUMN in the tree under $1.
mutate() {
    python3 - "$@" <<'P'
import sys
root, rel, ln, col = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
path = root + "/" + rel
src = open(path, encoding="utf-8").read().split("\n")
line = src[ln - 1]
at = col - 1
if line.startswith("__syncthreads", at):
    end = line.index(")", at) + 1
    rest = line[end:]
    line = line[:at] + "(void)0" + rest  # the statement stays, the barrier goes
else:
    # the shuffle's value argument replaces the call: __shfl_*(mask, v, ...) -> (v)
    text = "\n".join(src[ln - 1:])
    i = text.index("(", at)
    depth, args, start = 0, [], i + 1
    for j in range(i, len(text)):
        c = text[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                args.append(text[start:j])
                end = j + 1
                break
        elif c == "," and depth == 1:
            args.append(text[start:j])
            start = j + 1
    text = text[:at] + "(" + args[1].strip() + ")" + text[end:]
    src = src[:ln - 1] + text.split("\n")
    line = None
if line is not None:
    src[ln - 1] = line
open(path, "w", encoding="utf-8").write("\n".join(src))
P
}

if [ -n "$reuse" ]; then
    [ -f "$reuse/build/Makefile" ] || { echo "cuda_mutants.sh: --reuse $reuse: no kept build there" >&2; exit 2; }
    tmp=$reuse
    keep=1
else
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-mutants-XXXXXX")
fi
cleanup() { [ "$keep" = 1 ] && echo "cuda_mutants.sh: kept $tmp" >&2 || rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 2' INT TERM

if [ "$list" = 1 ]; then
    calls "$(pwd)"
    exit 0
fi

tests="tests/engine/backend/test_backend_ops tests/engine/backend/test_flash tests/engine/backend/test_cuda_model"
if [ -z "$reuse" ]; then
    echo "cuda_mutants.sh: copying the sources to $tmp/src and building the emulated tests there" >&2
    make -s distdir distdir="$tmp/src" >/dev/null
    mkdir "$tmp/build"
    (cd "$tmp/build" && "$tmp/src/configure" --with-cuda=no --enable-cuda-emu --disable-native >configure.log 2>&1 &&
        make -j2 $tests >make.log 2>&1) || { echo "cuda_mutants.sh: the build in $tmp/build failed" >&2; keep=1; exit 2; }
    # the unmutated code must pass, or every mutant would read as caught
    for t in $tests; do
        (cd "$tmp/build" && TLM_SRCDIR="$tmp/src" timeout 1800 "./$t" >"$tmp/out" 2>&1) ||
            { echo "cuda_mutants.sh: $t fails without a mutant (kept: $tmp/out)" >&2; keep=1; exit 2; }
    done
fi

table="| call | mutant | caught by | first failure |
|---|---|---|---|"
survived=0
total=0
calls "$tmp/src" >"$tmp/calls.all"
if [ -n "$only" ]; then # in the order --only gave them
    : >"$tmp/calls"
    for c in $only; do
        awk -v f="${c%:*}" -v l="${c##*:}" '$1 == f && $2 == l' "$tmp/calls.all" >>"$tmp/calls"
    done
else
    cp "$tmp/calls.all" "$tmp/calls"
fi
while read -r rel ln col kind; do
    if [ -n "$only" ]; then
        case " $only " in *" $rel:$ln "*) ;; *) continue ;; esac
    fi
    total=$((total + 1))
    cp "$tmp/src/$rel" "$tmp/orig"
    mutate "$tmp/src" "$rel" "$ln" "$col"
    what=$([ "$kind" = sync ] && echo "__syncthreads() deleted" || echo "shuffle -> own value")
    by="" why=""
    if ! (cd "$tmp/build" && make -j2 engine/libtlmcuda_emu.a >>make.log 2>&1); then
        by="the build" why="(the mutant does not compile)"
    else
        for t in $tests; do
            # each test linked only when the ones before it passed
            if ! (cd "$tmp/build" && make -j2 "$t" >>make.log 2>&1); then
                by="the build" why="(the mutant does not link)"
                break
            fi
            if ! (cd "$tmp/build" && TLM_SRCDIR="$tmp/src" timeout 1800 "./$t" >"$tmp/out" 2>&1); then
                by=$(basename "$t")
                # the emulator's report when a check fired, else the first failed line
                why=$(grep -m1 "^cuda emulator: " "$tmp/out" | sed 's/^cuda emulator: //; s/ (launched at [^)]*)//; s/eng_cu_emu:://g' || true)
                [ -n "$why" ] || why=$(grep -m1 -E "^not ok|Bail out" "$tmp/out" || true)
                why=$(printf '%s' "$why" | cut -c1-200 | sed 's/|/\\|/g')
                [ -n "$why" ] || why="exit status not 0"
                break
            fi
        done
    fi
    cp "$tmp/orig" "$tmp/src/$rel"
    if [ -z "$by" ]; then
        by="SURVIVED"
        survived=$((survived + 1))
    fi
    row="| $rel:$ln | $what | $by | $why |"
    echo "$row" >&2
    table="$table
$row"
done <"$tmp/calls"
summary="$((total - survived)) of $total mutants caught"
printf '%s\n\n%s\n' "$table" "$summary"
[ -z "$out" ] || printf '%s\n\n%s\n' "$table" "$summary" >"$out"
[ "$survived" = 0 ]
