/* sweep.c: parsing, checking and expanding sweep files (see sweep.h and
 * docs/sweeps.md).  Every message starts with file:line:col (tlm_cfg_errf) and
 * says what was expected.
 * Must not: accept a key it does not know, or let a sweep expand to zero
 * jobs silently. */
#include "orchestrator/sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/sha256.h"

static const char *const TOP_KEYS[] = {"name",    "description", "base",     "grid",
                                       "include", "exclude",     "seeds",    "resources"};
#define N_TOP (sizeof TOP_KEYS / sizeof TOP_KEYS[0])

/* ------------------------------------------------------------ node text */
static size_t text_put(char *out, size_t cap, size_t at, const char *s)
{
    size_t n = strlen(s);
    if (at < cap) {
        size_t room = cap - at - 1;
        memcpy(out + at, s, n < room ? n : room);
        out[at + (n < room ? n : room)] = '\0';
    }
    return at + n;
}

static size_t node_text_at(const tlm_cfg_node *n, char *out, size_t cap, size_t at)
{
    if (!n)
        return text_put(out, cap, at, "null");
    if (n->kind == TLM_CFG_SCALAR)
        return text_put(out, cap, at, n->text);
    at = text_put(out, cap, at, n->kind == TLM_CFG_SEQ ? "[" : "{");
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            at = text_put(out, cap, at, ",");
        if (n->kind == TLM_CFG_MAP) {
            at = text_put(out, cap, at, n->keys[i]->text);
            at = text_put(out, cap, at, ":");
        }
        at = node_text_at(n->items[i], out, cap, at);
    }
    return text_put(out, cap, at, n->kind == TLM_CFG_SEQ ? "]" : "}");
}

/* Compact one-line text of a node: 1.5, cosine, [1.5,0.5], {a:1}. */
static size_t orc_node_text(const tlm_cfg_node *n, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    return node_text_at(n, out, cap, 0);
}

/* ------------------------------------------------------------ tree edits */
static int valid_dotted(const char *k)
{
    if (!*k || *k == '.' || k[strlen(k) - 1] == '.' || strstr(k, ".."))
        return 0;
    for (const char *p = k; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '.'))
            return 0;
    return 1;
}

static int merge_into(tlm_cfg_node *dst, const tlm_cfg_node *src, tlm_err *e);

/* A new key seg (at at's position) with the value v appended to map; v is
 * the map's then, or freed (as is the key) when anything failed. */
