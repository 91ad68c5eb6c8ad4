/* safetensors.c: the safetensors container (see safetensors.h).
 * Must not: trust any number in a file before checking it against the file. */
#include "engine/format/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/checked.h"
#include "common/fileio.h"
#include "common/sha256.h"
#include "common/vec.h"

#define ST_MAX_HEADER (100u << 20)
#define ST_MAX_ELEMS (1LL << 40) /* per tensor: 4 TiB of F32, far beyond any model here */

int eng_st_dtype_size(const char *d)
{
    static const struct {
        const char *name;
        int size;
    } T[] = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
             {"I8", 1},  {"U8", 1},  {"U16", 2}, {"U32", 4},  {"U64", 8}, {"BOOL", 1}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(T[i].name, d))
            return T[i].size;
    return 0;
}

/* Shapes were checked at open (at most 2^40 elements, unless a dimension
 * is 0); an empty tensor is 0 before any product is formed. */
uint64_t eng_st_numel(const eng_st_tensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            return 0;
    for (int i = 0; i < t->ndim; i++)
        n *= (uint64_t)t->shape[i];
    return n;
}

static int cmp_begin(const void *a, const void *b)
{
    const eng_st_tensor *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

void eng_st_close(eng_st_file *f)
{
    if (f->map)
        munmap((void *)f->map, f->map_len);
    if (f->fd >= 0)
        close(f->fd);
    for (int i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_vals[i]);
    }
    free(f->meta_keys);
    free(f->meta_vals);
    free(f->tensors);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

/* __metadata__: string values only, copied. */
static int parse_metadata(eng_st_file *f, json_t *val, tlm_err *e)
{
    if (!json_is_object(val))
        return tlm_errf(e, TLM_EDATA, "%s: __metadata__ is not an object", f->path);
    size_t nm = json_object_size(val);
    f->meta_keys = calloc(nm ? nm : 1, sizeof *f->meta_keys);
    f->meta_vals = calloc(nm ? nm : 1, sizeof *f->meta_vals);
    if (!f->meta_keys || !f->meta_vals)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    const char *mk;
    json_t *mv;
    json_object_foreach(val, mk, mv)
    {
        if (!json_is_string(mv))
            return tlm_errf(e, TLM_EDATA, "%s: metadata '%s' is not a string", f->path, mk);
        f->meta_keys[f->n_meta] = strdup(mk);
        f->meta_vals[f->n_meta] = strdup(json_string_value(mv));
        f->n_meta++; /* counted before the check, so eng_st_close frees what was copied */
        if (!f->meta_keys[f->n_meta - 1] || !f->meta_vals[f->n_meta - 1])
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    return 0;
}

/* A tensor's shape: each dimension an integer from 0 to 2^40, and its
 * element count, checked (a zero anywhere makes an empty tensor however
 * large the others are). */
static int parse_shape(eng_st_file *f, const char *key, json_t *sh, eng_st_tensor *t, uint64_t *numel, tlm_err *e)
{
    t->ndim = (int)json_array_size(sh);
    for (int i = 0; i < t->ndim; i++) {
        json_t *d = json_array_get(sh, (size_t)i);
        if (!json_is_integer(d) || json_integer_value(d) < 0 || json_integer_value(d) > ST_MAX_ELEMS)
            return tlm_errf(e, TLM_EDATA, "%s: tensor '%s' has a bad shape (dimension %d must be an integer from 0 "
                            "to 2^40)", f->path, key, i);
        t->shape[i] = json_integer_value(d);
    }
    int zero = 0;
    for (int i = 0; i < t->ndim; i++)
        zero |= t->shape[i] == 0;
    *numel = 1;
    for (int i = 0; i < t->ndim && !zero; i++)
        if (tlm_mul_u64(*numel, (uint64_t)t->shape[i], numel) || *numel > ST_MAX_ELEMS)
            return tlm_errf(e, TLM_EDATA, "%s: tensor '%s' has more than 2^40 elements", f->path, key);
    if (zero)
        *numel = 0;
    return 0;
}

/* One tensor's entry: dtype, shape and data_offsets, which must lie in
 * the data and hold exactly the bytes the shape needs. */
static int parse_tensor(eng_st_file *f, const char *key, json_t *val, eng_st_tensor *t, tlm_err *e)
{
    if (strlen(key) >= sizeof t->name)
        return tlm_errf(e, TLM_EDATA, "%s: tensor name too long", f->path);
    strcpy(t->name, key);
    json_t *dt = json_object_get(val, "dtype"), *sh = json_object_get(val, "shape"),
           *off = json_object_get(val, "data_offsets");
    /* each field by name: which one is missing, or what is wrong with it */
    const char *missing = !dt ? "dtype" : !sh ? "shape" : !off ? "data_offsets" : NULL;
    if (missing)
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s' has no %s (each tensor needs dtype, shape and data_offsets)",
                        f->path, key, missing);
    if (!json_is_string(dt))
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s': dtype must be a string such as \"F32\"", f->path, key);
    if (!json_is_array(sh))
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s': shape must be a list of dimensions", f->path, key);
    if (json_array_size(sh) > ENG_ST_MAX_DIMS)
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s' has %zu dimensions; this reader takes at most %d", f->path,
                        key, json_array_size(sh), ENG_ST_MAX_DIMS);
    if (!json_is_array(off) || json_array_size(off) != 2)
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s': data_offsets must be a list of two byte offsets [begin, end]",
                        f->path, key);
    int esize = eng_st_dtype_size(json_string_value(dt));
    if (!esize)
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s' has unknown dtype %s", f->path, key, json_string_value(dt));
    snprintf(t->dtype, sizeof t->dtype, "%s", json_string_value(dt));
    uint64_t numel = 0, nbytes;
    int rc = parse_shape(f, key, sh, t, &numel, e);
    if (rc)
        return rc;
    if (tlm_mul_u64(numel, (uint64_t)esize, &nbytes))
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s' is too large", f->path, key);
    json_t *b = json_array_get(off, 0), *en = json_array_get(off, 1);
    if (!json_is_integer(b) || !json_is_integer(en) || json_integer_value(b) < 0 || json_integer_value(en) < 0)
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s': data_offsets must be two whole numbers of bytes, not negative",
                        f->path, key);
    if (json_integer_value(en) < json_integer_value(b))
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s': data_offsets [%lld, %lld] end before they begin", f->path,
                        key, (long long)json_integer_value(b), (long long)json_integer_value(en));
    t->begin = (uint64_t)json_integer_value(b);
    t->end = (uint64_t)json_integer_value(en);
    uint64_t data_len = f->map_len - f->data_off;
    if (t->end > data_len)
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s' ends at byte %llu past the data (%llu bytes): truncated?",
                        f->path, key, (unsigned long long)t->end, (unsigned long long)data_len);
    if (t->end - t->begin != nbytes)
        return tlm_errf(e, TLM_EDATA, "%s: tensor '%s' holds %llu bytes, its shape needs %llu", f->path, key,
                        (unsigned long long)(t->end - t->begin), (unsigned long long)nbytes);
    return 0;
}

