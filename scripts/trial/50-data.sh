# 50-data.sh: tlm-data (docs/data.md): every option of build, encode, decode
# and train-bpe missing, malformed, out of range, repeated and pointless;
# inputs that are broken JSONL, FIFOs, devices, link loops, its own output;
# tiktoken rank files that are broken.  Exit 2 for usage, 1 for a failed
# build (`tlm-data: <kind> error: ...`).  Sourced by trial.sh.

IN=$FX/corpus
# du ID WHAT STATUS PATTERN ARGS...: tlm-data ARGS exits STATUS saying
# PATTERN, and leaves no dataset folder x (nor x.tmp.*) behind
du() {
    local id=$1 what=$2 st=$3 pat=$4
    shift 4
    selected "$id" || return 0
    in_case "$id"
    AFTER="${AFTER:+$AFTER && }"'! ls -d x x.tmp.* >/dev/null 2>&1' AFTER_MSG="${AFTER_MSG:-a refused build left x or x.tmp.* behind}" \
        tc "$id" "$what" "$st" "$pat" "$D" "$@"
}
B=(build --tokenizer bytes --out x)

du data.no-command "no command" 2 "^usage: tlm-data COMMAND"
du data.unknown-command "an unknown command" 2 "unknown command 'frob' \(try tlm-data --help\)" frob
du data.build-noargs "build with no options" 2 "--tokenizer and --out are required" build
du data.build-notok "build without --tokenizer" 2 "--tokenizer and --out are required" build --out x "$IN"
du data.build-noout "build without --out" 2 "--tokenizer and --out are required" build --tokenizer bytes "$IN"
du data.build-noinput "build without inputs" 2 "no inputs \(text files, folders or JSONL files\)" "${B[@]}"
du data.build-unknown "build --bogus" 2 "unrecognized option '--bogus'" "${B[@]}" --bogus "$IN"
du data.build-out-twice "build --out twice" 2 "--out is given twice; give it once" build --tokenizer bytes --out x --out y "$IN"
du data.build-vf-twice "build --val-fraction twice" 2 "--val-fraction is given twice; give it once" "${B[@]}" --val-fraction 0.5 --val-fraction 0.1 "$IN"
du data.build-vf-neg "--val-fraction -0.1" 2 "--val-fraction.*(\[0, 1\)|range)" "${B[@]}" --val-fraction -0.1 "$IN"
du data.build-vf-big "--val-fraction 1.5" 2 "--val-fraction.*(\[0, 1\)|range)" "${B[@]}" --val-fraction 1.5 "$IN"
du data.build-vf-one "--val-fraction 1 (nothing to train on)" 2 "--val-fraction.*(\[0, 1\)|range)" "${B[@]}" --val-fraction 1 "$IN"
du data.build-vf-nan "--val-fraction nan" 2 "--val-fraction.*(\[0, 1\)|not a number)" "${B[@]}" --val-fraction nan "$IN"
du data.build-vf-word "--val-fraction some" 2 "--val-fraction.*(\[0, 1\)|not a number)" "${B[@]}" --val-fraction some "$IN"
du data.build-seg-63 "--segment-bytes 63" 2 "--segment-bytes 63: expected a whole number of bytes, at least 64" "${B[@]}" --segment-bytes 63 "$IN"
du data.build-seg-frac "--segment-bytes 100.5" 2 "--segment-bytes 100.5: expected a whole number of bytes, at least 64" "${B[@]}" --segment-bytes 100.5 "$IN"
du data.build-seg-nan "--segment-bytes nan" 2 "--segment-bytes nan: expected a whole number of bytes" "${B[@]}" --segment-bytes nan "$IN"
du data.build-seg-hex "--segment-bytes 0x100" 2 "--segment-bytes 0x100: expected a whole number of bytes" "${B[@]}" --segment-bytes 0x100 "$IN"
du data.build-seg-huge "--segment-bytes 1e400" 2 "--segment-bytes 1e400: expected a whole number of bytes" "${B[@]}" --segment-bytes 1e400 "$IN"
du data.build-seg-suffix "--segment-bytes 64q (an unknown suffix)" 2 "--segment-bytes 64q: expected a whole number of bytes" "${B[@]}" --segment-bytes 64q "$IN"
du issue.shard-tokens-1 "--shard-tokens 1" 2 "--shard-tokens 1 is out of range: give a count from 1M \(1048576\) to 4G" "${B[@]}" --shard-tokens 1 "$IN"
du data.build-shard-0 "--shard-tokens 0" 2 "--shard-tokens 0 is out of range: give a count from 1M" "${B[@]}" --shard-tokens 0 "$IN"
du data.build-shard-8g "--shard-tokens 8G" 2 "--shard-tokens 8G is out of range" "${B[@]}" --shard-tokens 8G "$IN"
du data.build-shard-neg "--shard-tokens -1M" 2 "--shard-tokens -1M.*(out of range|whole number)" "${B[@]}" --shard-tokens -1M "$IN"
du data.build-format "--format bogus" 2 "--format bogus: expected auto, text or jsonl" "${B[@]}" --format bogus "$IN"
du data.build-field-text "--field with --format text" 2 "--field does nothing with --format text" "${B[@]}" --format text --field body "$IN"
du data.build-maxline-0 "--max-line 0" 2 "--max-line 0: expected a whole number of bytes, at least 1" "${B[@]}" --max-line 0 "$IN"
du data.build-maxline-frac "--max-line 1.5" 2 "--max-line 1.5: expected a whole number of bytes" "${B[@]}" --max-line 1.5 "$IN"
du data.build-tok-unknown "--tokenizer foo (no rank file)" 1 "tokenizer 'foo': no foo\.tiktoken rank file \(looked in" build --tokenizer foo --out x "$IN"
du data.build-bpe-norank "--tokenizer bpe300 without --train-bpe or a rank file" 1 "tokenizer 'bpe300': no bpe300\.tiktoken rank file" build --tokenizer bpe300 --out x "$IN"
du data.build-trainbpe-bytes "--train-bpe with --tokenizer bytes" 1\|2 "--train-bpe needs --tokenizer bpeN \(N from 257 to 1048576\), not 'bytes'" "${B[@]}" --train-bpe "$IN"
du data.build-trainbpe-huge "--train-bpe bpe99999999999" 1\|2 "bpeN \(N from 257 to 1048576\)" build --tokenizer bpe99999999999 --train-bpe --out x "$IN"
du data.build-llama3-missing "--tokenizer llama3 without its rank file" 1 "tokenizer 'llama3': no llama3\.tiktoken rank file" build --tokenizer llama3 --out x "$IN"
du data.build-input-missing "an input that does not exist" 1 "missing: No such file or directory" "${B[@]}" "$tmp/c/data.build-input-missing/missing"
du data.build-devnull "/dev/null as an input" 1 "/dev/null: is not a regular file \(a character device\)" "${B[@]}" /dev/null
selected data.build-empty-dir && { in_case data.build-empty-dir; mkdir e
    du data.build-empty-dir "a folder with no files" 1 "no files found in the inputs \(hidden files are skipped\)" "${B[@]}" e; }
