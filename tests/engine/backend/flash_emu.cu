/* flash_emu.cu: test_flash's way into engine/cuda/flash.cu's launchers in
 * the emulated build: they are C++ in namespace eng_cu_emu (internal.h),
 * the test is C, so these extern "C" wrappers pass its void pointers on as
 * the bf16 device pointers the launchers take.  Compiled by clang++ as the
 * emulated engine is (tests/engine/backend/local.mk).
 *
 * Must not: be linked into the engine (test only); do anything but
 * forward the call. */
#include "engine/cuda/internal.h"

using namespace eng_cu_emu;

extern "C" size_t tlm_test_flash_ws_floats(int B, int T, int H)
{
    return eng__flash_workspace_floats(B, T, H);
}

extern "C" void tlm_test_flash_fwd(void *ctx, void *out, int ldo, float *lse, const void *q, int ldq, const void *k,
                                   const void *v, int ldkv, int B, int T, int H, int Hkv, int hd, float scale)
{
    eng__flash_fwd(ctx, (__nv_bfloat16 *)out, ldo, lse, (const __nv_bfloat16 *)q, ldq, (const __nv_bfloat16 *)k,
                   (const __nv_bfloat16 *)v, ldkv, B, T, H, Hkv, hd, scale);
}

extern "C" void tlm_test_flash_bwd(void *ctx, void *dq, void *dk, void *dv, const float *lse, const void *dout,
                                   const void *out, int ldo, const void *q, int ldq, const void *k, const void *v,
                                   int ldkv, int B, int T, int H, int Hkv, int hd, float scale, float *ws)
{
    eng__flash_bwd(ctx, (__nv_bfloat16 *)dq, (__nv_bfloat16 *)dk, (__nv_bfloat16 *)dv, lse,
                   (const __nv_bfloat16 *)dout, (const __nv_bfloat16 *)out, ldo, (const __nv_bfloat16 *)q, ldq,
                   (const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, ldkv, B, T, H, Hkv, hd, scale, ws);
}
