/* probe.c: per-layer activations of a TLM model for the alignment
 * analysis (probe.h).  Copies through the backend's to_host, so it
 * works on device memory too. */
#include "engine/model/probe.h"

#include <stdlib.h>
#include <string.h>

#include "engine/model/internal.h"

void eng_model_probe_dims(const eng_model *m, int *max_batch, int *max_seq, int *vocab)
{
    if (max_batch)
        *max_batch = m->max_B;
    if (max_seq)
        *max_seq = m->max_T;
    if (vocab)
        *vocab = m->V;
}

/* n activations at src into floats at dst (bf16 widened on the host,
 * exactly; its bits staged at the end of dst's own room, read in order) */
static void act_to_host(const eng_model *m, float *dst, const eng_act *src, size_t n)
{
    if (m->act_dtype == ENG_F32) {
        m->ops->to_host(m->ctx, dst, src, n * sizeof *dst);
        return;
    }
    uint16_t *h = (uint16_t *)(dst + n) - n; /* the upper half of dst's n floats */
    m->ops->to_host(m->ctx, h, src, n * sizeof *h);
    for (size_t i = 0; i < n; i++)
        dst[i] = eng_bf16_to_f32(h[i]);
}

int eng_model_probe(eng_model *m, const int32_t *tokens, int T, eng_probe_fn fn, void *ud, tlm_err *e)
{
    double loss;
    int rc = eng_model_forward(m, tokens, NULL, 1, T, &loss, NULL, e);
    if (rc)
        return rc;
    const size_t nd = (size_t)T * m->d;
    float *h = malloc(3 * nd * sizeof *h);
    if (!h)
        return tlm_errf(e, TLM_ENOMEM, "out of memory (probe of %d x %d)", T, m->d);
    float *z = h + nd, *f = z + nd;
    /* the forward of (1, T) laid resid out as (L+1, T, d) */
    act_to_host(m, h, m->resid, nd);
    for (int l = 0; l < m->L && !rc; l++) {
        act_to_host(m, z, m->la[l].resid_mid, nd);
        act_to_host(m, f, eng__resid(m, l + 1, T), nd);
        /* f holds h_{l+1}; the MLP added F_l(z_l) to z_l */
        for (size_t i = 0; i < nd; i++)
            f[i] -= z[i];
        rc = fn(ud, l, m->L, h, z, f, T, m->d, e);
        act_to_host(m, h, eng__resid(m, l + 1, T), nd);
    }
    free(h);
    return rc;
}
