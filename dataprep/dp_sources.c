/* dp_sources.c: what tlm-data reads: text files, folders of them, and JSONL
 * (one JSON object per line, the document in a named string field).  Files
 * are mapped read-only and hashed as they are read; every JSONL problem is
 * reported with its file and line. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "dataprep/dataprep.h"
#include "common/fileio.h"
#include "common/sha256.h"

static int add_file(dp_sources *s, const char *path, uint64_t bytes, dp_format format, tlm_err *e)
{
    dp_source *v = realloc(s->v, (s->n + 1) * sizeof *v);
    if (!v)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    s->v = v;
    dp_source *src = &s->v[s->n];
    memset(src, 0, sizeof *src);
    src->path = strdup(path);
    if (!src->path)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    size_t n = strlen(path);
    int jsonl = n > 6 && !strcmp(path + n - 6, ".jsonl");
    src->format = format != DP_AUTO ? format : jsonl ? DP_JSONL : DP_TEXT;
    src->bytes = bytes;
    s->total_bytes += bytes;
    s->n++;
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int add_path(dp_sources *s, const char *path, dp_format format, int depth, tlm_err *e)
{
    struct stat st;
    if (stat(path, &st))
        return tlm_errf(e, TLM_EDATA, "%s: %s", path, strerror(errno));
    if (S_ISREG(st.st_mode))
        return add_file(s, path, (uint64_t)st.st_size, format, e);
    if (!S_ISDIR(st.st_mode)) /* a FIFO, a device: the gate's message */
        return tlm_stat_input(path, TLM_EDATA, &st, e);
    if (depth > 32)
        return tlm_errf(e, TLM_EDATA, "%s: folders nested deeper than 32 (a link loop?)", path);
    DIR *d = opendir(path);
    if (!d)
        return tlm_errf(e, TLM_EIO, "%s: cannot list: %s", path, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue; /* hidden files, ".", ".." */
        char **g = realloc(names, (n + 1) * sizeof *g);
        if (!g || !(g[n] = strdup(de->d_name))) {
            names = g ? g : names;
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        names = g;
        n++;
    }
    closedir(d);
    if (!rc)
        qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; i < n && !rc; i++) {
        size_t need = strlen(path) + strlen(names[i]) + 2;
        char *child = malloc(need);
        if (!child) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        snprintf(child, need, "%s/%s", path, names[i]);
        rc = add_path(s, child, format, depth + 1, e);
        free(child);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int dp_sources_collect(dp_sources *s, char **inputs, int n_inputs, dp_format format, tlm_err *e)
{
    memset(s, 0, sizeof *s);
    if (n_inputs < 1)
        return tlm_errf(e, TLM_ECONFIG, "no input files or folders given");
    for (int i = 0; i < n_inputs; i++) {
        int rc = add_path(s, inputs[i], format, 0, e);
        if (rc)
            return rc;
    }
    if (s->n == 0)
        return tlm_errf(e, TLM_EDATA, "no files found in the inputs (hidden files are skipped)");
    return 0;
}

void dp_sources_clear(dp_sources *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].path);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static const char *json_kind(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static int walk_jsonl(dp_source *src, const uint8_t *p, size_t n, const char *field, size_t max_line,
                      dp_progress *prog, uint64_t base, dp_doc_fn fn, void *arg, tlm_err *e)
{
    uint64_t line = 0;
    for (size_t i = 0; i < n;) {
        const uint8_t *nl = memchr(p + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - p) : n, len = end - i;
        line++;
        if (len > max_line)
            return tlm_errf(e, TLM_EDATA, "%s:%llu: line of %zu bytes is longer than the limit of %zu "
                            "(--max-line)", src->path, (unsigned long long)line, len, max_line);
        size_t k = 0;
        while (k < len && (p[i + k] == ' ' || p[i + k] == '\t' || p[i + k] == '\r'))
            k++;
        if (len - k >= 3 && !memcmp(p + i + k, "\xEF\xBB\xBF", 3)) /* jansson says "'[' or '{' expected near ''" */
            return tlm_errf(e, TLM_EDATA, "%s:%llu:%zu: a byte-order mark (U+FEFF) starts the line; JSONL lines start "
                            "with their JSON value: save the file as UTF-8 without a BOM", src->path,
                            (unsigned long long)line, k + 1);
        if (k < len) {
            json_error_t je;
            json_t *j = json_loadb((const char *)p + i, len, JSON_ALLOW_NUL, &je);
            if (!j)
                return tlm_errf(e, TLM_EDATA, "%s:%llu:%d: invalid JSON: %s", src->path, (unsigned long long)line,
                                je.column, je.text);
            int rc = 0;
            json_t *v = json_is_object(j) ? json_object_get(j, field) : NULL;
            if (!json_is_object(j))
                rc = tlm_errf(e, TLM_EDATA, "%s:%llu: expected a JSON object, found %s", src->path,
                              (unsigned long long)line, json_kind(j));
            else if (!v)
                rc = tlm_errf(e, TLM_EDATA, "%s:%llu: no \"%s\" field in this object (choose the field with "
                              "--field)", src->path, (unsigned long long)line, field);
            else if (!json_is_string(v))
                rc = tlm_errf(e, TLM_EDATA, "%s:%llu: field \"%s\" is %s, expected a string", src->path,
                              (unsigned long long)line, field, json_kind(v));
            else {
                src->documents++;
                rc = fn(arg, src, line, (const uint8_t *)json_string_value(v), json_string_length(v), e);
            }
            json_decref(j);
            if (rc)
                return rc;
        }
        i = nl ? end + 1 : n;
        if (prog)
            dp_progress_update(prog, base + i, src->path);
    }
    return 0;
}

int dp_sources_walk(dp_sources *s, const char *field, size_t max_line, dp_progress *prog, dp_doc_fn fn, void *arg,
                    tlm_err *e)
{
    uint64_t base = 0;
    for (size_t k = 0; k < s->n; k++) {
        dp_source *src = &s->v[k];
        src->documents = 0;
        int fd;
        struct stat st;
        int rc = tlm_open_input(src->path, TLM_EDATA, &fd, &st, e); /* it may have changed since it was listed */
        if (rc)
            return rc;
        if ((uint64_t)st.st_size > SIZE_MAX) {
            close(fd);
            return tlm_errf(e, TLM_EDATA, "%s: too large for this machine's address space", src->path);
        }
        size_t n = (size_t)st.st_size;
        const uint8_t *p = (const uint8_t *)"";
        void *map = NULL;
        if (n) {
            map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
            if (map == MAP_FAILED) {
                close(fd);
                return tlm_errf(e, TLM_EIO, "%s: cannot map: %s", src->path, strerror(errno));
            }
            p = map;
        }
        close(fd);
        src->bytes = n; /* what was read, even if the file changed since it was listed */
        tlm_sha256 h;
        tlm_sha256_init(&h);
        tlm_sha256_update(&h, p, n);
        tlm_sha256_final(&h, src->sha256);
        if (src->format == DP_JSONL) {
            rc = walk_jsonl(src, p, n, field, max_line, prog, base, fn, arg, e);
        } else {
            src->documents = 1;
            rc = fn(arg, src, 0, p, n, e);
            if (prog)
                dp_progress_update(prog, base + n, src->path);
        }
        if (map)
            munmap(map, n);
        if (rc)
            return rc;
        base += n;
    }
    return 0;
}
