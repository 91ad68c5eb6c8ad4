/* plan.h: the CUDA backend's sizes that a program without a GPU (or a
 * build without CUDA) must know to estimate a job's GPU memory (tlm-worker
 * --describe): the op workspaces in floats, as the table's *_workspace
 * functions return them, and the backend's own buffers in bytes.  Plain
 * C, included by the .cu files (which return these) and by worker/.
 *
 * Must not: include CUDA headers. */
#ifndef TLM_ENGINE_CUDA_PLAN_H
#define TLM_ENGINE_CUDA_PLAN_H

#include <stddef.h>

/* cuBLASLt's workspace: the size the cuBLAS documentation recommends for Hopper */
#define ENG_CU_LT_WS_BYTES ((size_t)32 << 20)
/* sumsq's per-block partials (doubles, device) */
#define ENG_CU_SUMSQ_BLOCKS 1024
/* what the backend allocates beside the model: cuBLASLt's workspace and
 * sumsq's partials */
#define ENG_CU_BACKEND_BYTES (ENG_CU_LT_WS_BYTES + ENG_CU_SUMSQ_BLOCKS * sizeof(double))
/* cudaMalloc's granule: every allocation is rounded up to it */
#define ENG_CU_ALLOC_GRANULE ((size_t)256)
#ifdef __CUDACC__
#define ENG_CU_PLAN_FN static __host__ __device__ inline
#else
#define ENG_CU_PLAN_FN static inline
#endif

/* attention's backward keeps D = dO . O per (sequence, head, row), on
 * flash.cu's kernels (bf16, head sizes 64 and 128) and the scalar ones
 * alike */
ENG_CU_PLAN_FN size_t eng_cu_attention_ws_floats(int B, int T, int H)
{
    return (size_t)B * H * T;
}

/* the fused classifier (classifier.cu): a chunk's logits at most this
 * many floats (256 MiB on a GPU: 523 rows of Llama 3's 128256-token
 * vocabulary, a matmul as efficient as the whole).  The emulated build
 * takes 1024, so that the small shapes of its tests cross chunk borders
 * (the last one short). */
#ifdef ENG_CUDA_EMU
#define ENG_CU_CLS_FLOATS ((size_t)1024)
#else
#define ENG_CU_CLS_FLOATS ((size_t)1 << 26)
#endif
/* rows a chunk: as many as the budget holds, at least 1, at most N */
ENG_CU_PLAN_FN int eng_cu_classifier_rows(int N, int V)
{
    size_t r = ENG_CU_CLS_FLOATS / (size_t)(V > 0 ? V : 1);
    r = r < 1 ? 1 : r;
    return r < (size_t)N ? (int)r : (N > 0 ? N : 1);
}
/* what classifier_workspace answers, in either storage: a chunk's fp32
 * logits (with bf16 activations the backward's bf16 dl is stored over
 * them, each row in its own row's first half) */
ENG_CU_PLAN_FN size_t eng_cu_classifier_ws_floats(int N, int V)
{
    return (size_t)eng_cu_classifier_rows(N, V) * (size_t)V;
}

/* titans_mem: one unit's (sequence, head) scratch for a chunk: the
 * per-token scalars (16 double arrays of chunk length) and 8 of the
 * unit's, 14 hidden-width and 6 head-width matrices of chunk rows, three
 * states; a multiple of 64 floats (256 bytes), the chunk products' batch
 * stride, so every unit's matrices are as aligned as the first unit's */
ENG_CU_PLAN_FN size_t eng_cu_mem_slot_floats(int hd, int hm, int depth, int chunk, int T)
{
    const size_t b = (size_t)(chunk < T ? chunk : T), Hm = (size_t)(depth == 2 ? hm : hd), D = (size_t)hd;
    const size_t Pm = depth == 2 ? 2 * D * Hm : D * D;
    return (2 * (16 * b + 8) + 14 * b * (Hm > D ? Hm : D) + 6 * b * D + 3 * Pm + 63) & ~(size_t)63;
}
/* every unit's slot, then q, k, v and y (forward) or dy (backward) in
 * fp32, unit-major (unit u's token t at (u T + t) hd) */
ENG_CU_PLAN_FN size_t eng_cu_mem_ws_floats(int B, int T, int H, int hd, int hm, int depth, int chunk)
{
    return (size_t)B * H * (eng_cu_mem_slot_floats(hd, hm, depth, chunk, T) + 4 * (size_t)T * hd);
}

#endif
