#!/bin/sh
# test.sh: the README's test command.  Installs what the tests need (apt),
# builds, runs `make check`, then `make check-kernels` (the numerical tests
# again under every OpenBLAS kernel this CPU runs); on failure prints the
# failing tests' logs.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh --test
jobs=$(nproc 2>/dev/null || echo 2)
if make -j"$jobs" check && make -j"$jobs" check-kernels; then
    exit 0
fi
echo "=== failing tests' logs ===" >&2
for t in $(find . -name '*.trs' -newer config.status 2>/dev/null); do
    if grep -q ':test-result: \(FAIL\|ERROR\)' "$t"; then
        log="${t%.trs}.log"
        echo "--- $log" >&2
        tail -n 60 "$log" >&2
    fi
done
exit 1
