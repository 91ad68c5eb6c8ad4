/* rng.c: SplitMix64 streams and a table-free keyed permutation (rng.h). */
#include "engine/train/rng.h"

#include <assert.h>

#define GOLDEN 0x9e3779b97f4a7c15ULL

uint64_t eng_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

void eng_rng_seed(eng_rng *r, uint64_t seed) { r->state = eng_mix64(seed ^ 0x5eed5eed5eed5eedULL); }

uint64_t eng_rng_u64(eng_rng *r)
{
    r->state += GOLDEN;
    return eng_mix64(r->state);
}

double eng_rng_uniform(eng_rng *r) { return (double)(eng_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }

void eng_perm_init(eng_perm *p, uint64_t n, uint64_t key)
{
    assert(n >= 1);
    p->n = n;
    int bits = 2;
    while (bits < 64 && (n - 1) >> bits)
        bits += 2;
    p->half_bits = bits / 2;
    uint64_t k = eng_mix64(key + GOLDEN);
    for (int r = 0; r < 4; r++) {
        k = eng_mix64(k + GOLDEN * (uint64_t)(r + 1));
        p->key[r] = k;
    }
}

static uint64_t feistel(const eng_perm *p, uint64_t x)
{
    const int h = p->half_bits;
    const uint64_t mask = h >= 64 ? ~0ULL : (1ULL << h) - 1;
    uint64_t left = (x >> h) & mask, right = x & mask;
    for (int r = 0; r < 4; r++) {
        uint64_t f = eng_mix64(right ^ p->key[r]) & mask;
        uint64_t next = left ^ f;
        left = right;
        right = next;
    }
    return (left << h) | right;
}

uint64_t eng_perm_at(const eng_perm *p, uint64_t i)
{
    assert(i < p->n);
    /* The Feistel network permutes [0, 4^half_bits) which is < 4n, so the
     * walk back into [0, n) takes a few rounds on average and always ends
     * (a permutation's cycle through i returns to [0, n) at i itself). */
    uint64_t x = feistel(p, i);
    while (x >= p->n)
        x = feistel(p, x);
    return x;
}
