#!/bin/sh
# make-demo-data.sh: the demonstration corpus for the CPU sweeps, made from
# Debian packages (docs/data.md: sources, licences, cleaning):
#   bible-kjv     the King James Bible (public domain text), via its `bible` program
#   jargon-text   the Jargon File 4.4.7 (public domain)
# cleaned into data/corpus/*.txt, then tokenized with tlm-data into
#   data/demo/          tokenizer bytes   (what the CPU presets use)
#   data/demo-bpe4096/  tokenizer bpe4096 (trained on the training split; skip with --no-bpe)
# each with train/ and val/ shards (5% of 64 KiB segments for validation)
# and manifest.json.  Quick when nothing changed: a dataset is rebuilt only
# when its corpus files differ from the ones its manifest lists.
#
#   scripts/make-demo-data.sh [--no-bpe] [--tlm-data PATH]
set -eu
cd "$(dirname "$0")/.."

bpe=1
tlm_data=${TLM_DATA:-dataprep/tlm-data}
while [ $# -gt 0 ]; do
    case "$1" in
    --no-bpe) bpe=0 ;;
    --tlm-data) tlm_data=$2; shift ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "make-demo-data.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
say() { printf 'demo-data: %s\n' "$*" >&2; }

[ -x "$tlm_data" ] || { say "$tlm_data is not built (run scripts/setup.sh, or pass --tlm-data)"; exit 1; }
command -v bible >/dev/null 2>&1 || { say "the bible program is missing: apt-get install bible-kjv (scripts/setup.sh does)"; exit 1; }
mkdir -p data/corpus
tmp=$(mktemp -d data/corpus/.tmp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
jargon=/usr/share/doc/jargon-text/jargon.txt.gz
if [ ! -f "$jargon" ] && dpkg-query -W jargon-text >/dev/null 2>&1; then
    # installed, but images that drop /usr/share/doc lost the file: take it from the package
    (cd "$tmp" && apt-get download jargon-text >/dev/null 2>&1 && dpkg-deb -x jargon-text_*.deb x) &&
        jargon="$tmp/x/usr/share/doc/jargon-text/jargon.txt.gz"
fi
[ -f "$jargon" ] || { say "$jargon is missing: apt-get install jargon-text (scripts/setup.sh does)"; exit 1; }

# King James Bible: one verse per line without its number, a blank line and
# the "Book N" heading before each chapter.
bible -l 100000 "Genesis1:1-Revelation22:21" </dev/null >"$tmp/kjv.raw"
python3 - "$tmp/kjv.raw" "$tmp/kjv.txt" <<'PY'
import re, sys
out = []
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip()
    m = re.match(r"^\s+\d+ (.*)$", line)
    if m:
        out.append(m.group(1))
    elif line.strip():
        out.append("\n" + line.strip())
text = "\n".join(out).strip() + "\n"
open(sys.argv[2], "w", encoding="utf-8").write(text)
PY

# Jargon File: the plain-text rendering, minus its box-drawing rules, with
# the 3-space page indent removed, trailing blanks trimmed and runs of blank
# lines squeezed to one.
gzip -dc "$jargon" >"$tmp/jargon.raw"
python3 - "$tmp/jargon.raw" "$tmp/jargon.txt" <<'PY'
import sys
out, blank = [], 0
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip()
    if line and set(line.strip()) <= set("═─━"):
        continue
    if line.startswith("   "):
        line = line[3:]
    if not line.strip():
        blank += 1
        continue
    if blank and out:
        out.append("")
    blank = 0
    out.append(line)
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(out) + "\n")
PY

for f in kjv.txt jargon.txt; do
    if ! cmp -s "$tmp/$f" "data/corpus/$f"; then
        mv "$tmp/$f" "data/corpus/$f"
    fi
done
size=$(cat data/corpus/kjv.txt data/corpus/jargon.txt | wc -c)
say "corpus: data/corpus/{jargon,kjv}.txt, $size bytes"

# Rebuild a dataset only when its manifest does not list these exact files.
fresh() { # fresh DIR
    [ -f "$1/manifest.json" ] || return 1
    for f in data/corpus/jargon.txt data/corpus/kjv.txt; do
        h=$(sha256sum "$f" | cut -d' ' -f1)
        grep -q "\"sha256\": \"$h\"" "$1/manifest.json" || return 1
    done
}
if fresh data/demo; then
    say "data/demo is up to date"
else
    "$tlm_data" build --tokenizer bytes --out data/demo --val-fraction 0.05 --segment-bytes 64k data/corpus
fi
if [ "$bpe" = 1 ]; then
    if fresh data/demo-bpe4096 && [ -f data/demo-bpe4096/bpe4096.tiktoken ]; then
        say "data/demo-bpe4096 is up to date"
    else
        "$tlm_data" build --tokenizer bpe4096 --train-bpe --out data/demo-bpe4096 --val-fraction 0.05 \
            --segment-bytes 64k data/corpus
    fi
fi
