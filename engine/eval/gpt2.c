/* gpt2.c: forward-only GPT-2 (gpt2.h).  Plain fp32 in host memory, the
 * products on a host backend's matmul; buffers are allocated per call
 * (evaluation, not training).
 * Must not: depend on the TLM model's internals. */
#include "engine/eval/gpt2.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "engine/model/ops.h"
#include "engine/format/safetensors.h"

typedef struct gpt2_layer {
    float *ln1_w, *ln1_b;   /* (d) */
    float *attn_w, *attn_b; /* (d, 3d), (3d) */
    float *proj_w, *proj_b; /* (d, d), (d) */
    float *ln2_w, *ln2_b;   /* (d) */
    float *fc_w, *fc_b;     /* (d, F), (F) */
    float *fc2_w, *fc2_b;   /* (F, d), (d) */
} gpt2_layer;

struct eng_gpt2 {
    const eng_backend *backend; /* is_host: its matmul reads these buffers */
    int d, L, H, P, V, F;
    int max_B;
    double eps;
    int gelu_exact;
    float *wte, *wpe;         /* (V, d), (P, d) */
    float *lnf_w, *lnf_b;     /* (d) */
    gpt2_layer *layer;
    float **owned;            /* every converted tensor */
    int n_owned;
    float *logits;            /* (max_B * P, V) of the last call */
};

/* ------------------------------------------------------------ loading */
/* The weights and config.json of a GPT-2 folder (or of its weights file);
 * -1 when a name would not fit (a cut name would open another file). */
#define GPT2_PATH_CAP (TLM_PATH_CAP + 32)
static int model_path(const char *path, char out[GPT2_PATH_CAP], char cfg[GPT2_PATH_CAP])
{
    struct stat st;
    if (strlen(path) >= TLM_PATH_CAP)
        return -1;
    if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
        snprintf(out, GPT2_PATH_CAP, "%s/model.safetensors", path);
        snprintf(cfg, GPT2_PATH_CAP, "%s/config.json", path);
    } else {
        snprintf(out, GPT2_PATH_CAP, "%s", path);
        const char *slash = strrchr(path, '/');
        if (slash)
            snprintf(cfg, GPT2_PATH_CAP, "%.*s/config.json", (int)(slash - path), path);
        else
            snprintf(cfg, GPT2_PATH_CAP, "config.json");
    }
    return 0;
}

int eng_gpt2_detect(const char *path)
{
    char mp[GPT2_PATH_CAP], cp[GPT2_PATH_CAP];
    if (model_path(path, mp, cp))
        return 0;
    eng_st_file f;
    tlm_err e;
    if (eng_st_open(&f, mp, &e))
        return 0;
    int yes = eng_st_find(&f, "wte.weight") || eng_st_find(&f, "transformer.wte.weight");
    eng_st_close(&f);
    return yes;
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, ex = (h >> 10) & 0x1F, man = h & 0x3FF;
    float x;
    if (ex == 0)
        x = ldexpf((float)man, -24);
    else if (ex == 31)
        x = man ? NAN : INFINITY;
    else
        x = ldexpf((float)(man | 0x400), (int)ex - 25);
    uint32_t u;
    memcpy(&u, &x, 4);
    u |= sign;
    memcpy(&x, &u, 4);
    return x;
}

