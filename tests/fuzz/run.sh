#!/bin/sh
# run.sh: builds the fuzz targets with Debian's clang (libFuzzer + ASan +
# UBSan) and runs each for SECONDS (default 60), growing the corpus in a
# scratch copy; new crashers are left in tests/fuzz/crashes/.  Needs
# clang and libclang-rt-dev (scripts/setup.sh --test installs them).
#
#   tests/fuzz/run.sh [SECONDS] [event|sweep]      (or: make fuzz FUZZ_SECONDS=300)
set -eu
secs=${1:-60}
only=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
command -v clang >/dev/null || { echo "run.sh: clang is needed (apt-get install clang libclang-rt-14-dev)" >&2; exit 77; }
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tlm-fuzz-XXXXXX")}
mkdir -p "$out" "$here/crashes"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$top -I$out"
# config.h for the engine sources (only what they test for)
printf '#define TLM_BLAS_NAME "none"\n' >"$out/config.h"
yaml=$(pkg-config --cflags --libs yaml-0.1 2>/dev/null || echo -lyaml)

build() {
    name=$1
    shift
    echo "run.sh: building $name" >&2
    # shellcheck disable=SC2086
    clang $cflags -o "$out/$name" "$here/$name.c" "$@" $yaml -lm
}
run() {
    name=$1
    mkdir -p "$out/corpus-$name"
    cp "$here/corpus/${name#fuzz_}/"* "$out/corpus-$name/" 2>/dev/null || true
    echo "run.sh: $name for $secs s" >&2
    (cd "$here/crashes" && "$out/$name" -max_total_time="$secs" -max_len=65600 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "$out/corpus-$name")
}
E="$top/engine"
O="$top/orchestrator"
if [ -z "$only" ] || [ "$only" = event ]; then
    build fuzz_event "$O/event.c" "$O/jsonline.c" "$O/linebuf.c"
    run fuzz_event
fi
if [ -z "$only" ] || [ "$only" = sweep ]; then
    build fuzz_sweep "$O/sweep.c" "$E/cfgtree.c" "$E/config.c" "$E/err.c" "$E/sha256.c" "$E/presets.c" \
        "$E/taper.c" "$E/account.c"
    run fuzz_sweep
fi
echo "run.sh: done; grown corpora in $out" >&2
