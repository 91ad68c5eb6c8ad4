/* arch.c: the architectures' shape facts (arch.h). */
#include "engine/config/arch.h"

#include "engine/config/taper.h"

/* ------------------------------------------------------------ hope_attn: the level split */

int eng_hope_split(int F, int k, int multiple, int *w, tlm_err *e)
{
    if (k < 1 || k > ENG_HOPE_MAX_LEVELS)
        return tlm_errf(e, TLM_ECONFIG, "hope: %d levels (expected 1 to %d)", k, ENG_HOPE_MAX_LEVELS);
    if (multiple < 1 || F % multiple)
        return tlm_errf(e, TLM_ECONFIG, "hope: MLP width %d is not a multiple of taper.multiple %d, so it cannot be "
                        "split into levels of multiples of %d", F, multiple, multiple);
    int units = F / multiple;
    if (units < k)
        return tlm_errf(e, TLM_ECONFIG, "hope: MLP width %d cannot be split into %d levels of at least %d (a "
                        "multiple of taper.multiple) each: use fewer levels or a smaller taper.multiple",
                        F, k, multiple);
    for (int i = 0; i < k; i++)
        w[i] = (units / k + (i < units % k)) * multiple;
    return 0;
}

int eng_hope_widths(const eng_config *c, int *lw, tlm_err *e)
{
    int widths[ENG_MAX_LAYERS];
    int rc = eng_taper_widths(c, widths, e);
    for (int l = 0; !rc && l < c->model.layers; l++)
        if ((rc = eng_hope_split(widths[l], c->model.hope_levels, c->taper.multiple, lw + l * ENG_HOPE_MAX_LEVELS,
                                 e)))
            tlm_err_prefix(e, "layer %d", l);
    return rc;
}

/* ------------------------------------------------------------ titans: the account */

void eng_titans_parts_of(const eng_config *c, eng_titans_parts *p)
{
    const eng_model_cfg *m = &c->model;
    const int64_t d = m->d_model, H = m->heads, hd = d / H, kv = (int64_t)m->kv_heads * hd;
    const int64_t hm = m->titans_mem_hidden, Np = m->titans_persistent;
    const int64_t w0 = m->titans_mem_depth == 2 ? 2 * H * hd * hm : H * hd * hd;
    p->memory = 3 * d * d + 3 * d * ENG_TITANS_CONV + w0 + d;
    p->gates = 3 * H * d + 3 * H;
    p->persistent = 2 * Np * kv;
    p->attn_norm = m->titans_variant == ENG_TITANS_MAG ? d : 0;
    /* per head and token, depth 2: the reads 4 hd hm, the chunk's inner
     * gradients 6 hd hm, the W and S updates 8 hd hm; depth 1: 2 + 2 + 4 hd^2 */
    p->memory_flops = (double)H * (m->titans_mem_depth == 2 ? 18.0 * (double)hd * (double)hm
                                                             : 8.0 * (double)hd * (double)hd);
}

void eng_titans_account(const eng_config *c, int64_t *extra_params, double *extra_flops, double *attn_flops)
{
    const eng_model_cfg *m = &c->model;
    const int64_t d = m->d_model, H = m->heads, Np = m->titans_persistent;
    eng_titans_parts parts;
    eng_titans_parts_of(c, &parts);
    *extra_params = parts.memory + parts.gates + parts.persistent + parts.attn_norm;
    /* per token: the memory and gate projection, the convolution, the memory */
    const int64_t proj = 3 * d * d + 3 * H * d;
    *extra_flops = 2.0 * (double)proj + 2.0 * 3.0 * (double)d * ENG_TITANS_CONV + parts.memory_flops;
    /* sliding window: the mean number of keys a query sees, plus the persistent entries */
    const int64_t T = c->train.seq_len, w = m->titans_window;
    double keys = 0;
    for (int64_t t = 0; t < T; t++)
        keys += (double)(t + 1 < w ? t + 1 : w);
    keys = keys / (double)T + (double)Np;
    *attn_flops = 2.0 * 2.0 * (double)d * keys;
}
