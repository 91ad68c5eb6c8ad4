# train_common.sh: sourced by the tlm-worker tests (tests/test_worker_*.sh).
# Sets W (the worker), MK (the shard maker), a temp folder $tmp removed on
# exit, ok/skip helpers printing TAP, and makes $tmp/text.tlmtok: the bytes
# of the licence texts every Debian system ships (/usr/share/common-licenses,
# package base-files), about 200 KiB of English.
. "$TLM_SRCDIR/tests/lib/tap.sh"
W="$TLM_BUILDDIR/worker/tlm-worker"
EVCHECK="$TLM_SRCDIR/tests/lib/train_events.py"
command -v python3 >/dev/null 2>&1 || { echo "# python3 is needed to read events: skip"; exit 77; }
tap_setup worker
text_shard "$tmp/text.tlmtok" GPL-3 GPL-2 LGPL-2.1 Apache-2.0 MPL-2.0 GFDL-1.3 Artistic MPL-1.1 LGPL-2 GPL-1 \
    CC0-1.0 LGPL-3 BSD

# events FILE [--job KEY] [--end KIND]: validate and summarise (JSON on stdout)
events() { python3 "$EVCHECK" "$@"; }

# A small job on the text shard: d=64, 2 layers, linear taper, 48 steps of
# 1024 tokens, eval every 16 steps, a checkpoint every 8 steps.  $SEED, $DATA
# $LR and $LOG_EVERY override the seed, the shards, the peak learning rate
# and the step-event period; "train: k: v, ..." arguments add
# train keys, other arguments are YAML lines of their own.
small_job() {
    out=$1
    shift
    cat >"$out" <<EOF
model: {d_model: 64, layers: 2, heads: 2, d_ff: 128, vocab: 256}
tokenizer: bytes
taper: {schedule: linear, ratio: [1.5, 0.5]}
seed: ${SEED:-3}
data: {train: ${DATA:-$tmp/text.tlmtok}}
eval: {every_tokens: 16384, val_tokens: 2048}
EOF
    train="tokens: 49152, seq_len: 32, batch_tokens: 1024, micro_batch: 8, lr: ${LR:-3e-3}, warmup_tokens: 4096, log_every: ${LOG_EVERY:-1}, ckpt_every_tokens: 8192"
    for line in "$@"; do
        case $line in
        train:*) train="$train, ${line#train: }" ;;
        *) echo "$line" >>"$out" ;;
        esac
    done
    echo "train: {$train}" >>"$out"
}

# wait_step FILE STEP PID: wait until FILE holds the step event of STEP
# (log_every 1); fails when the process ends first.
wait_step() {
    while kill -0 "$3" 2>/dev/null; do
        grep -q "\"ev\":\"step\".*\"step\":$2," "$1" 2>/dev/null && return 0
        sleep 0.02
    done
    return 1
}
