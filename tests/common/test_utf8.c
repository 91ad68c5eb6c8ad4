/* test_utf8.c: common/utf8.c, the one UTF-8 decoder of the tree: the
 * WHATWG rules (how many U+FFFD an invalid run becomes), the lenient
 * one-byte stepping of the evaluation suites, the encoder tlmd's JSON
 * reader uses for \u escapes, and the replacement the tokenizers apply. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "tests/lib/tap.h"

/* Whether tlm_utf8_fix turns in[0, n) into exactly want[0, want_n). */
static int fixed_equals(const char *in, size_t n, const char *want, size_t want_n)
{
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    tlm_err e;
    int rc = tlm_utf8_fix(&buf, &cap, (const uint8_t *)in, n, &len, &e);
    int ok = rc == 1 && len == want_n && !memcmp(buf, want, want_n);
    free(buf);
    return ok;
}

static void test_seq(void)
{
    size_t bad;
    TAP_OK(tlm_utf8_seq((const uint8_t *)"A", 1, &bad) == 1 && bad == 1, "ASCII is one byte");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xE2\x82\xAC", 3, &bad) == 3, "U+20AC is three bytes");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xF0\x9D\x84\x9E", 4, &bad) == 4, "U+1D11E is four bytes");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xC0\xAF", 2, &bad) == 0 && bad == 1, "C0 never leads (overlong)");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xE0\x80\x80", 3, &bad) == 0 && bad == 1, "overlong E0 80: bad at 1");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xED\xA0\x80", 3, &bad) == 0 && bad == 1, "a surrogate is refused");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xF4\x90\x80\x80", 4, &bad) == 0 && bad == 1, "above U+10FFFF refused");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xF5\x80", 2, &bad) == 0 && bad == 1, "F5 never leads");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xE2\x82", 2, &bad) == 0 && bad == 2, "truncated: one subpart of 2");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xF0\x9F\x98", 3, &bad) == 0 && bad == 3, "truncated: one subpart of 3");
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xE2\x82" "A", 3, &bad) == 0 && bad == 2, "a bad byte starts over");
    /* a NUL ends a C string: the writer of events passes strlen() as n */
    TAP_OK(tlm_utf8_seq((const uint8_t *)"\xE2\x82", 2, &bad) == 0, "no reading past n");
}

static void test_next(void)
{
    uint32_t cp;
    TAP_OK(tlm_utf8_next("", 0, &cp) == 0 && cp == 0, "empty: 0, cp 0");
    TAP_OK(tlm_utf8_next("\xC3\xA9", 2, &cp) == 2 && cp == 0xE9, "U+00E9");
    TAP_OK(tlm_utf8_next("\xF0\x9D\x84\x9E", 4, &cp) == 4 && cp == 0x1D11E, "U+1D11E");
    TAP_OK(tlm_utf8_next("\xE2\x82" "A", 3, &cp) == 1 && cp == 0xFFFD, "invalid: U+FFFD, one byte (lenient)");
    TAP_OK(tlm_utf8_next("\xED\xA0\x80", 3, &cp) == 1 && cp == 0xFFFD, "surrogate: U+FFFD, one byte");
    /* every scalar value encodes and decodes back, and seq agrees */
    int wrong = 0;
    for (uint32_t c = 0; c <= 0x10FFFF; c++) {
        if (c >= 0xD800 && c <= 0xDFFF)
            continue;
        char b[4];
        size_t n = tlm_utf8_put(c, b), bad;
        size_t want = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (n != want || tlm_utf8_next(b, n, &cp) != n || cp != c || tlm_utf8_seq((const uint8_t *)b, n, &bad) != n)
            wrong++;
    }
    TAP_OK(wrong == 0, "all 1112064 scalar values round-trip (%d wrong)", wrong);
}

static void test_fix(void)
{
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    tlm_err e;
    TAP_OK(tlm_utf8_fix(&buf, &cap, (const uint8_t *)"h\xC3\xA9llo", 6, &len, &e) == 0 && len == 6 && !buf,
           "valid text: 0, nothing copied");
    free(buf);
    TAP_OK(fixed_equals("a\xFF" "b", 3, "a\xEF\xBF\xBD" "b", 5), "one bad byte, one U+FFFD");
    TAP_OK(fixed_equals("\xF0\x80\x80", 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", 9),
           "F0 80 80: three U+FFFD (WHATWG, not one)");
    TAP_OK(fixed_equals("x\xF0\x9F\x98", 4, "x\xEF\xBF\xBD", 4), "a truncated tail is one U+FFFD");
    TAP_OK(fixed_equals("\xED\xA0\x80z", 4, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz", 10),
           "a surrogate's three bytes are three U+FFFD");
}

int main(void)
{
    test_seq();
    test_next();
    test_fix();
    return tap_done();
}
