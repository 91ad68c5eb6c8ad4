/* backend.c: the CPU backend's op table (engine/model/ops.h). */
#include "engine/model/ops.h"

#include "engine/cpu/internal.h"

static const eng_ops cpu_ops = {
    .name = "cpu",
    .alloc = eng__cpu_alloc,
    .free = eng__cpu_free,
    .to_device = eng__cpu_memcpy,
    .to_host = eng__cpu_memcpy,
    .zero = eng__cpu_zero,
    .copy = eng__cpu_copy,
    .matmul = eng__cpu_matmul,
    .embedding_fwd = eng__cpu_embedding_fwd,
    .embedding_bwd = eng__cpu_embedding_bwd,
    .rmsnorm_fwd = eng__cpu_rmsnorm_fwd,
    .rmsnorm_bwd = eng__cpu_rmsnorm_bwd,
    .rope_fwd = eng__cpu_rope_fwd,
    .rope_bwd = eng__cpu_rope_bwd,
    .attention_workspace = eng__cpu_attention_workspace,
    .attention_fwd = eng__cpu_attention_fwd,
    .attention_bwd = eng__cpu_attention_bwd,
    .swiglu_fwd = eng__cpu_swiglu_fwd,
    .swiglu_bwd = eng__cpu_swiglu_bwd,
    .gate_fwd = eng__cpu_gate_fwd,
    .gate_bwd = eng__cpu_gate_bwd,
    .dconv_fwd = eng__cpu_dconv_fwd,
    .dconv_bwd = eng__cpu_dconv_bwd,
    .silu_norm_fwd = eng__cpu_silu_norm_fwd,
    .silu_norm_bwd = eng__cpu_silu_norm_bwd,
    .swa_workspace = eng__cpu_swa_workspace,
    .swa_fwd = eng__cpu_swa_fwd,
    .swa_bwd = eng__cpu_swa_bwd,
    .titans_mem_workspace = eng__cpu_titans_mem_workspace,
    .titans_mem_fwd = eng__cpu_titans_mem_fwd,
    .titans_mem_bwd = eng__cpu_titans_mem_bwd,
    .xent_fwd = eng__cpu_xent_fwd,
    .xent_bwd = eng__cpu_xent_bwd,
    .adamw = eng__cpu_adamw,
    .sumsq = eng__cpu_sumsq,
    .axpy = eng__cpu_axpy,
};

const eng_ops *eng_ops_cpu(void)
{
    return &cpu_ops;
}