selected data.build-only-hidden && { in_case data.build-only-hidden; mkdir e; echo text >e/.hidden
    du data.build-only-hidden "a folder with only hidden files" 1 "no files found in the inputs \(hidden files are skipped\)" "${B[@]}" e; }
selected data.build-fifo && { in_case data.build-fifo; mkfifo in.fifo
    TO=10 du data.build-fifo "a FIFO as an input" 1 "in\.fifo: is not a regular file \(a FIFO\)" "${B[@]}" in.fifo; }
selected data.build-fifo-in-dir && { in_case data.build-fifo-in-dir; mkdir d; cp "$FX/corpus/GPL-2" d/; mkfifo d/z.fifo
    TO=10 du data.build-fifo-in-dir "a FIFO inside an input folder" 1 "d/z\.fifo: is not a regular file \(a FIFO\)" "${B[@]}" d; }
selected data.build-link-loop && { in_case data.build-link-loop; mkdir -p l/a; cp "$FX/corpus/GPL-2" l/a/; ln -s .. l/a/loop
    du data.build-link-loop "an input folder with a symlink loop" 1 "folders nested deeper than 32 \(a link loop\?\)" "${B[@]}" l; }
selected data.build-dangling && { in_case data.build-dangling; mkdir l; cp "$FX/corpus/GPL-2" l/; ln -s "$tmp/none" l/dangling
    du data.build-dangling "a dangling symlink in an input folder" 1 "l/dangling: No such file or directory" "${B[@]}" l; }
