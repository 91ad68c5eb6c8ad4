# 30-worker-cli.sh: every flag of tlm-worker (docs/protocol.md, "Command
# line") missing, malformed, out of range, repeated and in modes that do not
# use it.  Usage errors exit 2 with a message on stderr and no event; a
# device the build cannot train on is a config error (exit 2, one `error`
# event).  Sourced by trial.sh.

need_run
J=$FX/job.yaml
# wu ID WHAT PATTERN ARGS...: tlm-worker ARGS is a usage error: exit 2, PATTERN, no event
wu() {
    local id=$1 what=$2 pat=$3
    shift 3
    selected "$id" || return 0
    in_case "$id"
    AFTER="${AFTER:+$AFTER && }"'[ ! -s "$OUT/$id.out" ]' AFTER_MSG="${AFTER_MSG:-events were written for a usage error}" \
        tc "$id" "$what" 2 "$pat" "$W" "$@"
}

wu worker.no-args "no arguments" "--config FILE is required"
wu worker.unknown "an unknown flag (--bogus)" "(unrecognized|unknown) option '--bogus'" --config "$J" --out r --bogus
wu worker.positional "a stray argument" "unexpected argument 'extra'" --config "$J" --out r extra
wu worker.single-dash "-config (one dash)" "invalid option -- 'c'" -config "$J" --out r
wu worker.config-novalue "--config without its value" "option '--config' requires an argument" --config
wu worker.out-novalue "--out without its value" "option '--out' requires an argument" --config "$J" --out
wu worker.threads-novalue "--threads without its value" "option '--threads' requires an argument" --config "$J" --out r --threads
wu issue.config-twice "--config twice" "--config is given twice; give it once" --config "$J" --config "$J" --out r
wu worker.out-twice "--out twice" "--out is given twice; give it once" --config "$J" --out a --out b
wu worker.job-twice "--job twice" "--job is given twice; give it once" --config "$J" --out r --job a --job b
wu worker.threads-twice "--threads twice" "--threads is given twice; give it once" --config "$J" --out r --threads 1 --threads 2
wu worker.device-twice "--device twice" "--device is given twice; give it once" --config "$J" --out r --device cpu --device cpu
wu worker.heartbeat-twice "--heartbeat twice" "--heartbeat is given twice; give it once" --config "$J" --out r --heartbeat 1 --heartbeat 2
wu worker.no-out "--config without --out" "--out DIR is required" --config "$J"
wu worker.no-config "--out without --config" "--config FILE is required" --out r
wu worker.threads-neg "--threads -1" "--threads -1: out of range \(expected an integer from 0 to 4096\)" --config "$J" --out r --threads -1
wu worker.threads-frac "--threads 1.5" "--threads 1.5: not an integer \(expected an integer from 0 to 4096\)" --config "$J" --out r --threads 1.5
wu worker.threads-big "--threads 4097" "--threads 4097: out of range \(expected an integer from 0 to 4096\)" --config "$J" --out r --threads 4097
wu worker.threads-huge "--threads 99999999999999999999" "--threads 99999999999999999999: out of range \(expected an integer from 0 to 4096\)" --config "$J" --out r --threads 99999999999999999999
wu worker.threads-word "--threads two" "--threads two: not an integer \(expected an integer from 0 to 4096\)" --config "$J" --out r --threads two
wu worker.threads-empty "--threads ''" "--threads : not an integer \(expected an integer from 0 to 4096\)" --config "$J" --out r --threads ""
wu worker.threads-hex "--threads 0x2" "--threads 0x2: not an integer" --config "$J" --out r --threads 0x2
wu worker.heartbeat-zero "--heartbeat 0" "--heartbeat 0: out of range \(expected a number from 0.05 to 86400\)" --config "$J" --out r --heartbeat 0
wu worker.heartbeat-small "--heartbeat 0.01" "--heartbeat 0.01: out of range \(expected a number from 0.05 to 86400\)" --config "$J" --out r --heartbeat 0.01
wu worker.heartbeat-big "--heartbeat 86401" "--heartbeat 86401: out of range \(expected a number from 0.05 to 86400\)" --config "$J" --out r --heartbeat 86401
wu worker.heartbeat-nan "--heartbeat nan" "--heartbeat nan: not a number \(expected a number from 0.05 to 86400\)" --config "$J" --out r --heartbeat nan
wu worker.heartbeat-inf "--heartbeat inf" "--heartbeat inf: not a number" --config "$J" --out r --heartbeat inf
wu worker.heartbeat-neg "--heartbeat -1" "--heartbeat -1: out of range" --config "$J" --out r --heartbeat -1
wu worker.events-fd-2 "--events-fd 2 (stderr, the log)" "--events-fd 2 would mix events with the human log on stderr" --config "$J" --out r --events-fd 2
wu worker.events-fd-closed "--events-fd 9 (not open)" "--events-fd 9" --config "$J" --out r --events-fd 9
wu worker.events-fd-neg "--events-fd -1" "--events-fd -1: out of range \(expected an integer from 0 to 2\^31-1\)" --config "$J" --out r --events-fd -1
wu worker.events-fd-huge "--events-fd 99999999999" "--events-fd 99999999999: out of range \(expected an integer from 0 to 2\^31-1\)" --config "$J" --out r --events-fd 99999999999
wu worker.events-fd-word "--events-fd x" "--events-fd x: not an integer" --config "$J" --out r --events-fd x
selected worker.events-fd-readonly && { in_case worker.events-fd-readonly
    # stdin is /dev/null opened for reading: no event can be written to it
    tc worker.events-fd-readonly "--events-fd 0 (open, but for reading only)" 2 "--events-fd 0.*(not open for writing|read-only|cannot write)" \
        "$W" --config "$J" --out r --events-fd 0 --threads 1; }
