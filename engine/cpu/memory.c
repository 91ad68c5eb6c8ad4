/* memory.c: the CPU backend's memory: host memory, 64-byte aligned
 * (AVX-512 rows), zeroed. */
#include <stdlib.h>
#include <string.h>

#include "engine/cpu/internal.h"

void *eng__cpu_alloc(void *ctx, size_t bytes)
{
    size_t n = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, n ? n : 64);
    if (p)
        memset(p, 0, n ? n : 64);
    return p;
}

void eng__cpu_free(void *ctx, void *p)
{
    free(p);
}

void eng__cpu_memcpy(void *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes)
        memcpy(dst, src, bytes);
}

void eng__cpu_zero(void *ctx, void *x, size_t bytes)
{
    if (bytes)
        memset(x, 0, bytes);
}

void eng__cpu_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes && dst != src)
        memcpy(dst, src, bytes);
}
