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

/* One definition of the pattern for each type and operation, so that the
 * four cannot drift apart (the builtins check in the type of out). */
#define TLM_CHECKED_OP(name, type, builtin)                                                                            \
    static inline int name(type a, type b, type *out)                                                                  \
    {                                                                                                                  \
        type r;                                                                                                        \
        if (builtin(a, b, &r))                                                                                         \
            return -1;                                                                                                 \
        *out = r;                                                                                                      \
        return 0;                                                                                                      \
    }

TLM_CHECKED_OP(tlm_mul_u64, uint64_t, __builtin_mul_overflow)
TLM_CHECKED_OP(tlm_add_u64, uint64_t, __builtin_add_overflow)
TLM_CHECKED_OP(tlm_mul_size, size_t, __builtin_mul_overflow)
TLM_CHECKED_OP(tlm_add_size, size_t, __builtin_add_overflow)

#undef TLM_CHECKED_OP

#endif
