/* cfgtree.c: libyaml events -> cfg_node tree with positions (see cfgtree.h).
 * Must not: interpret scalars during parsing (types are decided by the
 * consumer, who knows what it expects), or accept input it cannot point at. */
#include "engine/cfgtree.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "engine/fileio.h"

#define CFG_MAX_BYTES (16u << 20)
#define CFG_MAX_DEPTH 64

/* ------------------------------------------------------------ file names */
static char **g_files;
static int g_nfiles;

int cfg_file_intern(const char *name)
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

const char *cfg_file_name(int id)
{
    return (id >= 0 && id < g_nfiles) ? g_files[id] : "<config>";
}

/* ------------------------------------------------------------ nodes */
static cfg_node *node_new(cfg_kind kind, const cfg_node *at)
{
    cfg_node *n = calloc(1, sizeof *n);
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

cfg_node *cfg_new_scalar(const char *text, int quoted, const cfg_node *at)
{
    cfg_node *n = node_new(CFG_SCALAR, at);
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

cfg_node *cfg_new_map(const cfg_node *at) { return node_new(CFG_MAP, at); }
cfg_node *cfg_new_seq(const cfg_node *at) { return node_new(CFG_SEQ, at); }

void cfg_free(cfg_node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        cfg_free(n->items[i]);
        if (n->keys)
            cfg_free(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n->text);
    free(n);
}

static int grow(cfg_node *c)
{
    /* capacity is 4, then the next power of two: grow when n reaches it */
    size_t n = c->n;
    if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
        return 0;
    size_t ncap = n ? n * 2 : 4;
    cfg_node **items = realloc(c->items, ncap * sizeof *items);
    if (!items)
        return ENG_ENOMEM;
    c->items = items;
    if (c->kind == CFG_MAP) {
        cfg_node **keys = realloc(c->keys, ncap * sizeof *keys);
        if (!keys)
            return ENG_ENOMEM;
        c->keys = keys;
    }
    return 0;
}

int cfg_map_append(cfg_node *map, cfg_node *key, cfg_node *value)
{
    if (grow(map))
        return ENG_ENOMEM;
    map->keys[map->n] = key;
    map->items[map->n++] = value;
    return 0;
}

int cfg_seq_append(cfg_node *seq, cfg_node *value)
{
    if (grow(seq))
        return ENG_ENOMEM;
    seq->items[seq->n++] = value;
    return 0;
}

cfg_node *cfg_clone(const cfg_node *n)
{
    if (!n)
        return NULL;
    cfg_node *c = node_new(n->kind, n);
    if (!c)
        return NULL;
    if (n->kind == CFG_SCALAR) {
        c->text = strdup(n->text);
        c->quoted = n->quoted;
        if (!c->text)
            goto fail;
        return c;
    }
    for (size_t i = 0; i < n->n; i++) {
        cfg_node *v = cfg_clone(n->items[i]);
        if (!v)
            goto fail;
        if (n->kind == CFG_MAP) {
            cfg_node *k = cfg_clone(n->keys[i]);
            if (!k || cfg_map_append(c, k, v)) {
                cfg_free(k);
                cfg_free(v);
                goto fail;
            }
        } else if (cfg_seq_append(c, v)) {
            cfg_free(v);
            goto fail;
        }
    }
    return c;
fail:
    cfg_free(c);
    return NULL;
}

cfg_node *cfg_map_get(const cfg_node *map, const char *key)
{
    if (!map || map->kind != CFG_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->text, key) == 0)
            return map->items[i];
    return NULL;
}

/* ------------------------------------------------------------ errors */
size_t cfg_edit_distance(const char *a, const char *b)
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

int cfg_errf(eng_err *e, const cfg_node *at, const char *fmt, ...)
{
    if (!e)
        return ENG_ECONFIG;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at && at->line > 0)
        snprintf(e->msg, sizeof e->msg, "%s:%d:%d: %s", cfg_file_name(at->file), at->line, at->col, msg);
    else if (at)
        snprintf(e->msg, sizeof e->msg, "%s: %s", cfg_file_name(at->file), msg);
    else
        snprintf(e->msg, sizeof e->msg, "%s", msg);
    e->code = ENG_ECONFIG;
    return ENG_ECONFIG;
}