selected data.build-out-file && { in_case data.build-out-file; echo keep >x
    AFTER='[ "$(cat x)" = keep ]' AFTER_MSG="the file given as --out was changed" \
        tc data.build-out-file "--out is an existing file" 1\|2 "--out x (exists and )?is not a (folder|directory)" "$D" "${B[@]}" "$IN"; }
selected data.build-out-foreign && { in_case data.build-out-foreign; mkdir x; echo mine >x/notes.txt
    AFTER='[ "$(cat x/notes.txt)" = mine ]' AFTER_MSG="a folder that is not a dataset was replaced" \
        tc data.build-out-foreign "--out is a folder that is not a dataset" 1\|2 "not a tlm-data dataset" "$D" "${B[@]}" "$IN"; }
# (the first build is made beside the input and moved in: tlm-data refuses
# to build into an input folder, so a dataset gets there only by hand)
selected data.build-out-inside && { in_case data.build-out-inside; mkdir in; cp "$FX/corpus/GPL-2" in/
    "$D" build --tokenizer bytes --out ds in >/dev/null 2>&1 && mv ds in/ds
    cp in/ds/manifest.json first.json
    first=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["splits"]["train"]["tokens"])' in/ds/manifest.json)
    AFTER='if [ $rc = 2 ]; then cmp -s first.json in/ds/manifest.json; else python3 -c "import json, sys; m = json.load(open(sys.argv[1])); s = [x[\"path\"] for x in m[\"sources\"]]; assert s == [\"in/GPL-2\"], s" in/ds/manifest.json; fi' \
        AFTER_MSG="the rebuilt dataset read its own previous output as text (first build: $first tokens), or a refused rebuild changed it" \
        tc data.build-out-inside "rebuilding a dataset whose --out lies inside the input folder" 0\|2 "in/ds: .* train|--out .*inside" \
        "$D" build --tokenizer bytes --out in/ds in; }
selected data.build-ok && { in_case data.build-ok
    tc data.build-ok "a plain build (handled)" 0 "x: [0-9]+ train \+ [0-9]+ val tokens \(bytes\)" "$D" "${B[@]}" --val-fraction 0.1 "$IN"; }

# ---- JSONL inputs
# dj ID WHAT PATTERN TEXT: x.jsonl holds TEXT (printf format); the build fails (1) saying PATTERN
dj() {
    selected "$1" || return 0
    in_case "$1"
    printf "$4" >in.jsonl
    du "$1" "$2" 1 "$3" "${B[@]}" in.jsonl
}
dj data.jsonl-syntax "JSONL with a broken line 3" 'in\.jsonl:3:[0-9]+: invalid JSON' '{"text": "a"}\n{"text": "b"}\n{"text": oops}\n'
dj data.jsonl-truncated "JSONL cut in the middle of a record" 'in\.jsonl:2:[0-9]+: invalid JSON' '{"text": "a"}\n{"text": "b"'
dj data.jsonl-nofield "a record without the text field" 'in\.jsonl:2: no "text" field' '{"text": "a"}\n{"body": "b"}\n'
dj data.jsonl-number "a text field that is a number" 'in\.jsonl:1: field "text" is a number' '{"text": 5}\n'
dj data.jsonl-array "a line that is a JSON array" 'in\.jsonl:1: expected a JSON object' '[1, 2]\n'
dj data.jsonl-latin1 "a record with a Latin-1 byte" 'in\.jsonl:2:[0-9]+: invalid JSON: unable to decode byte 0xff' '{"text": "a"}\n{"text": "\377"}\n'
dj data.jsonl-bom "a JSONL file starting with a byte-order mark" 'in\.jsonl:1:1: .*(byte-order mark|BOM|U\+FEFF)' '\357\273\277{"text": "a"}\n'
selected data.jsonl-longline && { in_case data.jsonl-longline; python3 -c "print('{\"text\": \"' + 'a' * 300 + '\"}')" >in.jsonl
    du data.jsonl-longline "a line longer than --max-line" 1 "in\.jsonl:1: line of 312 bytes is longer than the limit of 100 \(--max-line\)" "${B[@]}" --max-line 100 in.jsonl; }
