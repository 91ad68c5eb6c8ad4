/* cfgtree.h: a YAML/JSON document as a tree of nodes that remember where they
 * were written (file, line, column), so that every configuration error can
 * point at its source.  Used for job configs (config.c) and sweep files
 * (orchestrator/sweep.c).  JSON is read through the same YAML parser (a JSON
 * document is a YAML flow document), so both get positions.
 *
 * Scalars keep their text as written; tlm_cfg_get_* interpret them with TLM's own
 * rules (no YAML 1.1 surprises: `no` is a string, `1e9` is a number). */
#ifndef TLM_COMMON_CFGTREE_H
#define TLM_COMMON_CFGTREE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef enum tlm_cfg_kind { TLM_CFG_SCALAR, TLM_CFG_SEQ, TLM_CFG_MAP } tlm_cfg_kind;

typedef struct tlm_cfg_node tlm_cfg_node;
struct tlm_cfg_node {
    tlm_cfg_kind kind;
    int line, col;     /* 1-based position in its file */
    int file;          /* index into the file-name registry (tlm_cfg_file_name) */
    char *text;        /* TLM_CFG_SCALAR: as written (quotes removed) */
    int quoted;        /* TLM_CFG_SCALAR: a string whatever its text: 1 written in quotes, 2 tagged !!str */
    size_t n;          /* TLM_CFG_SEQ/TLM_CFG_MAP: number of entries */
    tlm_cfg_node **items;  /* TLM_CFG_SEQ: elements; TLM_CFG_MAP: values */
    tlm_cfg_node **keys;   /* TLM_CFG_MAP: keys (scalars), same order as written */
    size_t *index;     /* TLM_CFG_MAP: cfgtree.c's hash index of keys (from 16 keys on), NULL before */
    size_t index_cap;
};

/* Parse one document.  Empty input, several documents, aliases,
 * duplicate keys and YAML tags other than the core schema's (!!str,
 * !!int, !!float, !!bool, !!null, !!seq, !!map, where they fit) are errors
 * (TLM_ECONFIG) with a position.  Inputs larger than 16 MiB, and folders,
 * are refused. */
int tlm_cfg_parse_file(const char *path, tlm_cfg_node **out, tlm_err *e);
int tlm_cfg_parse_buffer(const char *name, const char *buf, size_t len, tlm_cfg_node **out, tlm_err *e);

void tlm_cfg_free(tlm_cfg_node *n);
tlm_cfg_node *tlm_cfg_clone(const tlm_cfg_node *n);

/* Registry of file names (interned for the process lifetime). */
const char *tlm_cfg_file_name(int id);

/* Constructors (positions copied from `at`, which may be NULL). */
tlm_cfg_node *tlm_cfg_new_scalar(const char *text, int quoted, const tlm_cfg_node *at);
tlm_cfg_node *tlm_cfg_new_map(const tlm_cfg_node *at);
/* Append (takes ownership of key and value). Returns 0 or TLM_ENOMEM. */
int tlm_cfg_map_append(tlm_cfg_node *map, tlm_cfg_node *key, tlm_cfg_node *value);

/* Map lookup; NULL if absent or not a map.  Constant time on average,
 * whatever the size: a file of 200,000 keys reads in a fraction of a
 * second (a linear search per key took minutes). */
tlm_cfg_node *tlm_cfg_map_get(const tlm_cfg_node *map, const char *key);
/* The position of key in map->keys, or map->n when absent. */
size_t tlm_cfg_map_find(const tlm_cfg_node *map, const char *key);

/* Every key path of a mapping is set once.  Nested mappings and dotted keys
 * are two spellings of one path (`model: {d_model: 32}` and
 * `model.d_model: 64` both set model.d_model), so a path given twice, or
 * given a value and also keys under it (`train: 5`, `train.lr: 1`), is an
 * error naming both places.  Lists are values: their contents are not
 * paths of the mapping. */
int tlm_cfg_check_paths_unique(const tlm_cfg_node *map, tlm_err *e);

/* "file:line:col: message", code TLM_ECONFIG; `at` may be NULL. */
int tlm_cfg_errf(tlm_err *e, const tlm_cfg_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Levenshtein distance between two keys, for "did you mean" hints; 99 when
 * either is longer than 63 characters. */
size_t tlm_cfg_edit_distance(const char *a, const char *b);

/* Interpretation of scalars; each fails with a positioned message naming
 * `what` (e.g. "train.lr") and the expected form. */
/* Numbers: finite decimals (30e9, 4e-4, 1.5), within [lo, hi] (lo excluded
 * when lo_open).  Integers: any decimal spelling of a whole number (30e9,
 * 3.0e10, 30000000000), read exactly.  A quoted string, a fraction and a
 * value out of range (1e400, 26 digits) each have their own message, the
 * last with the range: "seeds: 1e30 is out of range (expected an integer
 * from 0 to 2^32-1)". */
int tlm_cfg_get_double_in(const tlm_cfg_node *n, const char *what, double lo, double hi, int lo_open, double *out,
                      tlm_err *e);
int tlm_cfg_get_int_in(const tlm_cfg_node *n, const char *what, int64_t lo, int64_t hi, int64_t *out, tlm_err *e);
int tlm_cfg_get_bool(const tlm_cfg_node *n, const char *what, int *out, tlm_err *e);
int tlm_cfg_get_string(const tlm_cfg_node *n, const char *what, char *out, size_t cap, tlm_err *e);

/* The same rules on text (command-line values, common/cli.h): TLM_CFG_NUM_OK,
 * or why not.  tlm_cfg_parse_int_text reads integers exactly, without a
 * detour through a double; tlm_cfg_parse_number_text refuses nan, inf, hex
 * and overflow. */
enum { TLM_CFG_NUM_OK = 0, TLM_CFG_NUM_NOT_NUMBER, TLM_CFG_NUM_NOT_INTEGER, TLM_CFG_NUM_RANGE };
int tlm_cfg_parse_int_text(const char *s, int64_t *out);
int tlm_cfg_parse_number_text(const char *s, double *out);
/* What a range expects, as every message about one says it: "an integer
 * from 1 to 256", "a number above 0 and at most 2^31-1" (lo_open). */
void tlm_cfg_range_text(double lo, double hi, int lo_open, int integer, char *out, size_t cap);

/* Is this node a scalar that means null ("null", "~", or empty plain)? */
int tlm_cfg_is_null(const tlm_cfg_node *n);

/* Human name of a node's kind for messages: "a mapping", "a list", "a number"... */
const char *tlm_cfg_describe(const tlm_cfg_node *n);

#endif
