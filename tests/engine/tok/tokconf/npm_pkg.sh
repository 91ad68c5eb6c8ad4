# npm_pkg.sh: sourced by the tokenizer conformance tests
# (tests/engine/tok/test_tokconf*.sh), not a test itself.
#   npm_pkg NAME VERSION   installs the npm package NAME@VERSION into a
#   scratch folder $tmp (removed on exit) and sets $pkg to its folder;
#   skips (77) when node or npm is missing or npm cannot fetch it.
skip() { echo "1..0 # SKIP $*"; exit 77; }
npm_pkg() {
    command -v node >/dev/null 2>&1 || skip "node is not installed (scripts/setup.sh --test installs it)"
    command -v npm >/dev/null 2>&1 || skip "npm is not installed (scripts/setup.sh --test installs it)"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-tokconf.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    if ! timeout 180 npm install --prefix "$tmp" --no-audit --no-fund --no-save --loglevel=error \
        "$1@$2" >"$tmp/npm.log" 2>&1; then
        tail -n 5 "$tmp/npm.log" | sed 's/^/# /'
        skip "npm could not install $1@$2 (registry unreachable?)"
    fi
    pkg="$tmp/node_modules/$1"
}
