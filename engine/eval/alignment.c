/* alignment.c: the `alignment` suite, the paper's mechanistic
 * analysis (shared/paper.md, "Mechanistic analysis"):
 *
 *   rho_MLP(l)   = mean over tokens t of cos(F_l(z_l)[t], h_l[t])
 *   rho_block(l) = mean over tokens t of cos(h_{l+1}[t] - h_l[t], h_l[t])
 *
 * with h_l the residual stream entering block l, z_l = h_l + M_l(h_l) and
 * h_{l+1} = z_l + F_l(z_l): one cosine per token (in double), then the
 * plain mean over the N tokens (eval.alignment.tokens, the paper's 2048).
 * A zero vector's cosine counts as 0.  The tokens are the first N of
 * eval.alignment.ids (token ids) or of eval.alignment.text encoded with the
 * job's tokenizer, fed in consecutive windows of the model's context
 * (max_length; 1024 for GPT-2), each starting at position 0.
 * Emitted: layer events rho_mlp and rho_block per layer; eval metrics
 * pearson_rho_mlp / pearson_rho_block (Pearson r of rho with the layer
 * index 0..L-1) and mean_rho_mlp / mean_rho_block (over layers); n = tokens.
 * Must not: average over fewer tokens than asked without saying so. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/eval/internal.h"

#define SUITE (eng_suite_names[ENG_SUITE_ALIGNMENT])

typedef struct acc {
    double *mlp, *block; /* (L) sums of cosines */
    int L;
} acc;

static double cosine(const double *a, const float *b, int d)
{
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < d; i++) {
        ab += a[i] * b[i];
        aa += a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
}

