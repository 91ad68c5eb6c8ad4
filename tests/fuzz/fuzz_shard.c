/* fuzz_shard.c: libFuzzer target for token shards as training reads them:
 * the header checks, the payload hash and vocabulary scan, bounded reads,
 * and the check against a dataset manifest.  The input is a little-endian
 * u16 length L, L bytes of manifest.json text, then the shard file.
 * Refusals are the expected outcome; crashes and sanitizer reports are
 * bugs.  Built by tests/fuzz/run.sh; replay.c runs the corpus in `make
 * check`. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/format/manifest.h"
#include "engine/format/shard.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t ml = (size_t)data[0] | (size_t)data[1] << 8;
    if (ml > size - 2)
        ml = size - 2;
    const char *mtext = (const char *)data + 2;
    const uint8_t *shard = data + 2 + ml;
    size_t sl = size - 2 - ml;
    const char *path = fuzz_file(shard, sl);
    if (!path)
        return 0;
    tlm_err e;
    eng_shard s;
    if (eng_shard_open(&s, path, 1, &e) == 0) {
        int32_t buf[64];
        uint64_t n = s.n_tokens;
        eng_shard_read(&s, 0, n < 64 ? (size_t)n : 64, buf, &e);
        if (n > 0)
            eng_shard_read(&s, n - 1, 1, buf, &e);
        eng_shard_read(&s, n, 1, buf, &e);                  /* past the end: refused */
        eng_shard_read(&s, UINT64_MAX - 3, 8, buf, &e);     /* wrapping: refused */
        eng_manifest m;
        if (eng_manifest_parse("manifest.json", mtext, ml, &m, &e) == 0) {
            /* the loader's view: one shard named train/<it>, as in a dataset */
            eng_shard named = s;
            snprintf(named.path, sizeof named.path, "ds/train/000000.tlmtok");
            eng_shardset set = {&named, 1, n};
            eng_manifest_check(&m, "train", &set, 1, &e);
            eng_manifest_check(&m, "val", &set, 0, &e);
            eng_manifest_clear(&m);
        }
        eng_shard_close(&s);
    }
    return 0;
}
