/* mma.h: the tensor-core instructions kernels may use, one wrapper per
 * instruction for both builds of engine/cuda/ (internal.h includes it):
 * inline PTX under nvcc; in the emulated build a warp collective
 * (engine/cuda/emu/exec.cc) that gathers every lane's fragment registers
 * with the PTX ISA's documented layouts, computes, and scatters the result
 * back, so a kernel's lane-to-element mapping is checked, not assumed
 * (tests/engine/backend/test_cuda_emu multiplies known matrices through
 * them, on the emulator and, when one is lent, on a GPU).
 *
 * Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating
 * point type"; groupID = lane / 4, tig = lane % 4; a register holds two
 * bf16, the lower index in its lower 16 bits):
 *   A (16x16, row major): a[0] rows groupID, columns tig*2, +1;
 *     a[1] rows groupID+8, same columns; a[2], a[3] as a[0], a[1] with
 *     columns +8;
 *   B (16x8, column major): b[0] rows tig*2, +1 of column groupID; b[1]
 *     rows +8;
 *   C, D (16x8 f32): c[0], c[1] row groupID, columns tig*2, +1; c[2],
 *     c[3] row groupID+8.
 * ldmatrix (.m8n8, .b16): lanes 8j..8j+7 give the shared-memory addresses
 * of matrix j's 8 rows (16 bytes each, 16-byte aligned); lane l gets in
 * r[j] row l/4, columns 2(l%4), +1 (with .trans: rows 2(l%4), +1 of
 * column l/4).  So ldmatrix .x4 of a 16x16 bf16 tile whose lanes give rows
 * (lane % 16) of column block (lane / 16) yields A's fragment, and
 * ldmatrix .x2 .trans of a 16x8 tile stored k-major (rows of K) yields B's.
 *
 * Must not: be used outside a warp-uniform path (every lane of the warp
 * must execute each one: they are .sync.aligned). */
#ifndef TLM_ENGINE_CUDA_MMA_H
#define TLM_ENGINE_CUDA_MMA_H

#include <stdint.h>

#ifdef ENG_CUDA_EMU
#define ENG_CU_MMA_FN static inline
#else
#define ENG_CU_MMA_FN static __device__ __forceinline__
#endif

/* d = a b + c: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 */
ENG_CU_MMA_FN void eng_cu_mma_16816_bf16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
{
#ifdef ENG_CUDA_EMU
    ::eng_cu_emu::mma_m16n8k16_bf16(d, a, b, c, ENG_CU_EMU_SITE);
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%10, %11, %12, %13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
#endif
}

#ifdef ENG_CUDA_EMU
#define ENG_CU_LDMATRIX(n, trans, r, row) ::eng_cu_emu::ldmatrix((r), (n), (trans), (row), ENG_CU_EMU_SITE)
#else
#define ENG_CU_SMEM_ADDR(p) ((unsigned)__cvta_generic_to_shared(p))
#endif

/* ldmatrix.sync.aligned.m8n8.x1.shared.b16 */
ENG_CU_MMA_FN void eng_cu_ldmatrix_x1(uint32_t r[1], const void *row)
{
#ifdef ENG_CUDA_EMU
    ENG_CU_LDMATRIX(1, 0, r, row);
#else
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(ENG_CU_SMEM_ADDR(row)));
#endif
}

/* ldmatrix.sync.aligned.m8n8.x2.shared.b16 */
ENG_CU_MMA_FN void eng_cu_ldmatrix_x2(uint32_t r[2], const void *row)
{
#ifdef ENG_CUDA_EMU
    ENG_CU_LDMATRIX(2, 0, r, row);
#else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(ENG_CU_SMEM_ADDR(row)));
#endif
}

/* ldmatrix.sync.aligned.m8n8.x4.shared.b16 */
ENG_CU_MMA_FN void eng_cu_ldmatrix_x4(uint32_t r[4], const void *row)
{
#ifdef ENG_CUDA_EMU
    ENG_CU_LDMATRIX(4, 0, r, row);
#else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ENG_CU_SMEM_ADDR(row)));
#endif
}

/* ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 */
ENG_CU_MMA_FN void eng_cu_ldmatrix_x2_trans(uint32_t r[2], const void *row)
{
#ifdef ENG_CUDA_EMU
    ENG_CU_LDMATRIX(2, 1, r, row);
#else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(ENG_CU_SMEM_ADDR(row)));
#endif
}

/* ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 */
ENG_CU_MMA_FN void eng_cu_ldmatrix_x4_trans(uint32_t r[4], const void *row)
{
#ifdef ENG_CUDA_EMU
    ENG_CU_LDMATRIX(4, 1, r, row);
#else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ENG_CU_SMEM_ADDR(row)));
#endif
}

/* two floats as one register of two bf16 (round to nearest even), lo in
 * the lower half: an A or B fragment register */
ENG_CU_MMA_FN uint32_t eng_cu_pack_bf16x2(float lo, float hi)
{
#ifdef ENG_CUDA_EMU
    return (uint32_t)::eng_cu_emu::__float2bfloat16_rn(lo).__x |
           (uint32_t)::eng_cu_emu::__float2bfloat16_rn(hi).__x << 16;
#else
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *(const uint32_t *)&h;
#endif
}

#endif
