/* jsonline.h: a strict, bounded parser for one JSON object per line, the
 * shape of every worker event.  Members are decoded into the caller's
 * scratch space (no allocation); nested arrays and objects are validated
 * and kept as their raw text.  Used only on untrusted input: anything that
 * is not RFC 8259 JSON (bad UTF-8, control characters, lone surrogates,
 * duplicate keys, trailing bytes, \u0000) is refused with a reason.
 * Must not: read past `len`, recurse deeper than ORC_JSON_MAX_DEPTH. */
#ifndef TLM_ORC_JSONLINE_H
#define TLM_ORC_JSONLINE_H

#include <stddef.h>

#define ORC_JSON_MAX_MEMBERS 64
#define ORC_JSON_MAX_DEPTH 16

typedef enum orc_json_type {
    ORC_JSON_STRING,
    ORC_JSON_NUMBER,
    ORC_JSON_TRUE,
    ORC_JSON_FALSE,
    ORC_JSON_NULL,
    ORC_JSON_ARRAY,
    ORC_JSON_OBJECT
} orc_json_type;

typedef struct orc_json_member {
    const char *key;   /* decoded, NUL-terminated (in scratch) */
    orc_json_type type;
    const char *str;   /* STRING: decoded text; ARRAY/OBJECT: raw JSON text (in scratch) */
    double num;        /* NUMBER */
    int integral;      /* NUMBER written without fraction or exponent */
    long long inum;    /* NUMBER when integral and in range */
} orc_json_member;

typedef struct orc_json_object {
    orc_json_member m[ORC_JSON_MAX_MEMBERS];
    int n;
} orc_json_object;

/* Parse s[0..len) (no newline) into out.  scratch must hold at least
 * len + ORC_JSON_MAX_MEMBERS * 2 bytes.  Returns 0, or -1 with a reason in err. */
int orc_json_parse_object(const char *s, size_t len, orc_json_object *out, char *scratch, size_t scratch_cap,
                          char *err, size_t err_cap);

const orc_json_member *orc_json_get(const orc_json_object *o, const char *key);

#endif
