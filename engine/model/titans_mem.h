/* titans_mem.h: the memory layout of the titans_mem op (engine/model/ops.h),
 * part of its contract: the sizes of one (sequence, head) unit's memory
 * (its state, its chunks), the `states` the forward keeps for the backward,
 * and the shape of a unit's scratch.  One copy for the three that must
 * agree: the model, which plans `states` (engine/model/titans.c), the CPU
 * reference (engine/cpu/titans_mem.c) and the CUDA kernels
 * (engine/cuda/titans_mem.cu).
 *
 * Plain C that nvcc also compiles as C++ (no designated initialisers, no
 * compound literals); under nvcc the functions are __host__ __device__.
 *
 * Must not: include anything of TLM; know about tensors, layers or a
 * backend's other ops. */
#ifndef TLM_ENGINE_MODEL_TITANS_MEM_H
#define TLM_ENGINE_MODEL_TITANS_MEM_H

#include <stddef.h>

#ifdef __CUDACC__
#define ENG_TMEM_FN static inline __host__ __device__
#else
#define ENG_TMEM_FN static inline
#endif

/* One unit's memory for sequences of T tokens: depth 2, M(x) = W2 silu(W1 x)
 * with W1 (Hm, D), W2 (D, Hm); depth 1, M(x) = W x with W (D, D). */
typedef struct eng_tmem_dims {
    int D, Hm, depth; /* head size, hidden width (D at depth 1), depth */
    int b;            /* rows of a chunk: the chunk size, at most T */
    int nc;           /* chunks of a sequence: ceil(T / b) (the last may be shorter) */
    size_t Pm;        /* floats of one state: W1 then W2, or W */
    size_t nH;        /* floats of a chunk's matrix of width max(Hm, D) */
    size_t nD;        /* floats of a chunk's matrix of width D */
} eng_tmem_dims;

ENG_TMEM_FN eng_tmem_dims eng_tmem_dims_of(int hd, int hm, int depth, int chunk, int T)
{
    eng_tmem_dims m;
    m.D = hd;
    m.Hm = depth == 2 ? hm : hd;
    m.depth = depth;
    m.b = chunk < T ? chunk : T;
    m.nc = (T + m.b - 1) / m.b;
    m.Pm = depth == 2 ? (size_t)2 * hd * hm : (size_t)hd * hd;
    m.nH = (size_t)m.b * (m.Hm > hd ? m.Hm : hd);
    m.nD = (size_t)m.b * hd;
    return m;
}

/* states (B, H, nc, 2, Pm): the memory's weights W and momentum S at every
 * chunk start, unit (sequence, head) bh = b * H + h first */
ENG_TMEM_FN size_t eng_tmem_states_floats(const eng_tmem_dims *m, int B, int H)
{
    return (size_t)B * H * m->nc * 2 * m->Pm;
}

ENG_TMEM_FN size_t eng_tmem_states_offset(const eng_tmem_dims *m, int bh)
{
    return (size_t)bh * m->nc * 2 * m->Pm;
}

/* A unit's scratch for one chunk: n_scal per-token arrays of b doubles
 * (a backend keeps as many as it needs), then ENG_TMEM_N_H matrices of nH
 * floats, ENG_TMEM_N_D of nD floats, and three states (P, Q, Pn: the
 * cotangents of W and S, and the next P), and 16 floats of slack. */
enum { ENG_TMEM_N_H = 14, ENG_TMEM_N_D = 6 };

ENG_TMEM_FN size_t eng_tmem_slot_floats(const eng_tmem_dims *m, int n_scal)
{
    return (size_t)n_scal * 2 * m->b + ENG_TMEM_N_H * m->nH + ENG_TMEM_N_D * m->nD + 3 * m->Pm + 16;
}

#endif
