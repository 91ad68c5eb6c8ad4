#!/bin/sh
# test_ptxas_spills.sh: the CUDA build's spill check (scripts/ptxas-spills.sh)
# on ptxas reports written here in the format nvcc -Xptxas -v prints: a
# report without spills passes, one kernel spilling a byte (stores or
# loads) over the budget fails and is named, a budget that covers it
# passes, a missing report fails; and, in a CUDA build, the reports the
# build kept for engine/cuda/*.cu pass the budget of engine/cuda/local.mk.
S="$TLM_SRCDIR/scripts/ptxas-spills.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/ptxas.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
n=0 failed=0
ok() { # status description
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
kernel() { # name stack stores loads registers
    printf "ptxas info    : Compiling entry function '%s' for 'sm_90'\n" "$1"
    printf 'ptxas info    : Function properties for %s\n' "$1"
    printf '    %s bytes stack frame, %s bytes spill stores, %s bytes spill loads\n' "$2" "$3" "$4"
    printf 'ptxas info    : Used %s registers, used 1 barriers, 380 bytes cmem[0]\n' "$5"
}
{ kernel _Z5cleanPf 0 0 0 20; kernel _Z6clean2Pf 0 0 0 32; } >"$dir/clean.ptxas"
{ kernel _Z5cleanPf 0 0 0 20; kernel _Z5spillPf 8 0 4 255; } >"$dir/loads.ptxas"
{ kernel _Z6storesPf 8 8 0 255; } >"$dir/stores.ptxas"

sh "$S" "$dir/clean.ptxas" 0 >"$dir/out" 2>&1
ok $? "no spills, budget 0: passes"
sh "$S" "$dir/clean.ptxas" 0 -v >"$dir/out" 2>&1
ok $([ $? = 0 ] && [ "$(grep -c '^ptxas: ' "$dir/out")" = 2 ] && grep -q '_Z6clean2Pf .* 32 registers' "$dir/out" &&
    echo 0 || echo 1) "-v lists each kernel with its registers: $(tr '\n' ' ' <"$dir/out")"
sh "$S" "$dir/loads.ptxas" 0 >"$dir/out" 2>&1
ok $([ $? != 0 ] && grep -q '_Z5spillPf spills 0/4 bytes, over the budget of 0' "$dir/out" &&
    ! grep -q _Z5cleanPf "$dir/out" && echo 0 || echo 1) "4 bytes of spill loads over 0: fails, names the kernel"
sh "$S" "$dir/stores.ptxas" 7 >"$dir/out" 2>&1
ok $([ $? != 0 ] && grep -q '_Z6storesPf spills 8/0' "$dir/out" && echo 0 || echo 1) "8 bytes of stores over 7: fails"
sh "$S" "$dir/stores.ptxas" 8 >"$dir/out" 2>&1
ok $? "8 bytes within a budget of 8: passes"
sh "$S" "$dir/none.ptxas" 0 >"$dir/out" 2>&1
ok $([ $? != 0 ] && grep -q 'no ptxas report' "$dir/out" && echo 0 || echo 1) "a missing report fails"
if grep -q '^#define TLM_HAVE_CUDA 1' "$TLM_BUILDDIR/config.h"; then
    budget=$(sed -n 's/^PTXAS_SPILL_BUDGET = //p' "$TLM_SRCDIR/engine/cuda/local.mk")
    for r in "$TLM_BUILDDIR"/engine/cuda/*.o.ptxas; do
        sh "$S" "$r" "$budget" >"$dir/out" 2>&1
        ok $? "$(basename "$r"): every kernel within $budget bytes"
    done
fi
echo "1..$n"
exit $failed
