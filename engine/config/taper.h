/* taper.h: per-layer MLP widths from a taper schedule (shared/paper.md).
 *
 *   uniform  d(l) = d_base
 *   linear   d(l) = ds - (ds - de) t                       t = l/(L-1)
 *   cosine   d(l) = de + (ds - de)/2 (1 + cos(pi t))
 *   sigmoid  d(l) = de + (ds - de) / (1 + exp(k (t - 1/2)))
 *   blocks   d(l) = g_j d_base for layer l in the j-th of G equal groups
 *
 * with ds = r_start d_base, de = r_end d_base.  Rounding: every width a
 * multiple of `multiple`, the first and last layer pinned to ds and de, the
 * sum exactly L d_base, monotone in the direction of the taper, and each
 * interior layer within one multiple of its unrounded value (floor of the
 * ideal, plus one multiple for the layers with the largest remainders until
 * the budget is met).  Requests that cannot meet all of that are errors. */
#ifndef TLM_ENGINE_TAPER_H
#define TLM_ENGINE_TAPER_H

#include "engine/config/config.h"
#include "common/err.h"

typedef struct eng_taper_spec {
    int schedule;          /* eng_schedule */
    double r_start, r_end; /* linear / cosine / sigmoid */
    double k;              /* sigmoid */
    const double *groups;  /* blocks */
    int n_groups;
    int multiple;
} eng_taper_spec;

/* Unrounded widths (the formula), ideal[0..L-1]. */
int eng_taper_ideal(int L, int d_base, const eng_taper_spec *s, double *ideal, tlm_err *e);
/* Rounded widths, widths[0..L-1]; TLM_ECONFIG with a message if impossible. */
int eng_taper_compute(int L, int d_base, const eng_taper_spec *s, int *widths, tlm_err *e);
/* The same for a resolved config (model.layers, model.d_ff, taper.*). */
int eng_taper_widths(const eng_config *c, int *widths, tlm_err *e);

#endif
