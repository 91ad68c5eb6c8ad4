/* fuzz_safetensors.c: libFuzzer target for the safetensors reader
 * (engine/format/safetensors.h) on the fuzzer's bytes as a regular file: header
 * length, JSON, dtypes, shapes, offsets, overlaps; every tensor it accepts
 * is read whole (an out-of-range one would fault) and the metadata looked
 * up.  Refusals are the expected outcome; crashes and sanitizer reports are
 * bugs.  Built by tests/fuzz/run.sh; replay.c runs the corpus in `make
 * check`. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/format/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    if (!path)
        return 0;
    eng_st_file f;
    tlm_err e;
    if (eng_st_open(&f, path, &e))
        return 0;
    volatile uint8_t sink = 0;
    for (int i = 0; i < f.n; i++) {
        const eng_st_tensor *t = &f.tensors[i];
        const uint8_t *p = eng_st_data(&f, t);
        uint64_t bytes = eng_st_numel(t) * (uint64_t)eng_st_dtype_size(t->dtype);
        if (bytes != t->end - t->begin)
            __builtin_trap(); /* the reader promised numel x size = the range */
        for (uint64_t k = 0; k < bytes; k++)
            sink ^= p[k];
        if (eng_st_find(&f, t->name) == NULL)
            __builtin_trap();
    }
    (void)eng_st_meta(&f, "tlm_config");
    (void)eng_st_meta(&f, "format");
    eng_st_close(&f);
    (void)sink;
    return 0;
}
