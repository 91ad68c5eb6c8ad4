/* cfgtree.c: libyaml events -> tlm_cfg_node tree with positions (see cfgtree.h).
 * Must not: interpret scalars during parsing (types are decided by the
 * consumer, who knows what it expects), or accept input it cannot point at. */
#include "common/cfgtree.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#include "common/fileio.h"
#include "common/fmt.h"
#include "common/vec.h"

#define CFG_MAX_BYTES (16u << 20)
#define CFG_MAX_DEPTH 64

/* ------------------------------------------------------------ file names */
static char **g_files;
static int g_nfiles;

static int cfg_file_intern(const char *name)
{
    for (int i = 0; i < g_nfiles; i++)
        if (strcmp(g_files[i], name) == 0)
            return i;
    char **grown = realloc(g_files, (size_t)(g_nfiles + 1) * sizeof *grown);
    if (!grown)
        return 0;
    g_files = grown;
    g_files[g_nfiles] = strdup(name);
    if (!g_files[g_nfiles])
        return 0;
    return g_nfiles++;
}

const char *tlm_cfg_file_name(int id)
{
    return (id >= 0 && id < g_nfiles) ? g_files[id] : "<config>";
}

/* ------------------------------------------------------------ nodes */
static tlm_cfg_node *node_new(tlm_cfg_kind kind, const tlm_cfg_node *at)
{
    tlm_cfg_node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    if (at) {
        n->line = at->line;
        n->col = at->col;
        n->file = at->file;
    }
    return n;
}

tlm_cfg_node *tlm_cfg_new_scalar(const char *text, int quoted, const tlm_cfg_node *at)
{
    tlm_cfg_node *n = node_new(TLM_CFG_SCALAR, at);
    if (!n)
        return NULL;
    n->text = strdup(text ? text : "");
    if (!n->text) {
        free(n);
        return NULL;
    }
    n->quoted = quoted;
    return n;
}

tlm_cfg_node *tlm_cfg_new_map(const tlm_cfg_node *at) { return node_new(TLM_CFG_MAP, at); }

void tlm_cfg_free(tlm_cfg_node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        tlm_cfg_free(n->items[i]);
        if (n->keys)
            tlm_cfg_free(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n->index);
    free(n->text);
    free(n);
}

/* ------------------------------------------------------------ key index */
/* Open addressing, slot = key position + 1 (0 empty), at most half full;
 * small mappings (most of a config) are searched in order instead. */
#define KEY_INDEX_MIN 16

static size_t key_hash(const char *s)
{
    size_t h = (size_t)1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * (size_t)1099511628211u;
    return h;
}

static void key_index_put(tlm_cfg_node *map, size_t i)
{
    size_t mask = map->index_cap - 1, s = key_hash(map->keys[i]->text) & mask;
    while (map->index[s])
        s = (s + 1) & mask;
    map->index[s] = i + 1;
}

/* Room for the keys of map plus one more; TLM_ENOMEM when not. */
static int key_index_reserve(tlm_cfg_node *map)
{
    size_t want = map->n + 1;
    if (want < KEY_INDEX_MIN || want * 2 <= map->index_cap)
        return 0;
    size_t cap = map->index_cap ? map->index_cap : 64;
    while (want * 2 > cap) {
        if (cap > SIZE_MAX / 2 / sizeof *map->index)
            return TLM_ENOMEM;
        cap *= 2;
    }
    size_t *index = calloc(cap, sizeof *index);
    if (!index)
        return TLM_ENOMEM;
    free(map->index);
    map->index = index;
    map->index_cap = cap;
    for (size_t i = 0; i < map->n; i++)
        key_index_put(map, i);
    return 0;
}

static int grow(tlm_cfg_node *c)
{
    /* capacity is 4, then the next power of two: grow when n reaches it */
    size_t n = c->n;
    if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
        return 0;
    size_t ncap = n ? n * 2 : 4;
    tlm_cfg_node **items = realloc(c->items, ncap * sizeof *items);
    if (!items)
        return TLM_ENOMEM;
    c->items = items;
    if (c->kind == TLM_CFG_MAP) {
        tlm_cfg_node **keys = realloc(c->keys, ncap * sizeof *keys);
        if (!keys)
            return TLM_ENOMEM;
        c->keys = keys;
    }
    return 0;
}

