#!/bin/bash
# trial.sh: try to break TLM as a new user and as an attacker would, and say
# how each attempt ended.  Runs a few hundred cases against the four programs
# (tlmd, tlm-worker, tlm-report, tlm-data) of a built tree: bad sweep files
# and job configs, every command-line flag with missing, malformed,
# out-of-range, repeated and conflicting values, paths that are folders,
# FIFOs, symlinks, missing, unreadable, very long or oddly named, corrupt
# shards, checkpoints, tokenizers and evaluation files, tlm-report queries
# that match nothing and bad databases, and crash and concurrency scenarios
# (kill -9 of tlmd and of workers, two daemons on one database, a runs
# folder of another database, --rerun, a full disk).  Each case knows the
# outcome it must have (docs/*.md) and is classified:
#
#   clear    refused (or handled) with the documented exit status and a
#            message that names the file (line/column) or option and says
#            what was expected; a scenario that kept every piece of work
#   unclear  refused, but the message misleads, is vague or names the
#            wrong thing
#   wrong    accepted when it must not be, a wrong result, lost or deleted
#            work, a crash (signal, sanitizer report), an exit status that
#            contradicts the docs
#   hang     no answer within the case's time limit (every command runs
#            under timeout(1))
#
# One line per case: id, outcome, what was tried, the exit status and the
# first line of the program's message; then the counts and every case that
# was not clear, with its command.  Exit status 0 when every case was clear,
# 1 otherwise, 2 for a usage error or a tree that is not built.
#
#   scripts/trial.sh [--build-dir DIR] [--only REGEX] [--timeout S] [--keep] [--list]
#
#   --build-dir DIR  where the programs were built (default: this tree)
#   --only REGEX     run only the cases whose id matches (grep -E)
#   --timeout S      the limit of each command (default 20 s)
#   --keep           keep the temporary folder (its path is printed)
#   --list           print the case files and exit
#
# Self-contained: everything happens in a folder under ${TMPDIR:-/tmp},
# removed at the end; the daemons use no network; device nodes are private
# copies, never the system's (as root, `tlmd --db /dev/null` replaces it).
# The cases are in scripts/trial/*.sh, one file per area, sourced in name
# order: 00-issue (issue 10's cases that need a scenario; the rest carry
# ids issue.* in the other files; issue 26's carry ids issue26.* in the
# files of their areas), 10-config, 20-sweep, 30-worker-cli,
# 40-tlmd-cli, 50-data, 60-paths, 70-corrupt, 80-report, 90-crash;
# scripts/trial/tools.py makes files corrupt in exactly one way.  Run as root,
# permission cases run as the user nobody (setpriv) and the full-disk
# scenarios get a few-MB tmpfs inside a private mount namespace (unshare -m),
# which disappears with it; where neither is possible the case says so and
# is counted as not tried.  About 5 minutes on 2 cores.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/.." && pwd)
BUILD=$SRC
ONLY=
CASE_TIMEOUT=20
KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
    --build-dir) [ $# -ge 2 ] || { echo "trial.sh: --build-dir needs a folder" >&2; exit 2; }; BUILD=$(cd "$2" 2>/dev/null && pwd) ||
        { echo "trial.sh: --build-dir $2: no such folder" >&2; exit 2; }; shift ;;
    --only) [ $# -ge 2 ] || { echo "trial.sh: --only needs a pattern" >&2; exit 2; }; ONLY=$2; shift ;;
    --timeout) [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] ||
        { echo "trial.sh: --timeout needs whole seconds, at least 1" >&2; exit 2; }; CASE_TIMEOUT=$2; shift ;;
    --keep) KEEP=1 ;;
    --list) ls "$here/trial/"*.sh; exit 0 ;;
    -h | --help) sed -n '2,/^set -u$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "trial.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

T=$BUILD/orchestrator/tlmd
W=$BUILD/worker/tlm-worker
R=$BUILD/reports/tlm-report
D=$BUILD/dataprep/tlm-data
for p in "$T" "$W" "$R" "$D"; do
    [ -x "$p" ] || { echo "trial.sh: $p is not built (./autogen.sh && ./configure && make, or give --build-dir)" >&2; exit 2; }
