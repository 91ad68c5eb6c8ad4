#!/bin/sh
# demo.sh: the README's main job on this machine.
# For now (until tlmd lands) it builds TLM and prints, for the paper's 440M
# model, the per-layer MLP widths and parameter account of every taper the
# study compares.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in "uniform" "cosine" "linear" "sigmoid"; do
    printf 'scale: 440m\ntaper: {schedule: %s}\n' "$s" >"$tmp/job.yaml"
    [ "$s" = uniform ] || printf 'taper: {schedule: %s, ratio: [1.5, 0.5]}\nscale: 440m\n' "$s" >"$tmp/job.yaml"
    worker/tlm-worker --describe --config "$tmp/job.yaml" >"$tmp/$s.json"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = d["widths"]["d_ff"]
print("%-8s params %d  sum(d_ff) %d = L x d_base %d  d_ff: %s" % (sys.argv[2], d["params"]["total"], sum(w), d["widths"]["budget"], " ".join(map(str, w))))
' "$tmp/$s.json" "$s"
done
