/* utf8.h: UTF-8 decoding and encoding, one set of rules for every part
 * of TLM (the tokenizers, the evaluation suites, tlm-worker's event
 * writer, tlmd's JSON reader).
 *
 * Well-formed means what the WHATWG Encoding standard, Node's TextDecoder
 * and Python's errors="replace" accept: no overlong forms, no surrogates,
 * nothing above U+10FFFF.  The same rules decide how many U+FFFD an
 * invalid run becomes (one per "maximal subpart"), which must agree with
 * the reference tokenizers for token ids to agree. */
#ifndef TLM_COMMON_UTF8_H
#define TLM_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Length (1 to 4) of the well-formed sequence at p[0, n), n >= 1; 0 when
 * p does not start one, and then *bad is how many bytes one U+FFFD
 * replaces (the maximal subpart, >= 1). */
size_t tlm_utf8_seq(const uint8_t *p, size_t n, size_t *bad);

/* The code point at s[0, n) in *cp and its length.  Lenient: a byte that
 * does not start a well-formed sequence reads as U+FFFD of length 1 (the
 * evaluation suites count and split characters this way).  n == 0: 0,
 * and *cp = 0. */
size_t tlm_utf8_next(const char *s, size_t n, uint32_t *cp);

/* The UTF-8 form of cp (at most U+10FFFF, not a surrogate) in out;
 * returns its length, 1 to 4. */
size_t tlm_utf8_put(uint32_t cp, char out[4]);

/* If p[0, n) is not well-formed, copies it into *buf (grown as needed,
 * *cap bytes) with each maximal subpart replaced by U+FFFD (EF BF BD),
 * sets *out_len and returns 1; returns 0 when it is well-formed (nothing
 * copied, *out_len = n), or TLM_ENOMEM. */
int tlm_utf8_fix(uint8_t **buf, size_t *cap, const uint8_t *p, size_t n, size_t *out_len, tlm_err *e);

#endif