static int on_layer(void *ud, int layer, int n_layers, const float *h, const float *z, const float *f, int T, int d,
                    tlm_err *e)
{
    acc *a = ud;
    if (!a->mlp) {
        a->L = n_layers;
        a->mlp = calloc((size_t)n_layers, sizeof *a->mlp);
        a->block = calloc((size_t)n_layers, sizeof *a->block);
        if (!a->mlp || !a->block)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    double *v = malloc((size_t)d * sizeof *v);
    if (!v)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (int t = 0; t < T; t++) {
        const size_t o = (size_t)t * d;
        for (int i = 0; i < d; i++)
            v[i] = f[o + i];
        a->mlp[layer] += cosine(v, h + o, d);
        /* h_{l+1} - h_l = M_l(h_l) + F_l(z_l) = (z - h) + f */
        for (int i = 0; i < d; i++)
            v[i] = ((double)z[o + i] - h[o + i]) + f[o + i];
        a->block[layer] += cosine(v, h + o, d);
    }
    free(v);
    return 0;
}

/* Whitespace-separated token ids, at most `max` of them. */
static int read_ids(const char *path, int64_t max, int vocab, int32_t **out, size_t *n_out, tlm_err *e)
{
    char *text;
    size_t len;
    int rc = ev_read_text(path, "eval.alignment.ids", &text, &len, e);
    if (rc)
        return rc;
    int32_t *ids = malloc((size_t)max * sizeof *ids);
    size_t n = 0;
    if (!ids) {
        free(text);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    const char *p = text;
    int64_t line = 1;
    while (*p && (int64_t)n < max) {
        if (*p == '\n')
            line++;
        if (isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v >= vocab || (*end && !isspace((unsigned char)*end))) {
            rc = tlm_errf(e, TLM_EDATA, "%s:%lld: expected token ids below %d separated by whitespace", path,
                          (long long)line, vocab);
            break;
        }
        ids[n++] = (int32_t)v;
        p = end;
    }
    free(text);
    if (!rc && n == 0)
        rc = tlm_errf(e, TLM_EDATA, "%s: no token ids", path);
    if (rc) {
        free(ids);
        return rc;
    }
    *out = ids;
    *n_out = n;
    return 0;
}

int eng_eval_alignment(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s,
                       tlm_err *e)
{
    if (!lm->probe && !ev_checking(lm))
        return tlm_errf(e, TLM_ECONFIG, "alignment: this model exposes no per-layer activations");
    const int64_t want = cfg->alignment_tokens > 0 ? cfg->alignment_tokens : 2048;
    int32_t *ids = NULL;
    size_t n = 0;
    int rc;
    if (cfg->alignment_ids[0]) {
        rc = read_ids(cfg->alignment_ids, want, lm->vocab, &ids, &n, e);
    } else if (cfg->alignment_text[0]) {
        if (!tok)
            return tlm_errf(e, TLM_ECONFIG, "alignment: eval.alignment.text needs a tokenizer");
        char *text;
        size_t len;
        if ((rc = ev_read_text(cfg->alignment_text, "eval.alignment.text", &text, &len, e)))
            return rc;
        /* encode a prefix generous enough for `want` tokens (a token is rarely
         * more than 64 bytes), then keep the first `want` */
        size_t cut = (size_t)want * 64 < len ? (size_t)want * 64 : len;
        rc = ev_encode(tok, text, cut, &ids, &n, e);
        free(text);
        if (!rc && (int64_t)n > want)
            n = (size_t)want;
        for (size_t i = 0; !rc && i < n; i++)
            if (ids[i] >= lm->vocab)
                rc = tlm_errf(e, TLM_EDATA, "alignment: token %d is outside the model's vocabulary (%d)", ids[i],
                              lm->vocab);
    } else {
        return tlm_errf(e, TLM_ECONFIG,
                        "alignment: set eval.alignment.text (a text file) or eval.alignment.ids (token ids)");
    }
    if (!rc && n == 0) /* checked in set-up: an empty file would average over nothing after training */
        rc = tlm_errf(e, TLM_EDATA, "%s: %s: no tokens (the file is empty; the suite averages over eval.alignment.tokens "
                      "of them)", cfg->alignment_ids[0] ? "eval.alignment.ids" : "eval.alignment.text",
                      cfg->alignment_ids[0] ? cfg->alignment_ids : cfg->alignment_text);
    if (rc) {
        free(ids);
        return rc;
    }
    if (ev_checking(lm)) {
        free(ids);
        return 0;
    }
    if ((int64_t)n < want)
        ev_log(s, "alignment: only %zu tokens available (eval.alignment.tokens asks for %lld); averaging over %zu", n,
               (long long)want, n);
    acc a = {0};
    const size_t W = (size_t)lm->max_length;
    for (size_t at = 0; at < n && !rc; at += W) {
        int T = (int)(n - at < W ? n - at : W);
        rc = lm->probe(lm->impl, ids + at, T, on_layer, &a, e);
        if (!rc)
            rc = ev_tick(s, e);
    }
    if (!rc) {
        double *depth = malloc((size_t)a.L * sizeof *depth);
        if (!depth) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        } else {
            for (int l = 0; l < a.L; l++) {
                a.mlp[l] /= (double)n;
                a.block[l] /= (double)n;
                depth[l] = l;
                if (s && s->layer) {
                    s->layer(s->ud, SUITE, l, "rho_mlp", a.mlp[l]);
                    s->layer(s->ud, SUITE, l, "rho_block", a.block[l]);
                }
            }
            ev_result(s, SUITE, SUITE, "pearson_rho_mlp", ev_pearson(depth, a.mlp, (size_t)a.L), (int64_t)n, NAN);
            ev_result(s, SUITE, SUITE, "pearson_rho_block", ev_pearson(depth, a.block, (size_t)a.L), (int64_t)n,
                      NAN);
            ev_result(s, SUITE, SUITE, "mean_rho_mlp", ev_mean(a.mlp, (size_t)a.L), (int64_t)n, NAN);
            ev_result(s, SUITE, SUITE, "mean_rho_block", ev_mean(a.block, (size_t)a.L), (int64_t)n, NAN);
            free(depth);
        }
    }
    free(a.mlp);
    free(a.block);
    free(ids);
    return rc;
}