int cfg_set_dotted(cfg_node *root, const char *dotted, const cfg_node *value, eng_err *e)
{
    if (!root || root->kind != CFG_MAP)
        return cfg_errf(e, value, "cannot set '%s': the document is not a mapping", dotted);
    char path[256];
    if (strlen(dotted) >= sizeof path || !*dotted)
        return cfg_errf(e, value, "key '%s' is empty or too long", dotted);
    strcpy(path, dotted);
    cfg_node *cur = root;
    char *seg = path;
    for (;;) {
        char *dot = strchr(seg, '.');
        if (dot)
            *dot = '\0';
        if (!*seg)
            return cfg_errf(e, value, "key '%s' has an empty part", dotted);
        size_t i;
        for (i = 0; i < cur->n; i++)
            if (strcmp(cur->keys[i]->text, seg) == 0)
                break;
        if (!dot) {
            cfg_node *v = cfg_clone(value);
            if (!v)
                return eng_errf(e, ENG_ENOMEM, "out of memory");
            if (i < cur->n) {
                cfg_free(cur->items[i]);
                cur->items[i] = v;
                return 0;
            }
            cfg_node *k = cfg_new_scalar(seg, 0, value);
            if (!k || cfg_map_append(cur, k, v)) {
                cfg_free(k);
                cfg_free(v);
                return eng_errf(e, ENG_ENOMEM, "out of memory");
            }
            return 0;
        }
        if (i < cur->n) {
            if (cur->items[i]->kind != CFG_MAP)
                return cfg_errf(e, value, "cannot set '%s': '%s' is %s, not a mapping", dotted, seg,
                                cfg_describe(cur->items[i]));
            cur = cur->items[i];
        } else {
            cfg_node *k = cfg_new_scalar(seg, 0, value);
            cfg_node *m = cfg_new_map(value);
            if (!k || !m || cfg_map_append(cur, k, m)) {
                cfg_free(k);
                cfg_free(m);
                return eng_errf(e, ENG_ENOMEM, "out of memory");
            }
            cur = m;
        }
        seg = dot + 1;
    }
}

/* ------------------------------------------------------------ parsing */
typedef struct {
    cfg_node *node;      /* container being filled */
    cfg_node *pending;   /* MAP: key waiting for its value */
} frame;

static void pos_from(cfg_node *n, const yaml_mark_t *m, int file)
{
    n->line = (int)m->line + 1;
    n->col = (int)m->column + 1;
    n->file = file;
}

static int add_child(frame *top, cfg_node *child, int file, eng_err *e)
{
    cfg_node *c = top->node;
    if (c->kind == CFG_SEQ) {
        if (cfg_seq_append(c, child)) {
            cfg_free(child);
            return eng_errf(e, ENG_ENOMEM, "out of memory");
        }
        return 0;
    }
    if (!top->pending) {
        if (child->kind != CFG_SCALAR) {
            int rc = cfg_errf(e, child, "a mapping key must be a plain name, not %s", cfg_describe(child));
            cfg_free(child);
            return rc;
        }
        for (size_t i = 0; i < c->n; i++)
            if (strcmp(c->keys[i]->text, child->text) == 0) {
                int rc = cfg_errf(e, child, "duplicate key '%s' (first given at line %d)", child->text,
                                  c->keys[i]->line);
                cfg_free(child);
                return rc;
            }
        top->pending = child;
        return 0;
    }
    (void)file;
    if (cfg_map_append(c, top->pending, child)) {
        cfg_free(child);
        return eng_errf(e, ENG_ENOMEM, "out of memory");
    }
    top->pending = NULL;
    return 0;
}