int tlm_cfg_map_append(tlm_cfg_node *map, tlm_cfg_node *key, tlm_cfg_node *value)
{
    if (grow(map) || key_index_reserve(map))
        return TLM_ENOMEM;
    map->keys[map->n] = key;
    map->items[map->n++] = value;
    if (map->index)
        key_index_put(map, map->n - 1);
    return 0;
}

static int cfg_seq_append(tlm_cfg_node *seq, tlm_cfg_node *value)
{
    if (grow(seq))
        return TLM_ENOMEM;
    seq->items[seq->n++] = value;
    return 0;
}

tlm_cfg_node *tlm_cfg_clone(const tlm_cfg_node *n)
{
    if (!n)
        return NULL;
    tlm_cfg_node *c = node_new(n->kind, n);
    if (!c)
        return NULL;
    if (n->kind == TLM_CFG_SCALAR) {
        c->text = strdup(n->text);
        c->quoted = n->quoted;
        if (!c->text)
            goto fail;
        return c;
    }
    for (size_t i = 0; i < n->n; i++) {
        tlm_cfg_node *v = tlm_cfg_clone(n->items[i]);
        if (!v)
            goto fail;
        if (n->kind == TLM_CFG_MAP) {
            tlm_cfg_node *k = tlm_cfg_clone(n->keys[i]);
            if (!k || tlm_cfg_map_append(c, k, v)) {
                tlm_cfg_free(k);
                tlm_cfg_free(v);
                goto fail;
            }
        } else if (cfg_seq_append(c, v)) {
            tlm_cfg_free(v);
            goto fail;
        }
    }
    return c;
fail:
    tlm_cfg_free(c);
    return NULL;
}

size_t tlm_cfg_map_find(const tlm_cfg_node *map, const char *key)
{
    if (!map->index) {
        for (size_t i = 0; i < map->n; i++)
            if (strcmp(map->keys[i]->text, key) == 0)
                return i;
        return map->n;
    }
    size_t mask = map->index_cap - 1;
    for (size_t s = key_hash(key) & mask; map->index[s]; s = (s + 1) & mask)
        if (strcmp(map->keys[map->index[s] - 1]->text, key) == 0)
            return map->index[s] - 1;
    return map->n;
}

tlm_cfg_node *tlm_cfg_map_get(const tlm_cfg_node *map, const char *key)
{
    if (!map || map->kind != TLM_CFG_MAP)
        return NULL;
    size_t i = tlm_cfg_map_find(map, key);
    return i < map->n ? map->items[i] : NULL;
}

/* ------------------------------------------------------------ errors */
size_t tlm_cfg_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

int tlm_cfg_errf(tlm_err *e, const tlm_cfg_node *at, const char *fmt, ...)
{
    if (!e)
        return TLM_ECONFIG;
    char msg[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    tlm_msg_vprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at && at->line > 0)
        tlm_msg_printf(e->msg, sizeof e->msg, "%s:%d:%d: %s", tlm_cfg_file_name(at->file), at->line, at->col, msg);
    else if (at)
        tlm_msg_printf(e->msg, sizeof e->msg, "%s: %s", tlm_cfg_file_name(at->file), msg);
    else
        tlm_msg_copy(e->msg, sizeof e->msg, msg);
    e->code = TLM_ECONFIG;
    return TLM_ECONFIG;
}

/* ------------------------------------------------------------ paths */
typedef struct {
    char *path;            /* "model.d_model" */
    const tlm_cfg_node *key;   /* where the last part was written */
    const tlm_cfg_node *value; /* a scalar, a list, or an empty mapping */
} path_ent;

typedef struct {
    path_ent *v;
    size_t n, cap;
} path_set;

