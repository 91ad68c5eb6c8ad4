/* sha256.c: SHA-256 (FIPS 180-4).  It names configs and checks checkpoint
 * files, and it verifies every shard's payload when a job opens its data
 * (docs/data.md): tens of GB per job start at the paper's sizes.  So on x86
 * CPUs with the SHA extensions (Intel since Goldmont/Ice Lake, AMD since
 * Zen) the block function runs on them (sha256rnds2, sha256msg1/2), chosen
 * once at run time; elsewhere, and to check that path, the plain C one. */
#include "common/sha256.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHA_NI_PATH 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t h[8], const uint8_t p[64])
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

static void compress_plain(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
    for (; nblocks; nblocks--, p += 64)
        compress(h, p);
}

#ifdef HAVE_SHA_NI_PATH
/* The same on the SHA extensions.  The instructions keep the state as two
 * vectors, (A, B, E, F) and (C, D, G, H), each with its first word in the
 * high lane; sha256rnds2 does two rounds, taking the two message+constant
 * words from the low lanes of its third operand. */
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_shani(uint32_t h[8], const uint8_t *p,
                                                                       size_t nblocks)
{
    /* big-endian words of the block into lanes */
    const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&h[0]); /* lanes: a b c d */
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&h[4]); /* lanes: e f g h */
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);            /* b a d c */
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);            /* h g f e */
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);           /* f e b a */
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);        /* h g d c */
    for (; nblocks; nblocks--, p += 64) {
        const __m128i abef0 = abef, cdgh0 = cdgh;
        __m128i w[4]; /* the last four groups of four schedule words */
        for (int g = 0; g < 16; g++) {
            __m128i m;
            if (g < 4)
                m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
            else /* W[t] = W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]), four at a time */
                m = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]),
                                                       _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4)),
                                         w[(g + 3) & 3]);
            w[g & 3] = m;
            __m128i mk = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&K[4 * g]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, mk);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(mk, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);      /* a b e f */
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);      /* g h c d */
    dcba = _mm_blend_epi16(feba, dchg, 0xF0);          /* a b c d */
    hgfe = _mm_alignr_epi8(dchg, feba, 8);             /* e f g h */
    _mm_storeu_si128((__m128i *)&h[0], dcba);
    _mm_storeu_si128((__m128i *)&h[4], hgfe);
}

static int cpu_has_sha_ni(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3))
        return 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
}
#endif

typedef void (*compress_fn)(uint32_t h[8], const uint8_t *p, size_t nblocks);
static compress_fn compress_blocks;

static compress_fn choose(void)
{
#ifdef HAVE_SHA_NI_PATH
    if (cpu_has_sha_ni())
        return compress_shani;
#endif
    return compress_plain;
}

int tlm__sha256_accelerated(int use)
{
    compress_fn want = use ? choose() : compress_plain;
    __atomic_store_n(&compress_blocks, want, __ATOMIC_RELAXED);
    return want != compress_plain;
}

static void blocks(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
    compress_fn f = __atomic_load_n(&compress_blocks, __ATOMIC_RELAXED);
    if (!f) {
        f = choose();
        __atomic_store_n(&compress_blocks, f, __ATOMIC_RELAXED);
    }
    f(h, p, nblocks);
}

void tlm_sha256_init(tlm_sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->nbytes = 0;
    s->nbuf = 0;
}

void tlm_sha256_update(tlm_sha256 *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->nbytes += n;
    if (s->nbuf) {
        size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take; p += take; n -= take;
        if (s->nbuf < 64)
            return;
        blocks(s->h, s->buf, 1);
        s->nbuf = 0;
    }
    size_t nb = n / 64;
    if (nb)
        blocks(s->h, p, nb);
    p += 64 * nb;
    n -= 64 * nb;
    memcpy(s->buf, p, n);
    s->nbuf = n;
}

void tlm_sha256_final(tlm_sha256 *s, uint8_t out[32])
{
    uint64_t bits = s->nbytes * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (s->nbuf < 56 ? 56 : 120) - s->nbuf;
    for (int i = 0; i < 8; i++)
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    tlm_sha256_update(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void tlm_hex(const uint8_t *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

void tlm_sha256_hex(const void *data, size_t n, char out[65])
{
    tlm_sha256 s;
    uint8_t d[32];
    tlm_sha256_init(&s);
    tlm_sha256_update(&s, data, n);
    tlm_sha256_final(&s, d);
    tlm_hex(d, 32, out);
}