int cfg_parse_buffer(const char *name, const char *buf, size_t len, cfg_node **out, eng_err *e)
{
    *out = NULL;
    int file = cfg_file_intern(name);
    if (len > CFG_MAX_BYTES)
        return eng_errf(e, ENG_ECONFIG, "%s: larger than %u bytes", name, CFG_MAX_BYTES);
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return eng_errf(e, ENG_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);

    frame stack[CFG_MAX_DEPTH];
    int depth = 0, docs = 0, rc = 0, done = 0;
    cfg_node *root = NULL;

    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            const yaml_mark_t *m = p.problem ? &p.problem_mark : &p.context_mark;
            rc = eng_errf(e, ENG_ECONFIG, "%s:%d:%d: invalid YAML/JSON: %s%s%s", name, (int)m->line + 1,
                          (int)m->column + 1, p.problem ? p.problem : "syntax error",
                          p.context ? " " : "", p.context ? p.context : "");
            break;
        }
        cfg_node *n = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                cfg_node at = {.line = (int)ev.start_mark.line + 1, .col = (int)ev.start_mark.column + 1, .file = file};
                rc = cfg_errf(e, &at, "more than one document in the file (one is expected)");
            }
            break;
        case YAML_ALIAS_EVENT: {
            cfg_node at = {.line = (int)ev.start_mark.line + 1, .col = (int)ev.start_mark.column + 1, .file = file};
            rc = cfg_errf(e, &at, "YAML aliases (*%s) are not supported; write the value out", ev.data.alias.anchor);
            break;
        }
        case YAML_SCALAR_EVENT:
            n = calloc(1, sizeof *n);
            if (!n || !(n->text = malloc(ev.data.scalar.length + 1))) {
                free(n);
                n = NULL;
                rc = eng_errf(e, ENG_ENOMEM, "out of memory");
                break;
            }
            n->kind = CFG_SCALAR;
            memcpy(n->text, ev.data.scalar.value, ev.data.scalar.length);
            n->text[ev.data.scalar.length] = '\0';
            if (strlen(n->text) != ev.data.scalar.length) {
                pos_from(n, &ev.start_mark, file);
                rc = cfg_errf(e, n, "a string contains a NUL character");
                cfg_free(n);
                n = NULL;
                break;
            }
            n->quoted = ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
            pos_from(n, &ev.start_mark, file);
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            n = calloc(1, sizeof *n);
            if (!n) {
                rc = eng_errf(e, ENG_ENOMEM, "out of memory");
                break;
            }
            n->kind = ev.type == YAML_SEQUENCE_START_EVENT ? CFG_SEQ : CFG_MAP;
            pos_from(n, &ev.start_mark, file);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
            frame f = stack[--depth];
            if (depth == 0)
                root = f.node;
            else
                rc = add_child(&stack[depth - 1], f.node, file, e);
            break;
        }
        default:
            break;
        }
        yaml_event_delete(&ev);
        if (rc) {
            cfg_free(n);
            break;
        }
        if (!n)
            continue;
        if (n->kind == CFG_SCALAR) {
            if (depth == 0)
                root = n;
            else if ((rc = add_child(&stack[depth - 1], n, file, e)))
                break;
        } else {
            if (depth == CFG_MAX_DEPTH) {
                rc = cfg_errf(e, n, "nested deeper than %d levels", CFG_MAX_DEPTH);
                cfg_free(n);
                break;
            }
            stack[depth].node = n;
            stack[depth].pending = NULL;
            depth++;
        }
    }
    yaml_parser_delete(&p);

    if (rc) {
        /* unwind: containers on the stack are not yet attached to a parent */
        while (depth > 0) {
            frame f = stack[--depth];
            cfg_free(f.pending);
            cfg_free(f.node);
        }
        cfg_free(root); /* a finished top-level node is never on the stack */
        return rc;
    }
    if (!root || docs == 0)
        return eng_errf(e, ENG_ECONFIG, "%s: the file is empty (a mapping was expected)", name);
    *out = root;
    return 0;
}

