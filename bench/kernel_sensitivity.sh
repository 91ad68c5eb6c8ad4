#!/bin/sh
# kernel_sensitivity.sh: does a sweep's result depend on the BLAS kernel?
# Issue 14's criterion for the CPU recipe: for the same config and seed, the
# final validation perplexity under two OpenBLAS kernels differs by less
# than a third of the seed-to-seed standard deviation.  This trains every
# configuration of a sweep (default sweeps/demo.yaml: its five configs) with
# the given seeds twice through tlmd, once per kernel, each into its own
# database, and prints per configuration the perplexity of every seed under
# both kernels, the largest difference, the seed-to-seed sd and whether the
# criterion holds.  A benchmark, not a test (hours of training on 2 cores).
#
# Run from the build folder (an in-tree build: the repository root):
#   sh bench/kernel_sensitivity.sh [--sweep FILE] [--seeds "0 1 2"]
#       [--kernels "Haswell auto"] [--only "1 4"] [--tokens N]
#       [--threads N] [--out DIR]
#   --kernels  OPENBLAS_CORETYPE values; "auto" leaves it unset, so the
#              engine picks (engine/cpu/runtime.c).  On an AMD Zen CPU the
#              engine picks Zen, whose sgemm is Haswell's: the two train
#              bit for bit alike there (measured), so compare another
#              kernel, e.g. --kernels "Sandybridge auto" (docs/recipe-cpu.md)
#   --only     which configurations, numbered 1.. as --list prints them
#   --tokens   a shorter training (train.tokens, the warm-up scaled with
#              it), said in the output; the schedule is then not the sweep's
#   --out      folder for the databases and run folders (default: a new one
#              under $TMPDIR); kept, and reused by a later run (tlmd never
#              trains a finished job twice)
#   --list     print the configurations and exit
# Exit status: 0 the criterion holds for every configuration, 1 it fails for
# one or more (or a result is missing, or one seed gives no sd to judge by:
# the differences are printed all the same), 2 usage or a missing tool.
set -eu
sweep=sweeps/demo.yaml
seeds="0 1 2"
kernels="Haswell auto"
only=""
tokens=""
threads=$(nproc 2>/dev/null || echo 2)
out=""
list=0
usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --sweep) sweep=$2; shift ;;
    --seeds) seeds=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --only) only=$2; shift ;;
    --tokens) tokens=$2; shift ;;
    --threads) threads=$2; shift ;;
    --out) out=$2; shift ;;
    --list) list=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "kernel_sensitivity.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    [ $# -gt 0 ] && shift
done
B=$(pwd)
T="$B/orchestrator/tlmd"
for p in "$T" "$B/worker/tlm-worker"; do
    [ -x "$p" ] || { echo "kernel_sensitivity.sh: $p is missing; build first (make -j2)" >&2; exit 2; }
done
set -- $kernels
[ $# -eq 2 ] || { echo "kernel_sensitivity.sh: --kernels '$kernels': expected two kernels, e.g. \"Haswell auto\"" >&2; exit 2; }
for k in $kernels; do
    case "$k" in
    *[!A-Za-z0-9]*) echo "kernel_sensitivity.sh: --kernels: '$k' is no OpenBLAS kernel name (letters and digits)" >&2; exit 2 ;;
    esac
done
[ -f "$sweep" ] || { echo "kernel_sensitivity.sh: $sweep: no such sweep file" >&2; exit 2; }
python3 -c 'import yaml, sqlite3' 2>/dev/null ||
    { echo "kernel_sensitivity.sh: needs python3 with yaml (apt-get install python3-yaml)" >&2; exit 2; }

# The sweep's configurations, one include each (so --only can pick some), with
# the given seeds: grid points an exclude entry matches are left out, a grid
# axis that does not apply to uniform (taper.ratio) is dropped there and the
# points it leaves identical are one, as tlmd does.
expand() {
    python3 - "$sweep" "$seeds" "$only" "$tokens" "$1" <<'PY'
import itertools, json, sys, yaml
path, seeds, only, tokens, mode = sys.argv[1:]
s = yaml.safe_load(open(path))
grid = s.get("grid") or {}
points = []
for combo in itertools.product(*grid.values()):
    p = dict(zip(grid.keys(), combo))
    for k in list(p):  # mapping values of the grid: {taper: {schedule: ..}} -> taper.schedule
        if isinstance(p[k], dict):
            for kk, vv in p.pop(k).items():
                p[k + "." + kk] = vv
    if any(all(p.get(k) == v for k, v in ex.items()) for ex in s.get("exclude") or []):
        continue
    if p.get("taper.schedule") == "uniform":
        p.pop("taper.ratio", None)
    if p not in points:
        points.append(p)
for inc in s.get("include") or []:
    if inc not in points:
        points.append(inc)
if mode == "list":
    for i, p in enumerate(points, 1):
        print("%d  %s" % (i, json.dumps(p)))
    sys.exit(0)
pick = [int(x) for x in only.split()] if only else list(range(1, len(points) + 1))
for i in pick:
    if not 1 <= i <= len(points):
        sys.exit("kernel_sensitivity.sh: --only %d: the sweep has configurations 1 to %d" % (i, len(points)))
base = s["base"]
if tokens:
    # the warm-up keeps its share of the (shorter) training
    tr = base.setdefault("train", {})
    if "tokens" in tr and "warmup_tokens" in tr:
        tr["warmup_tokens"] = int(float(tr["warmup_tokens"]) * int(float(tokens)) / float(tr["tokens"]))
    tr["tokens"] = int(float(tokens))
out = {"name": "ks_" + s["name"], "description": "kernel sensitivity of " + path,
       "base": base, "include": [points[i - 1] for i in pick], "seeds": [int(x) for x in seeds.split()]}
class NoAliases(yaml.SafeDumper):  # tlmd refuses YAML aliases; shared values are written out
    def ignore_aliases(self, data):
        return True
yaml.dump(out, sys.stdout, Dumper=NoAliases, sort_keys=False)
PY
}
if [ "$list" = 1 ]; then expand list; exit 0; fi
if [ -z "$out" ]; then out=$(mktemp -d "${TMPDIR:-/tmp}/tlm-kernel-sensitivity-XXXXXX"); fi
mkdir -p "$out"
expand sweep >"$out/sweep.yaml.tmp"
mv "$out/sweep.yaml.tmp" "$out/sweep.yaml"
name=$(sed -n 's/^name: //p' "$out/sweep.yaml")
echo "kernel_sensitivity: $sweep, seeds $seeds, kernels $kernels, $threads threads; in $out"
[ -n "$tokens" ] && echo "kernel_sensitivity: train.tokens $tokens instead of the sweep's (a shorter schedule)"
now() { date +%s; }