/* A tensor converted to fp32, its shape checked against (d0[, d1]). */
static int tensor(eng_gpt2 *g, const eng_st_file *f, const char *prefix, const char *name, int64_t d0, int64_t d1,
                  float **out, tlm_err *e)
{
    char full[ENG_ST_NAME_MAX];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    const eng_st_tensor *t = eng_st_find(f, full);
    if (!t)
        return tlm_errf(e, TLM_EDATA, "%s: GPT-2 tensor %s is missing", f->path, full);
    int nd = d1 > 0 ? 2 : 1;
    if (t->ndim != nd || t->shape[0] != d0 || (nd == 2 && t->shape[1] != d1))
        return tlm_errf(e, TLM_EDATA, "%s: %s has shape [%lld%s%lld], expected [%lld%s%lld]", f->path, full,
                        (long long)t->shape[0], t->ndim > 1 ? ", " : "", t->ndim > 1 ? (long long)t->shape[1] : 0LL,
                        (long long)d0, nd > 1 ? ", " : "", nd > 1 ? (long long)d1 : 0LL);
    size_t n = (size_t)eng_st_numel(t);
    float *x = malloc(n * sizeof *x);
    if (!x)
        return tlm_errf(e, TLM_ENOMEM, "out of memory (%s)", full);
    const void *src = eng_st_data(f, t);
    if (!strcmp(t->dtype, "F32")) {
        memcpy(x, src, n * sizeof *x);
    } else if (!strcmp(t->dtype, "F16") || !strcmp(t->dtype, "BF16")) {
        const uint8_t *b = src;
        for (size_t i = 0; i < n; i++) {
            uint16_t h = (uint16_t)(b[2 * i] | (b[2 * i + 1] << 8));
            x[i] = t->dtype[0] == 'B' ? eng_bf16_to_f32(h) : f16_to_f32(h);
        }
    } else {
        free(x);
        return tlm_errf(e, TLM_EDATA, "%s: %s has dtype %s (expected F32, F16 or BF16)", f->path, full, t->dtype);
    }
    g->owned[g->n_owned++] = x;
    *out = x;
    return 0;
}

#define GPT2_MAX_SIZE (1 << 24) /* any one size in config.json: 16 M (n_embd, vocab_size, n_positions ...) */

static int cfg_int(json_t *c, const char *key, int def, int *out)
{
    json_t *v = json_object_get(c, key);
    if (!v) {
        *out = def;
        return def >= 0 ? 0 : -1;
    }
    /* a positive size well inside int, so that 4 * n_embd and friends
     * cannot overflow (the tensors' shapes are checked against it after) */
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > GPT2_MAX_SIZE)
        return -1;
    *out = (int)json_integer_value(v);
    return 0;
}

