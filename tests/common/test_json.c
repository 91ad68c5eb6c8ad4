/* test_json.c: common/json.c, the one JSON string escape, under each
 * writer's policy (json.h): the outputs are contracts (the canonical
 * config is hashed into job keys, events are read by tlmd), so every
 * expected string here is what that writer wrote before the escape was
 * shared, byte for byte. */
#include <string.h>

#include "common/json.h"
#include "tests/lib/tap.h"

#define CONFIG (TLM_JSON_QUOTE)
#define REPORT (TLM_JSON_QUOTE | TLM_JSON_NL)
#define EVENTS (TLM_JSON_QUOTE | TLM_JSON_NL | TLM_JSON_TAB | TLM_JSON_DEL | TLM_JSON_UTF8)
#define MARKER (TLM_JSON_DEL | TLM_JSON_ASCII)

static char out[256];
static size_t n_out, calls;

static void sink(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    memcpy(out + n_out, s, n);
    n_out += n;
    out[n_out] = '\0';
    calls++;
}

static int is(const char *in, unsigned policy, const char *want)
{
    n_out = calls = 0;
    out[0] = '\0';
    tlm_json_escape(in, policy, sink, NULL);
    if (strcmp(out, want))
        TAP_DIAG("policy %u: got '%s', want '%s'", policy, out, want);
    return !strcmp(out, want);
}

/* "a\"b\\c", a newline, a tab, 0x01, DEL, é (UTF-8), a lone 0xff */
static const char MIX[] = "a\"b\\c\n\t\x01\x7f\xc3\xa9\xff";

int main(void)
{
    TAP_OK(is(MIX, CONFIG, "\"a\\\"b\\\\c\\u000a\\u0009\\u0001\x7f\xc3\xa9\xff\""),
           "config: only what JSON requires, every other byte as it is");
    TAP_OK(is(MIX, REPORT, "\"a\\\"b\\\\c\\n\\u0009\\u0001\x7f\xc3\xa9\xff\""), "report: and \\n");
    TAP_OK(is(MIX, EVENTS, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\xc3\xa9\\u00ff\""),
           "events: \\n, \\t, DEL; UTF-8 kept, a stray byte as its Latin-1 code point");
    TAP_OK(is(MIX, MARKER, "a\\\"b\\\\c\\u000a\\u0009\\u0001\\u007f\\u00c3\\u00a9\\u00ff"),
           "marker: ASCII only, unquoted");
    TAP_OK(is("\xf0\x9f\x98\x80\xed\xa0\x80", EVENTS, "\"\xf0\x9f\x98\x80\\u00ed\\u00a0\\u0080\""),
           "events: a 4-byte sequence kept, a surrogate's bytes escaped one by one");
    TAP_OK(is("", REPORT, "\"\"") && is("", 0, ""), "the empty string");
    TAP_OK(is("plain text", REPORT, "\"plain text\"") && calls == 3, "a plain run in one call (and the quotes)");

    char b[8];
    size_t n = tlm_json_escape_buf("a\"\xe9", MARKER, b, sizeof b);
    TAP_OK(n == 9 && !strcmp(b, "a\\\"\\u00"), "buf: cut to fit, NUL-terminated, the whole length returned (%zu)", n);
    n = tlm_json_escape_buf("ab", MARKER, b, sizeof b);
    TAP_OK(n == 2 && !strcmp(b, "ab"), "buf: fits");
    TAP_OK(tlm_json_escape_buf("abc", 0, NULL, 0) == 3, "buf: cap 0 only measures");
    return tap_done();
}
