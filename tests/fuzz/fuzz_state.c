/* fuzz_state.c: libFuzzer target for a checkpoint's trainer.json
 * (eng_ckpt_parse_state, docs/protocol.md): counters, hashes, versions,
 * duplicate keys.  What it accepts must hold what the reader promises (no
 * negative counter, 64-digit ids).  Refusals are the expected outcome;
 * crashes and sanitizer reports are bugs.  Built by tests/fuzz/run.sh;
 * replay.c runs the corpus in `make check`. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/train/ckpt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eng_train_state st;
    tlm_err e;
    if (eng_ckpt_parse_state("trainer.json", (const char *)data, size, &st, &e) == 0) {
        if (st.step < 0 || st.tokens < 0 || strlen(st.config_id) != 64 || strlen(st.data_id) != 64)
            __builtin_trap();
    }
    return 0;
}
