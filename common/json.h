/* json.h: a string as JSON, the one escape of every part that writes JSON
 * by hand (tlm-worker's events, the job config's canonical form, tlm-report
 * and tlm-dash, tlmd's run-folder marker).
 *
 * Always escaped: '"' and '\' as \" and \\, and every other byte below
 * 0x20 as \u00XX (lowercase hex).  What else is escaped is the caller's
 * policy, a set of TLM_JSON_* bits, because the writers' outputs are
 * contracts that must stay byte for byte as they are: the canonical config
 * is hashed into the job's identity (a changed escape would make every job
 * new), events are read by tlmd and scripts, and the report's JSON by
 * people's tools.  The bits each writer passes:
 *
 *   config canonical form (engine/config)  0
 *   tlm-report, tlm-dash                   TLM_JSON_NL
 *   tlm-worker events                      TLM_JSON_NL | TLM_JSON_TAB | TLM_JSON_DEL | TLM_JSON_UTF8
 *   tlmd's run-folder marker               TLM_JSON_DEL | TLM_JSON_ASCII
 *
 * Must not: allocate, or read past the string's NUL. */
#ifndef TLM_COMMON_JSON_H
#define TLM_COMMON_JSON_H

#include <stddef.h>

enum {
    TLM_JSON_NL = 1,     /* '\n' as \n (else \u000a) */
    TLM_JSON_TAB = 2,    /* '\t' as \t (else \u0009) */
    TLM_JSON_DEL = 4,    /* 0x7f as \u007f (else as it is) */
    TLM_JSON_ASCII = 8,  /* every byte from 0x80 as \u00XX: the output is ASCII whatever the input */
    TLM_JSON_UTF8 = 16,  /* well-formed UTF-8 kept, any other byte from 0x80 as \u00XX (its Latin-1
                          * code point): the output is valid UTF-8 whatever the input */
    TLM_JSON_QUOTE = 32, /* the escaped text between double quotes */
};

/* Where the escaped text goes: n bytes at s (not NUL-terminated). */
typedef void (*tlm_json_sink)(void *ctx, const char *s, size_t n);

/* The JSON string body of s (NUL-terminated) under policy, handed to put
 * in pieces: each run of bytes kept as they are in one call, each escape
 * in one call. */
void tlm_json_escape(const char *s, unsigned policy, tlm_json_sink put, void *ctx);

/* The same into out[cap], NUL-terminated when cap > 0 (cut short when it
 * does not fit); returns the length of the whole text, as snprintf does:
 * it fitted when the result is below cap. */
size_t tlm_json_escape_buf(const char *s, unsigned policy, char *out, size_t cap);

#endif
