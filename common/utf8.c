/* utf8.c: UTF-8 by the WHATWG decoder's rules (utf8.h says why those):
 * the lead byte fixes the length and the allowed range of the second
 * byte, which is where overlong forms, surrogates and code points past
 * U+10FFFF show.  Must not: allocate, except tlm_utf8_fix's buffer. */
#include "common/utf8.h"

#include <stdlib.h>
#include <string.h>

size_t tlm_utf8_seq(const uint8_t *p, size_t n, size_t *bad)
{
    *bad = 1;
    uint8_t c = p[0];
    if (c < 0x80)
        return 1;
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0)
            lo = 0xA0;          /* no overlongs */
        else if (c == 0xED)
            hi = 0x9F;          /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0)
            lo = 0x90;          /* no overlongs */
        else if (c == 0xF4)
            hi = 0x8F;          /* nothing above U+10FFFF */
    } else {
        return 0;               /* 80..C1, F5..FF: never a lead byte */
    }
    for (size_t i = 1; i <= need; i++) {
        if (i >= n)
            return *bad = i, 0; /* truncated at the end: one replacement for all of it */
        uint8_t b = p[i];
        if (b < lo || b > hi)
            return *bad = i, 0; /* the offending byte starts over */
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

size_t tlm_utf8_next(const char *str, size_t n, uint32_t *cp)
{
    const uint8_t *s = (const uint8_t *)str;
    if (n == 0) {
        *cp = 0;
        return 0;
    }
    size_t bad, k = tlm_utf8_seq(s, n, &bad);
    if (k == 0) {
        *cp = 0xFFFD;
        return 1;
    }
    static const uint8_t lead_bits[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t v = s[0] & lead_bits[k];
    for (size_t i = 1; i < k; i++)
        v = (v << 6) | (s[i] & 0x3F);
    *cp = v;
    return k;
}

size_t tlm_utf8_put(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int tlm_utf8_fix(uint8_t **buf, size_t *cap, const uint8_t *p, size_t n, size_t *out_len, tlm_err *e)
{
    /* Fast scan: most text is valid, and then nothing is copied. */
    size_t i = 0, bad;
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = tlm_utf8_seq(p + i, n - i, &bad);
        if (!k)
            break;
        i += k;
    }
    if (i == n) {
        *out_len = n;
        return 0;
    }
    /* Each replaced subpart (>= 1 byte) grows into 3 bytes at most. */
    if (n > (SIZE_MAX - 16) / 3)
        return tlm_errf(e, TLM_ENOMEM, "text of %zu bytes is too large", n);
    size_t need = 3 * n + 16;
    if (*cap < need) {
        uint8_t *grown = realloc(*buf, need);
        if (!grown)
            return tlm_errf(e, TLM_ENOMEM, "out of memory (%zu bytes of text)", n);
        *buf = grown;
        *cap = need;
    }
    uint8_t *out = *buf;
    memcpy(out, p, i);
    size_t o = i;
    while (i < n) {
        if (p[i] < 0x80) {
            out[o++] = p[i++];
            continue;
        }
        size_t k = tlm_utf8_seq(p + i, n - i, &bad);
        if (k) {
            memcpy(out + o, p + i, k);
            o += k;
            i += k;
        } else {
            out[o++] = 0xEF;
            out[o++] = 0xBF;
            out[o++] = 0xBD;
            i += bad;
        }
    }
    *out_len = o;
    return 1;
}
