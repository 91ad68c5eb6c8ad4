/* alloc_count.h: counts the process's heap allocations, for the tests that
 * assert the training step allocates nothing.  Include it in exactly one
 * file of a test program linked with $(ALLOC_WRAP_FLAGS)
 * (tests/local.mk: -Wl,--wrap=malloc and friends), then compare n_allocs
 * before and after the code under test. */
#ifndef TLM_TESTS_LIB_ALLOC_COUNT_H
#define TLM_TESTS_LIB_ALLOC_COUNT_H

#include <stddef.h>

static long n_allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);

void *__wrap_malloc(size_t n)
{
    n_allocs++;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t a, size_t b)
{
    n_allocs++;
    return __real_calloc(a, b);
}
void *__wrap_realloc(void *p, size_t n)
{
    n_allocs++;
    return __real_realloc(p, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n)
{
    n_allocs++;
    return __real_aligned_alloc(a, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    n_allocs++;
    return __real_posix_memalign(p, a, n);
}

#endif
