/* tokconf_run.c: the TLM side of the Llama 3 and Llama 2 conformance
 * tests (test_tokconf.sh, test_tokconf_llama2.sh run it): encodes every
 * string of a gen.mjs corpus with TLM's tokenizer NAME (default llama3;
 * invalid UTF-8 replaced, as the references do; special tokens allowed for
 * llama3, whose reference reads them, not for llama2, whose reference
 * does not) and compares the ids with the reference's lines.  Prints how
 * many strings and tokens were compared; exits 1 on any mismatch, showing
 * the first few.
 * usage: test_tokconf_run TOKENIZER_FILE CORPUS_BIN REF_TXT [NAME] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "engine/tok/tokenizer.h"

static void show(const char *what, const uint32_t *ids, size_t n)
{
    printf("#   %s (%zu):", what, n);
    for (size_t i = 0; i < n && i < 40; i++)
        printf(" %u", ids[i]);
    printf("%s\n", n > 40 ? " ..." : "");
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s TOKENIZER_FILE CORPUS_BIN REF_TXT [NAME]\n", argv[0]);
        return 2;
    }
    const char *name = argc == 5 ? argv[4] : "llama3";
    int flags = strcmp(name, "llama3") ? 0 : ENG_TOK_ALLOW_SPECIAL;
    tlm_err e = {0};
    eng_tok *t = NULL;
    char *corpus = NULL, *ref = NULL;
    size_t clen = 0, rlen = 0;
    if (eng_tok_open_file(&t, argv[1], name, &e) || tlm_read_file(argv[2], 1u << 30, &corpus, &clen, &e) ||
        tlm_read_file(argv[3], 1u << 30, &ref, &rlen, &e)) {
        printf("not ok - setup: %s\n", e.msg);
        return 1;
    }
    eng_tokvec got = {0}, want = {0};
    size_t strings = 0, tokens = 0, bad = 0, bytes = 0;
    char *rp = ref;
    for (size_t o = 0; o + 4 <= clen;) {
        uint32_t n = (uint32_t)(uint8_t)corpus[o] | (uint32_t)(uint8_t)corpus[o + 1] << 8 |
                     (uint32_t)(uint8_t)corpus[o + 2] << 16 | (uint32_t)(uint8_t)corpus[o + 3] << 24;
        if (n > clen - o - 4) {
            printf("not ok - corpus is truncated at byte %zu\n", o);
            return 1;
        }
        const char *s = corpus + o + 4;
        o += 4 + n;
        char *eol = strchr(rp, '\n');
        if (!eol) {
            printf("not ok - the reference has fewer lines than the corpus has strings (%zu)\n", strings);
            return 1;
        }
        *eol = '\0';
        want.n = 0;
        for (char *q = rp; *q;) {
            char *end;
            unsigned long v = strtoul(q, &end, 10);
            if (end == q)
                break;
            eng_tokvec_push(&want, (uint32_t)v, &e);
            q = end;
        }
        rp = eol + 1;
        got.n = 0;
        if (eng_tok_encode(t, s, n, flags, &got, &e)) {
            printf("not ok - encode failed on string %zu: %s\n", strings + 1, e.msg);
            return 1;
        }
        strings++;
        bytes += n;
        tokens += want.n;
        if (got.n != want.n || memcmp(got.ids, want.ids, got.n * sizeof *got.ids)) {
            if (++bad <= 5) {
                printf("# mismatch on string %zu (%u bytes): \"", strings, n);
                for (uint32_t i = 0; i < n && i < 120; i++)
                    printf(s[i] >= 32 && s[i] < 127 ? "%c" : "\\x%02x", (unsigned char)s[i]);
                printf("%s\"\n", n > 120 ? "..." : "");
                show("reference", want.ids, want.n);
                show("TLM", got.ids, got.n);
            }
        }
    }
    printf("%sok - TLM's %s ids (%s) equal the reference's: %zu strings, %zu bytes, %zu tokens compared, "
           "%zu mismatches\n", bad ? "not " : "", name, argv[1], strings, bytes, tokens, bad);
    eng_tokvec_clear(&got);
    eng_tokvec_clear(&want);
    free(corpus);
    free(ref);
    eng_tok_free(t);
    return bad ? 1 : 0;
}
