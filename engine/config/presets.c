/* presets.c: the table of scale presets (see presets.h, docs/presets.md). */
#include "engine/config/presets.h"

#include <string.h>

static const eng_preset PRESETS[] = {
    /* CPU presets: byte-level, tied, L = 6 so three equal layer groups exist
     * (wider-early / -middle / -late), d_ff a multiple of 128 so every ratio
     * of the paper (steps of 1/8) and the 0.75x group width are multiples
     * of 16. */
    {"1m", 128, 6, 4, 4, 256, "bytes", 1, 256, 16384, 20000000, 1000000, 2000000, 65536,
     "d=128, head_dim 32, d_ff=2d; trains in minutes on 2 cores"},
    {"3m", 192, 6, 6, 6, 640, "bytes", 1, 256, 16384, 60000000, 3000000, 6000000, 65536,
     "d=192, head_dim 32, d_ff=10d/3"},
    {"5m", 256, 6, 4, 4, 768, "bytes", 1, 256, 16384, 100000000, 5000000, 10000000, 65536,
     "d=256, head_dim 64, d_ff=3d"},
    {"10m", 384, 6, 6, 6, 896, "bytes", 1, 256, 32768, 200000000, 10000000, 20000000, 131072,
     "d=384, head_dim 64, d_ff=7d/3"},
    {"20m", 512, 6, 8, 8, 1408, "bytes", 1, 512, 32768, 400000000, 20000000, 40000000, 131072,
     "d=512, head_dim 64, d_ff=8d/3 rounded up to 128"},
    /* The paper's scales, Llama 3 tokenizer (128,256 ids), tied embeddings,
     * Llama-style d_ff = 8d/3 rounded up to 256, head_dim 64; token budgets,
     * batch, sequence length and warm-up from the paper's recipe. */
    {"440m", 1024, 24, 16, 16, 2816, "llama3", 1, 4096, 524288, 30000000000LL, 1000000000LL,
     1000000000LL, 2097152, "d=1024/L=24/H=16 as the group's ~400M models; Llama 3 vocab -> 439.7M"},
    {"760m", 1536, 20, 24, 24, 4096, "llama3", 1, 4096, 524288, 50000000000LL, 1000000000LL,
     1000000000LL, 2097152, "d=1536/H=24, L=20 to land on 760M with the 128K vocab -> 763.3M"},
    {"1.3b", 2048, 20, 32, 32, 5632, "llama3", 1, 4096, 524288, 100000000000LL, 1000000000LL,
     1000000000LL, 2097152, "d=2048/H=32 as the group's 1.3B; L=20 with the 128K vocab -> 1290.4M"},
};

const eng_preset *eng_preset_find(const char *name)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        if (strcmp(PRESETS[i].name, name) == 0)
            return &PRESETS[i];
    return NULL;
}

const eng_preset *eng_preset_at(size_t i)
{
    return i < sizeof PRESETS / sizeof PRESETS[0] ? &PRESETS[i] : NULL;
}
