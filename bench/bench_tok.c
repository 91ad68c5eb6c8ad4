/* bench_tok.c: encoding speed of a TLM tokenizer (MB/s of input text), the
 * C half of bench_tok.sh, which prints it beside the JavaScript reference
 * (llama3-tokenizer-js) on the same text.  Encodes the whole text in one
 * call, like the reference, best of --reps runs, one thread.
 * usage: bench_tok --tokenizer NAME|FILE --text FILE [--reps 3] [--data DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "engine/tok/tokenizer.h"

int main(int argc, char **argv)
{
    const char *tok = NULL, *text_path = NULL, *data = NULL;
    int reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--tokenizer"))
            tok = argv[i + 1];
        else if (!strcmp(argv[i], "--text"))
            text_path = argv[i + 1];
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--data"))
            data = argv[i + 1];
    }
    if (!tok || !text_path || reps < 1) {
        fprintf(stderr, "usage: %s --tokenizer NAME|FILE --text FILE [--reps 3] [--data DIR]\n", argv[0]);
        return 2;
    }
    eng_err e = {0};
    eng_tok *t = NULL;
    char *text = NULL;
    size_t n = 0;
    double t0 = eng_clock_mono();
    if (eng_tok_open(&t, tok, data, &e) || eng_read_file(text_path, 1u << 30, &text, &n, &e)) {
        fprintf(stderr, "bench_tok: %s\n", e.msg);
        return 1;
    }
    double load = eng_clock_mono() - t0, best = 1e30;
    eng_tokvec v = {0};
    for (int r = 0; r < reps; r++) {
        v.n = 0;
        double s = eng_clock_mono();
        if (eng_tok_encode(t, text, n, ENG_TOK_ALLOW_SPECIAL, &v, &e)) {
            fprintf(stderr, "bench_tok: %s\n", e.msg);
            return 1;
        }
        double d = eng_clock_mono() - s;
        best = d < best ? d : best;
    }
    printf("TLM (C, PCRE2 JIT)  %-8s %8.2f MB/s  %zu bytes -> %zu tokens (%.2f bytes/token), best of %d, load %.2f s\n",
           eng_tok_name(t), (double)n / best / 1e6, n, v.n, (double)n / (double)(v.n ? v.n : 1), reps, load);
    eng_tokvec_clear(&v);
    eng_tok_free(t);
    free(text);
    return 0;
}
