/* jsonline.c: the strict one-object-per-line JSON parser (see jsonline.h).
 * Hand-written because it sits on the daemon's hot path (every step event
 * of every worker) and must stay well under a microsecond per member. */
#include "orchestrator/jsonline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/utf8.h"

typedef struct {
    const char *s;
    size_t len, pos;
    char *out; /* scratch */
    size_t out_cap, out_n;
    char *err;
    size_t err_cap;
} parser;

static int fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *p, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    tlm_msg_vprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tlm_msg_printf(p->err, p->err_cap, "%s at byte %zu", msg, p->pos);
    return -1;
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\r')
            break;
        p->pos++;
    }
}

static int put(parser *p, const char *b, size_t n)
{
    if (p->out_n + n + 1 > p->out_cap)
        return fail(p, "value too long");
    memcpy(p->out + p->out_n, b, n);
    p->out_n += n;
    return 0;
}

static int hex4(parser *p, unsigned *v)
{
    if (p->pos + 4 > p->len)
        return fail(p, "truncated \\u escape");
    unsigned x = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos++];
        x <<= 4;
        if (c >= '0' && c <= '9')
            x |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            x |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            x |= (unsigned)(c - 'A' + 10);
        else
            return fail(p, "bad hex digit in \\u escape");
    }
    *v = x;
    return 0;
}

static int put_utf8(parser *p, unsigned cp)
{
    char b[4];
    return put(p, b, tlm_utf8_put(cp, b));
}

/* A string at p->pos (on the opening quote); decoded into scratch when
 * `decode`, else only validated.  *out points at the NUL-terminated text. */
static int parse_string(parser *p, int decode, const char **out)
{
    p->pos++; /* opening quote */
    size_t start = p->out_n;
    for (;;) {
        if (p->pos >= p->len)
            return fail(p, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20)
            return fail(p, "control character in a string");
        if (c == '\\') {
            p->pos++;
            if (p->pos >= p->len)
                return fail(p, "unterminated escape");
            char esc = p->s[p->pos++];
            char ch;
            switch (esc) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case '/': ch = '/'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                unsigned cp;
                if (hex4(p, &cp))
                    return -1;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (p->pos + 2 > p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                        return fail(p, "lone high surrogate");
                    p->pos += 2;
                    if (hex4(p, &lo))
                        return -1;
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        return fail(p, "bad low surrogate");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return fail(p, "lone low surrogate");
                } else if (cp == 0) {
                    return fail(p, "\\u0000 in a string");
                }
                if (decode && put_utf8(p, cp))
                    return -1;
                continue;
            }
            default:
                return fail(p, "bad escape \\%c", esc);
            }
            if (decode && put(p, &ch, 1))
                return -1;
            continue;
        }
        if (c < 0x80) {
            /* a run of plain ASCII in one copy */
            size_t end = p->pos + 1;
            while (end < p->len) {
                unsigned char d = (unsigned char)p->s[end];
                if (d < 0x20 || d >= 0x80 || d == '"' || d == '\\')
                    break;
                end++;
            }
            if (decode && put(p, p->s + p->pos, end - p->pos))
                return -1;
            p->pos = end;
            continue;
        }
        size_t bad, n = tlm_utf8_seq((const uint8_t *)p->s + p->pos, p->len - p->pos, &bad);
        if (!n)
            return fail(p, "invalid UTF-8");
        if (decode && put(p, p->s + p->pos, n))
            return -1;
        p->pos += n;
    }
    if (decode) {
        p->out[p->out_n++] = '\0';
        *out = p->out + start;
    }
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int parse_number(parser *p, orc_json_member *m)
{
    size_t start = p->pos;
    int integral = 1;
    if (p->pos < p->len && p->s[p->pos] == '-')
        p->pos++;
    if (p->pos >= p->len || !is_digit(p->s[p->pos]))
        return fail(p, "bad number");
    if (p->s[p->pos] == '0')
        p->pos++;
    else
        while (p->pos < p->len && is_digit(p->s[p->pos]))
            p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '.') {
        integral = 0;
        p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos]))
            return fail(p, "bad number");
        while (p->pos < p->len && is_digit(p->s[p->pos]))
            p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integral = 0;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos]))
            return fail(p, "bad number");
        while (p->pos < p->len && is_digit(p->s[p->pos]))
            p->pos++;
    }
    if (!m)
        return 0;
    size_t n = p->pos - start;
    /* integers of up to 18 digits (steps, tokens, the version) exactly and
     * without strtod: they are most of the numbers on the hot path */
    if (integral && n <= 18) {
        const char *q = p->s + start;
        int neg = *q == '-';
        long long v = 0;
        for (q += neg; q < p->s + p->pos; q++)
            v = v * 10 + (*q - '0');
        m->integral = 1;
        m->inum = neg ? -v : v;
        m->num = (double)m->inum;
        return 0;
    }
    char buf[64];
    if (n >= sizeof buf)
        return fail(p, "number too long");
    memcpy(buf, p->s + start, n);
    buf[n] = '\0';
    m->num = strtod(buf, NULL);
    m->integral = 0;
    if (integral) {
        errno = 0;
        long long v = strtoll(buf, NULL, 10);
        if (errno == 0) {
            m->integral = 1;
            m->inum = v;
        }
    }
    return 0;
}

