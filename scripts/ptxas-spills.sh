#!/bin/sh
# ptxas-spills.sh: the spill check of the CUDA build (engine/cuda/local.mk).
# Reads the report nvcc -Xptxas -v wrote for one .cu (FILE) and fails when
# any kernel spills more than BUDGET bytes (stores or loads), naming it;
# with -v (make V=1) it also prints one line per kernel (registers, stack,
# spill bytes).
# Usage: scripts/ptxas-spills.sh FILE BUDGET [-v]
set -eu
file=$1
budget=$2
list=0
[ "${3:-}" = -v ] && list=1
test -r "$file" || { echo "ptxas-spills: $file: no ptxas report (compile with -Xptxas -v)" >&2; exit 1; }
# A function's block: "Compiling entry function 'NAME'" or "Function
# properties for NAME", then "N bytes stack frame, S bytes spill stores, L
# bytes spill loads", then "Used R registers".
awk -v budget="$budget" -v file="$file" -v list="$list" '
  /Compiling entry function/ { name = $0; sub(/.*function \047/, "", name); sub(/\047.*/, "", name); kern[name] = 1 }
  /Function properties for/ { fn = $0; sub(/.*properties for /, "", fn) }
  /bytes spill stores/ {
    for (i = 1; i <= NF; i++) {
      if ($(i+1) == "bytes" && $(i+2) == "stack") stack = $i
      if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) ~ /^stores/) st = $i
      if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) ~ /^loads/) ld = $i
    }
    sst[fn] = st; sld[fn] = ld; sstack[fn] = stack
  }
  /Used [0-9]+ registers/ {
    for (i = 1; i <= NF; i++) if ($i == "Used") regs = $(i+1)
    if (fn != "") { reg[fn] = regs; order[++n] = fn }
    fn = ""
  }
  END {
    bad = 0
    for (k = 1; k <= n; k++) {
      f = order[k]
      if (!(f in kern)) continue
      if (list) printf "ptxas: %-60s %3d registers, %4d bytes stack, %d/%d bytes spilled (stores/loads)\n", f, reg[f], sstack[f], sst[f], sld[f]
      if (sst[f] + 0 > budget || sld[f] + 0 > budget) { bad = 1; printf "ptxas-spills: %s: %s spills %d/%d bytes, over the budget of %d\n", file, f, sst[f], sld[f], budget > "/dev/stderr" }
    }
    exit bad
  }' "$file"
