#!/bin/sh
# bench_dp.sh: data parallel on the CPU, 1 rank beside 2 (mpirun -np 2),
# plain and with ZeRO-1 (bench/bench_dp.c says what each line measures).
# The global batch and the total threads are the same in every line (one
# thread a rank; two for the single rank), so the lines compare what the
# ranks cost and save.
# Run from the build folder:  make bench/bench_dp && sh ../bench/bench_dp.sh [small|large] [STEPS]
set -eu
B=bench/bench_dp
[ -x "$B" ] || { echo "bench_dp.sh: $B is missing: make bench/bench_dp" >&2; exit 2; }
command -v mpirun >/dev/null 2>&1 || { echo "bench_dp.sh: mpirun is missing (Debian: openmpi-bin)" >&2; exit 2; }
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SHAPE=${1:-small}
STEPS=${2:-8}
"$B" --shape "$SHAPE" --steps "$STEPS" --threads 1
"$B" --shape "$SHAPE" --steps "$STEPS" --threads 2
mpirun --oversubscribe --bind-to core -np 2 "$B" --shape "$SHAPE" --steps "$STEPS" --threads 1
mpirun --oversubscribe --bind-to core -np 2 "$B" --shape "$SHAPE" --steps "$STEPS" --threads 1 --zero1