wu worker.job-long "--job of 128 bytes" "--job: 128 bytes, longer than the 127 an event can carry" --config "$J" --out r --job "$(printf 'k%.0s' $(seq 128))"
wu issue.describe-out "--describe with --out" "--out does nothing with --describe" --describe --config "$J" --out r
wu issue.describe-resume "--describe with --resume" "--resume does nothing with --describe" --describe --config "$J" --resume
wu worker.describe-threads "--describe with --threads" "--threads does nothing with --describe" --describe --config "$J" --threads 2
wu worker.describe-noconfig "--describe without --config" "--config FILE is required" --describe
wu worker.describe-eval "--describe with --eval" "--eval needs --checkpoint DIR \(and takes no --out, --resume, --describe\)|--describe" --describe --eval --config "$J"
wu worker.keys-config "--config-keys with --config" "--config does nothing with --config-keys" --config-keys --config "$J"
wu worker.keys-out "--config-keys with --out" "--out does nothing with --config-keys" --config-keys --out r
wu worker.keys-extra "--config-keys with a stray argument" "unexpected argument 'extra'" --config-keys extra
wu worker.eval-nockpt "--eval without --checkpoint" "--eval needs --checkpoint DIR" --eval
wu worker.eval-out "--eval with --out" "--eval needs --checkpoint DIR \(and takes no --out|--out does nothing with --eval" --eval --checkpoint "$FX/run" --out r
wu worker.eval-resume "--eval with --resume" "--eval needs --checkpoint DIR \(and takes no --out, --resume|--resume does nothing with --eval" --eval --checkpoint "$FX/run" --resume
wu worker.eval-device "--eval with --device" "--device does nothing with --eval" --eval --checkpoint "$FX/run" --device cpu
wu worker.eval-die "--eval with --die-with-parent" "--die-with-parent does nothing with --eval" --eval --checkpoint "$FX/run" --die-with-parent
wu worker.ckpt-noeval "--checkpoint without --eval" "--checkpoint and --suites go with --eval" --config "$J" --out r --checkpoint "$FX/run"
wu worker.suites-noeval "--suites without --eval" "--checkpoint and --suites go with --eval" --config "$J" --out r --suites wikitext
selected worker.help && { in_case worker.help; tc worker.help "--help" 0 "^usage: tlm-worker --config FILE --out DIR" "$W" --help; }
selected worker.keys && { in_case worker.keys; tc worker.keys "--config-keys lists every key" 0 "model.titans.max_lr" "$W" --config-keys; }

