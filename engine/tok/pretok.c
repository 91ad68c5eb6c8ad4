/* pretok.c: pre-tokenisation, the regex that cuts text into the pieces
 * BPE merges within.  The pattern is Llama 3's (the same as OpenAI's
 * cl100k_base) with one deliberate rewrite: `\s` is spelled out as the
 * Unicode White_Space set, which is what the reference implementation's
 * regex engine (tiktoken, Rust) means by \s; PCRE2's own \s under UCP would
 * add U+180E and JavaScript's adds U+FEFF.  Everything else is as published:
 *
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * Input must be valid UTF-8 (the encoder repairs or splits it first). */
#include <string.h>

#include "engine/tok/internal.h"

#define WS "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"

const char tok_llama3_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
    "|\\p{N}{1,3}"
    "| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n]*"
    "|[" WS "]*[\\r\\n]+"
    "|[" WS "]+(?![^" WS "])"
    "|[" WS "]+";

int tok_regex_compile(pcre2_code **re, pcre2_match_data **md, tlm_err *e)
{
    int code;
    PCRE2_SIZE where;
    *re = pcre2_compile((PCRE2_SPTR)tok_llama3_pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code,
                        &where, NULL);
    if (!*re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        return tlm_errf(e, TLM_EINTERNAL, "pre-tokenisation pattern does not compile at %zu: %s", (size_t)where,
                        (const char *)msg);
    }
    /* JIT is a speed-up only: without it (some platforms) matching still works. */
    (void)pcre2_jit_compile(*re, PCRE2_JIT_COMPLETE);
    *md = pcre2_match_data_create_from_pattern(*re, NULL);
    if (!*md) {
        pcre2_code_free(*re);
        *re = NULL;
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    return 0;
}

int tok_pretokenize(pcre2_code *re, pcre2_match_data *md, const uint8_t *p, size_t n,
                    int (*fn)(void *arg, const uint8_t *piece, size_t len), void *arg, tlm_err *e)
{
    size_t off = 0;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    while (off < n) {
        int rc = pcre2_match(re, (PCRE2_SPTR)p, n, off, PCRE2_NO_UTF_CHECK, md, NULL);
        size_t s, end;
        if (rc == PCRE2_ERROR_NOMATCH) {
            s = end = n; /* the rest is a gap: one piece (cannot happen with this pattern) */
        } else if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return tlm_errf(e, TLM_EINTERNAL, "pre-tokenisation failed at byte %zu: %s", off, (const char *)msg);
        } else {
            s = ov[0];
            end = ov[1];
        }
        int r;
        if (s > off && (r = fn(arg, p + off, s - off)))
            return r;
        if (end > s) {
            if ((r = fn(arg, p + s, end - s)))
                return r;
            off = end;
        } else if (s < n) {
            /* an empty match (cannot happen with this pattern): step one character */
            size_t bad, k = tlm_utf8_seq(p + s, n - s, &bad);
            if (!k)
                k = bad;
            if ((r = fn(arg, p + s, k)))
                return r;
            off = s + k;
        } else {
            off = n;
        }
    }
    return 0;
}
