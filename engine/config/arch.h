/* arch.h: the shape facts of the architectures beyond the Transformer, as
 * the config check, the parameter account and the model all need them:
 * hope_attn's split of a layer's MLP width into its levels (docs/hope.md)
 * and the Titans mixer's parameters and FLOPs (docs/titans.md).
 *
 * Must not: know about tensors, buffers or the model's layout (that is
 * engine/model/). */
#ifndef TLM_ENGINE_CONFIG_ARCH_H
#define TLM_ENGINE_CONFIG_ARCH_H

#include <stdint.h>

#include "common/err.h"
#include "engine/config/config.h"

/* Level widths of one layer: F (the layer's d_ff from the taper) split into
 * k levels, each a multiple of `multiple`: F / multiple units shared out
 * equally, the remainder one unit each to the first (fastest) levels, so
 * widths are non-increasing and differ by at most one multiple.  F not a
 * multiple of `multiple`, or fewer units than levels (a level of width 0),
 * is TLM_ECONFIG with a message. */
int eng_hope_split(int F, int k, int multiple, int *level_widths, tlm_err *e);

/* The same for every layer of a resolved hope_attn config:
 * level_widths[l * ENG_HOPE_MAX_LEVELS + i] for layer l, level i. */
int eng_hope_widths(const eng_config *c, int *level_widths, tlm_err *e);

/* Kernel width of the depthwise causal convolutions after q, k, v. */
#define ENG_TITANS_CONV 4

/* One layer of a resolved titans config, beyond the Transformer's
 * attention (q, k, v, o), norms and MLP: the memory's projections, gates,
 * convolution, initial weights and output norm, the attention output norm
 * (MAG) and the persistent entries.  flops_fwd: per token, forward, of
 * those parts plus the memory's online training and reads; attn_flops: the
 * sliding-window attention's scores and weighted sums per token (it
 * replaces the Transformer's causal term). */
void eng_titans_account(const eng_config *c, int64_t *extra_params, double *extra_flops_fwd, double *attn_flops);

/* The same layer's Titans parameters by part (they sum to extra_params),
 * and the memory's own forward FLOPs per token (reads and online
 * training), for `tlm-worker --describe`. */
typedef struct eng_titans_parts {
    int64_t memory;     /* q, k, v projections, convolution, initial weights, output norm */
    int64_t gates;      /* theta, eta, alpha projection and bias */
    int64_t persistent; /* persistent key/value entries */
    int64_t attn_norm;  /* MAG: the attention output's norm */
    double memory_flops;
} eng_titans_parts;
void eng_titans_parts_of(const eng_config *c, eng_titans_parts *p);

#endif