# ---- values the worker takes in, then judges (an error event, exit 2)
# we ID WHAT STATUS KIND PATTERN ARGS...: the run ends with one error event
# of KIND and exits STATUS
we() {
    local id=$1 what=$2 st=$3 kind=$4 pat=$5
    shift 5
    selected "$id" || return 0
    in_case "$id"
    AFTER="${AFTER:+$AFTER && }tail -1 \"\$OUT/\$id.out\" | grep -q '\"ev\":\"error\",.*\"kind\":\"$kind\"'" \
        AFTER_MSG="${AFTER_MSG:+$AFTER_MSG, or }the events do not end with an error of kind $kind" tc "$id" "$what" "$st" "$pat" "$W" "$@"
}
we worker.device-gpu "--device gpu" 2 config "--device gpu: (this build trains on the CPU only \(--device cpu\)|expected cpu or cuda:K)" --config "$J" --out r --device gpu
we worker.device-cuda "--device cuda:0 on a build without CUDA or a machine without a GPU" 2 config "--device cuda:0: (this build trains on the CPU only|no NVIDIA driver or GPU found on this machine .*; train on the CPU instead: tlm-worker --device cpu|no GPU)" --config "$J" --out r --device cuda:0
we worker.device-cuda-neg "--device cuda:-1" 2 config "--device cuda:-1: (this build trains on the CPU only|expected cpu or cuda:K)" --config "$J" --out r --device cuda:-1
# --eval --suites val scores the validation split again: the run's own numbers at its step 16
selected issue26.eval-val && { in_case issue26.eval-val
    AFTER='[ "$(grep "\"suite\":\"val\"" "$OUT/$id.out" | sed "s/.*\"t\":[^,]*,//")" = "$(grep "\"suite\":\"val\"" "$FX/run.ev" | grep "\"step\":16," | sed "s/.*\"t\":[^,]*,//")" ]' \
        AFTER_MSG="the val events are not the run's at step 16" \
        tc issue26.eval-val "--eval --suites val of the finished run" 0 '"ev":"done".*"val_loss":[0-9]' "$W" --eval --checkpoint "$FX/run" --suites val --threads 1; }
# with --config, the events still carry the checkpoint's own step and tokens
selected issue26.eval-config-step && { in_case issue26.eval-config-step
    AFTER='! grep -v "\"ev\":\"heartbeat\"" "$OUT/$id.out" | grep -v -q "\"step\":8,\"tokens\":8192,"' AFTER_MSG="an event does not carry step 8, tokens 8192" \
        tc issue26.eval-config-step "--eval --checkpoint step-00000008 --config job.yaml: step 8, not 0" 0 '"ev":"done","v":1,"t":[0-9.]+,"step":8,"tokens":8192' \
        "$W" --eval --checkpoint "$FX/run/ckpt/step-00000008" --config "$J" --suites val --threads 1; }
we worker.suites-bogus "--eval --suites bogus" 2 config "--suites: unknown suite 'bogus' \(val, wikitext, lambada, commonsense, niah, alignment\)" --eval --checkpoint "$FX/run" --suites bogus
we worker.suites-empty "--eval --suites ''" 2 config "--suites: .*(val, wikitext, lambada, commonsense, niah, alignment|expected)" --eval --checkpoint "$FX/run" --suites ""
# memory: --describe estimates it on the CPU too; running out of it says what is needed and what is there
selected issue26.describe-cpu-memory && { in_case issue26.describe-cpu-memory
    tc issue26.describe-cpu-memory "--describe estimates the CPU's memory too" 0 '"cpu_memory": \{' "$W" --describe --config "$J"; }
