/* cfgtree.h: a YAML/JSON document as a tree of nodes that remember where they
 * were written (file, line, column), so that every configuration error can
 * point at its source.  Used for job configs (config.c) and sweep files
 * (orchestrator/sweep.c).  JSON is read through the same YAML parser (a JSON
 * document is a YAML flow document), so both get positions.
 *
 * Scalars keep their text as written; cfg_get_* interpret them with TLM's own
 * rules (no YAML 1.1 surprises: `no` is a string, `1e9` is a number). */
#ifndef TLM_ENGINE_CFGTREE_H
#define TLM_ENGINE_CFGTREE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef enum cfg_kind { CFG_SCALAR, CFG_SEQ, CFG_MAP } cfg_kind;

typedef struct cfg_node cfg_node;
struct cfg_node {
    cfg_kind kind;
    int line, col;     /* 1-based position in its file */
    int file;          /* index into the file-name registry (cfg_file_name) */
    char *text;        /* CFG_SCALAR: as written (quotes removed) */
    int quoted;        /* CFG_SCALAR: a string whatever its text: 1 written in quotes, 2 tagged !!str */
    size_t n;          /* CFG_SEQ/CFG_MAP: number of entries */
    cfg_node **items;  /* CFG_SEQ: elements; CFG_MAP: values */
    cfg_node **keys;   /* CFG_MAP: keys (scalars), same order as written */
    size_t *index;     /* CFG_MAP: cfgtree.c's hash index of keys (from 16 keys on), NULL before */
    size_t index_cap;
};

/* Parse one document.  Empty input, several documents, aliases,
 * duplicate keys and YAML tags other than the core schema's (!!str,
 * !!int, !!float, !!bool, !!null, !!seq, !!map, where they fit) are errors
 * (ENG_ECONFIG) with a position.  Inputs larger than 16 MiB, and folders,
 * are refused. */
int cfg_parse_file(const char *path, cfg_node **out, eng_err *e);
int cfg_parse_buffer(const char *name, const char *buf, size_t len, cfg_node **out, eng_err *e);

void cfg_free(cfg_node *n);
cfg_node *cfg_clone(const cfg_node *n);

/* Registry of file names (interned for the process lifetime). */
const char *cfg_file_name(int id);

/* Constructors (positions copied from `at`, which may be NULL). */
cfg_node *cfg_new_scalar(const char *text, int quoted, const cfg_node *at);
cfg_node *cfg_new_map(const cfg_node *at);
/* Append (takes ownership of key and value). Returns 0 or ENG_ENOMEM. */
int cfg_map_append(cfg_node *map, cfg_node *key, cfg_node *value);

/* Map lookup; NULL if absent or not a map.  Constant time on average,
 * whatever the size: a file of 200,000 keys reads in a fraction of a
 * second (a linear search per key took minutes). */
cfg_node *cfg_map_get(const cfg_node *map, const char *key);
/* The position of key in map->keys, or map->n when absent. */
size_t cfg_map_find(const cfg_node *map, const char *key);

/* Every key path of a mapping is set once.  Nested mappings and dotted keys
 * are two spellings of one path (`model: {d_model: 32}` and
 * `model.d_model: 64` both set model.d_model), so a path given twice, or
 * given a value and also keys under it (`train: 5`, `train.lr: 1`), is an
 * error naming both places.  Lists are values: their contents are not
 * paths of the mapping. */
int cfg_check_paths_unique(const cfg_node *map, eng_err *e);

/* "file:line:col: message", code ENG_ECONFIG; `at` may be NULL. */
int cfg_errf(eng_err *e, const cfg_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Levenshtein distance between two keys, for "did you mean" hints; 99 when
 * either is longer than 63 characters. */
size_t cfg_edit_distance(const char *a, const char *b);

/* Interpretation of scalars; each fails with a positioned message naming
 * `what` (e.g. "train.lr") and the expected form. */
/* Numbers: finite decimals (30e9, 4e-4, 1.5), within [lo, hi] (lo excluded
 * when lo_open).  Integers: any decimal spelling of a whole number (30e9,
 * 3.0e10, 30000000000), read exactly.  A quoted string, a fraction and a
 * value out of range (1e400, 26 digits) each have their own message, the
 * last with the range: "seeds: 1e30 is out of range (expected an integer
 * from 0 to 2^32-1)". */
int cfg_get_double_in(const cfg_node *n, const char *what, double lo, double hi, int lo_open, double *out,
                      eng_err *e);
int cfg_get_int_in(const cfg_node *n, const char *what, int64_t lo, int64_t hi, int64_t *out, eng_err *e);
int cfg_get_bool(const cfg_node *n, const char *what, int *out, eng_err *e);
int cfg_get_string(const cfg_node *n, const char *what, char *out, size_t cap, eng_err *e);

/* The same rules on text (command-line values): CFG_NUM_OK, or why not.
 * cfg_parse_int_text reads integers exactly, without a detour through a
 * double; cfg_parse_number_text refuses nan, inf, hex and overflow. */
enum { CFG_NUM_OK = 0, CFG_NUM_NOT_NUMBER, CFG_NUM_NOT_INTEGER, CFG_NUM_RANGE };
int cfg_parse_number_text(const char *s, double *out);
/* Command-line values, by the same rules: "--workers 1.5: not an integer
 * (expected an integer from 1 to 256)" in e (ENG_ECONFIG). */
int cfg_arg_int(const char *flag, const char *s, int64_t lo, int64_t hi, int64_t *out, eng_err *e);
int cfg_arg_number(const char *flag, const char *s, double lo, double hi, double *out, eng_err *e);

/* Is this node a scalar that means null ("null", "~", or empty plain)? */
int cfg_is_null(const cfg_node *n);

/* Human name of a node's kind for messages: "a mapping", "a list", "a number"... */
const char *cfg_describe(const cfg_node *n);

#endif
