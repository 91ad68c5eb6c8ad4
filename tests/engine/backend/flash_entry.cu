/* flash_entry.cu: test_flash's way into engine/cuda/flash.cu's launchers,
 * built twice as cuda_frag.cu is: by clang++ for the emulated build
 * (tlm_test_flash_emu_*, the launchers in namespace eng_cu_emu) and, in a
 * CUDA build, by nvcc (tlm_test_flash_gpu_*, run when a GPU is lent).  The
 * launchers are C++ and take bf16 pointers; the test is C, so these
 * extern "C" wrappers pass its void pointers on.
 *
 * Must not: be linked into the engine (test only); do anything but
 * forward the call. */
#include "engine/cuda/internal.h"

#ifdef ENG_CUDA_EMU
#define FL_ENTRY(x) tlm_test_flash_emu_##x
using namespace eng_cu_emu;
#else
#define FL_ENTRY(x) tlm_test_flash_gpu_##x
#endif

extern "C" size_t FL_ENTRY(ws_floats)(int B, int T, int H)
{
    return eng__flash_workspace_floats(B, T, H);
}

extern "C" void FL_ENTRY(fwd)(void *ctx, void *out, int ldo, float *lse, const void *q, int ldq, const void *k,
                              const void *v, int ldkv, int B, int T, int H, int Hkv, int hd, float scale)
{
    eng__flash_fwd(ctx, (__nv_bfloat16 *)out, ldo, lse, (const __nv_bfloat16 *)q, ldq, (const __nv_bfloat16 *)k,
                   (const __nv_bfloat16 *)v, ldkv, B, T, H, Hkv, hd, scale);
}

extern "C" void FL_ENTRY(bwd)(void *ctx, void *dq, void *dk, void *dv, const float *lse, const void *dout,
                              const void *out, int ldo, const void *q, int ldq, const void *k, const void *v, int ldkv,
                              int B, int T, int H, int Hkv, int hd, float scale, float *ws)
{
    eng__flash_bwd(ctx, (__nv_bfloat16 *)dq, (__nv_bfloat16 *)dk, (__nv_bfloat16 *)dv, lse,
                   (const __nv_bfloat16 *)dout, (const __nv_bfloat16 *)out, ldo, (const __nv_bfloat16 *)q, ldq,
                   (const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, ldkv, B, T, H, Hkv, hd, scale, ws);
}

/* the cuDNN candidate (engine/cuda/sdpa_cudnn.cu), the same arguments */
extern "C" int FL_ENTRY(cudnn_available)(void *ctx, char *why, size_t cap)
{
    return eng__sdpa_cudnn_available(ctx, why, cap);
}

extern "C" int FL_ENTRY(cudnn_prepare)(void *ctx, int bwd, int B, int T, int H, int Hkv, int hd, int ldo, int ldq,
                                       int ldkv)
{
    return eng__sdpa_cudnn_prepare(ctx, bwd, B, T, H, Hkv, hd, ldo, ldq, ldkv);
}

extern "C" void FL_ENTRY(cudnn_fault)(int fault)
{
    eng__sdpa_cudnn_test_fault = fault;
}

extern "C" void FL_ENTRY(cudnn_fwd)(void *ctx, void *out, int ldo, float *lse, const void *q, int ldq, const void *k,
                                    const void *v, int ldkv, int B, int T, int H, int Hkv, int hd, float scale)
{
    eng__sdpa_cudnn_fwd(ctx, (__nv_bfloat16 *)out, ldo, lse, (const __nv_bfloat16 *)q, ldq, (const __nv_bfloat16 *)k,
                        (const __nv_bfloat16 *)v, ldkv, B, T, H, Hkv, hd, scale);
}

extern "C" void FL_ENTRY(cudnn_bwd)(void *ctx, void *dq, void *dk, void *dv, const float *lse, const void *dout,
                                    const void *out, int ldo, const void *q, int ldq, const void *k, const void *v,
                                    int ldkv, int B, int T, int H, int Hkv, int hd, float scale, float *ws)
{
    eng__sdpa_cudnn_bwd(ctx, (__nv_bfloat16 *)dq, (__nv_bfloat16 *)dk, (__nv_bfloat16 *)dv, lse,
                        (const __nv_bfloat16 *)dout, (const __nv_bfloat16 *)out, ldo, (const __nv_bfloat16 *)q, ldq,
                        (const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, ldkv, B, T, H, Hkv, hd, scale, ws);
}

#ifdef ENG_CUDA_EMU
/* the stand-in's counts: graphs finalized, plans executed */
extern "C" void tlm_test_flash_emu_cudnn_counts(long *graphs, long *execs)
{
    dnn_standin_counts(graphs, execs);
}
#endif