done
for c in timeout sqlite3 python3 mkfifo setsid; do
    command -v $c >/dev/null 2>&1 || { echo "trial.sh: the $c command is needed" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-trial-XXXXXX") || exit 2
chmod 711 "$tmp" # the user nobody may reach the folders made for it, no more
FX=$tmp/fx       # shared fixtures: corpus, datasets, jobs, a trained run, a results.db
OUT=$tmp/out     # each case's stdout and stderr
mkdir -p "$FX" "$OUT" "$tmp/c"
kids=""
cleanup() {
    for p in $kids; do kill -9 -- "-$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    if [ $KEEP = 1 ]; then echo "trial.sh: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- what this machine lets us try
ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1
# "${ASU[@]}" CMD...: run CMD as an unprivileged user (nobody when we are root)
# shellcheck disable=SC2034 # used by the case files
ASU=()
if [ $ROOT = 0 ]; then
    PERM_OK=1
elif command -v setpriv >/dev/null 2>&1 && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    PERM_OK=1
    ASU=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
else
    PERM_OK=0
fi
# a private mount namespace for a small tmpfs (full disks)
MOUNT_OK=0
if [ $ROOT = 1 ] && command -v unshare >/dev/null 2>&1 &&
    unshare -m --propagation private sh -c "mount -t tmpfs -o size=1m tmpfs '$tmp/c' && umount '$tmp/c'" 2>/dev/null; then
    MOUNT_OK=1
fi

# ---- recording outcomes
RES=$tmp/results.tsv
: >"$RES"
ncase=0
declare -A seen
selected() { [ -z "$ONLY" ] || [[ $1 =~ $ONLY ]]; }
oneline() { tr '\n\t' '  ' | cut -c1-"${2:-220}"; }

# record ID CLASS WHAT RC MESSAGE [DETAIL [COMMAND]]: one outcome
record() {
    local id=$1 cls=$2 what=$3 rc=$4 msg=$5 detail=${6:-} cmd=${7:-}
    if [ -n "${seen[$id]:-}" ]; then
        echo "trial.sh: case id $id is used twice (a bug in scripts/trial)" >&2
        exit 2
    fi
    seen[$id]=1
    ncase=$((ncase + 1))
    printf '%-34s %-8s %s -> exit %s: %s\n' "$id" "$cls" "$what" "$rc" "$(printf '%s' "$msg" | oneline 200)"
    if [ "$cls" != clear ] && [ -n "$detail" ]; then printf '%-34s          (%s)\n' "" "$(printf '%s' "$detail" | oneline 400)"; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$cls" "$(printf '%s' "$what" | oneline)" "$rc" \
        "$(printf '%s' "$msg" | oneline 400)" "$(printf '%s' "$detail" | oneline 600)" "$(printf '%s' "$cmd" | oneline 1200)" >>"$RES"
}

# notried ID WHAT WHY: a case this machine cannot run (not counted as an outcome)
notried() {
    selected "$1" || return 0
    printf '%-34s %-8s %s (%s)\n' "$1" "n/a" "$2" "$3"
    printf '%s\tnot-tried\t%s\t-\t%s\t\t\n' "$1" "$2" "$3" >>"$RES"
}

# first_msg OUT ERR PATTERN: the line to show: the first one that matches
# PATTERN, else the first line of stderr that is not a progress line, else
# of stdout
first_msg() {
    local l=
    [ -n "$3" ] && l=$(grep -h -E -m1 -e "$3" "$2" "$1" 2>/dev/null | head -1)
    [ -z "$l" ] && l=$(grep -v -E '^tlm-data: (encoding|merging|reading) +[0-9]+%|^tlm-worker: step [0-9]' "$2" | grep -m1 -v '^[[:space:]]*$')
    [ -z "$l" ] && l=$(grep -m1 -v '^[[:space:]]*$' "$1")
    printf '%s' "$l"
}

# sanitizer OUT ERR: a sanitizer report or an engine assertion in the output
sanitizer() { grep -h -E -m1 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|Assertion .* failed' "$1" "$2" 2>/dev/null; }

# tc ID WHAT WANT PATTERN CMD...: run CMD (in the current folder, stdin from
# $IN or /dev/null, under timeout $TO or --timeout) and classify it.  WANT
# is the exit status the docs give (alternatives with |), PATTERN an
# extended regular expression that the output (stdout and stderr) must
# match for a clear outcome (empty: none).  $AFTER, when set, is shell code
# run afterwards (it sees $rc, $id, $OUT) that must succeed, else the outcome
# is wrong ($AFTER_MSG says what went wrong).
tc() {
    local id=$1 what=$2 want=$3 pat=$4
    shift 4
    selected "$id" || return 0
    local out=$OUT/$id.out err=$OUT/$id.err rc cls detail='' msg s
    timeout -k 3 "${TO:-$CASE_TIMEOUT}" "$@" <"${IN:-/dev/null}" >"$out" 2>"$err"
    rc=$?
    msg=$(first_msg "$out" "$err" "$pat")
    s=$(sanitizer "$out" "$err")
    if [ $rc = 124 ] || { [ $rc = 137 ] && [ "$want" != 137 ]; }; then
        cls=hang detail="no answer in ${TO:-$CASE_TIMEOUT} s"
    elif [ -n "$s" ]; then
        cls=wrong detail="sanitizer: $s"
    elif ! [[ "|$want|" == *"|$rc|"* ]]; then
        cls=wrong
        if [ $rc -gt 128 ] && [ $rc -lt 160 ]; then detail="killed by signal $((rc - 128)), expected exit $want"
        elif [ $rc = 0 ]; then detail="accepted (exit 0), expected exit $want"
        else detail="exit $rc, the docs say $want"; fi
        if [ -n "${AFTER:-}" ] && ! (eval "$AFTER") >"$OUT/$id.after" 2>&1; then detail="$detail; and ${AFTER_MSG:-$AFTER}"; fi
    elif [ -n "${AFTER:-}" ] && ! (eval "$AFTER") >"$OUT/$id.after" 2>&1; then
        cls=wrong detail="${AFTER_MSG:-check failed: $AFTER}: $(head -c 300 "$OUT/$id.after")"
    elif [ -n "$pat" ] && ! grep -q -E -e "$pat" "$out" "$err"; then
        cls=unclear detail="the message does not match /$pat/"
    else
        cls=clear
    fi
    record "$id" "$cls" "$what" "$rc" "$msg" "$detail" "(cd $(pwd) && $(printf '%q ' "$@"))"
}

# verdict ID WHAT CLASS RC MESSAGE [DETAIL]: the outcome of a scenario
verdict() { record "$1" "$3" "$2" "$4" "$5" "${6:-}" "${7:-scenario $1 (scripts/trial)}"; }

# mkpath BASE LEN: a path of exactly LEN bytes, BASE followed by folders of
# at most 200 characters (each below NAME_MAX)
mkpath() {
    python3 -c '
import sys
base, n = sys.argv[1], int(sys.argv[2])
p = base
while len(p) < n:
    room = n - len(p) - 1
    p += "/" + "x" * min(200, room if room < 200 or room - 200 > 1 else room - 2)
print(p)' "$1" "$2"
}

# in_case ID: a fresh folder for a case or scenario, made the current one
# (kept as it is when it is the current one already: a case prepared there)
in_case() {
    [ "$PWD" = "$tmp/c/$1" ] && return 0
    rm -rf "$tmp/c/$1"
    mkdir -p "$tmp/c/$1" && cd "$tmp/c/$1" || exit 2
}

# bg CMD...: start CMD in the background in its own process group; $bgp is its pid
bg() {
    setsid "$@" </dev/null &
    bgp=$!
    kids="$kids $bgp"
}

# q DB SQL: one query, plain output (a busy timeout: the daemon may be writing)
q() { sqlite3 -batch -cmd '.timeout 5000' "$1" "$2" 2>/dev/null; }

# wait_sql DB SQL SECONDS: until the query prints something other than 0 or nothing
wait_sql() {
    local i=0 v
    while [ $i -lt $(($3 * 20)) ]; do
        v=$(q "$1" "$2")
        [ -n "$v" ] && [ "$v" != 0 ] && return 0
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

# ---- fixtures shared by the cases
LIC=""
for f in GPL-3 GPL-2 LGPL-2.1 Apache-2.0 MPL-2.0 GFDL-1.3 Artistic; do
    [ -f "/usr/share/common-licenses/$f" ] && LIC="$LIC /usr/share/common-licenses/$f"
done
[ -n "$LIC" ] || { echo "trial.sh: /usr/share/common-licenses is missing (package base-files)" >&2; exit 2; }
mkdir -p "$FX/corpus"
# shellcheck disable=SC2086
cp $LIC "$FX/corpus/"
"$D" build --tokenizer bytes --out "$FX/ds" --val-fraction 0.1 --segment-bytes 4k "$FX/corpus" >/dev/null 2>"$FX/ds.err" ||
    { echo "trial.sh: cannot build the trial's dataset:" >&2; cat "$FX/ds.err" >&2; exit 2; }
# shellcheck disable=SC2034 # used by the case files
SHARD=$FX/ds/train/000000.tlmtok
# job FILE [YAML lines...]: a tiny job (d=64, 2 layers, $STEPS (16) steps
# of 1024 tokens, a checkpoint and an evaluation every 8) on the dataset; later
# lines may add keys (a section given again is an error: use the variables
# TRAIN, EVAL, DATA, MODEL, TOP to change them)
job() {
    local f=$1
    shift
    {
        echo "model: {d_model: 64, layers: 2, heads: 2, d_ff: 128, vocab: 256${MODEL:-}}"
        echo "tokenizer: ${TOK:-bytes}"
        echo "data: {${DATA:-train: $FX/ds/train, val: $FX/ds/val}}"
        echo "eval: {every_tokens: 8192, val_tokens: 2048${EVAL:-}}"
        echo "train: {tokens: $((${STEPS:-16} * 1024)), seq_len: 32, batch_tokens: 1024, micro_batch: 8, lr: 3e-3, warmup_tokens: 4096, log_every: 1, ckpt_every_tokens: 8192${TRAIN:-}}"
        [ -n "${TOP:-}" ] && echo "$TOP"
        for l in "$@"; do echo "$l"; done
    } >"$f"
}
# sweep FILE NAME [YAML lines...]: a sweep of such jobs (grid and seeds lines follow)
sweep() {
    local f=$1 name=$2
    shift 2
    {
        echo "name: $name"
        echo "base:"
        echo "  model: {d_model: 64, layers: 2, heads: 2, d_ff: 128, vocab: 256}"
        echo "  tokenizer: bytes"
        echo "  data: {train: $FX/ds/train, val: $FX/ds/val}"
        echo "  eval: {every_tokens: 8192, val_tokens: 2048}"
        echo "  train: {tokens: $((${STEPS:-16} * 1024)), seq_len: 32, batch_tokens: 1024, micro_batch: 8, lr: 3e-3, warmup_tokens: 4096, log_every: 1, ckpt_every_tokens: 8192}"
        for l in "$@"; do echo "$l"; done
    } >"$f"
}

job "$FX/job.yaml"
# need_run: $FX/run, the tiny job trained to the end (checkpoints at steps 8
# and 16) and its events, made once
need_run() {
    [ -f "$FX/run.ok" ] && return 0
    rm -rf "$FX/run"
    "$W" --config "$FX/job.yaml" --out "$FX/run" --threads 1 >"$FX/run.ev" 2>"$FX/run.err" ||
        { echo "trial.sh: the fixture job does not train:" >&2; tail -5 "$FX/run.err" >&2; exit 2; }
    : >"$FX/run.ok"
}
# need_db: $FX/db/results.db and runs/, a sweep of two jobs (linear and
# cosine tapers) trained by tlmd, made once
need_db() {
    [ -f "$FX/db.ok" ] && return 0
    rm -rf "$FX/db"
    mkdir -p "$FX/db"
    sweep "$FX/db/two.yaml" two "grid:" "  taper.schedule: [linear, cosine]" "  taper.ratio: [[1.5, 0.5]]"
    (cd "$FX/db" && timeout 120 "$T" --sweeps two.yaml --workers 2 --threads-per-worker 1 --no-progress >run.out 2>&1) ||
        { echo "trial.sh: the fixture sweep does not train:" >&2; tail -5 "$FX/db/run.out" >&2; exit 2; }
    : >"$FX/db.ok"
}

started=$(date +%s)
echo "trial.sh: $BUILD, temporary folder $tmp; $( [ $ROOT = 1 ] && echo "running as root: permission cases run as nobody ($([ $PERM_OK = 1 ] && echo possible || echo NOT possible: setpriv missing))" || echo "running as $(id -un)"); full-disk scenarios: $([ $MOUNT_OK = 1 ] && echo "a tmpfs in a private mount namespace" || echo "not possible (needs root and unshare)")"
for f in "$here/trial/"*.sh; do
    cd "$tmp" || exit 2
    # shellcheck source=/dev/null
    . "$f"
done
cd "$tmp" || exit 2
elapsed=$(($(date +%s) - started))

# ---- the counts
count() { awk -F'\t' -v c="$1" '$2 == c' "$RES" | wc -l; }
nclear=$(count clear) nunclear=$(count unclear) nwrong=$(count wrong) nhang=$(count hang) nna=$(count not-tried)
echo
echo "trial: $ncase cases in ${elapsed} s: $nclear clear, $nunclear unclear, $nwrong wrong, $nhang hang ($nna not tried here)"
if [ $((nunclear + nwrong + nhang)) -gt 0 ]; then
    echo
    echo "not clear:"
    awk -F'\t' '$2 != "clear" && $2 != "not-tried" { printf "  %s [%s] %s\n      exit %s: %s\n      %s\n      %s\n", $1, $2, $3, $4, $5, $6, $7 }' "$RES"
fi
if [ "$nna" -gt 0 ]; then
    echo
    echo "not tried on this machine:"
    awk -F'\t' '$2 == "not-tried" { printf "  %s %s: %s\n", $1, $3, $5 }' "$RES"
fi
[ $((nunclear + nwrong + nhang)) = 0 ]