selected data.jsonl-field && { in_case data.jsonl-field; printf '{"body": "some text"}\n' >in.jsonl
    tc data.jsonl-field "--field body (handled)" 0 "x: 9 train" "$D" "${B[@]}" --field body in.jsonl; }

# ---- encode, decode, train-bpe
dcode() { # dcode ID WHAT STATUS PATTERN STDIN-TEXT ARGS...
    local id=$1 what=$2 st=$3 pat=$4 text=$5
    shift 5
    selected "$id" || return 0
    in_case "$id"
    printf '%s' "$text" >in.txt
    IN=in.txt tc "$id" "$what" "$st" "$pat" "$D" "$@"
}
dcode data.encode-notok "encode without --tokenizer" 2 "--tokenizer is required" "hi" encode
dcode data.encode-twice "encode --tokenizer twice" 2 "--tokenizer is given twice" "hi" encode --tokenizer bytes --tokenizer bytes
dcode data.encode-unknown-tok "encode --tokenizer foo" 1 "tokenizer 'foo': no foo\.tiktoken rank file" "hi" encode --tokenizer foo
dcode data.encode-bogus "encode --bogus" 2 "unrecognized option '--bogus'" "hi" encode --tokenizer bytes --bogus
dcode data.encode-data-file "encode --data of a file" 2 "--data .*: is not a directory \(expected a dataset folder\)" "hi" encode --tokenizer bytes --data "$SHARD"
dcode data.encode-ok "encode (handled)" 0 "^104 105$" "hi" encode --tokenizer bytes
dcode data.decode-range "decode id 300 with bytes (256 ids)" 1 "stdin: item 1 \(300\) is out of range: tokenizer bytes has ids 0 to 255" "300 1" decode --tokenizer bytes
dcode data.decode-neg "decode -1 (out of range, not 'not a whole number')" 1 "stdin: item 1 \(-1\) is out of range: tokenizer bytes has ids 0 to 255" "-1" decode --tokenizer bytes
dcode data.decode-word "decode abc" 1 "stdin: item 1 \('abc'\) is not a token id" "abc" decode --tokenizer bytes
dcode data.decode-huge "decode 99999999999999999999" 1 "stdin: item 1 \(99999999999999999999\) is out of range: tokenizer bytes has ids 0 to 255" "99999999999999999999" decode --tokenizer bytes
dcode issue26.decode-word-range "decode x1 (a word: not a token id, with the range)" 1 "stdin: item 2 \('x1'\) is not a token id \(a whole number from 0 to 255\)" "1 x1" decode --tokenizer bytes
dcode issue26.tokenizer-byte "encode --tokenizer byte (a slip of bytes)" 1 "tokenizer 'byte': not a tokenizer name, .*did you mean 'bytes'\?" "hi" encode --tokenizer byte
du issue26.build-tokenizer-byte "build --tokenizer byte" 1 "tokenizer 'byte': .*did you mean 'bytes'\?" build --tokenizer byte --out x "$IN"
du issue26.build-out-novalue "build --out without its value" 2 "option '--out' requires an argument \(try tlm-data build --help\)" build --tokenizer bytes --out
du issue26.build-tok-novalue "build --tokenizer without its value" 2 "option '--tokenizer' requires an argument \(try tlm-data build --help\)" build --out x --tokenizer
du issue26.decode-tok-novalue "decode --tokenizer without its value" 2 "option '--tokenizer' requires an argument \(try tlm-data decode --help\)" decode --tokenizer
du issue26.bpe-vocab-novalue "train-bpe --vocab without its value" 2 "option '--vocab' requires an argument \(try tlm-data train-bpe --help\)" train-bpe --out t.tiktoken --vocab
selected issue26.build-empty-val && { in_case issue26.build-empty-val; printf 'a few words\n' >t.txt
    AFTER='[ -f x/manifest.json ]' AFTER_MSG="the dataset was not made" \
        tc issue26.build-empty-val "build of 12 bytes: its validation split is empty (warned when written)" 0 "warning: x/val is empty: 1 segment\(s\) of at most 65536 bytes, and --val-fraction 0\.01 makes one in 100 a validation segment; a job with data\.val x/val will fail" \
        "$D" build --tokenizer bytes --out x t.txt; }
