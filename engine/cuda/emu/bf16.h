/* bf16.h: the bfloat16 types and conversions of <cuda_bf16.h> for the
 * emulated build (included by emu/cuda.h), rounding as the real header and
 * the device's cvt instructions do:
 *   - float -> bf16: round to nearest, ties to even, on the bit pattern
 *     (subnormals kept, overflow to infinity); any NaN becomes the
 *     canonical 0x7fff;
 *   - rz: truncation; bf16 -> float: exact;
 *   - double -> bf16: one rounding (round to odd into float first, which
 *     makes the second rounding exact);
 *   - arithmetic: the exact result rounded once, as add.rn.bf16 and the
 *     other sm_90 instructions do (computed in double, where a sum or
 *     product of two bf16 values is exact).
 * tests/engine/backend/test_cuda_emu checks these against a table of edge
 * cases produced by CUDA 13.0's cuda_bf16.hpp.
 *
 * Must not: be included outside the emulated build. */
#ifndef TLM_ENGINE_CUDA_EMU_BF16_H
#define TLM_ENGINE_CUDA_EMU_BF16_H

#include <stdint.h>
#include <string.h>

namespace eng_cu_emu {

/* (emu/cuda.h, which includes this file last, has __float_as_uint) */
static inline uint32_t bf16_f32_bits(float f)
{
    return __float_as_uint(f);
}

static inline float bf16_bits_f32(uint32_t u)
{
    return __uint_as_float(u);
}

/* round to nearest even on the 16 bits dropped */
static inline unsigned short bf16_rn_bits(float f)
{
    const uint32_t u = bf16_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;
    const uint32_t lsb = (u >> 16) & 1u;
    return (unsigned short)((u + 0x7fffu + lsb) >> 16);
}

static inline unsigned short bf16_rz_bits(float f)
{
    const uint32_t u = bf16_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;
    return (unsigned short)(u >> 16);
}

/* double -> float rounded to odd: truncated toward zero, the last bit set
 * when anything was dropped; a later rounding to fewer bits is then exact */
static inline float bf16_f64_to_f32_odd(double d)
{
    float f = (float)d;
    if (d != d || (double)f == d)
        return f;
    uint32_t u = bf16_f32_bits(f);
    if ((d > 0 && (double)f > d) || (d < 0 && (double)f < d))
        u--;
    return bf16_bits_f32(u | 1u);
}

struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f) : __x(bf16_rn_bits(f)) {}
    __nv_bfloat16(double d) : __x(bf16_rn_bits(bf16_f64_to_f32_odd(d))) {}
    __nv_bfloat16(int i) : __x(bf16_rn_bits((float)i)) {}
    operator float() const
    {
        return bf16_bits_f32((uint32_t)__x << 16);
    }
    __nv_bfloat16 &operator=(float f)
    {
        __x = bf16_rn_bits(f);
        return *this;
    }
};
struct __nv_bfloat162 {
    __nv_bfloat16 x, y;
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

static inline __nv_bfloat16 bf16_from_bits(unsigned short b)
{
    __nv_bfloat16 h;
    h.__x = b;
    return h;
}
static inline __nv_bfloat16 __float2bfloat16(float f)
{
    return bf16_from_bits(bf16_rn_bits(f));
}
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    return bf16_from_bits(bf16_rn_bits(f));
}
static inline __nv_bfloat16 __float2bfloat16_rz(float f)
{
    return bf16_from_bits(bf16_rz_bits(f));
}
static inline __nv_bfloat16 __double2bfloat16(double d)
{
    return bf16_from_bits(bf16_rn_bits(bf16_f64_to_f32_odd(d)));
}
static inline float __bfloat162float(__nv_bfloat16 h)
{
    return (float)h;
}
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short b)
{
    return bf16_from_bits(b);
}
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h)
{
    return h.__x;
}
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi)
{
    return __nv_bfloat162{lo, hi};
}
static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi)
{
    return __nv_bfloat162{lo, hi};
}
static inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi)
{
    return __nv_bfloat162{__float2bfloat16_rn(lo), __float2bfloat16_rn(hi)};
}
static inline __nv_bfloat162 __float2bfloat162_rn(float f)
{
    return __floats2bfloat162_rn(f, f);
}
static inline float __low2float(__nv_bfloat162 h)
{
    return (float)h.x;
}
static inline float __high2float(__nv_bfloat162 h)
{
    return (float)h.y;
}

/* one rounding of the exact result */
static inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __double2bfloat16((double)(float)a + (double)(float)b);
}
static inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __double2bfloat16((double)(float)a - (double)(float)b);
}
static inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __double2bfloat16((double)(float)a * (double)(float)b);
}
static inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __double2bfloat16((double)(float)a / (double)(float)b);
}
static inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c)
{
    return __double2bfloat16((double)(float)a * (double)(float)b + (double)(float)c);
}
static inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __hadd(a, b);
}
static inline __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __hsub(a, b);
}
static inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __hmul(a, b);
}
static inline __nv_bfloat16 operator/(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __hdiv(a, b);
}

} /* namespace eng_cu_emu */

#endif