selected issue26.oom && { in_case issue26.oom
    printf 'model: {d_model: 2048, layers: 24, heads: 16, d_ff: 8192, vocab: 256}\ndata: {train: %s}\ntrain: {tokens: 8192, seq_len: 32, batch_tokens: 1024, micro_batch: 8, warmup_tokens: 1024}\n' "$FX/ds/train" >big.yaml
    if (ulimit -v 2000000 && "$W" --help >/dev/null 2>&1); then
        AFTER="tail -1 \"\$OUT/\$id.out\" | grep -q '\"ev\":\"error\",.*\"kind\":\"oom\"'" AFTER_MSG="the events do not end with an error of kind oom" \
            tc issue26.oom "a 1.6B-parameter model in 2 GB of address space (ulimit -v)" 5 "the model needs about [0-9.]+ GiB on the CPU \(tlm-worker --describe: cpu_memory\), [0-9.]+ GiB is available \(MemAvailable\); its weights, gradients and AdamW state alone take" \
            sh -c 'ulimit -v 2000000 && exec "$0" "$@"' "$W" --config big.yaml --out r --threads 1
    else notried issue26.oom "out of memory under ulimit -v" "this build cannot start in 2 GB of address space (a sanitizer build)"; fi; }
we worker.suites-nofile "--eval --suites wikitext without eval.wikitext" 2 config "eval.wikitext: no file given \(the suite needs it" --eval --checkpoint "$FX/run" --suites wikitext
we worker.eval-missing "--eval --checkpoint of a folder that does not exist" 3 data "$tmp/none/run: (No such file|does not exist)" --eval --checkpoint "$tmp/none/run"
selected worker.eval-ok && { in_case worker.eval-ok
    job e.yaml "eval.alignment: {text: $FX/corpus/GPL-3, tokens: 256}"
    tc worker.eval-ok "--eval of the run folder with the alignment suite" 0 '"ev":"done"' "$W" --eval --checkpoint "$FX/run" --config e.yaml --suites alignment --threads 1; }
selected worker.job-json && { in_case worker.job-json
    AFTER="python3 -c 'import json, sys; ev = [json.loads(l) for l in open(sys.argv[1])]; assert ev[-1][\"ev\"] == \"done\" and all(e[\"job\"] == sys.argv[2] for e in ev)' \"\$OUT/\$id.out\" \$'a\"b\\\\c\\nd\\x01'" \
        AFTER_MSG="the events are not valid JSON carrying the --job given" \
        tc worker.job-json "--job with a quote, a backslash, a newline and a control byte" 0 '"ev":"done"' "$W" --config "$J" --out r --threads 1 --job $'a"b\\c\nd\x01'; }
selected worker.resume-twice && { in_case worker.resume-twice
    tc worker.resume-twice "--resume given twice (a flag)" 0\|2 '"ev":"done"|--resume is given twice' "$W" --config "$J" --out r --threads 1 --resume --resume; }
selected worker.no-resume && { in_case worker.no-resume; cp -a "$FX/run" r
    AFTER='[ -d r/ckpt/step-00000016 ] && [ -d r/ckpt/step-00000008 ]' AFTER_MSG="checkpoints were lost" \
        we worker.no-resume "a fresh run into a run folder with checkpoints" 2 config "already holds checkpoints.*--resume" --config "$J" --out r --threads 1; }
selected worker.resume-done && { in_case worker.resume-done; cp -a "$FX/run" r
    AFTER='[ "$(grep -c "\"ev\":\"step\"" "$OUT/$id.out")" = 0 ]' AFTER_MSG="a finished run trained again" \
        tc worker.resume-done "--resume of a finished run: done at once" 0 '"ev":"done"' "$W" --config "$J" --out r --threads 1 --resume; }
selected worker.other-config && { in_case worker.other-config; cp -a "$FX/run" r; TOP="seed: 9" job other.yaml
    AFTER='[ -d r/ckpt/step-00000016 ]' AFTER_MSG="the other config's checkpoints were lost" \
        we worker.other-config "--resume with another config's checkpoints" 2 config "written for config .*refusing" --config other.yaml --out r --threads 1 --resume; }