/* No two tensors share a byte. */
static int check_overlaps(eng_st_file *f, tlm_err *e)
{
    if (f->n < 2)
        return 0;
    eng_st_tensor *sorted = malloc((size_t)f->n * sizeof *sorted);
    if (!sorted)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    memcpy(sorted, f->tensors, (size_t)f->n * sizeof *sorted);
    qsort(sorted, (size_t)f->n, sizeof *sorted, cmp_begin);
    /* against the furthest end so far, not just the neighbour's: an
     * empty tensor between two others must not hide their overlap */
    int rc = 0, far = -1;
    for (int i = 0; i < f->n; i++) {
        if (sorted[i].end == sorted[i].begin)
            continue;
        if (far >= 0 && sorted[i].begin < sorted[far].end) {
            rc = tlm_errf(e, TLM_EDATA, "%s: tensors '%s' and '%s' overlap", f->path, sorted[far].name,
                          sorted[i].name);
            break;
        }
        if (far < 0 || sorted[i].end > sorted[far].end)
            far = i;
    }
    free(sorted);
    return rc;
}

static int parse_header(eng_st_file *f, const char *hdr, size_t len, tlm_err *e)
{
    json_error_t je;
    json_t *root = json_loadb(hdr, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return tlm_errf(e, TLM_EDATA, "%s: header is not valid JSON (%s at byte %d)", f->path, je.text, je.position);
    int rc = 0;
    if (!json_is_object(root)) {
        rc = tlm_errf(e, TLM_EDATA, "%s: header is not a JSON object", f->path);
        goto out;
    }
    size_t cap = json_object_size(root);
    f->tensors = calloc(cap ? cap : 1, sizeof *f->tensors);
    if (!f->tensors) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto out;
    }
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        if (!strcmp(key, "__metadata__"))
            rc = parse_metadata(f, val, e);
        else if (!(rc = parse_tensor(f, key, val, &f->tensors[f->n], e)))
            f->n++;
        if (rc)
            goto out;
    }
    rc = check_overlaps(f, e);
out:
    json_decref(root);
    return rc;
}

int eng_st_open(eng_st_file *f, const char *path, tlm_err *e)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    snprintf(f->path, sizeof f->path, "%s", path);
    int rc = tlm_map_input(path, TLM_EDATA, 8, "a safetensors header", &f->fd, &f->map, &f->map_len, e);
    if (rc)
        return rc;
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n |= (uint64_t)f->map[i] << (8 * i);
    if (n > ST_MAX_HEADER || n > f->map_len - 8)
        rc = tlm_errf(e, TLM_EDATA, "%s: header length %llu does not fit the file (%zu bytes)", path,
                      (unsigned long long)n, f->map_len);
    else {
        f->data_off = 8 + (size_t)n;
        rc = parse_header(f, (const char *)f->map + 8, (size_t)n, e);
    }
    if (rc)
        eng_st_close(f);
    return rc;
}

