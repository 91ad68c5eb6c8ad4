# tap.sh: sourced by the shell test libraries (tests/lib/train_common.sh,
# tests/tlmd/lib.sh) and by shell tests (tests/report/test_report.sh,
# tests/dataprep/test_tlm_data.sh), not a test itself.  TAP output (ok,
# pass, no, finish), a temp folder $tmp removed on exit with every
# background process the test recorded in $kids killed, and text_shard:
# the licence texts every Debian system ships as a token shard.
#   tap_setup NAME [wait]   makes $tmp (tlm-NAME-test-XXXXXX) and the exit
#     trap; with "wait" the trap also waits for every background job
#   text_shard OUT LICENCE...   OUT from /usr/share/common-licenses/LICENCE...
#     with tests/lib/train_mkshard ($MK); skips (77) when none is there;
#     $LICENSES: the files it read (some tests build their own data too)
set -u
n=0
fail=0
ok() {
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
# pass MSG, no MSG: a check the caller has decided (test && pass ... || no ...)
pass() { ok 0 "$*"; }
no() { ok 1 "$*"; }
finish() {
    echo "1..$n"
    exit $fail
}
MK="$TLM_BUILDDIR/tests/lib/train_mkshard"

tap_setup() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-$1-test-XXXXXX")
    kids=""
    tap_wait=${2:-}
    trap tap_cleanup EXIT
}
tap_cleanup() {
    for p in $kids; do kill -9 "$p" 2>/dev/null; done
    [ "$tap_wait" = wait ] && wait 2>/dev/null
    rm -rf "$tmp"
}

text_shard() {
    out=$1
    shift
    LICENSES=""
    for f in "$@"; do
        [ -f "/usr/share/common-licenses/$f" ] && LICENSES="$LICENSES /usr/share/common-licenses/$f"
    done
    if [ -z "$LICENSES" ]; then echo "# /usr/share/common-licenses is missing: skip"; exit 77; fi
    # shellcheck disable=SC2086
    "$MK" "$out" $LICENSES >/dev/null || { echo "# cannot make the text shard"; exit 1; }
}
