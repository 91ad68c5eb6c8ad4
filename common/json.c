/* json.c: the JSON string escape (json.h).  Must not: allocate. */
#include "common/json.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/utf8.h"

/* 0 when the byte at p goes out as it is, else its escape in esc */
static size_t escape_of(const unsigned char *p, const unsigned char *end, unsigned policy, char esc[8],
                        size_t *keep)
{
    *keep = 1;
    if (*p == '"' || *p == '\\') {
        esc[0] = '\\', esc[1] = (char)*p;
        return 2;
    }
    if (*p == '\n' && (policy & TLM_JSON_NL))
        return memcpy(esc, "\\n", 2), 2;
    if (*p == '\t' && (policy & TLM_JSON_TAB))
        return memcpy(esc, "\\t", 2), 2;
    int hex = *p < 0x20 || (*p == 0x7f && (policy & TLM_JSON_DEL)) || (*p >= 0x80 && (policy & TLM_JSON_ASCII));
    if (!hex && *p >= 0x80 && (policy & TLM_JSON_UTF8)) {
        size_t bad;
        *keep = tlm_utf8_seq(p, (size_t)(end - p), &bad);
        hex = *keep == 0;
        *keep += hex;
    }
    return hex ? (size_t)snprintf(esc, 8, "\\u%04x", *p) : 0;
}

void tlm_json_escape(const char *s, unsigned policy, tlm_json_sink put, void *ctx)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s), *run = p;
    if (policy & TLM_JSON_QUOTE)
        put(ctx, "\"", 1);
    while (p < end) {
        char esc[8];
        size_t keep, k = escape_of(p, end, policy, esc, &keep);
        if (!k) {
            p += keep; /* a UTF-8 sequence stays whole */
            continue;
        }
        if (p > run)
            put(ctx, (const char *)run, (size_t)(p - run));
        put(ctx, esc, k);
        run = ++p;
    }
    if (p > run)
        put(ctx, (const char *)run, (size_t)(p - run));
    if (policy & TLM_JSON_QUOTE)
        put(ctx, "\"", 1);
}

typedef struct buf_sink {
    char *out;
    size_t cap, n;
} buf_sink;

static void put_buf(void *ctx, const char *s, size_t n)
{
    buf_sink *b = ctx;
    if (b->n < b->cap) {
        size_t room = b->cap - b->n;
        memcpy(b->out + b->n, s, n < room ? n : room);
    }
    b->n += n;
}

size_t tlm_json_escape_buf(const char *s, unsigned policy, char *out, size_t cap)
{
    buf_sink b = {out, cap, 0};
    tlm_json_escape(s, policy, put_buf, &b);
    if (cap)
        out[b.n < cap ? b.n : cap - 1] = '\0';
    return b.n;
}