dcode data.decode-item3 "decode '1 2 x' (the third item)" 1 "stdin: item 3 \('x'\) is not a token id" "1 2 x" decode --tokenizer bytes
dcode data.decode-special "decode --special" 2 "decode: --special does nothing when decoding" "1" decode --tokenizer bytes --special
dcode data.decode-raw "decode --raw-bytes" 2 "decode: --raw-bytes does nothing when decoding" "1" decode --tokenizer bytes --raw-bytes
dcode data.trainbpe-novocab "train-bpe without --vocab" 2 "--vocab.*required|--vocab N" "" train-bpe "$IN"
dcode data.trainbpe-256 "train-bpe --vocab 256" 2 "--vocab 256: out of range \(expected an integer from 257 to 2\^20\)" "" train-bpe --vocab 256 "$IN"
dcode data.trainbpe-big "train-bpe --vocab 1048577" 2 "--vocab 1048577: out of range \(expected an integer from 257 to 2\^20\)" "" train-bpe --vocab 1048577 "$IN"
dcode data.trainbpe-frac "train-bpe --vocab 300.5" 2 "--vocab 300.5: not an integer \(expected an integer from 257 to 2\^20\)" "" train-bpe --vocab 300.5 "$IN"
dcode data.trainbpe-twice "train-bpe --vocab twice" 2 "--vocab is given twice; give it once" "" train-bpe --vocab 300 --vocab 301 "$IN"
dcode data.trainbpe-noinput "train-bpe without inputs" 2 "no input" "" train-bpe --vocab 300
selected data.trainbpe-outdir && { in_case data.trainbpe-outdir; mkdir r.tiktoken
    tc data.trainbpe-outdir "train-bpe --out of a folder" 2 "--out r\.tiktoken: is a directory \(expected the rank file to write" "$D" train-bpe --vocab 300 --out r.tiktoken "$IN"; }
selected data.trainbpe-ok && { in_case data.trainbpe-ok
    AFTER='[ "$(wc -l <r.tiktoken)" = 299 ]' AFTER_MSG="the rank file does not hold 299 ranks" \
        tc data.trainbpe-ok "train-bpe --vocab 300 (handled)" 0 "" "$D" train-bpe --vocab 300 --out r.tiktoken "$IN"; }

# ---- tiktoken rank files: broken ones are refused with file:line
"$D" build --tokenizer bpe300 --train-bpe --out "$FX/bpe" --val-fraction 0.1 --segment-bytes 4k "$FX/corpus" >/dev/null 2>&1
RANKS=$FX/bpe/bpe300.tiktoken
# rk ID WHAT PATTERN SED-SCRIPT: a copy of the rank file edited by SED-SCRIPT is refused by encode (1)
rk() {
    selected "$1" || return 0
    in_case "$1"
    sed "$4" "$RANKS" >r.tiktoken
    IN=/dev/null tc "$1" "$2" 1 "$3" "$D" encode --tokenizer "$PWD/r.tiktoken"
}
rk tok.base64 "a rank line whose token is not base64" "r\.tiktoken:260: the token is not valid base64" '260s/^[^ ]*/!!!!/'
rk tok.rank-word "a rank that is a word" "r\.tiktoken:260: rank must be a whole number" '260s/ [0-9]*$/ abc/'
rk tok.rank-huge "a rank of 20 digits" "r\.tiktoken:260: rank must be a whole number below" '260s/ [0-9]*$/ 99999999999999999999/'
rk tok.rank-dup "a rank given twice" "r\.tiktoken: ranks must be 0\.\.298, each once; repeated rank 5" '260s/ [0-9]*$/ 5/'
rk tok.rank-gap "a rank missing" "r\.tiktoken: ranks must be 0\.\.297, each once; missing rank 259" '260d'
rk tok.no-space "a line without a rank" "r\.tiktoken:260: .*(rank|expected)" '260s/ .*$//'
rk tok.byte-missing "a byte's rank missing (byte-level BPE needs all 256)" "r\.tiktoken.*(byte 0x|missing rank)" '100,110d'
rk tok.empty "an empty rank file" "r\.tiktoken: no ranks in the file" 'd'
rk tok.nul "a NUL byte in a line" "r\.tiktoken:260: " '260s/$/\x00/'
selected tok.binary && { in_case tok.binary; head -c 3000 /dev/urandom >r.tiktoken
    tc tok.binary "3 KB of random bytes as the rank file" 1 "r\.tiktoken:1: .*(base64|rank)" "$D" encode --tokenizer "$PWD/r.tiktoken"; }