const eng_st_tensor *eng_st_find(const eng_st_file *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

const void *eng_st_data(const eng_st_file *f, const eng_st_tensor *t) { return f->map + f->data_off + t->begin; }

const char *eng_st_meta(const eng_st_file *f, const char *key)
{
    for (int i = 0; i < f->n_meta; i++)
        if (!strcmp(f->meta_keys[i], key))
            return f->meta_vals[i];
    return NULL;
}

/* ------------------------------------------------------------ writer */
typedef struct st_entry {
    eng_st_tensor t;
    const void *data;
} st_entry;

struct eng_st_writer {
    st_entry *v;
    int n;
    size_t cap;
    json_t *meta;
    uint64_t offset;
};

int eng_st_writer_new(eng_st_writer **w, tlm_err *e)
{
    *w = calloc(1, sizeof **w);
    if (!*w || !((*w)->meta = json_object())) {
        free(*w);
        *w = NULL;
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    return 0;
}

void eng_st_writer_free(eng_st_writer *w)
{
    if (!w)
        return;
    json_decref(w->meta);
    free(w->v);
    free(w);
}

int eng_st_writer_add(eng_st_writer *w, const char *name, const char *dtype, int ndim, const int64_t *shape,
                      const void *data, tlm_err *e)
{
    int es = eng_st_dtype_size(dtype);
    if (!es || ndim < 0 || ndim > ENG_ST_MAX_DIMS || strlen(name) >= ENG_ST_NAME_MAX || !strcmp(name, "__metadata__"))
        return tlm_errf(e, TLM_EINTERNAL, "safetensors: bad tensor '%s' (%s, %d dims)", name, dtype, ndim);
    for (int i = 0; i < w->n; i++)
        if (!strcmp(w->v[i].t.name, name))
            return tlm_errf(e, TLM_EINTERNAL, "safetensors: tensor '%s' added twice", name);
    if (TLM_GROW(w->v, w->cap, (size_t)w->n + 1, 64))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    st_entry *en = &w->v[w->n++];
    memset(en, 0, sizeof *en);
    strcpy(en->t.name, name);
    snprintf(en->t.dtype, sizeof en->t.dtype, "%s", dtype);
    en->t.ndim = ndim;
    uint64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        en->t.shape[i] = shape[i];
        numel *= (uint64_t)shape[i];
    }
    en->t.begin = w->offset;
    en->t.end = w->offset + numel * (uint64_t)es;
    w->offset = en->t.end;
    en->data = data;
    return 0;
}

int eng_st_writer_meta(eng_st_writer *w, const char *key, const char *value, tlm_err *e)
{
    if (json_object_set_new(w->meta, key, json_string(value)))
        return tlm_errf(e, TLM_EINTERNAL, "safetensors: bad metadata '%s' (not UTF-8?)", key);
    return 0;
}

int eng_st_writer_write(eng_st_writer *w, const char *path, char *sha256_hex, tlm_err *e)
{
    json_t *hdr = json_object();
    if (!hdr)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    if (json_object_size(w->meta))
        json_object_set(hdr, "__metadata__", w->meta);
    for (int i = 0; i < w->n; i++) {
        const eng_st_tensor *t = &w->v[i].t;
        json_t *shape = json_array();
        for (int d = 0; d < t->ndim; d++)
            json_array_append_new(shape, json_integer(t->shape[d]));
        json_object_set_new(hdr, t->name,
                            json_pack("{s:s, s:o, s:[I, I]}", "dtype", t->dtype, "shape", shape, "data_offsets",
                                      (json_int_t)t->begin, (json_int_t)t->end));
    }
    char *text = json_dumps(hdr, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(hdr);
    if (!text)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    size_t len = strlen(text);
    size_t padded = (len + 7) & ~(size_t)7; /* keep the data 8-byte aligned */
    uint8_t lenbuf[8];
    for (int i = 0; i < 8; i++)
        lenbuf[i] = (uint8_t)((uint64_t)padded >> (8 * i));

    tlm_atomic a;
    int rc = tlm_atomic_open(&a, path, e);
    if (rc) {
        free(text);
        return rc;
    }
    tlm_sha256 sha;
    tlm_sha256_init(&sha);
#define PUT(p, n)                                                                                              \
    do {                                                                                                       \
        if ((n) && fwrite((p), 1, (n), a.f) != (n))                                                            \
            goto ioerr;                                                                                        \
        tlm_sha256_update(&sha, (p), (n));                                                                     \
    } while (0)
    PUT(lenbuf, 8);
    PUT(text, len);
    for (size_t i = len; i < padded; i++)
        PUT(" ", 1);
    for (int i = 0; i < w->n; i++)
        PUT(w->v[i].data, (size_t)(w->v[i].t.end - w->v[i].t.begin));
#undef PUT
    free(text);
    text = NULL;
    if ((rc = tlm_atomic_commit(&a, e)))
        return rc;
    if (sha256_hex) {
        uint8_t d[32];
        tlm_sha256_final(&sha, d);
        tlm_hex(d, 32, sha256_hex);
    }
    return 0;
ioerr:
    free(text);
    rc = tlm_errf(e, TLM_EIO, "%s: write failed: %s", a.tmp, strerror(errno));
    tlm_atomic_abort(&a);
    return rc;
}
