/* rng.h: small deterministic random sources with explicit state, so that a
 * run can be checkpointed and resumed bit for bit.
 *
 * - eng_mix64: SplitMix64's finaliser, a stateless 64-bit hash.
 * - eng_rng: a SplitMix64 stream; its whole state is one uint64 (store it,
 *   restore it, continue exactly).
 * - eng_perm: a keyed pseudo-random permutation of [0, n) that needs no
 *   table: a 4-round Feistel network on the smallest even-width power of two
 *   >= n, with cycle walking back into [0, n).  eng_perm_at(p, i) is the
 *   i-th element of the shuffled order, O(1) time and memory, so a data
 *   loader can shuffle billions of windows and resume from a counter.
 *
 * Must not: read the clock, the environment or anything global; every
 * value is a pure function of the seed/key and the arguments. */
#ifndef TLM_ENGINE_RNG_H
#define TLM_ENGINE_RNG_H

#include <stdint.h>

uint64_t eng_mix64(uint64_t x);

typedef struct eng_rng {
    uint64_t state;
} eng_rng;

void eng_rng_seed(eng_rng *r, uint64_t seed);
uint64_t eng_rng_u64(eng_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double eng_rng_uniform(eng_rng *r);

typedef struct eng_perm {
    uint64_t n;         /* permutes [0, n) */
    uint64_t key[4];    /* one key per Feistel round */
    int half_bits;      /* each Feistel half holds this many bits */
} eng_perm;

/* n >= 1.  Different keys give unrelated permutations. */
void eng_perm_init(eng_perm *p, uint64_t n, uint64_t key);
/* The element at position i (< n) of the permutation; a bijection on [0, n). */
uint64_t eng_perm_at(const eng_perm *p, uint64_t i);

#endif