static int parse_literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return fail(p, "unexpected character '%c'", p->s[p->pos]);
    p->pos += n;
    return 0;
}

static int skip_value(parser *p, int depth);

/* Validate a nested array or object without keeping it. */
static int skip_container(parser *p, int depth)
{
    if (depth >= ORC_JSON_MAX_DEPTH)
        return fail(p, "nested deeper than %d levels", ORC_JSON_MAX_DEPTH);
    char open = p->s[p->pos++];
    char close = open == '[' ? ']' : '}';
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        skip_ws(p);
        if (open == '{') {
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return fail(p, "expected a key");
            if (parse_string(p, 0, NULL))
                return -1;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':')
                return fail(p, "expected ':'");
            p->pos++;
            skip_ws(p);
        }
        if (skip_value(p, depth + 1))
            return -1;
        skip_ws(p);
        if (p->pos >= p->len)
            return fail(p, "unterminated %s", open == '[' ? "array" : "object");
        char c = p->s[p->pos++];
        if (c == close)
            return 0;
        if (c != ',')
            return fail(p, "expected ',' or '%c'", close);
    }
}

static int skip_value(parser *p, int depth)
{
    if (p->pos >= p->len)
        return fail(p, "expected a value");
    switch (p->s[p->pos]) {
    case '"': return parse_string(p, 0, NULL);
    case '[':
    case '{': return skip_container(p, depth);
    case 't': return parse_literal(p, "true");
    case 'f': return parse_literal(p, "false");
    case 'n': return parse_literal(p, "null");
    default: return parse_number(p, NULL);
    }
}

static int parse_member_value(parser *p, orc_json_member *m)
{
    if (p->pos >= p->len)
        return fail(p, "expected a value");
    char c = p->s[p->pos];
    switch (c) {
    case '"':
        m->type = ORC_JSON_STRING;
        return parse_string(p, 1, &m->str);
    case '[':
    case '{': {
        size_t start = p->pos;
        if (skip_container(p, 1))
            return -1;
        m->type = c == '[' ? ORC_JSON_ARRAY : ORC_JSON_OBJECT;
        size_t at = p->out_n;
        if (put(p, p->s + start, p->pos - start))
            return -1;
        p->out[p->out_n++] = '\0';
        m->str = p->out + at;
        return 0;
    }
    case 't':
        m->type = ORC_JSON_TRUE;
        return parse_literal(p, "true");
    case 'f':
        m->type = ORC_JSON_FALSE;
        return parse_literal(p, "false");
    case 'n':
        m->type = ORC_JSON_NULL;
        return parse_literal(p, "null");
    default:
        m->type = ORC_JSON_NUMBER;
        return parse_number(p, m);
    }
}

int orc_json_parse_object(const char *s, size_t len, orc_json_object *out, char *scratch, size_t scratch_cap,
                          char *err, size_t err_cap)
{
    parser p = {.s = s, .len = len, .out = scratch, .out_cap = scratch_cap, .err = err, .err_cap = err_cap};
    out->n = 0;
    skip_ws(&p);
    if (p.pos >= p.len || s[p.pos] != '{')
        return fail(&p, "expected a JSON object");
    p.pos++;
    skip_ws(&p);
    if (p.pos < p.len && s[p.pos] == '}') {
        p.pos++;
    } else {
        for (;;) {
            skip_ws(&p);
            if (p.pos >= p.len || s[p.pos] != '"')
                return fail(&p, "expected a key");
            if (out->n == ORC_JSON_MAX_MEMBERS)
                return fail(&p, "more than %d members", ORC_JSON_MAX_MEMBERS);
            orc_json_member *m = &out->m[out->n];
            memset(m, 0, sizeof *m);
            if (parse_string(&p, 1, &m->key))
                return -1;
            for (int i = 0; i < out->n; i++)
                if (!strcmp(out->m[i].key, m->key))
                    return fail(&p, "duplicate key '%.40s'", m->key);
            skip_ws(&p);
            if (p.pos >= p.len || s[p.pos] != ':')
                return fail(&p, "expected ':'");
            p.pos++;
            skip_ws(&p);
            if (parse_member_value(&p, m))
                return -1;
            out->n++;
            skip_ws(&p);
            if (p.pos >= p.len)
                return fail(&p, "unterminated object");
            char c = s[p.pos++];
            if (c == '}')
                break;
            if (c != ',')
                return fail(&p, "expected ',' or '}'");
        }
    }
    skip_ws(&p);
    if (p.pos != p.len)
        return fail(&p, "trailing bytes after the object");
    return 0;
}

const orc_json_member *orc_json_get(const orc_json_object *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->m[i].key, key))
            return &o->m[i];
    return NULL;
}
