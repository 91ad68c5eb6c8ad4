/* fuzz_tiktoken.c: libFuzzer target for tiktoken rank files (the BPE
 * tokenizer's definition, engine/tok/bpe.c): the first byte picks the name
 * (which decides the special tokens: none, bpeN, llama3), the rest is the
 * file's text.  A tokenizer it accepts then encodes and decodes a fixed
 * text and a slice of the input, and the round trip must hold.  Refusals
 * are the expected outcome; crashes and sanitizer reports are bugs.  Built
 * by tests/fuzz/run.sh; replay.c runs the corpus in `make check`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tok/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(eng_tok *t, const uint8_t *p, size_t n)
{
    eng_tokvec v = {0};
    tlm_err e;
    if (eng_tok_encode(t, p, n, ENG_TOK_RAW_BYTES, &v, &e) == 0) {
        size_t len = 0;
        for (size_t i = 0; i < v.n; i++) {
            size_t k;
            if (!eng_tok_piece(t, v.ids[i], &k))
                __builtin_trap(); /* an id the tokenizer made has no bytes */
            len += k;
        }
        if (len != n)
            __builtin_trap(); /* raw bytes: lossless */
    }
    eng_tokvec_clear(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const names[] = {NULL, "fuzz", "bpe300", "bpe1000", "llama3"};
    const char *name = names[data[0] % 5];
    eng_tok *t;
    tlm_err e;
    if (eng_tok_open_text(&t, "fuzz.tiktoken", name, (const char *)data + 1, size - 1, &e))
        return 0;
    static const char text[] = "The quick brown fox, 1234 jumps!\n\t<|endoftext|> caf\xc3\xa9 \xff\xfe end";
    round_trip(t, (const uint8_t *)text, sizeof text - 1);
    round_trip(t, data + 1, size - 1 < 512 ? size - 1 : 512);
    eng_tok_free(t);
    return 0;
}
