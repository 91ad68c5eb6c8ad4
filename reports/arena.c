/* arena.c: the bump allocator behind tables and job lists: many small
 * strings freed together, so builders need no per-string bookkeeping.
 * Must not: hand out memory that outlives rpt_arena_clear. */
#include "reports/rpt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_BYTES 65536

struct rpt_block {
    rpt_block *next;
    size_t used, cap;
    max_align_t data[]; /* cap bytes */
};

void *rpt_alloc(rpt_arena *a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (n == 0)
        n = sizeof(max_align_t);
    rpt_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > BLOCK_BYTES / 2 ? n : BLOCK_BYTES;
        rpt_block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        if (b && cap != BLOCK_BYTES) {
            /* a big one-off goes behind the current block, which keeps serving small requests */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            a->head = nb;
        }
        b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *rpt_strdup(rpt_arena *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = rpt_alloc(a, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

char *rpt_vprintf(rpt_arena *a, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *p = n < 0 ? NULL : rpt_alloc(a, (size_t)n + 1);
    if (p)
        vsnprintf(p, (size_t)n + 1, fmt, again);
    va_end(again);
    return p;
}

char *rpt_printf(rpt_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = rpt_vprintf(a, fmt, ap);
    va_end(ap);
    return p;
}

void rpt_arena_clear(rpt_arena *a)
{
    rpt_block *b = a->head;
    while (b) {
        rpt_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}