static int paths_collect(path_set *s, const tlm_cfg_node *map, const char *prefix, tlm_err *e)
{
    size_t np = strlen(prefix);
    for (size_t i = 0; i < map->n; i++) {
        const tlm_cfg_node *k = map->keys[i], *v = map->items[i];
        size_t nk = strlen(k->text);
        char *full = malloc(np + nk + 2);
        if (!full)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        memcpy(full, prefix, np);
        if (np)
            full[np] = '.';
        memcpy(full + np + !!np, k->text, nk + 1);
        if (v->kind == TLM_CFG_MAP && v->n > 0) {
            int rc = paths_collect(s, v, full, e);
            free(full);
            if (rc)
                return rc;
            continue;
        }
        if (TLM_GROW(s->v, s->cap, s->n + 1, 32)) {
            free(full);
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        }
        s->v[s->n++] = (path_ent){full, k, v};
    }
    return 0;
}

static int before(const tlm_cfg_node *a, const tlm_cfg_node *b) /* written earlier in the file */
{
    if (a->file != b->file)
        return a->file < b->file;
    return a->line < b->line || (a->line == b->line && a->col < b->col);
}

static int cmp_path_ent(const void *pa, const void *pb)
{
    const path_ent *a = pa, *b = pb;
    int r = strcmp(a->path, b->path);
    if (r)
        return r;
    return before(a->key, b->key) ? -1 : before(b->key, a->key);
}

/* The entry whose path is the first n bytes of `path`, or NULL. */
static const path_ent *paths_find(const path_set *s, const char *path, size_t n)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strncmp(s->v[mid].path, path, n);
        if (r == 0 && s->v[mid].path[n] != '\0')
            r = 1;
        if (r < 0)
            lo = mid + 1;
        else if (r > 0)
            hi = mid;
        else
            return &s->v[mid];
    }
    return NULL;
}

int tlm_cfg_check_paths_unique(const tlm_cfg_node *map, tlm_err *e)
{
    if (!map || map->kind != TLM_CFG_MAP)
        return 0;
    path_set s = {0};
    int rc = paths_collect(&s, map, "", e);
    if (!rc && s.n > 1)
        qsort(s.v, s.n, sizeof *s.v, cmp_path_ent);
    for (size_t i = 0; !rc && i < s.n; i++) {
        const path_ent *a = &s.v[i];
        if (i > 0 && !strcmp(s.v[i - 1].path, a->path)) {
            const tlm_cfg_node *first = s.v[i - 1].key;
            rc = tlm_cfg_errf(e, a->key, "'%s' is set twice: here and at %s:%d:%d (a nested key and a dotted key "
                          "name the same setting; keep one)",
                          a->path, tlm_cfg_file_name(first->file), first->line, first->col);
            break;
        }
        for (const char *dot = strchr(a->path, '.'); dot; dot = strchr(dot + 1, '.')) {
            const path_ent *p = paths_find(&s, a->path, (size_t)(dot - a->path));
            if (!p)
                continue;
            rc = tlm_cfg_errf(e, before(p->key, a->key) ? a->key : p->key,
                          "'%s' is set to %s at %s:%d:%d, and '%s' under it at %s:%d:%d (keep one)", p->path,
                          tlm_cfg_describe(p->value), tlm_cfg_file_name(p->key->file), p->key->line, p->key->col, a->path,
                          tlm_cfg_file_name(a->key->file), a->key->line, a->key->col);
            break;
        }
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.v[i].path);
    free(s.v);
    return rc;
}

/* ------------------------------------------------------------ parsing */
typedef struct {
    tlm_cfg_node *node;      /* container being filled */
    tlm_cfg_node *pending;   /* MAP: key waiting for its value */
} frame;

static void pos_from(tlm_cfg_node *n, const yaml_mark_t *m, int file)
{
    n->line = (int)m->line + 1;
    n->col = (int)m->column + 1;
    n->file = file;
}

