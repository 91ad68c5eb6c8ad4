/* train_mkshard.c: test helper (not a test): writes the bytes of text files
 * as one token shard, so worker tests train on real English text that
 * exists on every Debian machine.
 *
 *   train_mkshard [--tokenizer NAME] [--vocab N] OUT.tlmtok FILE...
 *
 * Defaults: tokenizer "bytes", vocab 256 (each byte is its token). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/format/shard.h"

int main(int argc, char **argv)
{
    const char *tok = "bytes";
    long vocab = 256;
    int i = 1;
    for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
        if (!strcmp(argv[i], "--tokenizer"))
            tok = argv[i + 1];
        else if (!strcmp(argv[i], "--vocab"))
            vocab = strtol(argv[i + 1], NULL, 10);
        else
            break;
    }
    if (argc - i < 2 || vocab < 256) {
        fprintf(stderr, "usage: train_mkshard [--tokenizer NAME] [--vocab N>=256] OUT.tlmtok FILE...\n");
        return 2;
    }
    eng_shard_writer *w;
    tlm_err e = {0};
    uint8_t sha[32] = {0};
    if (eng_shard_writer_open(&w, argv[i], 0, (uint32_t)vocab, tok, sha, &e)) {
        fprintf(stderr, "train_mkshard: %s\n", e.msg);
        return 1;
    }
    for (int f = i + 1; f < argc; f++) {
        FILE *in = fopen(argv[f], "rb");
        if (!in) {
            perror(argv[f]);
            eng_shard_writer_abort(w);
            return 1;
        }
        unsigned char buf[4096];
        uint32_t toks[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
            for (size_t k = 0; k < n; k++)
                toks[k] = buf[k];
            if (eng_shard_writer_append(w, toks, n, &e)) {
                fprintf(stderr, "train_mkshard: %s\n", e.msg);
                fclose(in);
                eng_shard_writer_abort(w);
                return 1;
            }
        }
        fclose(in);
    }
    if (eng_shard_writer_close(w, &e)) {
        fprintf(stderr, "train_mkshard: %s\n", e.msg);
        return 1;
    }
    return 0;
}
