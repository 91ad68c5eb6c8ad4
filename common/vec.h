/* vec.h: growing an array by doubling, the one way TLM's growable arrays
 * (token ids, jobs, requests, names, text buffers) make room.
 *
 *     if (TLM_GROW(v->ids, v->cap, v->n + 1, 1024))
 *         return tlm_errf(e, TLM_ENOMEM, "out of memory (%zu token ids)", v->n + 1);
 *     v->ids[v->n++] = id;
 *
 * The caller keeps its own message: what ran out is worth saying. */
#ifndef TLM_COMMON_VEC_H
#define TLM_COMMON_VEC_H

#include <stddef.h>

/* Makes the array *pp (the address of a T *, holding *cap elements of
 * elem bytes) hold at least need elements: the capacity doubles, from
 * first (>= 1) when the array is empty, until it does.  0, or -1 when out
 * of memory or the size does not fit a size_t; then *pp and *cap are as
 * they were. */
int tlm_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t first);

/* The capacity tlm_grow asks for (for messages: "out of memory (N ...)");
 * SIZE_MAX when doubling would overflow. */
size_t tlm_grow_size(size_t cap, size_t need, size_t first);

/* tlm_grow for an array v (a T * lvalue) with a size_t capacity cap; does
 * nothing when need <= cap. */
#define TLM_GROW(v, cap, need, first) \
    ((size_t)(need) <= (cap) ? 0 : tlm_grow(&(v), &(cap), (size_t)(need), sizeof *(v), (first)))

#endif