selected tok.fifo && { in_case tok.fifo; mkfifo r.tiktoken
    TO=10 tc tok.fifo "a FIFO as the rank file" 1\|2 "r\.tiktoken: is not a regular file \(a FIFO\)" "$D" encode --tokenizer "$PWD/r.tiktoken"; }
selected tok.crlf && { in_case tok.crlf; sed 's/$/\r/' "$RANKS" >r.tiktoken
    IN=/dev/null tc tok.crlf "a rank file with CRLF line ends (handled)" 0 "" "$D" encode --tokenizer "$PWD/r.tiktoken"; }
# bpe_job KIND: j.yaml, a bpe300 job on ds/, a copy of the bpe fixture whose
# rank file is `edited` (rank 269's line removed: broken) or `swapped` (another
# valid bpe300, trained on GPL-2: not the one the shards were made with);
# EVAL as job() takes it
bpe_job() {
    cp -a "$FX/bpe" ds
    if [ "$1" = edited ]; then
        sed -i '270d' ds/bpe300.tiktoken
    else
        "$D" train-bpe --vocab 300 --out ds/bpe300.tiktoken "$FX/corpus/GPL-2" >/dev/null 2>&1
    fi
    TOK=bpe300 DATA="train: $PWD/ds/train, val: $PWD/ds/val" job j.yaml
    sed -i 's/vocab: 256}/vocab: 300}/' j.yaml
}
selected tok.dataset-edited && { in_case tok.dataset-edited; bpe_job edited
    tc tok.dataset-edited "training with a broken rank file in the dataset" 3 "bpe300\.tiktoken: ranks must be 0\.\.297, each once; missing rank 269" \
        "$W" --config j.yaml --out r --threads 1; }
selected tok.dataset-swapped && { in_case tok.dataset-swapped; bpe_job swapped
    tc tok.dataset-swapped "training with another (valid) bpe300 rank file than the shards were made with" 3 \
        "(tokenizer|bpe300).*(differ|mismatch|hash|sha256|SHA-256|not the one)" "$W" --config j.yaml --out r --threads 1; }
# the same two through an evaluation that encodes text with the dataset's tokenizer
ALIGN=", suites: [val, alignment], alignment: {text: $FX/corpus/GPL-2, tokens: 256}"
selected tok.eval-edited && { in_case tok.eval-edited; EVAL=$ALIGN bpe_job edited
    tc tok.eval-edited "an alignment evaluation with a broken rank file in the dataset" 3 "bpe300\.tiktoken: ranks must be 0\.\.297, each once; missing rank 269" \
        "$W" --config j.yaml --out r --threads 1; }
selected tok.eval-swapped && { in_case tok.eval-swapped; EVAL=$ALIGN bpe_job swapped
    tc tok.eval-swapped "an alignment evaluation with another bpe300 than the shards' (text encoded differently from the training data)" 3 \
        "(tokenizer|bpe300).*(differ|retrained|replaced)" "$W" --config j.yaml --out r --threads 1; }