static int append_new(tlm_cfg_node *map, const char *seg, const tlm_cfg_node *at, tlm_cfg_node *v, tlm_err *e)
{
    tlm_cfg_node *k = tlm_cfg_new_scalar(seg, 0, at);
    if (!k || !v || tlm_cfg_map_append(map, k, v)) {
        tlm_cfg_free(k);
        tlm_cfg_free(v);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    return 0;
}

/* map[seg] = value: a mapping merges into an existing mapping key by key,
 * anything else replaces.  New keys take `keypos`'s position. */
static int set_one(tlm_cfg_node *map, const char *seg, const tlm_cfg_node *keypos, const tlm_cfg_node *value, tlm_err *e)
{
    size_t i = tlm_cfg_map_find(map, seg);
    if (i < map->n) {
        if (value->kind == TLM_CFG_MAP && map->items[i]->kind == TLM_CFG_MAP)
            return merge_into(map->items[i], value, e);
        tlm_cfg_node *v = tlm_cfg_clone(value);
        if (!v)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        tlm_cfg_free(map->items[i]);
        map->items[i] = v;
        return 0;
    }
    return append_new(map, seg, keypos, tlm_cfg_clone(value), e);
}

/* root.<dotted key> = value, creating mappings on the way. */
static int set_path(tlm_cfg_node *root, const tlm_cfg_node *key, const tlm_cfg_node *value, tlm_err *e)
{
    char path[256];
    if (strlen(key->text) >= sizeof path)
        return tlm_cfg_errf(e, key, "key '%.60s...' is too long", key->text);
    strcpy(path, key->text);
    tlm_cfg_node *cur = root;
    char *seg = path;
    for (char *dot; (dot = strchr(seg, '.')); seg = dot + 1) {
        *dot = '\0';
        tlm_cfg_node *next = tlm_cfg_map_get(cur, seg);
        if (!next) {
            next = tlm_cfg_new_map(key);
            if (append_new(cur, seg, key, next, e))
                return TLM_ENOMEM;
        } else if (next->kind != TLM_CFG_MAP) {
            return tlm_cfg_errf(e, key, "cannot set '%s': '%s' is %s (at %s:%d:%d), not a mapping", key->text, seg,
                            tlm_cfg_describe(next), tlm_cfg_file_name(next->file), next->line, next->col);
        }
        cur = next;
    }
    return set_one(cur, seg, key, value, e);
}

static int merge_into(tlm_cfg_node *dst, const tlm_cfg_node *src, tlm_err *e)
{
    for (size_t i = 0; i < src->n; i++)
        if (set_path(dst, src->keys[i], src->items[i], e))
            return TLM_ECONFIG;
    return 0;
}

/* The node at a dotted path, or NULL. */
static const tlm_cfg_node *get_path(const tlm_cfg_node *root, const char *dotted)
{
    char path[256];
    if (strlen(dotted) >= sizeof path)
        return NULL;
    strcpy(path, dotted);
    const tlm_cfg_node *cur = root;
    char *seg = path;
    for (char *dot; (dot = strchr(seg, '.')); seg = dot + 1) {
        *dot = '\0';
        cur = tlm_cfg_map_get(cur, seg);
        if (!cur)
            return NULL;
    }
    return tlm_cfg_map_get(cur, seg);
}

/* Values equal as a sweep author means them: numbers by value (1.5 ==
 * 1.50), everything else by text and shape. */
static int node_equal(const tlm_cfg_node *a, const tlm_cfg_node *b)
{
    if (a->kind != b->kind || a->n != b->n)
        return 0;
    if (a->kind == TLM_CFG_SCALAR) {
        if (!strcmp(a->text, b->text))
            return 1;
        if (a->quoted || b->quoted)
            return 0;
        char *ea, *eb;
        double x = strtod(a->text, &ea), y = strtod(b->text, &eb);
        return ea != a->text && eb != b->text && !*ea && !*eb && x == y && !isnan(x);
    }
    for (size_t i = 0; i < a->n; i++) {
        if (a->kind == TLM_CFG_MAP) {
            const tlm_cfg_node *bv = tlm_cfg_map_get(b, a->keys[i]->text);
            if (!bv || !node_equal(a->items[i], bv))
                return 0;
        } else if (!node_equal(a->items[i], b->items[i])) {
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------ checking */
static int check_dotted_map(const tlm_cfg_node *m, const char *what, tlm_err *e)
{
    if (m->kind != TLM_CFG_MAP)
        return tlm_cfg_errf(e, m, "%s: expected a mapping of dotted keys (e.g. {taper.schedule: uniform}), got %s", what,
                        tlm_cfg_describe(m));
    if (m->n == 0)
        return tlm_cfg_errf(e, m, "%s: empty mapping (give at least one key)", what);
    for (size_t i = 0; i < m->n; i++)
        if (!valid_dotted(m->keys[i]->text))
            return tlm_cfg_errf(e, m->keys[i], "%s: '%s' is not a key (expected names joined by dots, e.g. train.lr)",
                            what, m->keys[i]->text);
    return 0;
}

static int is_prefix_key(const char *a, const char *b) /* a is b's ancestor */
{
    size_t n = strlen(a);
    return strncmp(a, b, n) == 0 && b[n] == '.';
}

static int check_top_keys(const tlm_cfg_node *root, tlm_err *e)
{
    for (size_t i = 0; i < root->n; i++) {
        const char *k = root->keys[i]->text;
        size_t j, best = N_TOP;
        size_t bestd = 3;
        for (j = 0; j < N_TOP; j++) {
            if (!strcmp(k, TOP_KEYS[j]))
                break;
            size_t d = tlm_cfg_edit_distance(k, TOP_KEYS[j]);
            if (d < bestd) {
                bestd = d;
                best = j;
            }
        }
        if (j < N_TOP)
            continue;
        if (best < N_TOP)
            return tlm_cfg_errf(e, root->keys[i],
                            "unknown key '%s' in a sweep; did you mean '%s'? (expected name, description, base, "
                            "grid, include, exclude, seeds, resources)",
                            k, TOP_KEYS[best]);
        return tlm_cfg_errf(e, root->keys[i],
                        "unknown key '%s' in a sweep (expected name, description, base, grid, include, exclude, "
                        "seeds, resources; job settings go under base)",
                        k);
    }
    return 0;
}

static int parse_name(orc_sweep *s, tlm_err *e)
{
    const tlm_cfg_node *n = tlm_cfg_map_get(s->root, "name");
    if (!n)
        return tlm_cfg_errf(e, s->root, "a sweep needs a name (name: my_sweep)");
    if (n->kind != TLM_CFG_SCALAR || tlm_cfg_is_null(n))
        return tlm_cfg_errf(e, n, "name: expected a word such as ratio_440m, got %s", tlm_cfg_describe(n));
    size_t len = strlen(n->text);
    if (len == 0 || len > ORC_SWEEP_NAME_MAX)
        return tlm_cfg_errf(e, n, "name: expected 1 to %d characters", ORC_SWEEP_NAME_MAX);
    for (const char *p = n->text; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-' || *p == '.'))
            return tlm_cfg_errf(e, n, "name: '%s' has a character other than letters, digits, '_', '-' or '.'",
                            n->text);
    strcpy(s->name, n->text);
    const tlm_cfg_node *d = tlm_cfg_map_get(s->root, "description");
    s->description = "";
    if (d) {
        if (d->kind != TLM_CFG_SCALAR)
            return tlm_cfg_errf(e, d, "description: expected text, got %s", tlm_cfg_describe(d));
        s->description = d->text;
    }
    return 0;
}

static int parse_base(orc_sweep *s, tlm_err *e)
{
    const tlm_cfg_node *b = tlm_cfg_map_get(s->root, "base");
    s->base = tlm_cfg_new_map(b ? b : s->root);
    if (!s->base)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    if (!b)
        return 0;
    if (b->kind != TLM_CFG_MAP)
        return tlm_cfg_errf(e, b, "base: expected a mapping of job settings (scale, arch, train, ...), got %s",
                        tlm_cfg_describe(b));
    /* dotted keys (train.lr: 1e-3) are allowed in base as in grid; one
     * setting spelt both ways would otherwise be merged, the last winning */
    if (tlm_cfg_check_paths_unique(b, e))
        return TLM_ECONFIG;
    for (size_t i = 0; i < b->n; i++) {
        if (!valid_dotted(b->keys[i]->text))
            return tlm_cfg_errf(e, b->keys[i], "base: '%s' is not a key (expected names joined by dots)",
                            b->keys[i]->text);
        if (set_path(s->base, b->keys[i], b->items[i], e))
            return TLM_ECONFIG;
    }
    return 0;
}

static int parse_grid(orc_sweep *s, tlm_err *e)
{
    const tlm_cfg_node *g = tlm_cfg_map_get(s->root, "grid");
    if (!g)
        return 0;
    if (g->kind != TLM_CFG_MAP || g->n == 0)
        return tlm_cfg_errf(e, g,
                        "grid: expected a mapping of dotted keys to lists of values (e.g. taper.schedule: [linear, "
                        "cosine]), got %s; leave grid out for a single job",
                        g->kind == TLM_CFG_MAP ? "an empty mapping" : tlm_cfg_describe(g));
    s->axis_key = calloc(g->n, sizeof *s->axis_key);
    s->axis_val = calloc(g->n, sizeof *s->axis_val);
    if (!s->axis_key || !s->axis_val)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    double product = 1;
    for (size_t i = 0; i < g->n; i++) {
        const tlm_cfg_node *k = g->keys[i], *v = g->items[i];
        if (!valid_dotted(k->text))
            return tlm_cfg_errf(e, k, "grid: '%s' is not a key (expected names joined by dots, e.g. taper.ratio)",
                            k->text);
        if (v->kind != TLM_CFG_SEQ)
            return tlm_cfg_errf(e, v, "grid.%s: expected a list of values (e.g. [%s]), got %s", k->text,
                            v->kind == TLM_CFG_SCALAR ? v->text : "a, b", tlm_cfg_describe(v));
        if (v->n == 0)
            return tlm_cfg_errf(e, v, "grid.%s: the list is empty (give at least one value)", k->text);
        for (size_t j = 0; j < v->n; j++)
            if (tlm_cfg_check_paths_unique(v->items[j], e))
                return TLM_ECONFIG;
        for (size_t j = 0; j < i; j++)
            if (is_prefix_key(g->keys[j]->text, k->text) || is_prefix_key(k->text, g->keys[j]->text))
                return tlm_cfg_errf(e, k, "grid: '%s' overlaps '%s' (at %s:%d:%d); vary one or the other", k->text,
                                g->keys[j]->text, tlm_cfg_file_name(g->keys[j]->file), g->keys[j]->line,
                                g->keys[j]->col);
        s->axis_key[i] = k;
        s->axis_val[i] = v;
        product *= (double)v->n;
    }
    s->n_axes = g->n;
    if (product > ORC_SWEEP_MAX_JOBS)
        return tlm_cfg_errf(e, g, "grid: %.0f points; at most %d are allowed", product, ORC_SWEEP_MAX_JOBS);
    return 0;
}

static int parse_list_of_maps(const orc_sweep *s, const char *what, const tlm_cfg_node ***out, size_t *n, tlm_err *e)
{
    const tlm_cfg_node *l = tlm_cfg_map_get(s->root, what);
    if (!l)
        return 0;
    if (l->kind != TLM_CFG_SEQ)
        return tlm_cfg_errf(e, l, "%s: expected a list of mappings (e.g. - {taper.schedule: uniform}), got %s", what,
                        tlm_cfg_describe(l));
    if (l->n == 0)
        return tlm_cfg_errf(e, l, "%s: the list is empty (leave %s out instead)", what, what);
    *out = calloc(l->n, sizeof **out);
    if (!*out)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (size_t i = 0; i < l->n; i++) {
        char label[48];
        snprintf(label, sizeof label, "%s entry %zu", what, i + 1);
        if (check_dotted_map(l->items[i], label, e) || tlm_cfg_check_paths_unique(l->items[i], e))
            return TLM_ECONFIG;
        (*out)[i] = l->items[i];
    }
    *n = l->n;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int parse_seeds(orc_sweep *s, tlm_err *e)
{
    const tlm_cfg_node *l = tlm_cfg_map_get(s->root, "seeds");
    if (!l)
        return 0;
    if (l->kind != TLM_CFG_SEQ || l->n == 0)
        return tlm_cfg_errf(e, l, "seeds: expected a non-empty list of integers (e.g. [0, 1, 2]), got %s",
                        l->kind == TLM_CFG_SEQ ? "an empty list" : tlm_cfg_describe(l));
    s->seeds = calloc(l->n, sizeof *s->seeds);
    s->seed_node = calloc(l->n, sizeof *s->seed_node);
    if (!s->seeds || !s->seed_node)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (size_t i = 0; i < l->n; i++) {
        int64_t v;
        if (tlm_cfg_get_int_in(l->items[i], "seeds", 0, ENG_SEED_MAX, &v, e))
            return TLM_ECONFIG;
        s->seeds[i] = v;
        s->seed_node[i] = l->items[i];
    }
    /* duplicates: sort a copy */
    int64_t *sorted = malloc(l->n * sizeof *sorted);
    if (!sorted)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    memcpy(sorted, s->seeds, l->n * sizeof *sorted);
    qsort(sorted, l->n, sizeof *sorted, cmp_i64);
    for (size_t i = 1; i < l->n; i++)
        if (sorted[i] == sorted[i - 1]) {
            int64_t dup = sorted[i];
            free(sorted);
            for (size_t j = l->n; j-- > 0;)
                if (s->seeds[j] == dup)
                    return tlm_cfg_errf(e, l->items[j], "seeds: %lld is listed twice", (long long)dup);
        }
    free(sorted);
    s->n_seeds = l->n;
    const tlm_cfg_node *bs = get_path(s->base, "seed");
    if (bs)
        return tlm_cfg_errf(e, bs, "seed is given both in base and in seeds (at %s:%d:%d); keep one",
                        tlm_cfg_file_name(l->file), l->line, l->col);
    for (size_t i = 0; i < s->n_axes; i++)
        if (!strcmp(s->axis_key[i]->text, "seed"))
            return tlm_cfg_errf(e, s->axis_key[i], "seed is given both in grid and in seeds (at %s:%d:%d); keep one",
                            tlm_cfg_file_name(l->file), l->line, l->col);
    return 0;
}

void orc_sweep_free(orc_sweep *s)
{
    if (!s)
        return;
    free(s->file);
    free(s->source);
    tlm_cfg_free(s->root);
    tlm_cfg_free(s->base);
    free(s->axis_key);
    free(s->axis_val);
    free(s->include);
    free(s->exclude);
    free(s->seeds);
    free(s->seed_node);
    free(s);
}

int orc_sweep_parse(const char *name, const char *buf, size_t len, orc_sweep **out, tlm_err *e)
{
    *out = NULL;
    orc_sweep *s = calloc(1, sizeof *s);
    if (!s)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    s->file = strdup(name);
    s->source = malloc(len + 1);
    if (!s->file || !s->source) {
        orc_sweep_free(s);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    memcpy(s->source, buf, len);
    s->source[len] = '\0';
    s->source_len = len;
    int rc = tlm_cfg_parse_buffer(name, buf, len, &s->root, e);
    if (!rc && s->root->kind != TLM_CFG_MAP)
        rc = tlm_cfg_errf(e, s->root, "a sweep file is a mapping (name, base, grid, ...), got %s",
                      tlm_cfg_describe(s->root));
    if (!rc)
        rc = check_top_keys(s->root, e);
    if (!rc)
        rc = parse_name(s, e);
    if (!rc)
        rc = parse_base(s, e);
    if (!rc)
        rc = parse_grid(s, e);
    if (!rc)
        rc = parse_list_of_maps(s, "include", &s->include, &s->n_include, e);
    if (!rc)
        rc = parse_list_of_maps(s, "exclude", &s->exclude, &s->n_exclude, e);
    if (!rc)
        rc = parse_seeds(s, e);
    if (!rc) {
        const tlm_cfg_node *res = tlm_cfg_map_get(s->root, "resources");
        if (res)
            rc = orc_resources_parse(res, &s->res, e);
        else
            orc_resources_init(&s->res);
    }
    if (!rc && s->n_exclude && !s->n_axes)
        rc = tlm_cfg_errf(e, s->exclude[0], "exclude: removes grid points, but the sweep has no grid");
    if (rc) {
        orc_sweep_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static int parse_text(const char *name, const char *text, size_t len, void *out, tlm_err *e)
{
    return orc_sweep_parse(name, text, len, out, e);
}

int orc_sweep_load(const char *path, orc_sweep **out, tlm_err *e)
{
    *out = NULL;
    /* a FIFO would block for ever: refused, never opened */
    return tlm_parse_input(path, 16u << 20, TLM_ECONFIG, "a sweep file, YAML", parse_text, out, e);
}

/* ------------------------------------------------------------ expansion */
/* Keys already emitted by this expansion (open addressing on the first
 * eight bytes of the SHA-256; the full key decides). */
typedef struct {
    uint8_t (*k)[32];
    size_t cap, n;
} keyset;

static int hexval(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

/* 1 if newly added, 0 if present, -1 out of memory. */
static int keyset_add(keyset *s, const char *hex)
{
    uint8_t b[32];
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        uint8_t(*k)[32] = calloc(cap, 32);
        if (!k)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            static const uint8_t zero[32];
            if (!memcmp(s->k[i], zero, 32))
                continue;
            uint64_t h;
            memcpy(&h, s->k[i], 8);
            size_t j = h & (cap - 1);
            while (memcmp(k[j], zero, 32))
                j = (j + 1) & (cap - 1);
            memcpy(k[j], s->k[i], 32);
        }
        free(s->k);
        s->k = k;
        s->cap = cap;
    }
    static const uint8_t zero[32];
    uint64_t h;
    memcpy(&h, b, 8);
    size_t j = h & (s->cap - 1);
    while (memcmp(s->k[j], zero, 32)) {
        if (!memcmp(s->k[j], b, 32))
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    memcpy(s->k[j], b, 32);
    s->n++;
    return 1;
}

typedef struct {
    const orc_sweep *s;
    orc_sweep_job_fn cb;
    void *ctx;
    size_t n_jobs, n_dups;
    size_t *exclude_hits;
    size_t *axis_used, *axis_dropped; /* per grid key: points it applied to / was dropped from */
    char **axis_why;                  /* per grid key: the first reason it was dropped */
    orc_sweep_stats *st;
    keyset seen;
    eng_config cfg;
} expander;

/* "key=value" onto a job's axes label; a label too long for its buffer
 * ends in "..." (it names the job in listings and messages, nothing else). */
#define AXES_CAP 1024
static void axes_add(char axes[AXES_CAP], const char *key, const char *value)
{
    size_t len = strlen(axes);
    if (len + 1 < AXES_CAP)
        tlm_msg_printf(axes + len, AXES_CAP - len, "%s%s=%s", len ? " " : "", key, value);
}

static void axes_add_node(char axes[AXES_CAP], const char *key, const tlm_cfg_node *v)
{
    char vt[256];
    if (orc_node_text(v, vt, sizeof vt) >= sizeof vt)
        memcpy(vt + sizeof vt - 4, "...", 4);
    axes_add(axes, key, vt);
}

/* One job: tree = base + entries, seed; resolve; hand over. */
static int emit(expander *x, tlm_cfg_node *tree, const char *axes_prefix, int include, tlm_err *e)
{
    const orc_sweep *s = x->s;
    size_t ns = s->n_seeds ? s->n_seeds : 1;
    for (size_t si = 0; si < ns; si++) {
        char axes[AXES_CAP];
        tlm_msg_copy(axes, sizeof axes, axes_prefix);
        if (s->n_seeds) {
            char num[24];
            snprintf(num, sizeof num, "%lld", (long long)s->seeds[si]);
            tlm_cfg_node *v = tlm_cfg_new_scalar(num, 0, s->seed_node[si]);
            tlm_cfg_node *k = tlm_cfg_new_scalar("seed", 0, s->seed_node[si]);
            int rc = (!v || !k) ? tlm_errf(e, TLM_ENOMEM, "out of memory") : set_path(tree, k, v, e);
            tlm_cfg_free(v);
            tlm_cfg_free(k);
            if (rc)
                return rc;
            axes_add(axes, "seed", num);
        }
        if (include < 0 && s->n_exclude) {
            int excluded = 0;
            for (size_t p = 0; p < s->n_exclude && !excluded; p++) {
                const tlm_cfg_node *pat = s->exclude[p];
                int all = 1;
                for (size_t i = 0; i < pat->n && all; i++) {
                    const tlm_cfg_node *have = get_path(tree, pat->keys[i]->text);
                    all = have && node_equal(have, pat->items[i]);
                }
                if (all) {
                    x->exclude_hits[p]++;
                    excluded = 1;
                }
            }
            if (excluded)
                continue;
        }
        if (eng_config_from_tree(tree, &x->cfg, e)) {
            size_t len = strlen(e->msg);
            tlm_msg_printf(e->msg + len, sizeof e->msg - len, " (in the job %s)", *axes ? axes : "from base");
            return TLM_ECONFIG;
        }
        char key[65];
        eng_config_id(&x->cfg, key);
        if (!key[0])
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        int added = keyset_add(&x->seen, key);
        if (added < 0)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        if (!added) {
            x->n_dups++;
            continue;
        }
        orc_sweep_job j = {.index = x->n_jobs, .cfg = &x->cfg, .key = key, .axes = axes, .include = include};
        int rc = x->cb(x->ctx, &j, e);
        if (rc)
            return rc;
        x->n_jobs++;
    }
    return 0;
}

/* Whether node n, or an item of a list n, sits at the position e's message
 * starts with.  Not inside a mapping: a key that does not apply within a
 * mapping the author wrote (taper: [{schedule: uniform, ratio: ...}]) is
 * an error as in an include, and dropping the whole value would lose its
 * other keys. */
static int at_node(const tlm_cfg_node *n, const char *msg)
{
    char pos[TLM_MSG_MAX];
    if (n->line > 0) {
        int len = snprintf(pos, sizeof pos, "%s:%d:%d: ", tlm_cfg_file_name(n->file), n->line, n->col);
        if (len > 0 && (size_t)len < sizeof pos && !strncmp(msg, pos, (size_t)len))
            return 1;
    }
    for (size_t i = 0; n->kind == TLM_CFG_SEQ && i < n->n; i++)
        if (at_node(n->items[i], msg))
            return 1;
    return 0;
}

/* The grid key of this point (not yet dropped) that e says does not apply,
 * or -1.  The engine says so as "KEY: only used with ... (X is Y)" at the
 * value's position: the position names the grid value (not base, not an
 * include), the words the kind of error (not a bad value). */
static int inapplicable_axis(const orc_sweep *s, const size_t *idx, uint64_t dropped, const tlm_err *e,
                             char *why, size_t cap)
{
    if (e->code != TLM_ECONFIG || !strstr(e->msg, ": only used with "))
        return -1;
    for (size_t a = 0; a < s->n_axes; a++) {
        if (dropped >> a & 1 || !at_node(s->axis_val[a]->items[idx[a]], e->msg))
            continue;
        /* "(schedule is uniform)" -> "schedule uniform" */
        const char *open = strstr(strstr(e->msg, ": only used with "), " (");
        const char *is = open ? strstr(open, " is ") : NULL, *close = is ? strchr(is, ')') : NULL;
        if (open && is && close)
            snprintf(why, cap, "%s does not apply to %.*s %.*s", s->axis_key[a]->text, (int)(is - open - 2), open + 2,
                     (int)(close - is - 4), is + 4);
        else
            snprintf(why, cap, "%s does not apply to some grid points", s->axis_key[a]->text);
        return (int)a;
    }
    return -1;
}

/* Counts a point dropped for `why` that gave `jobs` new jobs. */
static void note_drop(expander *x, const char *why, size_t jobs)
{
    orc_sweep_stats *st = x->st;
    if (!st)
        return;
    for (size_t i = 0; i < st->n_drops; i++)
        if (!strcmp(st->drops[i].what, why)) {
            st->drops[i].points++;
            st->drops[i].jobs += jobs;
            return;
        }
    if (st->n_drops == ORC_SWEEP_MAX_DROPS) {
        st->more_drops++;
        return;
    }
    orc_sweep_drop *d = &st->drops[st->n_drops++];
    tlm_msg_copy(d->what, sizeof d->what, why);
    d->points = 1;
    d->jobs = jobs;
}

/* One grid point: base + its values, less the keys that do not apply to
 * it (found by resolving: the engine's rules, nothing repeated here). */
static int grid_point(expander *x, const size_t *idx, tlm_err *e)
{
    const orc_sweep *s = x->s;
    uint64_t dropped = 0;
    char why[ORC_SWEEP_MAX_DROPS][200];
    size_t n_why = 0;
    for (;;) {
        tlm_cfg_node *tree = tlm_cfg_clone(s->base);
        if (!tree)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        char axes[AXES_CAP] = "";
        int rc = 0;
        for (size_t a = 0; a < s->n_axes && !rc; a++) {
            if (dropped >> a & 1)
                continue;
            const tlm_cfg_node *v = s->axis_val[a]->items[idx[a]];
            rc = set_path(tree, s->axis_key[a], v, e);
            axes_add_node(axes, s->axis_key[a]->text, v);
        }
        size_t before = x->n_jobs;
        if (!rc)
            rc = emit(x, tree, axes, -1, e);
        tlm_cfg_free(tree);
        char w[200];
        int a = rc ? inapplicable_axis(s, idx, dropped, e, w, sizeof w) : -1;
        if (a >= 0) {
            dropped |= (uint64_t)1 << a;
            x->axis_dropped[a]++;
            if (!x->axis_why[a] && !(x->axis_why[a] = strdup(e->msg)))
                return tlm_errf(e, TLM_ENOMEM, "out of memory");
            if (n_why < ORC_SWEEP_MAX_DROPS)
                memcpy(why[n_why++], w, sizeof w);
            continue;
        }
        if (rc)
            return rc;
        for (size_t k = 0; k < s->n_axes; k++)
            x->axis_used[k] += !(dropped >> k & 1);
        for (size_t k = 0; k < n_why; k++)
            note_drop(x, why[k], x->n_jobs - before);
        return 0;
    }
}

static int expand_grid(expander *x, tlm_err *e)
{
    const orc_sweep *s = x->s;
    size_t idx[64] = {0};
    if (s->n_axes > 64)
        return tlm_cfg_errf(e, s->axis_key[64], "grid: more than 64 keys");
    for (;;) {
        int rc = grid_point(x, idx, e);
        if (rc)
            return rc;
        /* odometer: the last key varies fastest */
        size_t a = s->n_axes;
        while (a > 0) {
            a--;
            if (++idx[a] < s->axis_val[a]->n)
                break;
            idx[a] = 0;
            if (a == 0)
                goto done;
        }
        if (s->n_axes == 0)
            goto done;
    }
done:
    /* a key dropped everywhere is a mistake, not a grid written the natural way */
    for (size_t a = 0; a < s->n_axes; a++)
        if (x->axis_dropped[a] && !x->axis_used[a])
            return tlm_errf(e, TLM_ECONFIG, "%s (grid.%s applies to none of the grid's points)", x->axis_why[a],
                            s->axis_key[a]->text);
    return 0;
}

static int expand_includes(expander *x, tlm_err *e)
{
    const orc_sweep *s = x->s;
    for (size_t i = 0; i < s->n_include; i++) {
        tlm_cfg_node *tree = tlm_cfg_clone(s->base);
        if (!tree)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        const tlm_cfg_node *inc = s->include[i];
        char axes[AXES_CAP] = "";
        int rc = 0;
        for (size_t k = 0; k < inc->n && !rc; k++) {
            rc = set_path(tree, inc->keys[k], inc->items[k], e);
            axes_add_node(axes, inc->keys[k]->text, inc->items[k]);
        }
        if (!rc)
            rc = emit(x, tree, axes, (int)i, e);
        tlm_cfg_free(tree);
        if (rc)
            return rc;
    }
    return 0;
}

int orc_sweep_expand_stats(const orc_sweep *s, orc_sweep_job_fn cb, void *ctx, orc_sweep_stats *st, tlm_err *e)
{
    expander x = {.s = s, .cb = cb, .ctx = ctx, .st = st};
    if (st)
        memset(st, 0, sizeof *st);
    size_t na = s->n_axes ? s->n_axes : 1;
    x.axis_used = calloc(na, sizeof *x.axis_used);
    x.axis_dropped = calloc(na, sizeof *x.axis_dropped);
    x.axis_why = calloc(na, sizeof *x.axis_why);
    int rc = 0;
    if (!x.axis_used || !x.axis_dropped || !x.axis_why ||
        (s->n_exclude && !(x.exclude_hits = calloc(s->n_exclude, sizeof *x.exclude_hits))))
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    /* without a grid the base itself is the one grid point, unless includes say otherwise */
    if (!rc && (s->n_axes || !s->n_include))
        rc = expand_grid(&x, e);
    if (!rc)
        rc = expand_includes(&x, e);
    for (size_t p = 0; !rc && p < s->n_exclude; p++)
        if (!x.exclude_hits[p])
            rc = tlm_cfg_errf(e, s->exclude[p],
                          "exclude entry %zu matches no grid point (each key must name a value the grid or base "
                          "sets, written the same way)",
                          p + 1);
    if (!rc && x.n_jobs == 0)
        rc = tlm_cfg_errf(e, s->root, "the sweep '%s' expands to zero jobs%s", s->name,
                      s->n_exclude ? " (exclude removes every grid point)" : "");
    free(x.exclude_hits);
    free(x.seen.k);
    free(x.axis_used);
    free(x.axis_dropped);
    for (size_t a = 0; x.axis_why && a < s->n_axes; a++)
        free(x.axis_why[a]);
    free(x.axis_why);
    if (st) {
        st->n_jobs = x.n_jobs;
        st->n_dups = x.n_dups;
    }
    return rc;
}

int orc_sweep_expand(const orc_sweep *s, orc_sweep_job_fn cb, void *ctx, size_t *n_jobs, size_t *n_dups,
                     tlm_err *e)
{
    orc_sweep_stats st;
    int rc = orc_sweep_expand_stats(s, cb, ctx, &st, e);
    if (n_jobs)
        *n_jobs = st.n_jobs;
    if (n_dups)
        *n_dups = st.n_dups;
    return rc;
}