static int add_child(frame *top, tlm_cfg_node *child, int file, tlm_err *e)
{
    tlm_cfg_node *c = top->node;
    if (c->kind == TLM_CFG_SEQ) {
        if (cfg_seq_append(c, child)) {
            tlm_cfg_free(child);
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        }
        return 0;
    }
    if (!top->pending) {
        if (child->kind != TLM_CFG_SCALAR) {
            int rc = tlm_cfg_errf(e, child, "a mapping key must be a plain name, not %s", tlm_cfg_describe(child));
            tlm_cfg_free(child);
            return rc;
        }
        size_t i = tlm_cfg_map_find(c, child->text);
        if (i < c->n) {
            int rc = tlm_cfg_errf(e, child, "duplicate key '%s' (first given at %s:%d:%d)", child->text,
                              tlm_cfg_file_name(c->keys[i]->file), c->keys[i]->line, c->keys[i]->col);
            tlm_cfg_free(child);
            return rc;
        }
        top->pending = child;
        return 0;
    }
    (void)file;
    if (tlm_cfg_map_append(c, top->pending, child)) {
        tlm_cfg_free(child);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    top->pending = NULL;
    return 0;
}

/* YAML tags: the core schema's types are honoured (!!str makes a string
 * of 0, !!int a number of "0"), anything else is refused: a tag such as
 * !!python/object asks for a meaning TLM does not give, and ignoring it
 * would read the value as something its author did not write. */
#define YAML_CORE "tag:yaml.org,2002:"
static int apply_tag(tlm_cfg_node *n, const yaml_char_t *tag, tlm_err *e)
{
    if (!tag)
        return 0;
    const char *t = (const char *)tag;
    const char *core = strncmp(t, YAML_CORE, sizeof YAML_CORE - 1) ? NULL : t + sizeof YAML_CORE - 1;
    if (n->kind == TLM_CFG_SCALAR) {
        if (!strcmp(t, "!") || (core && !strcmp(core, "str"))) {
            n->quoted = 2;
            return 0;
        }
        if (core && (!strcmp(core, "int") || !strcmp(core, "float") || !strcmp(core, "bool") ||
                     !strcmp(core, "null"))) {
            n->quoted = 0; /* the consumer reads the text by its own rules, as for a plain scalar */
            return 0;
        }
    } else if (core && !strcmp(core, n->kind == TLM_CFG_MAP ? "map" : "seq")) {
        return 0;
    }
    static const char *const CORE[] = {"str", "int", "float", "bool", "null", "map", "seq"};
    for (size_t i = 0; core && i < sizeof CORE / sizeof CORE[0]; i++)
        if (!strcmp(core, CORE[i]))
            return tlm_cfg_errf(e, n, "YAML tag '!!%s' does not fit %s", core, tlm_cfg_describe(n));
    return tlm_cfg_errf(e, n,
                    "YAML tag '%s%s' is not supported here (TLM reads plain values: strings, numbers, true/false, "
                    "null, lists and mappings; the core tags !!str, !!int, !!float, !!bool, !!null, !!seq and !!map "
                    "are allowed where they fit)",
                    core ? "!!" : "", core ? core : t);
}

/* The parse in progress: the containers still open (innermost last) and
 * the finished top-level node. */
typedef struct parse_state {
    int file;
    frame stack[CFG_MAX_DEPTH];
    int depth, docs;
    tlm_cfg_node *root;
} parse_state;

/* Line and column (1-based, in characters) of byte `off` of buf. */
static void pos_of_offset(const char *buf, size_t len, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (buf[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80) { /* not a UTF-8 continuation byte */
            ++*col;
        }
    }
}

/* libyaml's message, with the place it is about: a reader error (bad
 * UTF-8, a control character) has only a byte offset, its marks stay 1:1;
 * a plain key too long to be one is reported at its end, and a tab in the
 * indentation as a character "that cannot start any token". */
static int syntax_error(const char *name, const char *buf, size_t len, const yaml_parser_t *p, tlm_err *e)
{
    int line, col;
    if (p->error == YAML_READER_ERROR) {
        pos_of_offset(buf, len, p->problem_offset, &line, &col);
        return tlm_errf(e, TLM_ECONFIG, "%s:%d:%d: invalid YAML/JSON: %s%s", name, line, col,
                        p->problem ? p->problem : "unreadable input",
                        p->problem && strstr(p->problem, "UTF-8") ? " (the file must be UTF-8)" : "");
    }
    const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;
    line = (int)m->line + 1;
    col = (int)m->column + 1;
    const char *problem = p->problem ? p->problem : "syntax error";
    if (p->problem && m->index < len && buf[m->index] == '\t' &&
        (strstr(problem, "cannot start any token") || strstr(problem, "tab character")))
        return tlm_errf(e, TLM_ECONFIG, "%s:%d:%d: invalid YAML/JSON: a tab; tabs cannot indent YAML, use spaces",
                        name, line, col);
    if (p->problem && p->context && !strcmp(p->context, "while scanning a simple key") &&
        !strcmp(problem, "could not find expected ':'"))
        return tlm_errf(e, TLM_ECONFIG,
                        "%s:%d:%d: invalid YAML/JSON: a key without ':' after it (a plain key ends with ':' on "
                        "its line, within 1024 characters)",
                        name, (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
    return tlm_errf(e, TLM_ECONFIG, "%s:%d:%d: invalid YAML/JSON: %s%s%s", name, line, col, problem,
                    p->context ? " " : "", p->context ? p->context : "");
}

/* A scalar node of the event: its text (no NUL inside), position, tag. */
static int new_scalar(const yaml_event_t *ev, int file, tlm_cfg_node **out, tlm_err *e)
{
    *out = NULL;
    tlm_cfg_node *n = calloc(1, sizeof *n);
    if (!n || !(n->text = malloc(ev->data.scalar.length + 1))) {
        free(n);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    n->kind = TLM_CFG_SCALAR;
    memcpy(n->text, ev->data.scalar.value, ev->data.scalar.length);
    n->text[ev->data.scalar.length] = '\0';
    pos_from(n, &ev->start_mark, file);
    if (strlen(n->text) != ev->data.scalar.length) {
        int rc = tlm_cfg_errf(e, n, "a string contains a NUL character");
        tlm_cfg_free(n);
        return rc;
    }
    n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    int rc = apply_tag(n, ev->data.scalar.tag, e);
    if (rc) {
        tlm_cfg_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* An empty list or mapping node of a start event. */
static int new_container(const yaml_event_t *ev, int file, tlm_cfg_node **out, tlm_err *e)
{
    *out = NULL;
    tlm_cfg_node *n = calloc(1, sizeof *n);
    if (!n)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    n->kind = ev->type == YAML_SEQUENCE_START_EVENT ? TLM_CFG_SEQ : TLM_CFG_MAP;
    pos_from(n, &ev->start_mark, file);
    int rc = apply_tag(n, n->kind == TLM_CFG_SEQ ? ev->data.sequence_start.tag : ev->data.mapping_start.tag, e);
    if (rc) {
        tlm_cfg_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* A new node into the tree (taken over, freed on failure): a scalar into
 * the open container or as the root, a container opened on the stack. */
static int place(parse_state *ps, tlm_cfg_node *n, tlm_err *e)
{
    if (n->kind == TLM_CFG_SCALAR) {
        if (ps->depth == 0) {
            ps->root = n;
            return 0;
        }
        return add_child(&ps->stack[ps->depth - 1], n, ps->file, e);
    }
    if (ps->depth == CFG_MAX_DEPTH) {
        int rc = tlm_cfg_errf(e, n, "nested deeper than %d levels", CFG_MAX_DEPTH);
        tlm_cfg_free(n);
        return rc;
    }
    ps->stack[ps->depth++] = (frame){n, NULL};
    return 0;
}

/* The innermost container is complete: into its parent, or the root. */
static int close_container(parse_state *ps, tlm_err *e)
{
    frame f = ps->stack[--ps->depth];
    if (ps->depth == 0) {
        ps->root = f.node;
        return 0;
    }
    return add_child(&ps->stack[ps->depth - 1], f.node, ps->file, e);
}

/* One parser event: 0, or an error (a second document, an alias, a bad
 * node); *done at the end of the stream. */
static int on_event(parse_state *ps, const yaml_event_t *ev, int *done, tlm_err *e)
{
    tlm_cfg_node at = {.line = (int)ev->start_mark.line + 1, .col = (int)ev->start_mark.column + 1, .file = ps->file};
    tlm_cfg_node *n = NULL;
    int rc;
    switch (ev->type) {
    case YAML_STREAM_END_EVENT:
        *done = 1;
        return 0;
    case YAML_DOCUMENT_START_EVENT:
        return ++ps->docs > 1 ? tlm_cfg_errf(e, &at, "more than one document in the file (one is expected)") : 0;
    case YAML_ALIAS_EVENT:
        return tlm_cfg_errf(e, &at, "YAML aliases (*%s) are not supported; write the value out", ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        rc = new_scalar(ev, ps->file, &n, e);
        return rc ? rc : place(ps, n, e);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        rc = new_container(ev, ps->file, &n, e);
        return rc ? rc : place(ps, n, e);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return close_container(ps, e);
    default:
        return 0;
    }
}

/* After an error: containers on the stack are not yet attached to a
 * parent; a finished top-level node is never on the stack. */
static void unwind(parse_state *ps)
{
    while (ps->depth > 0) {
        frame f = ps->stack[--ps->depth];
        tlm_cfg_free(f.pending);
        tlm_cfg_free(f.node);
    }
    tlm_cfg_free(ps->root);
}

int tlm_cfg_parse_buffer(const char *name, const char *buf, size_t len, tlm_cfg_node **out, tlm_err *e)
{
    *out = NULL;
    int file = cfg_file_intern(name);
    if (len > CFG_MAX_BYTES)
        return tlm_errf(e, TLM_ECONFIG, "%s: larger than %u bytes", name, CFG_MAX_BYTES);
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);

    parse_state ps = {.file = file};
    int rc = 0, done = 0;
    while (!done && !rc) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = syntax_error(name, buf, len, &p, e);
            break;
        }
        rc = on_event(&ps, &ev, &done, e);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    if (rc) {
        unwind(&ps);
        return rc;
    }
    if (!ps.root || ps.docs == 0)
        return tlm_errf(e, TLM_ECONFIG, "%s: the file is empty (a mapping was expected)", name);
    *out = ps.root;
    return 0;
}

static int parse_text(const char *name, const char *text, size_t len, void *out, tlm_err *e)
{
    return tlm_cfg_parse_buffer(name, text, len, out, e);
}

int tlm_cfg_parse_file(const char *path, tlm_cfg_node **out, tlm_err *e)
{
    *out = NULL;
    /* a FIFO or a device: refused, never read */
    return tlm_parse_input(path, CFG_MAX_BYTES, TLM_ECONFIG, "a YAML or JSON file", parse_text, out, e);
}

/* ------------------------------------------------------------ scalars */
const char *tlm_cfg_describe(const tlm_cfg_node *n)
{
    if (!n)
        return "nothing";
    if (n->kind == TLM_CFG_MAP)
        return "a mapping";
    if (n->kind == TLM_CFG_SEQ)
        return "a list";
    if (n->quoted)
        return n->quoted == 2 ? "a string (tagged !!str)" : "a quoted string";
    if (tlm_cfg_is_null(n))
        return "null";
    char *end;
    errno = 0;
    strtod(n->text, &end);
    if (end != n->text && *end == '\0')
        return "a number";
    if (!strcmp(n->text, "true") || !strcmp(n->text, "false"))
        return "a boolean";
    return "a string";
}

int tlm_cfg_is_null(const tlm_cfg_node *n)
{
    return n && n->kind == TLM_CFG_SCALAR && !n->quoted &&
           (!n->text[0] || !strcmp(n->text, "null") || !strcmp(n->text, "~") || !strcmp(n->text, "Null") ||
            !strcmp(n->text, "NULL"));
}

/* ------------------------------------------------------------ numbers */
static void cfg_format_bound(double v, char *out, size_t cap)
{
    if (v == floor(v) && fabs(v) >= 65535 && fabs(v) < 1e300) {
        int k;
        double m = frexp(fabs(v) + 1, &k); /* v = 2^(k-1) - 1 */
        if (m == 0.5 && v > 0) {
            snprintf(out, cap, "2^%d-1", k - 1);
            return;
        }
        m = frexp(fabs(v), &k);
        if (m == 0.5) {
            snprintf(out, cap, "%s2^%d", v < 0 ? "-" : "", k - 1);
            return;
        }
        if (fabs(v) >= 1e6) {
            /* 9e18 rather than 9000000000000000000, when that is exact */
            char t[24]; /* "-1.23e+308" at most */
            for (int prec = 0; prec <= 2; prec++) {
                snprintf(t, sizeof t, "%.*e", prec, v);
                if (strtod(t, NULL) != v)
                    continue;
                char *x = strchr(t, 'e');
                char *d = x + 1 + (x[1] == '+');
                while (*d == '0' && d[1])
                    d++;
                *x = '\0';
                snprintf(out, cap, "%se%s%s", t, x[1] == '-' ? "-" : "", d);
                return;
            }
        }
    }
    if (v == floor(v) && fabs(v) < 1e17) {
        snprintf(out, cap, "%.0f", v);
        return;
    }
    tlm_fmt_exact(out, cap, v);
}

/* Exact value of an integer written in decimal, possibly with a fraction
 * and an exponent ("30e9", "1.5e3", "2.0"): no detour through a double,
 * which would turn 9007199254740993 into ...992. */
int tlm_cfg_parse_int_text(const char *s, int64_t *out)
{
    const char *p = s;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    char digits[40];
    size_t nd = 0;
    long frac = 0, zeros = 0; /* zeros: after the last non-zero digit, not yet in digits */
    int seen_point = 0, any = 0;
    for (; (*p >= '0' && *p <= '9') || (*p == '.' && !seen_point); p++) {
        if (*p == '.') {
            seen_point = 1;
            continue;
        }
        any = 1;
        frac += seen_point;
        if (*p == '0') {
            zeros += nd > 0; /* leading zeros do not count */
            continue;
        }
        for (; zeros > 0; zeros--) {
            if (nd == sizeof digits)
                return TLM_CFG_NUM_RANGE;
            digits[nd++] = '0';
        }
        if (nd == sizeof digits)
            return TLM_CFG_NUM_RANGE; /* 40 significant digits: far beyond int64 */
        digits[nd++] = *p;
    }
    if (!any)
        return TLM_CFG_NUM_NOT_NUMBER;
    long exp = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        if (*p < '0' || *p > '9')
            return TLM_CFG_NUM_NOT_NUMBER;
        for (; *p >= '0' && *p <= '9'; p++)
            if (exp < 100000000)
                exp = exp * 10 + (*p - '0');
        if (eneg)
            exp = -exp;
    }
    if (*p)
        return TLM_CFG_NUM_NOT_NUMBER;
    if (nd == 0) {
        *out = 0;
        return TLM_CFG_NUM_OK;
    }
    /* value = digits x 10^shift, and digits ends in a non-zero digit */
    long shift = exp - frac + zeros;
    if (shift < 0)
        return TLM_CFG_NUM_NOT_INTEGER;
    if ((long)nd + shift > 19)
        return TLM_CFG_NUM_RANGE;
    uint64_t v = 0;
    for (size_t i = 0; i < nd; i++)
        v = v * 10 + (uint64_t)(digits[i] - '0');
    for (long i = 0; i < shift; i++)
        v *= 10; /* at most 19 digits: below 2^64 */
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return TLM_CFG_NUM_RANGE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return TLM_CFG_NUM_OK;
}

int tlm_cfg_parse_number_text(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* strtod accepts "nan", "inf" and hex floats; configs must be finite decimals */
    if (end == s || *end != '\0' || strpbrk(s, "xXnNiI") || (*s == '.' && !s[1]))
        return TLM_CFG_NUM_NOT_NUMBER;
    if (errno == ERANGE || !isfinite(v))
        return TLM_CFG_NUM_RANGE; /* 1e400, or 1e-400 (which would become 0) */
    *out = v;
    return TLM_CFG_NUM_OK;
}

void tlm_cfg_range_text(double lo, double hi, int lo_open, int integer, char *out, size_t cap)
{
    char a[48], b[48];
    cfg_format_bound(lo, a, sizeof a);
    cfg_format_bound(hi, b, sizeof b);
    if (lo_open)
        snprintf(out, cap, "%s above %s and at most %s", integer ? "an integer" : "a number", a, b);
    else
        snprintf(out, cap, "%s from %s to %s", integer ? "an integer" : "a number", a, b);
}

static int need_scalar(const tlm_cfg_node *n, const char *what, const char *expected, tlm_err *e)
{
    if (!n || n->kind != TLM_CFG_SCALAR || tlm_cfg_is_null(n))
        return tlm_cfg_errf(e, n, "%s: expected %s, got %s", what, expected, tlm_cfg_describe(n));
    return 0;
}

/* Numbers and booleans: quotes make a string, which is worth saying ("0" looks like 0). */
static int need_plain(const tlm_cfg_node *n, const char *what, const char *expected, tlm_err *e)
{
    if (need_scalar(n, what, expected, e))
        return TLM_ECONFIG;
    const char *plain = strcmp(expected, "true or false") ? "numbers" : "true or false";
    if (n->quoted == 2)
        return tlm_cfg_errf(e, n, "%s: expected %s, got the string \"%s\" (tagged as a string: write %s without a tag)",
                        what, expected, n->text, plain);
    if (n->quoted)
        return tlm_cfg_errf(e, n, "%s: expected %s, got the quoted string \"%s\" (quotes make a string: write %s "
                        "without them)",
                        what, expected, n->text, plain);
    return 0;
}


int tlm_cfg_get_double_in(const tlm_cfg_node *n, const char *what, double lo, double hi, int lo_open, double *out,
                      tlm_err *e)
{
    if (need_plain(n, what, "a number", e))
        return TLM_ECONFIG;
    double v = 0;
    int rc = tlm_cfg_parse_number_text(n->text, &v);
    if (rc == TLM_CFG_NUM_NOT_NUMBER)
        return tlm_cfg_errf(e, n, "%s: expected a number, got '%s'", what, n->text);
    if (rc != TLM_CFG_NUM_OK || v < lo || v > hi || (lo_open && v <= lo)) {
        char r[128];
        tlm_cfg_range_text(lo, hi, lo_open, 0, r, sizeof r);
        return tlm_cfg_errf(e, n, "%s: %s is out of range (expected %s)", what, n->text, r);
    }
    *out = v;
    return 0;
}

int tlm_cfg_get_int_in(const tlm_cfg_node *n, const char *what, int64_t lo, int64_t hi, int64_t *out, tlm_err *e)
{
    if (need_plain(n, what, "an integer", e))
        return TLM_ECONFIG;
    int64_t v = 0;
    int rc = tlm_cfg_parse_int_text(n->text, &v);
    if (rc == TLM_CFG_NUM_NOT_NUMBER || rc == TLM_CFG_NUM_NOT_INTEGER)
        return tlm_cfg_errf(e, n, "%s: expected an integer, got '%s'", what, n->text);
    if (rc != TLM_CFG_NUM_OK || v < lo || v > hi) {
        char r[128];
        tlm_cfg_range_text((double)lo, (double)hi, 0, 1, r, sizeof r);
        return tlm_cfg_errf(e, n, "%s: %s is out of range (expected %s)", what, n->text, r);
    }
    *out = v;
    return 0;
}

int tlm_cfg_get_bool(const tlm_cfg_node *n, const char *what, int *out, tlm_err *e)
{
    if (need_plain(n, what, "true or false", e))
        return TLM_ECONFIG;
    if (!n->quoted && !strcmp(n->text, "true"))
        *out = 1;
    else if (!n->quoted && !strcmp(n->text, "false"))
        *out = 0;
    else
        return tlm_cfg_errf(e, n, "%s: expected true or false, got '%s'", what, n->text);
    return 0;
}

int tlm_cfg_get_string(const tlm_cfg_node *n, const char *what, char *out, size_t cap, tlm_err *e)
{
    if (need_scalar(n, what, "a string", e))
        return TLM_ECONFIG;
    if (strlen(n->text) >= cap)
        return tlm_cfg_errf(e, n, "%s: %zu bytes, longer than the %zu this key allows", what, strlen(n->text), cap - 1);
    strcpy(out, n->text);
    return 0;
}
