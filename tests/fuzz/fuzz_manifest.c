/* fuzz_manifest.c: libFuzzer target for the dataset manifest
 * (manifest.json, engine/format/manifest.h): parsed from the fuzzer's bytes, then
 * checked against a fixed set of two shard headers the way the loader does.
 * Refusals are the expected outcome; crashes and sanitizer reports are
 * bugs.  Built by tests/fuzz/run.sh; replay.c runs the corpus in `make
 * check`. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/format/manifest.h"
#include "engine/format/shard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eng_manifest m;
    tlm_err e;
    if (eng_manifest_parse("manifest.json", (const char *)data, size, &m, &e))
        return 0;
    /* two headers as the loader would hold them: tokenizer and hash from the
     * manifest itself (so the deeper checks are reached), counts from it too */
    eng_shard sh[2];
    memset(sh, 0, sizeof sh);
    for (int i = 0; i < 2; i++) {
        snprintf(sh[i].path, sizeof sh[i].path, "ds/train/%06d.tlmtok", i);
        snprintf(sh[i].tokenizer, sizeof sh[i].tokenizer, "%s", m.tokenizer);
        sh[i].vocab = m.vocab;
        memcpy(sh[i].tokenizer_sha256, m.tokenizer_sha256, 32);
        const eng_manifest_split *sp = eng_manifest_find(&m, "train");
        if (sp && (size_t)i < sp->n) {
            sh[i].n_tokens = sp->shards[i].tokens;
            memcpy(sh[i].payload_sha256, sp->shards[i].sha256, 32);
        }
    }
    eng_shardset set = {sh, 2, 0};
    eng_manifest_check(&m, "train", &set, 1, &e);
    set.n = 1;
    eng_manifest_check(&m, "val", &set, 0, &e);
    eng_manifest_check(&m, "test", &set, 1, &e);
    eng_manifest_clear(&m);
    return 0;
}