int cfg_parse_file(const char *path, cfg_node **out, eng_err *e)
{
    *out = NULL;
    FILE *f;
    int rc = eng_fopen_input(path, ENG_ECONFIG, &f, e); /* a folder or a FIFO: refused, never read */
    if (rc)
        return rc;
    char *buf = malloc(CFG_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return eng_errf(e, ENG_ENOMEM, "out of memory");
    }
    size_t n = fread(buf, 1, CFG_MAX_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        rc = eng_errf(e, ENG_EIO, "%s: read error", path);
    else if (n > CFG_MAX_BYTES)
        rc = eng_errf(e, ENG_ECONFIG, "%s: larger than %u bytes", path, CFG_MAX_BYTES);
    else
        rc = cfg_parse_buffer(path, buf, n, out, e);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------ scalars */
const char *cfg_describe(const cfg_node *n)
{
    if (!n)
        return "nothing";
    if (n->kind == CFG_MAP)
        return "a mapping";
    if (n->kind == CFG_SEQ)
        return "a list";
    if (n->quoted)
        return "a quoted string";
    if (cfg_is_null(n))
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

int cfg_is_null(const cfg_node *n)
{
    return n && n->kind == CFG_SCALAR && !n->quoted &&
           (!n->text[0] || !strcmp(n->text, "null") || !strcmp(n->text, "~") || !strcmp(n->text, "Null") ||
            !strcmp(n->text, "NULL"));
}

static int need_scalar(const cfg_node *n, const char *what, const char *expected, eng_err *e)
{
    if (!n || n->kind != CFG_SCALAR || cfg_is_null(n))
        return cfg_errf(e, n, "%s: expected %s, got %s", what, expected, cfg_describe(n));
    return 0;
}

int cfg_get_double(const cfg_node *n, const char *what, double *out, eng_err *e)
{
    if (need_scalar(n, what, "a number", e))
        return ENG_ECONFIG;
    const char *s = n->text;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* strtod accepts "nan", "inf" and hex floats; configs must be finite decimals */
    if (n->quoted || end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || strpbrk(s, "xXnN"))
        return cfg_errf(e, n, "%s: expected a number, got '%s'", what, s);
    *out = v;
    return 0;
}

int cfg_get_int64(const cfg_node *n, const char *what, int64_t *out, eng_err *e)
{
    double v;
    if (need_scalar(n, what, "an integer", e))
        return ENG_ECONFIG;
    eng_err tmp;
    if (cfg_get_double(n, what, &v, &tmp) || v != floor(v) || fabs(v) > 9007199254740992.0)
        return cfg_errf(e, n, "%s: expected an integer, got '%s'", what, n->text);
    /* exact parse for integers written out in full */
    char *end;
    errno = 0;
    long long ll = strtoll(n->text, &end, 10);
    *out = (*end == '\0' && errno == 0) ? (int64_t)ll : (int64_t)v;
    return 0;
}

int cfg_get_int(const cfg_node *n, const char *what, int *out, eng_err *e)
{
    int64_t v;
    if (cfg_get_int64(n, what, &v, e))
        return ENG_ECONFIG;
    if (v < -2147483647 || v > 2147483647)
        return cfg_errf(e, n, "%s: %s is out of range", what, n->text);
    *out = (int)v;
    return 0;
}

int cfg_get_bool(const cfg_node *n, const char *what, int *out, eng_err *e)
{
    if (need_scalar(n, what, "true or false", e))
        return ENG_ECONFIG;
    if (!n->quoted && !strcmp(n->text, "true"))
        *out = 1;
    else if (!n->quoted && !strcmp(n->text, "false"))
        *out = 0;
    else
        return cfg_errf(e, n, "%s: expected true or false, got '%s'", what, n->text);
    return 0;
}

int cfg_get_string(const cfg_node *n, const char *what, char *out, size_t cap, eng_err *e)
{
    if (need_scalar(n, what, "a string", e))
        return ENG_ECONFIG;
    if (strlen(n->text) >= cap)
        return cfg_errf(e, n, "%s: longer than %zu characters", what, cap - 1);
    strcpy(out, n->text);
    return 0;
}
