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

int eng_model_probe(eng_model *m, const int32_t *tokens, int T, eng_probe_fn fn, void *ud, tlm_err *e)
{
    if (m->act_dtype != ENG_F32) /* the copies below read fp32 rows (a bf16 run would need a widening copy) */
        return tlm_errf(e, TLM_ECONFIG,
                        "probe: activations stored in bf16; the probe reads fp32 (train.precision: fp32)");
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
    m->ops->to_host(m->ctx, h, m->resid, nd * sizeof *h);
    for (int l = 0; l < m->L && !rc; l++) {
        m->ops->to_host(m->ctx, z, m->la[l].resid_mid, nd * sizeof *z);
        m->ops->to_host(m->ctx, f, eng__resid(m, l + 1, T), nd * sizeof *f);
        /* f holds h_{l+1}; the MLP added F_l(z_l) to z_l */
        for (size_t i = 0; i < nd; i++)
            f[i] -= z[i];
        rc = fn(ud, l, m->L, h, z, f, T, m->d, e);
        m->ops->to_host(m->ctx, h, eng__resid(m, l + 1, T), nd * sizeof *h);
    }
    free(h);
    return rc;
}
