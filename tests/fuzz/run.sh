#!/bin/sh
# run.sh: builds the fuzz targets with Debian's clang (libFuzzer + ASan +
# UBSan) and runs each in turn, for SECONDS (default 60) or for --runs N
# executions, growing the corpus in a scratch copy; new crashers are left in
# tests/fuzz/crashes/.  Needs clang and libclang-rt-dev (scripts/setup.sh
# --test installs them).  Each target gets a -max_len suited to its format.
#
#   tests/fuzz/run.sh [--runs N] [SECONDS] [TARGET...]      (or: make fuzz FUZZ_SECONDS=300)
#
# TARGET: event sweep config shard manifest safetensors state tiktoken spm
# (default: all).  The last lines of each run (libFuzzer's final stats:
# execs, exec/s) go to stderr; the full log is $FUZZ_OUT/NAME.log.
set -eu
runs=""
if [ "${1:-}" = --runs ]; then
    runs=$2
    shift 2
fi
secs=60
case ${1:-} in
[0-9]*) secs=$1; shift ;;
esac
only="$*"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
command -v clang >/dev/null || { echo "run.sh: clang is needed (apt-get install clang libclang-rt-14-dev)" >&2; exit 77; }
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tlm-fuzz-XXXXXX")}
mkdir -p "$out" "$here/crashes"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=address,undefined -fno-sanitize-recover=undefined -I$top -I$out"
# config.h for the engine sources (only what they test for)
printf '#define TLM_BLAS_NAME "openblas"\n#define TLM_BLAS_OPENBLAS 1\n#define HAVE_CBLAS_H 1\n' >"$out/config.h"
pkgs="yaml-0.1 jansson libpcre2-8 openblas"
# shellcheck disable=SC2086
incs=$(pkg-config --cflags $pkgs 2>/dev/null || echo -I/usr/include/x86_64-linux-gnu/openblas-pthread)
# shellcheck disable=SC2086
libs=$(pkg-config --libs $pkgs 2>/dev/null || echo -lyaml -ljansson -lpcre2-8 -lopenblas)

want() { [ -z "$only" ] || case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# The whole engine, instrumented once (fuzzer-no-link: coverage for the
# fuzzer, no main), as an archive: each target links what it uses.
lib() {
    [ -f "$out/libengine-fuzz.a" ] && return 0
    echo "run.sh: building the engine with ASan + UBSan" >&2
    mkdir -p "$out/obj"
    for f in "$top"/common/*.c "$top"/engine/*/*.c; do
        o="$out/obj/$(echo "${f#$top/}" | tr / _ | sed 's/\.c$/.o/')"
        # shellcheck disable=SC2086
        clang $cflags $incs -fsanitize=fuzzer-no-link -c "$f" -o "$o" || return 1
    done
    ar rcs "$out/libengine-fuzz.a" "$out"/obj/*.o
}
build() {
    name=$1
    shift
    lib
    echo "run.sh: building $name" >&2
    # shellcheck disable=SC2086
    clang $cflags $incs -fsanitize=fuzzer -o "$out/$name" "$here/$name.c" "$@" "$out/libengine-fuzz.a" $libs -lm
}
run() {
    name=$1 maxlen=$2
    mkdir -p "$out/corpus-$name"
    cp "$here/corpus/${name#fuzz_}/"* "$out/corpus-$name/" 2>/dev/null || true
    if [ -n "$runs" ]; then
        limit="-runs=$runs"
        echo "run.sh: $name for $runs runs (-max_len=$maxlen)" >&2
    else
        limit="-max_total_time=$secs"
        echo "run.sh: $name for $secs s (-max_len=$maxlen)" >&2
    fi
    (cd "$here/crashes" && "$out/$name" "$limit" -max_len="$maxlen" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "$out/corpus-$name") >"$out/$name.log" 2>&1 || {
        echo "run.sh: $name FAILED (see $out/$name.log; crashers in $here/crashes)" >&2
        tail -40 "$out/$name.log" >&2
        return 1
    }
    grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec|^stat::peak_rss_mb|^#[0-9]+.*DONE' \
        "$out/$name.log" | sed "s/^/run.sh: $name: /" >&2
}
# target NAME MAX_LEN [SOURCE...]: fuzz_NAME, when wanted, built (with the
# sources it needs beyond the engine) and run with -max_len=MAX_LEN
status=0
target() {
    t=fuzz_$1 t_len=$2 # (sh has no locals: build and run set name and maxlen)
    want "$1" || return 0
    shift 2
    build "$t" "$@"
    run "$t" "$t_len" || status=1
}
O="$top/orchestrator"
target event 65600 "$O/event.c" "$O/jsonline.c" "$O/linebuf.c"
target sweep 65600 "$O/sweep.c"
target config 8192
target shard 65600
target manifest 16384
target safetensors 16384
target state 4096
target tiktoken 16384
target spm 16384
echo "run.sh: done; grown corpora and logs in $out" >&2
exit $status