for k in $kernels; do
    t0=$(now)
    # the data paths of the sweep are relative to the repository root
    if [ "$k" = auto ]; then
        (unset OPENBLAS_CORETYPE; nice -n 10 "$T" --sweeps "$out/sweep.yaml" --db "$out/$k.db" --runs "$out/runs-$k" \
            --workers 1 --threads-per-worker "$threads" --no-progress >"$out/$k.log" 2>&1)
    else
        OPENBLAS_CORETYPE=$k nice -n 10 "$T" --sweeps "$out/sweep.yaml" --db "$out/$k.db" --runs "$out/runs-$k" \
            --workers 1 --threads-per-worker "$threads" --no-progress >"$out/$k.log" 2>&1
    fi || { echo "kernel_sensitivity: tlmd under kernel $k failed (exit $?); $out/$k.log:"; tail -5 "$out/$k.log"; exit 1; }
    echo "kernel_sensitivity: kernel $k: $(( $(now) - t0 )) s"
done

python3 - "$out" "$name" $kernels <<'PY'
import os, sqlite3, statistics, sys
out, name, kernels = sys.argv[1], sys.argv[2], sys.argv[3:]
res, ran = {}, {}
for k in kernels:
    if not os.path.exists("%s/%s.db" % (out, k)):
        sys.exit("kernel_sensitivity: %s/%s.db: no results (tlmd did not run under kernel %s)" % (out, k, k))
    db = sqlite3.connect("file:%s/%s.db?mode=ro" % (out, k), uri=True)
    for arch, label, seed, ppl in db.execute(
            "SELECT r.arch, r.label, r.seed, r.val_ppl FROM results r JOIN sweep_jobs sj ON sj.job = r.key "
            "WHERE sj.sweep = ? AND sj.active = 1 AND r.status = 'done'", (name,)):
        # labels name the taper only: in a sweep over architectures (main_cpu)
        # "uniform" is one config per architecture
        res.setdefault((arch, label), {}).setdefault(k, {})[seed] = ppl
    ran[k] = sorted({r[0] for r in db.execute(
        "SELECT DISTINCT e.blas_kernel FROM environment e JOIN attempts a ON a.id = e.attempt "
        "JOIN sweep_jobs sj ON sj.job = a.job WHERE sj.sweep = ?", (name,)) if r[0]})
a, b = kernels[0], kernels[1]
archs = {arch for arch, _ in res}
res = {(label if len(archs) == 1 else arch + " " + label): r for (arch, label), r in res.items()}
print("kernels: " + ", ".join("%s ran %s" % (k, "/".join(ran[k]) or "?") for k in kernels))
print("| config | seed | ppl %s | ppl %s | diff |" % (a, b))
print("|---|---|---|---|---|")
ok, summary = True, []
for label in sorted(res):
    r = res[label]
    seeds = sorted(set(r.get(a, {})) & set(r.get(b, {})))
    for s in seeds:
        print("| %s | %d | %.3f | %.3f | %+.4f |" % (label, s, r[a][s], r[b][s], r[b][s] - r[a][s]))
    if len(seeds) < 2:
        summary.append((label, len(seeds)))
        ok = False
        continue
    dmax = max(abs(r[b][s] - r[a][s]) for s in seeds)
    # the smaller of the two seed-to-seed sds: the criterion must hold under either kernel
    sd = min(statistics.stdev([r[k][s] for s in seeds]) for k in (a, b))
    summary.append((label, (len(seeds), dmax, sd)))
    ok = ok and dmax < sd / 3
print()
print("| config | seeds | max abs diff | seed sd | sd / 3 | holds |")
print("|---|---|---|---|---|---|")
for label, v in summary:
    if isinstance(v, int):
        print("| %s | %d paired | - | - | - | %s |" % (label, v, "no sd from one seed" if v else "no result"))
    else:
        n, dmax, sd = v
        print("| %s | %d | %.4f | %.3f | %.3f | %s |" % (label, n, dmax, sd, sd / 3, "yes" if dmax < sd / 3 else "NO"))
print()
if all(isinstance(v, int) for _, v in summary):
    print("criterion (max abs diff < seed sd / 3): not evaluated (fewer than two paired seeds: no seed sd)")
else:
    print("criterion (max abs diff < seed sd / 3): " + ("holds for every configuration" if ok else "FAILS"))
sys.exit(0 if ok else 1)
PY
