/* util.c: text buffers, UTF-8 helpers, the bounded JSONL reader and
 * the statistics shared by the evaluation suites (internal.h).
 * Must not: know about any particular benchmark. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/eval/internal.h"
#include "common/fileio.h"
#include "common/vec.h"

/* ------------------------------------------------------------ text */
int ev_put(ev_buf *b, const void *s, size_t n, tlm_err *e)
{
    if (TLM_GROW(b->p, b->cap, b->n + n + 1, 256))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (text of %zu bytes)", b->n + n);
    if (n)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

int ev_puts(ev_buf *b, const char *s, tlm_err *e) { return ev_put(b, s, strlen(s), e); }

void ev_buf_clear(ev_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

int ev_py_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

size_t ev_utf8_len(const char *s, size_t n)
{
    size_t count = 0;
    uint32_t cp;
    for (size_t i = 0; i < n; count++)
        i += tlm_utf8_next(s + i, n - i, &cp);
    return count;
}

/* ------------------------------------------------------------ files */
int ev_read_text(const char *path, const char *what, char **out, size_t *len, tlm_err *e)
{
    if (!path || !path[0])
        return tlm_errf(e, TLM_ECONFIG, "%s: no file given", what);
    FILE *f;
    int rc = tlm_fopen_input(path, TLM_EDATA, &f, e);
    if (rc)
        return tlm_err_prefix(e, "%s", what);
    ev_buf b = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.n + got > EV_TEXT_MAX) {
            rc = tlm_errf(e, TLM_EDATA, "%s: %s: larger than %zu bytes", what, path, (size_t)EV_TEXT_MAX);
            break;
        }
        if ((rc = ev_put(&b, chunk, got, e)))
            break;
    }
    if (!rc && ferror(f))
        rc = tlm_errf(e, TLM_EIO, "%s: %s: read error: %s", what, path, strerror(errno));
    fclose(f);
    if (rc) {
        ev_buf_clear(&b);
        return rc;
    }
    if (!b.p && (rc = ev_put(&b, "", 0, e)))
        return rc;
    *out = b.p;
    *len = b.n;
    return 0;
}

int ev_jsonl_open(ev_jsonl *r, const char *path, tlm_err *e)
{
    memset(r, 0, sizeof *r);
    if (!path || !path[0])
        return tlm_errf(e, TLM_ECONFIG, "no file given");
    snprintf(r->path, sizeof r->path, "%s", path);
    return tlm_fopen_input(path, TLM_EDATA, &r->f, e);
}

void ev_jsonl_close(ev_jsonl *r)
{
    if (r->f)
        fclose(r->f);
    free(r->buf);
    memset(r, 0, sizeof *r);
}

int ev_item_err(const ev_jsonl *r, tlm_err *e, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tlm_errf(e, TLM_EDATA, "%s:%lld: %s", r->path, (long long)r->line, msg);
}

/* One line into r->buf (without the newline), at most EV_LINE_MAX bytes.
 * 1 = a line, 0 = end of file. */
static int read_line(ev_jsonl *r, size_t *len, tlm_err *e)
{
    size_t n = 0;
    int c, any = 0;
    while ((c = getc(r->f)) != EOF) {
        any = 1;
        if (c == '\n')
            break;
        if (n + 2 > r->cap) {
            if (r->cap >= EV_LINE_MAX)
                return tlm_errf(e, TLM_EDATA, "%s:%lld: line longer than %zu bytes", r->path,
                                (long long)r->line + 1, (size_t)EV_LINE_MAX);
            if (TLM_GROW(r->buf, r->cap, n + 2, 4096))
                return tlm_errf(e, TLM_ENOMEM, "out of memory");
        }
        r->buf[n++] = (char)c;
    }
    if (ferror(r->f))
        return tlm_errf(e, TLM_EIO, "%s: read error: %s", r->path, strerror(errno));
    if (!any)
        return 0;
    r->line++;
    if (n && r->buf[n - 1] == '\r')
        n--;
    *len = n;
    return 1;
}

int ev_jsonl_next(ev_jsonl *r, json_t **obj, tlm_err *e)
{
    for (;;) {
        size_t len = 0;
        int rc = read_line(r, &len, e);
        if (rc <= 0)
            return rc;
        size_t i = 0;
        while (i < len && (r->buf[i] == ' ' || r->buf[i] == '\t'))
            i++;
        if (i == len)
            continue;
        if (r->items >= EV_ITEMS_MAX)
            return ev_item_err(r, e, "more than %d items", EV_ITEMS_MAX);
        json_error_t je;
        json_t *o = json_loadb(r->buf, len, JSON_REJECT_DUPLICATES, &je);
        if (!o)
            return ev_item_err(r, e, "not valid JSON (column %d: %s)", je.column, je.text);
        if (!json_is_object(o)) {
            json_decref(o);
            return ev_item_err(r, e, "expected a JSON object per line");
        }
        r->items++;
        *obj = o;
        return 1;
    }
}

int ev_get_str(const ev_jsonl *r, json_t *o, const char *key, const char **out, tlm_err *e)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return ev_item_err(r, e, "missing field \"%s\"", key);
    if (!json_is_string(v))
        return ev_item_err(r, e, "field \"%s\" must be a string", key);
    *out = json_string_value(v);
    return 0;
}

int ev_get_int(const ev_jsonl *r, json_t *o, const char *key, int64_t *out, tlm_err *e)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return ev_item_err(r, e, "missing field \"%s\"", key);
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (*s && !*end && !errno) {
            *out = x;
            return 0;
        }
    }
    return ev_item_err(r, e, "field \"%s\" must be an integer (or a string holding one)", key);
}

/* ------------------------------------------------------------ statistics */
double ev_mean(const double *x, size_t n)
{
    if (!n)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s / (double)n;
}

double ev_stderr(const double *x, size_t n)
{
    if (n < 2)
        return NAN;
    double m = ev_mean(x, n), ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - m) * (x[i] - m);
    return sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}

double ev_pearson(const double *x, const double *y, size_t n)
{
    if (n < 2)
        return NAN;
    double mx = ev_mean(x, n), my = ev_mean(y, n), sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx <= 0 || syy <= 0)
        return NAN;
    return sxy / sqrt(sxx * syy);
}

/* ------------------------------------------------------------ reporting */
void ev_result(const eng_eval_sink *s, const char *suite, const char *task, const char *metric, double value,
               int64_t n, double se)
{
    if (!s || !s->result)
        return;
    eng_eval_result r = {suite, task, metric, value, n, se};
    s->result(s->ud, &r);
}

void ev_log(const eng_eval_sink *s, const char *fmt, ...)
{
    if (!s || !s->log)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->log(s->ud, msg);
}

int ev_tick(const eng_eval_sink *s, tlm_err *e)
{
    if (s && s->tick && s->tick(s->ud))
        return tlm_errf(e, TLM_EINTERRUPTED, "evaluation stopped on request");
    return 0;
}
