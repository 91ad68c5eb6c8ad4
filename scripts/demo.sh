#!/bin/sh
# demo.sh: the README's main job.  On a fresh Debian machine (as root, or
# with sudo) it does the whole study in miniature:
#   1. installs what TLM needs, builds it, and makes the demonstration
#      corpus and its token shards (scripts/setup.sh, scripts/make-demo-data.sh)
#   2. trains the 15 jobs of sweeps/demo.yaml (five configurations x three
#      seeds) with tlmd into results.db
#   3. prints the paper's Figure 2 comparison and the cosine taper against
#      uniform (paired differences with 95% intervals) and the summary of
#      what the runs support, and writes every table and figure into report/
# About 20 minutes on 2 cores; running it again reuses what is done (tlmd
# never trains a finished job twice).  README.md says how to read the output.
set -eu
cd "$(dirname "$0")/.."

scripts/setup.sh   # also makes the demonstration shards

cores=$(nproc 2>/dev/null || echo 2)
# One worker with every core: tlmd trains the jobs one after the other.
orchestrator/tlmd --sweeps sweeps/demo.yaml --db results.db --runs runs \
    --workers 1 --threads-per-worker "$cores"

echo
reports/tlm-report --db results.db --sweep demo --table wider_early_vs_late --paper
echo
reports/tlm-report --db results.db --sweep demo --table schedule_ratio
reports/tlm-report --db results.db --sweep demo --all --paper --out report >/dev/null
echo
# report.md's plain-language summary, written from the numbers (paired by
# seed, 95% intervals): what three seeds of these jobs do and do not support
sed -n '/^## What the runs support/,/^## /p' report/report.md | sed '$d'
echo "Every table and figure: report/report.md (figures in report/figures/)."
echo "The database: sqlite3 -readonly results.db 'SELECT label, val_ppl FROM results'"
