/* bench_tok.c: encoding speed of a TLM tokenizer (MB/s of input text), the
 * C half of bench_tok.sh, which prints it beside the JavaScript reference
 * (tiktoken, llama3-tokenizer-js, llama-tokenizer-js) on the same text.
 * Encodes the whole text in one call, like the references, best of --reps
 * runs, one thread; MB/s by the wall clock and by CPU time.
 * usage: bench_tok --tokenizer NAME|FILE --text FILE [--reps 3] [--data DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "engine/tok/tokenizer.h"

/* CPU time of this process: on a shared machine the wall clock also counts
 * the time other programs held the cores. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
    tlm_err e = {0};
    eng_tok *t = NULL;
    char *text = NULL;
    size_t n = 0;
    double t0 = tlm_clock_mono();
    if (eng_tok_open(&t, tok, data, &e) || tlm_read_file(text_path, 1u << 30, &text, &n, &e)) {
        fprintf(stderr, "bench_tok: %s\n", e.msg);
        return 1;
    }
    double load = tlm_clock_mono() - t0, best = 1e30, best_cpu = 1e30;
    eng_tokvec v = {0};
    for (int r = 0; r < reps; r++) {
        v.n = 0;
        double s = tlm_clock_mono(), c = cpu_seconds();
        if (eng_tok_encode(t, text, n, ENG_TOK_ALLOW_SPECIAL, &v, &e)) {
            fprintf(stderr, "bench_tok: %s\n", e.msg);
            return 1;
        }
        double d = tlm_clock_mono() - s, dc = cpu_seconds() - c;
        best = d < best ? d : best;
        best_cpu = dc < best_cpu ? dc : best_cpu;
    }
    printf("TLM (C, PCRE2 JIT)  %-8s %8.2f MB/s  %8.2f CPU-MB/s  %zu bytes -> %zu tokens (%.2f bytes/token), best of "
           "%d, load %.2f s\n", eng_tok_name(t), (double)n / best / 1e6, (double)n / best_cpu / 1e6, n, v.n,
           (double)n / (double)(v.n ? v.n : 1), reps, load);
    eng_tokvec_clear(&v);
    eng_tok_free(t);
    free(text);
    return 0;
}
