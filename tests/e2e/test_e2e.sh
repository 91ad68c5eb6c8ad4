#!/bin/sh
# test_e2e.sh: the whole product on tiny jobs.  A 12-job sweep (uniform,
# wider-early/middle/late, cosine and linear tapers, two seeds each) and a
# 6-job one (gated_attn, hope_attn, titans x uniform, cosine) with
# the val, lambada, commonsense (PIQA), niah and alignment suites goes
# through tlmd and the real tlm-worker into results.db; then tlm-report
# renders every table in every format and every figure, and e2e_check.py
# recomputes each number from results.db with its own SQL and parses every
# file (CSV, JSON, LaTeX structure, SVG as XML, PNG header).
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
R="$TLM_BUILDDIR/reports/tlm-report"
PY=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import sqlite3, statistics' >/dev/null 2>&1; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "# no python3 with sqlite3: skip"; exit 77; }
LSAN_OPTIONS="suppressions=$TLM_SRCDIR/tests/report/test_report.lsan${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

# task files: five LAMBADA passages, four PIQA items
cat >lambada.jsonl <<'J'
{"text": "the program reads the file and then writes the file"}
{"text": "you may copy and distribute the program"}
{"text": "this license applies to any program"}
{"text": "the source code of the work"}
{"text": "each licensee is addressed as you"}
J
mkdir -p cs
cat >cs/piqa.jsonl <<'J'
{"goal": "To copy the program", "sol1": "keep the notice.", "sol2": "remove the notice.", "label": 0}
{"goal": "To get the source", "sol1": "ask the distributor.", "sol2": "ask the moon.", "label": 0}
{"goal": "To modify the work", "sol1": "eat it.", "sol2": "edit the source code.", "label": 1}
{"goal": "To share the program", "sol1": "give copies.", "sol2": "burn copies.", "label": 0}
J
GPL=/usr/share/common-licenses/GPL-3
cat >e2e.yaml <<Y
name: e2e
base:
  model: {d_model: 64, layers: 6, heads: 2, d_ff: 128, vocab: 256}
  tokenizer: bytes
  data: {train: $tmp/text.tlmtok}
  eval: {every_tokens: 8192, val_tokens: 2048,
         suites: [val, lambada, commonsense, niah, alignment],
         lambada: $tmp/lambada.jsonl, commonsense: $tmp/cs, commonsense_tasks: [piqa],
         niah: {lengths: [512], n: 2, tasks: [s_niah_1], haystack: $GPL},
         alignment: {text: $GPL, tokens: 256}}
  train: {tokens: 12288, seq_len: 32, batch_tokens: 1024, micro_batch: 8, lr: 3e-3,
          warmup_tokens: 2048, log_every: 1}
grid:
  taper.schedule: [blocks]
  taper.groups: [[1.5, 1.0, 0.5], [0.75, 1.5, 0.75], [0.5, 1.0, 1.5]]
include:
  - {taper.schedule: uniform}
  - {taper.schedule: cosine, taper.ratio: [1.5, 0.5]}
  - {taper.schedule: linear, taper.ratio: [1.25, 0.75]}
seeds: [0, 1]
Y
# the other three architectures, uniform and tapered, one seed: a second
# sweep file with the same base (the main table's other rows)
sed -n '/^base:/,/^grid:/p' e2e.yaml | sed '$d' >base.yaml
{
    echo "name: e2e_arch"
    cat base.yaml
    echo "grid:"
    echo "  arch: [gated_attn, hope_attn, titans]"
    echo "  taper: [{schedule: uniform}, {schedule: cosine, ratio: [1.5, 0.5]}]"
    echo "seeds: [0]"
} >e2e_arch.yaml
"$T" --sweeps e2e.yaml --sweeps e2e_arch.yaml --workers 2 --threads-per-worker 1 --no-progress >tlmd.log 2>&1
rc=$?
ok $rc "tlmd trains the 18 jobs (exit $rc)"
[ $rc = 0 ] || { sed 's/^/# /' tlmd.log | tail -n 30; finish; }
ok "$([ "$(q "select count(*) from results where status = 'done'")" = 18 ] && echo 0 || echo 1)" \
    "results holds 18 done jobs"
# several architectures in one run: the log names each job's
grep -q "(titans cosine 1.5->0.5) done in" tlmd.log && grep -q "(transformer wider-early) started on" tlmd.log
ok $? "tlmd's log lines name the architecture when a run has several"
for a in gated_attn hope_attn titans; do
    nd=$(q "select count(*) from jobs where arch = '$a' and status = 'done'")
    ok "$([ "$nd" = 2 ] && echo 0 || echo 1)" "$a: 2 jobs done through tlmd ($nd)"
    # the validation loss falls: last evaluation below the first
    fell=$(q "select (select value from evals e where e.job = j.key and suite = 'val' and metric = 'loss'
                      order by step desc limit 1) < (select value from evals e where e.job = j.key and
                      suite = 'val' and metric = 'loss' order by step limit 1)
              from jobs j where arch = '$a'" | sort -u | tr '\n' ' ')
    ok "$([ "$fell" = "1 " ] && echo 0 || echo 1)" "$a: validation loss falls in every job ($fell)"
done

mkdir -p out/figures
for t in wider_early_vs_late schedule_ratio main alignment niah runs; do
    for f in md csv latex json; do
        "$R" --db results.db --table "$t" --format "$f" --taper cosine:1.5:0.5 --out "out/$t.$f" 2>err.txt
        ok $? "tlm-report --table $t --format $f $(cat err.txt)"
    done
done
for p in loss dff rho ppl_ratio; do
    for x in svg png; do
        "$R" --db results.db --plot "$p" --out "out/figures/$p.$x" 2>err.txt
        ok $? "tlm-report --plot $p --out $p.$x $(cat err.txt)"
    done
done
"$PY" "$TLM_SRCDIR/tests/e2e/e2e_check.py" results.db out
ok $? "every number equals direct SQL, every file parses (e2e_check.py)"
finish
