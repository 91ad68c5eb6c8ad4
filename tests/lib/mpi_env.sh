# mpi_env.sh: sourced by the tests that start ranks under mpirun or srun
# (tests/parallel/dp_lib.sh, tests/tlmd/test_dp_*.sh).  As root (CI) Open
# MPI wants to be told it may run; under make check-sanitizers the ranks'
# leak check leaves out Open MPI's own allocations (tests/lib/mpi.lsan),
# which it can only attribute with the precise unwinder: Open MPI's
# libraries have no frame pointers.  A normal build ignores both variables.
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
LSAN_OPTIONS="suppressions=$TLM_SRCDIR/tests/lib/mpi.lsan${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS
