# lib.sh: sourced by the dashboard tests (not a test itself).  On top of
# tests/tlmd/lib.sh (tlmd, the worker, $tmp, ok/finish, sweep, wait_for):
# D (tlm-dash), start_dash (a server in the background; $url, $base, $dp),
# and, for the browser tests, need_browser: Debian's Chromium and npm's
# playwright-core (dashboard/node_modules from scripts/setup.sh --test, or
# installed into $tmp), skipping with 77 only when they cannot be had.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
D="$TLM_BUILDDIR/dashboard/tlm-dash"
# under --enable-sanitizers: the plotting libraries' own caches (figures) are not our leaks
LSAN_OPTIONS="suppressions=$TLM_SRCDIR/tests/report/test_report.lsan${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
NM="$TLM_SRCDIR/dashboard/node_modules"
SHOTS="$TLM_BUILDDIR/tests/dashboard/screenshots"

# start_dash LOG ARGS...: tlm-dash in the background, waits for its URL
start_dash() {
    dlog=$1
    shift
    "$D" "$@" >"$dlog" 2>"$dlog.err" &
    dp=$!
    kids="$kids $dp"
    url=
    i=0
    while [ $i -lt 100 ] && [ -z "$url" ]; do
        url=$(sed -n 's/^tlm-dash: serving .* at \(http[^ ]*\).*/\1/p' "$dlog" 2>/dev/null)
        [ -n "$url" ] || sleep 0.05
        i=$((i + 1))
    done
    base=${url%%/\?t=*}
    token=${url##*\?t=}
    [ -n "$url" ]
}

need_browser() {
    CHROMIUM=$(command -v chromium || true)
    [ -n "$CHROMIUM" ] || { echo "# SKIP: Debian's chromium is not installed (scripts/setup.sh --test installs it)"; exit 77; }
    command -v node >/dev/null 2>&1 || { echo "# SKIP: node is not installed (scripts/setup.sh --test)"; exit 77; }
    if [ ! -d "$NM/playwright-core" ]; then
        NM="$tmp/npm/node_modules"
        command -v npm >/dev/null 2>&1 &&
            timeout 180 npm install --prefix "$tmp/npm" --no-audit --no-fund --no-save --loglevel=error \
                "playwright-core@$(sed -n 's/.*"playwright-core": "\(.*\)".*/\1/p' "$TLM_SRCDIR/dashboard/package.json")" \
                "uplot@$(sed -n 's/.*"uplot": "\(.*\)".*/\1/p' "$TLM_SRCDIR/dashboard/package.json")" \
                >"$tmp/npm.log" 2>&1 ||
            { echo "# SKIP: playwright-core cannot be installed (npm: $(tail -n 1 "$tmp/npm.log" 2>/dev/null))"; exit 77; }
    fi
    VENDOR="$NM/uplot/dist"
    mkdir -p "$SHOTS"
    export CHROMIUM SHOTS
}

# relay FILE STATUS WHAT: the checks of a helper's TAP output FILE, numbered
# into this test's; a helper that failed (STATUS) without a failed check is one
relay() {
    while IFS= read -r line; do
        case $line in
        "ok - "*) ok 0 "${line#ok - }" ;;
        "not ok - "*) ok 1 "${line#not ok - }" ;;
        *) echo "$line" ;;
        esac
    done <"$1"
    [ "$2" = 0 ] || grep -q "^not ok" "$1" || ok 1 "$3 exited $2"
}

# browser MODE [SCRIPT [SECONDS]]: runs SCRIPT (browser.mjs) against $url,
# numbering its checks into this test's TAP
browser() {
    script=${2:-browser.mjs}
    NODE_MODULES=$NM URL=$url PROFILE=$(mktemp -d "$tmp/profile.XXXXXX") MODE=$1 \
        timeout "${3:-150}" node "$TLM_SRCDIR/tests/dashboard/$script" >"$tmp/browser.$1" 2>&1
    relay "$tmp/browser.$1" $? "$script $1"
}