int eng_gpt2_load(eng_gpt2 **out, const char *path, const eng_backend *backend, int max_batch, tlm_err *e)
{
    char mp[GPT2_PATH_CAP], cp[GPT2_PATH_CAP];
    if (!backend->ops->is_host)
        return tlm_errf(e, TLM_ECONFIG, "%s: a GPT-2 is evaluated in host memory; the %s backend's is not", path,
                        backend->ops->name);
    if (model_path(path, mp, cp))
        return tlm_errf(e, TLM_ECONFIG, "%s: longer than the %d bytes this system allows for a path", path,
                        TLM_PATH_CAP - 1);
    json_error_t je;
    char *text;
    size_t len;
    int trc = tlm_read_file(cp, 16u << 20, &text, &len, e); /* a regular file, bounded */
    if (trc)
        return tlm_err_prefix(e, "GPT-2 config");
    json_t *c = json_loadb(text, len, 0, &je);
    free(text);
    if (!c)
        return tlm_errf(e, TLM_EDATA, "%s: GPT-2 config: %s (line %d)", cp, je.text, je.line);
    eng_gpt2 *g = calloc(1, sizeof *g);
    if (!g) {
        json_decref(c);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    g->backend = backend;
    int rc = 0;
    if (cfg_int(c, "n_embd", -1, &g->d) || cfg_int(c, "n_layer", -1, &g->L) || cfg_int(c, "n_head", -1, &g->H) ||
        cfg_int(c, "vocab_size", -1, &g->V) || cfg_int(c, "n_positions", 1024, &g->P))
        rc = tlm_errf(e, TLM_EDATA, "%s: needs integer n_embd, n_layer, n_head, vocab_size (and n_positions) from 1 to %d",
                      cp, GPT2_MAX_SIZE);
    int n_inner = 0;
    json_t *ni = json_object_get(c, "n_inner");
    if (!rc && ni && !json_is_null(ni) &&
        (!json_is_integer(ni) || json_integer_value(ni) < 0 || json_integer_value(ni) > GPT2_MAX_SIZE))
        rc = tlm_errf(e, TLM_EDATA, "%s: n_inner must be null or an integer from 0 to %d", cp, GPT2_MAX_SIZE);
    if (!rc && ni && json_is_integer(ni))
        n_inner = (int)json_integer_value(ni);
    g->eps = 1e-5;
    json_t *eps = json_object_get(c, "layer_norm_epsilon");
    if (eps && json_is_number(eps))
        g->eps = json_number_value(eps);
    json_t *act = json_object_get(c, "activation_function");
    if (!rc && act && json_is_string(act)) {
        const char *a = json_string_value(act);
        if (!strcmp(a, "gelu"))
            g->gelu_exact = 1;
        else if (strcmp(a, "gelu_new") && strcmp(a, "gelu_pytorch_tanh"))
            rc = tlm_errf(e, TLM_EDATA, "%s: activation_function '%s' is not supported (gelu_new, gelu)", cp, a);
    }
    json_decref(c);
    if (!rc && (g->d < 1 || g->L < 1 || g->H < 1 || g->d % g->H || g->V < 1 || g->P < 1 || g->L > 1024))
        rc = tlm_errf(e, TLM_EDATA, "%s: inconsistent GPT-2 sizes (n_embd %d, n_layer %d, n_head %d)", cp, g->d, g->L,
                      g->H);
    g->F = n_inner > 0 ? n_inner : 4 * g->d;
    g->max_B = max_batch > 0 ? max_batch : 1;
    eng_st_file f;
    int opened = 0;
    if (!rc && !(rc = eng_st_open(&f, mp, e)))
        opened = 1;
    if (!rc) {
        g->layer = calloc((size_t)g->L, sizeof *g->layer);
        g->owned = calloc((size_t)g->L * 12 + 4, sizeof *g->owned);
        if (!g->layer || !g->owned)
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    const char *pre = opened && eng_st_find(&f, "transformer.wte.weight") ? "transformer." : "";
    const int64_t d = g->d, F = g->F;
    if (!rc && !(rc = tensor(g, &f, pre, "wte.weight", g->V, d, &g->wte, e)) &&
        !(rc = tensor(g, &f, pre, "wpe.weight", g->P, d, &g->wpe, e)) &&
        !(rc = tensor(g, &f, pre, "ln_f.weight", d, 0, &g->lnf_w, e)))
        rc = tensor(g, &f, pre, "ln_f.bias", d, 0, &g->lnf_b, e);
    for (int l = 0; l < g->L && !rc; l++) {
        gpt2_layer *y = &g->layer[l];
        char p[64];
        snprintf(p, sizeof p, "%sh.%d.", pre, l);
        if ((rc = tensor(g, &f, p, "ln_1.weight", d, 0, &y->ln1_w, e)) ||
            (rc = tensor(g, &f, p, "ln_1.bias", d, 0, &y->ln1_b, e)) ||
            (rc = tensor(g, &f, p, "attn.c_attn.weight", d, 3 * d, &y->attn_w, e)) ||
            (rc = tensor(g, &f, p, "attn.c_attn.bias", 3 * d, 0, &y->attn_b, e)) ||
            (rc = tensor(g, &f, p, "attn.c_proj.weight", d, d, &y->proj_w, e)) ||
            (rc = tensor(g, &f, p, "attn.c_proj.bias", d, 0, &y->proj_b, e)) ||
            (rc = tensor(g, &f, p, "ln_2.weight", d, 0, &y->ln2_w, e)) ||
            (rc = tensor(g, &f, p, "ln_2.bias", d, 0, &y->ln2_b, e)) ||
            (rc = tensor(g, &f, p, "mlp.c_fc.weight", d, F, &y->fc_w, e)) ||
            (rc = tensor(g, &f, p, "mlp.c_fc.bias", F, 0, &y->fc_b, e)) ||
            (rc = tensor(g, &f, p, "mlp.c_proj.weight", F, d, &y->fc2_w, e)))
            break;
        rc = tensor(g, &f, p, "mlp.c_proj.bias", d, 0, &y->fc2_b, e);
    }
    if (opened)
        eng_st_close(&f);
    if (rc) {
        eng_gpt2_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

void eng_gpt2_free(eng_gpt2 *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n_owned; i++)
        free(g->owned[i]);
    free(g->owned);
    free(g->layer);
    free(g->logits);
    free(g);
}


/* ------------------------------------------------------------ forward */
static void layernorm(float *out, const float *x, const float *w, const float *b, int N, int d, double eps)
{
    for (int n = 0; n < N; n++) {
        const float *r = x + (size_t)n * d;
        double m = 0, v = 0;
        for (int i = 0; i < d; i++)
            m += r[i];
        m /= d;
        for (int i = 0; i < d; i++)
            v += (r[i] - m) * (r[i] - m);
        double inv = 1.0 / sqrt(v / d + eps);
        float *o = out + (size_t)n * d;
        for (int i = 0; i < d; i++)
            o[i] = (float)((r[i] - m) * inv) * w[i] + b[i];
    }
}

/* C (N, out) = A (N, in) W (in, out) + bias */
static void linear(const eng_backend *be, float *C, const float *A, const float *W, const float *bias, int N, int in,
                   int out)
{
    for (int n = 0; n < N; n++)
        memcpy(C + (size_t)n * out, bias, (size_t)out * sizeof *C);
    be->ops->matmul(be->ctx, 0, 0, N, out, in, 1.0f, A, in, W, out, 1.0f, C, out, eng_mm_f32());
}

static float gelu(float x, int exact)
{
    if (exact)
        return (float)(0.5 * x * (1.0 + erf(x / sqrt(2.0))));
    const double k = sqrt(2.0 / M_PI);
    return (float)(0.5 * x * (1.0 + tanh(k * (x + 0.044715 * (double)x * x * x))));
}

/* Causal attention of one sequence: y (T, d) from qkv (T, 3d); S (T, T) scratch. */
static void attention(const eng_backend *be, float *y, const float *qkv, float *S, int T, int d, int H)
{
    const eng_ops *o = be->ops;
    const int hd = d / H;
    const float scale = (float)(1.0 / sqrt((double)hd));
    for (int h = 0; h < H; h++) {
        const float *q = qkv + h * hd, *k = qkv + d + h * hd, *v = qkv + 2 * d + h * hd;
        o->matmul(be->ctx, 0, 1, T, T, hd, scale, q, 3 * d, k, 3 * d, 0.0f, S, T, eng_mm_f32());
        for (int t = 0; t < T; t++) {
            float *r = S + (size_t)t * T;
            float mx = r[0];
            for (int s = 1; s <= t; s++)
                mx = r[s] > mx ? r[s] : mx;
            double sum = 0;
            for (int s = 0; s <= t; s++) {
                r[s] = expf(r[s] - mx);
                sum += r[s];
            }
            for (int s = 0; s <= t; s++)
                r[s] = (float)(r[s] / sum);
            for (int s = t + 1; s < T; s++)
                r[s] = 0.0f;
        }
        o->matmul(be->ctx, 0, 0, T, hd, T, 1.0f, S, T, v, 3 * d, 0.0f, y + h * hd, d, eng_mm_f32());
    }
}

/* Forward over tokens (B, T); probe (B == 1) gets each layer's h, z, f;
 * logits (B, T, V) into g->logits when want_logits. */
static int forward(eng_gpt2 *g, const int32_t *tokens, int B, int T, eng_probe_fn fn, void *ud, int want_logits,
                   tlm_err *e)
{
    if (B < 1 || B > g->max_B || T < 1 || T > g->P)
        return tlm_errf(e, TLM_EINTERNAL, "gpt2: batch %d x %d exceeds %d x %d", B, T, g->max_B, g->P);
    const int d = g->d, F = g->F, N = B * T;
    for (int n = 0; n < N; n++)
        if (tokens[n] < 0 || tokens[n] >= g->V)
            return tlm_errf(e, TLM_EDATA, "gpt2: token %d is outside the vocabulary (%d)", tokens[n], g->V);
    const size_t Nd = (size_t)N * d;
    float *x = malloc(Nd * sizeof *x), *a = malloc(Nd * sizeof *a), *z = malloc(Nd * sizeof *z);
    float *f = malloc(Nd * sizeof *f), *y = malloc(Nd * sizeof *y);
    float *qkv = malloc(3 * Nd * sizeof *qkv), *hid = malloc((size_t)N * F * sizeof *hid);
    float *S = malloc((size_t)T * T * sizeof *S);
    int rc = 0;
    if (!x || !a || !z || !f || !y || !qkv || !hid || !S) {
        rc = tlm_errf(e, TLM_ENOMEM, "gpt2: out of memory for %d x %d tokens", B, T);
        goto out;
    }
    for (int n = 0; n < N; n++)
        for (int i = 0; i < d; i++)
            x[(size_t)n * d + i] = g->wte[(size_t)tokens[n] * d + i] + g->wpe[(size_t)(n % T) * d + i];
    for (int l = 0; l < g->L && !rc; l++) {
        const gpt2_layer *w = &g->layer[l];
        layernorm(a, x, w->ln1_w, w->ln1_b, N, d, g->eps);
        linear(g->backend, qkv, a, w->attn_w, w->attn_b, N, d, 3 * d);
        for (int b = 0; b < B; b++)
            attention(g->backend, y + (size_t)b * T * d, qkv + (size_t)b * T * 3 * d, S, T, d, g->H);
        linear(g->backend, z, y, w->proj_w, w->proj_b, N, d, d);
        for (size_t i = 0; i < Nd; i++)
            z[i] += x[i];
        layernorm(a, z, w->ln2_w, w->ln2_b, N, d, g->eps);
        linear(g->backend, hid, a, w->fc_w, w->fc_b, N, d, F);
        for (size_t i = 0; i < (size_t)N * F; i++)
            hid[i] = gelu(hid[i], g->gelu_exact);
        linear(g->backend, f, hid, w->fc2_w, w->fc2_b, N, F, d);
        if (fn)
            rc = fn(ud, l, g->L, x, z, f, T, d, e);
        for (size_t i = 0; i < Nd; i++)
            x[i] = z[i] + f[i];
    }
    if (!rc && want_logits) {
        layernorm(a, x, g->lnf_w, g->lnf_b, N, d, g->eps);
        if (!g->logits)
            g->logits = malloc((size_t)g->max_B * g->P * g->V * sizeof *g->logits);
        if (!g->logits)
            rc = tlm_errf(e, TLM_ENOMEM, "gpt2: out of memory for logits");
        else
            g->backend->ops->matmul(g->backend->ctx, 0, 1, N, g->V, d, 1.0f, a, d, g->wte, d, 0.0f, g->logits, g->V,
                                    eng_mm_f32());
    }
out:
    free(x), free(a), free(z), free(f), free(y), free(qkv), free(hid), free(S);
    return rc;
}

static int lm_logits(void *impl, const int32_t *tokens, int B, int T, const float **out, tlm_err *e)
{
    eng_gpt2 *g = impl;
    int rc = forward(g, tokens, B, T, NULL, NULL, 1, e);
    *out = rc ? NULL : g->logits;
    return rc;
}

static int lm_probe(void *impl, const int32_t *tokens, int T, eng_probe_fn fn, void *ud, tlm_err *e)
{
    return forward(impl, tokens, 1, T, fn, ud, 0, e);
}

void eng_gpt2_lm(eng_eval_lm *lm, eng_gpt2 *g)
{
    memset(lm, 0, sizeof *lm);
    lm->impl = g;
    lm->max_B = g->max_B;
    lm->max_T = g->P;
    lm->max_length = g->P;
    lm->vocab = g->V;
    lm->logits = lm_logits;
    lm->probe = lm_probe;
}
