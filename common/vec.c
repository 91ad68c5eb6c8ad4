/* vec.c: tlm_grow (vec.h).  Must not: touch the array's elements, or
 * change anything when it fails. */
#include "common/vec.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t tlm_grow_size(size_t cap, size_t need, size_t first)
{
    size_t c = cap ? cap : first;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return SIZE_MAX;
        c *= 2;
    }
    return c;
}

int tlm_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t first)
{
    assert(first > 0 && elem > 0);
    if (need <= *cap)
        return 0;
    size_t c = tlm_grow_size(*cap, need, first);
    if (c == SIZE_MAX || c > SIZE_MAX / elem)
        return -1;
    /* the pointer is read and written as bytes: pp may point at any T * */
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, c * elem);
    if (!q)
        return -1;
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}
