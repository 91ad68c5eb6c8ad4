/* fuzz_spm.c: libFuzzer target for SentencePiece tokenizer files (llama2,
 * engine/tok/spm.c): the first byte picks the format (even: a
 * tokenizer.model protobuf, odd: a vocabulary file), the rest is the file.
 * A tokenizer it accepts then encodes a fixed text and a slice of the input
 * (raw bytes and special tokens on); every id must be below the vocabulary
 * and decode must succeed.  Refusals are the expected outcome; crashes and sanitizer reports are
 * bugs.  Built by tests/fuzz/run.sh; replay.c runs the corpus in `make check`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tok/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(eng_tok *t, const uint8_t *p, size_t n, int flags)
{
    eng_tokvec v = {0};
    tlm_err e;
    if (eng_tok_encode(t, p, n, flags, &v, &e) == 0) {
        for (size_t i = 0; i < v.n; i++)
            if (v.ids[i] >= eng_tok_vocab(t))
                __builtin_trap(); /* an id outside the vocabulary */
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0;
        if (eng_tok_decode(t, v.ids, v.n, &buf, &len, &cap, &e))
            __builtin_trap(); /* the tokenizer's own ids must decode */
        free(buf);
    }
    eng_tokvec_clear(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    eng_tok *t;
    tlm_err e;
    const char *label = data[0] % 2 ? "fuzz.vocab" : "fuzz.model";
    if (eng_tok_open_text(&t, label, NULL, (const char *)data + 1, size - 1, &e))
        return 0;
    if (eng_tok_kind_of(t) == ENG_TOK_SPM) {
        static const char text[] = "The quick brown fox, 1234 jumps!\n\t<s> </s> caf\xc3\xa9 \xff\xfe  end";
        check(t, (const uint8_t *)text, sizeof text - 1, ENG_TOK_RAW_BYTES);
        check(t, (const uint8_t *)text, sizeof text - 1, ENG_TOK_ALLOW_SPECIAL);
        check(t, data + 1, size - 1 < 512 ? size - 1 : 512, ENG_TOK_RAW_BYTES | ENG_TOK_ALLOW_SPECIAL);
    }
    eng_tok_free(t);
    return 0;
}
