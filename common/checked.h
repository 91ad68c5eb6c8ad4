/* checked.h: overflow-checked arithmetic for sizes, counts and offsets read
 * from untrusted files (shard headers, safetensors headers, manifests,
 * trainer state, rank files, evaluation files).  A wrapped product turns a
 * size check into a pass ("its shape needs 0"), so every reader computes
 * such numbers through these and reports an overflow as bad data.
 * Each returns 0 and stores the result, or -1 (out untouched) when the
 * exact result does not fit. */
#ifndef TLM_COMMON_CHECKED_H
#define TLM_COMMON_CHECKED_H

#include <stddef.h>
#include <stdint.h>

static inline int tlm_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return -1;
    *out = r;
    return 0;
}

static inline int tlm_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return -1;
    *out = r;
    return 0;
}

static inline int tlm_mul_size(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return -1;
    *out = r;
    return 0;
}

static inline int tlm_add_size(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_add_overflow(a, b, &r))
        return -1;
    *out = r;
    return 0;
}

#endif
