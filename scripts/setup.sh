#!/bin/sh
# setup.sh: everything a fresh Debian machine needs to build TLM, then the
# build itself.  Idempotent: installs only missing packages, regenerates and
# reconfigures only when the build files changed, and is quick when nothing
# did.
#
#   scripts/setup.sh            packages to build and run TLM, then build, then
#                               the demonstration shards (data/demo/)
#   scripts/setup.sh --test     also what `make check` needs (torch for the
#                               parity tests, clang for the fuzz targets and
#                               the emulated CUDA build, chromium and
#                               playwright-core for the dashboard)
#   scripts/setup.sh --no-build packages only (Debian's, and uPlot for the dashboard)
#
# Runs apt-get as root (or through sudo when not root).
set -eu
cd "$(dirname "$0")/.."

want_test=0
build=1
log_dir=${TMPDIR:-/tmp} # where the apt-get, autogen and make logs go
for arg in "$@"; do
    case "$arg" in
    --test) want_test=1 ;;
    --no-build) build=0 ;;
    -h | --help)
        sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "setup.sh: unknown option '$arg' (try --help)" >&2
        exit 2
        ;;
    esac
done

say() { printf 'setup: %s\n' "$*" >&2; }

# ------------------------------------------------------------------ packages
# Build and run: compiler, autotools, the libraries configure looks for,
# sqlite3 for querying results.db, python3 for the small helper scripts.
pkgs="gcc make libc6-dev autoconf automake pkgconf ca-certificates git
      libuv1-dev libsqlite3-dev libyaml-dev libjansson-dev libopenblas-dev
      libpcre2-dev sqlite3 python3 procps"
# Plots in tlm-report: SVG written by tlm-report in DejaVu Sans, PNG and PDF of
# it by rsvg-convert (librsvg2-bin); PLplot is still what configure checks for;
# the dashboard's HTTP server (tlm-dash).
pkgs="$pkgs libplplot-dev plplot-driver-cairo librsvg2-bin fonts-dejavu-core libmicrohttpd-dev"
# Data-parallel training (engine/comm, docs/parallel.md): Open MPI's library
# and mpirun; under Slurm, srun --mpi=pmix (slurmd's plugins, with PMIx).
pkgs="$pkgs openmpi-bin libopenmpi-dev"
# The demonstration corpus (scripts/make-demo-data.sh, docs/data.md): the King
# James Bible and the Jargon File.
corpus_pkgs="bible-kjv bible-kjv-text jargon-text"
pkgs="$pkgs $corpus_pkgs"
# Tests: PyTorch parity, fuzz targets (clang's libFuzzer), the emulated CUDA
# build whose kernels run in make check (clang++ instruments their loads and
# stores; it needs nothing beyond the clang package), the dashboard in a
# real browser (tests/dashboard: Debian's Chromium, curl), a private Slurm
# cluster for tlmd's slurm executor (tests/lib/slurm_cluster.sh; the daemons
# are only started by the tests, as the calling user).
# (libpmix-dev: Slurm's pmix plugin opens libpmix.so, the unversioned name,
# when srun --mpi=pmix starts the ranks of tests/tlmd/test_dp_slurm.sh)
test_pkgs="python3-torch python3-numpy clang libclang-rt-14-dev chromium curl slurmctld slurmd slurm-client libpmix-dev"
[ "$want_test" = 1 ] && pkgs="$pkgs $test_pkgs"
# npm installs the dashboard's charting library (uPlot, which tlm-dash
# serves) and, for the tests, playwright-core and the tokenizer conformance
# test's reference; node and npm are asked for by command, not by package:
# a Node.js from another source (which bundles its own npm) conflicts with
# Debian's npm package, and apt-get would refuse the whole install.  Missing
# ones are installed in a separate step whose failure only costs the
# dashboard's charts and those tests (they skip with 77).
node_pkgs=""
command -v node >/dev/null 2>&1 || node_pkgs="nodejs"
command -v npm >/dev/null 2>&1 || node_pkgs="$node_pkgs npm"

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        SUDO=""
    elif command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        say "missing Debian packages:$missing"
        say "run this script as root (or install them with apt-get)"
        exit 1
    fi
    say "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing >"$log_dir/tlm-apt.log" 2>&1 || {
        tail -n 30 "$log_dir/tlm-apt.log" >&2
        say "apt-get install failed (full log: $log_dir/tlm-apt.log)"
        exit 1
    }
else
    say "Debian packages: all present"
fi
if [ -n "$node_pkgs" ]; then
    [ "$(id -u)" = 0 ] && SUDO="" || SUDO="sudo"
    say "installing (for the dashboard's charts and the npm-based tests):$node_pkgs"
    export DEBIAN_FRONTEND=noninteractive
    [ -n "$missing" ] || $SUDO apt-get update -qq || true
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $node_pkgs >"$log_dir/tlm-apt-node.log" 2>&1 ||
        say "could not install$node_pkgs (see $log_dir/tlm-apt-node.log); the dashboard has no charts, the npm-based tests skip"
fi

# The dashboard's npm packages, at the versions of dashboard/package-lock.json,
# into dashboard/node_modules (git-ignored; nothing is copied into the tree):
# uPlot always, playwright-core (which drives Chromium in tests/dashboard) with
# --test.  Skipped when they are installed already.
# --no-build installs them too: they are packages, not build products.
npm_want="uplot"
[ "$want_test" = 1 ] && npm_want="$npm_want playwright-core"
npm_missing=""
for p in $npm_want; do [ -e "dashboard/node_modules/$p/package.json" ] || npm_missing="$npm_missing $p"; done
if [ -n "$npm_missing" ]; then
    if command -v npm >/dev/null 2>&1; then
        say "npm:$npm_missing (dashboard/node_modules)"
        omit="--omit=dev"
        [ "$want_test" = 1 ] && omit=""
        # shellcheck disable=SC2086
        npm ci --prefix dashboard --no-audit --no-fund --loglevel=error $omit >"$log_dir/tlm-npm.log" 2>&1 ||
            say "npm ci failed (see $log_dir/tlm-npm.log): the dashboard draws no charts, tests/dashboard skip"
    else
        say "npm is not installed: the dashboard draws tables but no charts (install nodejs and npm, then:" \
            "npm ci --prefix dashboard --omit=dev)"
    fi
    [ -e dashboard/node_modules/uplot/dist/uPlot.iife.min.js ] && say "uPlot: dashboard/node_modules/uplot"
fi

[ "$build" = 1 ] || exit 0

# ------------------------------------------------------------------ build
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ ! -e build-aux/test-driver ]; then
    say "autoreconf"
    ./autogen.sh >"$log_dir/tlm-autogen.log" 2>&1 || {
        cat "$log_dir/tlm-autogen.log" >&2
        exit 1
    }
fi
if [ ! -e config.status ] || [ configure -nt config.status ]; then
    say "configure"
    ./configure -q || {
        say "configure failed: see config.log"
        exit 1
    }
fi
say "make -j$jobs"
make -s -j"$jobs" >"$log_dir/tlm-make.log" 2>&1 || {
    tail -n 40 "$log_dir/tlm-make.log" >&2
    say "build failed (full log: $log_dir/tlm-make.log)"
    exit 1
}
say "built: worker/tlm-worker orchestrator/tlmd reports/tlm-report dashboard/tlm-dash dataprep/tlm-data"

# The demonstration corpus and its shards (data/demo/, seconds; skipped when
# they are up to date): what the CPU sweeps train on.
scripts/make-demo-data.sh --no-bpe
