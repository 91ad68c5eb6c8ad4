/* hash.c: the byte-string -> rank map behind BPE (open addressing,
 * about 50% full, so a lookup is one or two probes), its hash function, and
 * base64 for rank files.  Lookups happen once per candidate merge, so this
 * is the encoder's innermost loop. */
#include <stdlib.h>
#include <string.h>

#include "engine/tok/internal.h"

static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t tok_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0x100000001B3ull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h = mix(h);
    return h ? h : 1; /* 0 marks empty cache slots */
}

int tok_map_build(eng_tok *t, tlm_err *e)
{
    uint32_t size = 1024;
    while (size < 2u * t->n_ranks)
        size <<= 1;
    t->map.slots = calloc(size, sizeof *t->map.slots);
    if (!t->map.slots)
        return tlm_errf(e, TLM_ENOMEM, "out of memory (rank map)");
    t->map.mask = size - 1;
    for (uint32_t id = 0; id < t->n_ranks; id++) {
        if (t->spm_type && t->spm_type[id] != TOK_SPM_NORMAL)
            continue; /* control, unknown and byte pieces never come from joining text */
        const uint8_t *p = t->arena + t->off[id];
        size_t n = t->off[id + 1] - t->off[id];
        if (tok_map_get(t, p, n) >= 0)
            return tlm_errf(e, TLM_EDATA, "rank %u repeats the bytes of rank %lld", id,
                            (long long)tok_map_get(t, p, n));
        uint64_t h = tok_hash(p, n);
        uint32_t i = (uint32_t)h & t->map.mask;
        while (t->map.slots[i])
            i = (i + 1) & t->map.mask;
        t->map.slots[i] = (h >> 32) << 32 | (uint64_t)(id + 1);
    }
    return 0;
}

int64_t tok_map_get(const eng_tok *t, const uint8_t *p, size_t n)
{
    uint64_t h = tok_hash(p, n);
    uint32_t tag = (uint32_t)(h >> 32);
    for (uint32_t i = (uint32_t)h & t->map.mask;; i = (i + 1) & t->map.mask) {
        uint64_t s = t->map.slots[i];
        if (!s)
            return -1;
        if ((uint32_t)(s >> 32) != tag)
            continue;
        uint32_t id = (uint32_t)s - 1;
        uint32_t a = t->off[id], len = t->off[id + 1] - a;
        if (len == n && memcmp(t->arena + a, p, n) == 0)
            return id;
    }
}

/* ------------------------------------------------------------ base64 */
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t tok_base64_encode(const uint8_t *p, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Strict: length a multiple of 4, '=' only as padding.  0 ok, -1 bad. */
int tok_base64_decode(const char *s, size_t n, uint8_t *out, size_t cap, size_t *out_len)
{
    if (n == 0 || n % 4)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            if (s[i + k] == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
            } else {
                if (pad)
                    return -1;
                v[k] = b64val(s[i + k]);
                if (v[k] < 0)
                    return -1;
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        size_t m = 3 - (size_t)pad;
        if (o + m > cap)
            return -1;
        out[o++] = (uint8_t)(w >> 16);
        if (m > 1)
            out[o++] = (uint8_t)(w >> 8);
        if (m > 2)
            out[o++] = (uint8_t)w;
    }
    *out_len = o;
    return 0;
}
