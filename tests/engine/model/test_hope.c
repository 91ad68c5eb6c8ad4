/* test_hope.c: Hope-attention (arch hope_attn, docs/hope.md) in the engine.
 *
 *   - the level split: widths, remainders, impossible splits are errors;
 *   - config: defaults (3 levels, chunks 1, 4, 16), levels from chunks,
 *     positioned errors, identity (taper.multiple counts, even uniform);
 *   - layout: parameter count = eng_account, level names and shapes, the
 *     same MLP budget as the Transformer, tapered = uniform in parameters;
 *   - one level with chunk 1 is the Transformer: the same weights under
 *     the level names give bit-identical losses, logits, gradients and
 *     AdamW steps;
 *   - finite differences (4-point stencil, as test_grad_model) for the CMS
 *     block alone (1 layer, 4 levels) and whole tapered/uniform models;
 *   - the multi-frequency optimizer: a level with chunk C changes only at
 *     steps that are multiples of C, by AdamW on the mean of its clipped
 *     gradients with its own bias correction (checked against a double
 *     computation here), its accumulator is optimizer state: restoring
 *     weights + moments + accumulators mid-chunk continues bit for bit,
 *     dropping the accumulators does not;
 *   - determinism: same seed twice, and 1 thread against 2. */
#include <math.h>
#include <stdlib.h>

#include "engine/config/account.h"
#include "engine/model/model.h"
#include "engine/config/arch.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/tap.h"
#include "tests/lib/hope_util.h"
#include "tests/lib/model_util.h"

static eng_backend *BE; /* the CPU backend every model here runs on */

static int parse(const char *text, eng_config *c, tlm_err *e)
{
    return eng_config_from_text("hope.yaml", text, strlen(text), c, e);
}

/* ------------------------------------------------------------ split */
static void test_split(void)
{
    int w[ENG_HOPE_MAX_LEVELS];
    tlm_err e = {0};
    TAP_OK(!eng_hope_split(384, 3, 16, w, &e) && w[0] == 128 && w[1] == 128 && w[2] == 128, "384 / 3: 128 x 3");
    TAP_OK(!eng_hope_split(352, 3, 16, w, &e) && w[0] == 128 && w[1] == 112 && w[2] == 112,
           "352 / 3: 128, 112, 112 (the remainder to the fastest)");
    TAP_OK(!eng_hope_split(128, 3, 16, w, &e) && w[0] == 48 && w[1] == 48 && w[2] == 32, "128 / 3: 48, 48, 32");
    TAP_OK(!eng_hope_split(4096, 3, 16, w, &e) && w[0] + w[1] + w[2] == 4096 && w[0] == 1376 && w[2] == 1360,
           "4096 / 3: %d, %d, %d", w[0], w[1], w[2]);
    TAP_OK(!eng_hope_split(64, 1, 16, w, &e) && w[0] == 64, "one level: the whole width");
    TAP_OK(eng_hope_split(32, 3, 16, w, &e) == TLM_ECONFIG && strstr(e.msg, "cannot be split into 3 levels"),
           "32 / 3 levels of 16: %s", e.msg);
    TAP_OK(eng_hope_split(100, 2, 16, w, &e) == TLM_ECONFIG && strstr(e.msg, "not a multiple"), "100: %s", e.msg);
    TAP_OK(eng_hope_split(64, 9, 1, w, &e) == TLM_ECONFIG, "9 levels: %s", e.msg);
}

/* ------------------------------------------------------------ config */
static void test_config(void)
{
    eng_config c, t;
    tlm_err e = {0};
    int rc = parse("scale: 1m\narch: hope_attn\ntaper: {schedule: cosine}\n", &c, &e);
    TAP_OK(rc == 0 && c.model.hope_levels == 3 && c.model.n_hope_chunks == 3 && c.model.hope_chunks[0] == 1 &&
               c.model.hope_chunks[1] == 4 && c.model.hope_chunks[2] == 16,
           "defaults: 3 levels, chunks 1, 4, 16 (%s)", rc ? e.msg : "ok");
    char *canon = eng_config_canonical(&c);
    TAP_OK(canon && strstr(canon, "\"hope\":{\"chunks\":[1,4,16],\"levels\":3}"), "canonical form: %s",
           canon ? strstr(canon, "\"hope\"") : "(null)");
    free(canon);
    rc = parse("scale: 1m\narch: hope_attn\n", &c, &e);
    canon = eng_config_canonical(&c);
    TAP_OK(rc == 0 && canon && strstr(canon, "\"multiple\":16"),
           "uniform hope_attn: taper.multiple is part of the identity (it sets the level unit)");
    free(canon);
    rc = parse("scale: 1m\narch: transformer\n", &t, &e);
    canon = eng_config_canonical(&t);
    TAP_OK(rc == 0 && canon && !strstr(canon, "hope") && !strstr(canon, "multiple"),
           "transformer: no hope keys, no taper.multiple (identities unchanged)");
    free(canon);
    rc = parse("scale: 1m\narch: hope_attn\nmodel: {hope: {levels: 2}}\n", &c, &e);
    TAP_OK(rc == 0 && c.model.n_hope_chunks == 2 && c.model.hope_chunks[1] == 4, "levels 2: chunks 1, 4");
    rc = parse("scale: 1m\narch: hope_attn\nmodel: {hope: {chunks: [1, 2, 8, 32]}}\n", &c, &e);
    TAP_OK(rc == 0 && c.model.hope_levels == 4 && c.model.hope_chunks[3] == 32, "chunks [1, 2, 8, 32]: 4 levels");
    static const struct {
        const char *y, *want;
    } bad[] = {
        {"scale: 1m\narch: hope_attn\nmodel: {hope: {levels: 2, chunks: [1, 4, 16]}}\n",
         "hope.yaml:3:35: model.hope.chunks: 3 chunk sizes for 2 levels"},
        {"scale: 1m\narch: hope_attn\nmodel: {hope: {chunks: [1, 2.5]}}\n",
         "hope.yaml:3:28: model.hope.chunks: 2.5 is not a whole number"},
        {"scale: 1m\narch: hope_attn\nmodel: {hope: {chunks: [0, 4]}}\n", "model.hope.chunks: 0 is out of range"},
        {"scale: 1m\narch: hope_attn\nmodel: {hope: {levels: 9}}\n", "model.hope.levels: 9 is out of range"},
        {"scale: 1m\narch: transformer\nmodel: {hope: {levels: 2}}\n",
         "hope.yaml:3:24: model.hope: only used with arch hope_attn"},
        {"scale: 1m\narch: hope_attn\nmodel: {hope: {levles: 2}}\n", "unknown key 'levles' in model.hope"},
        /* cosine 1.5 -> 0.5 of 256: the last layer is 128 = 8 units of 16 */
        {"scale: 1m\narch: hope_attn\ntaper: {schedule: cosine}\nmodel: {hope: {levels: 8}}\n", NULL},
        {"scale: 1m\narch: hope_attn\ntaper: {schedule: cosine}\nmodel: {hope: {levels: 5, chunks: [1,1,1,1,1]}, d_ff: "
         "128}\n",
         "hope.yaml:4:24: model.hope.levels: layer 5 (d_ff 64): MLP width 64 cannot be split into 5 levels"},
        {"arch: hope_attn\nmodel: {d_model: 64, layers: 2, heads: 2, d_ff: 100}\ntrain: {tokens: 100000}\n",
         "hope.yaml:2:49: model.hope.levels: layer 0 (d_ff 100): MLP width 100 is not a multiple of taper.multiple"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&e, 0, sizeof e);
        rc = parse(bad[i].y, &c, &e);
        if (!bad[i].want)
            TAP_OK(rc == 0, "8 levels of the last layer's 128: %s", rc ? e.msg : "ok");
        else
            TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, bad[i].want), "refused: %s", e.msg);
    }
}

/* ------------------------------------------------------------ layout */
static void test_layout(void)
{
    static const hope_spec specs[] = {
        {"hope cosine tied", "cosine", 32, 4, 4, 4, 96, 48, 1, 3, "[1, 4, 16]", 16, 0.02},
        {"hope uniform untied gqa", "uniform", 32, 3, 4, 2, 96, 48, 0, 2, "[1, 8]", 16, 0.02},
    };
    for (size_t si = 0; si < 2; si++) {
        const hope_spec *s = &specs[si];
        eng_config c;
        tlm_err e = {0};
        eng_model *m;
        eng_account a;
        if (tm_tap_layout(s->name, hs_config(s, 16, &c, &e), &c, BE, 2, 16, &m, &a, &e))
            continue;
        /* the Transformer of the same shape: the same MLP parameters, k-1 more norms per layer */
        eng_config tc = c;
        tc.arch = ENG_ARCH_TRANSFORMER;
        eng_account ta;
        eng_account_compute(&tc, &ta, &e);
        TAP_OK(a.mlp == ta.mlp && a.attn == ta.attn && a.norm == ta.norm + (int64_t)s->L * (s->levels - 1) * s->d &&
                   a.flops_fwd == ta.flops_fwd,
               "%s: MLP %lld = the Transformer's, norms + %d x %d x %d", s->name, (long long)a.mlp, s->L,
               s->levels - 1, s->d);
        eng_config uc = c;
        uc.taper.schedule = ENG_TAPER_UNIFORM;
        eng_account ua;
        eng_account_compute(&uc, &ua, &e);
        TAP_OK(ua.total == a.total, "%s: uniform and tapered have the same parameter count", s->name);
        const int *w = eng_model_widths(m);
        int ok = 1;
        char name[96];
        for (int i = 0; i < eng_model_n_tensors(m); i++) {
            const eng_tensor_info *t = eng_model_tensor(m, i);
            ok &= !strstr(t->name, "post_attention_layernorm") && !strstr(t->name, "mlp.up_proj");
        }
        for (int l = 0; l < s->L; l++) {
            int sum = 0;
            for (int i = 0; i < s->levels; i++) {
                snprintf(name, sizeof name, "model.layers.%d.mlp.levels.%d.up_proj.weight", l, i);
                const eng_tensor_info *up = eng_model_find_tensor(m, name);
                snprintf(name, sizeof name, "model.layers.%d.mlp.levels.%d.gate_proj.weight", l, i);
                const eng_tensor_info *g = eng_model_find_tensor(m, name);
                snprintf(name, sizeof name, "model.layers.%d.mlp.levels.%d.down_proj.weight", l, i);
                const eng_tensor_info *dn = eng_model_find_tensor(m, name);
                snprintf(name, sizeof name, "model.layers.%d.mlp.levels.%d.norm.weight", l, i);
                const eng_tensor_info *nm = eng_model_find_tensor(m, name);
                ok &= up && g && dn && nm && up->shape[0] == a.layer[l].level_d_ff[i] && up->shape[1] == s->d &&
                      g->shape[0] == up->shape[0] && dn->shape[0] == s->d && dn->shape[1] == up->shape[0] &&
                      nm->ndim == 1 && nm->shape[0] == s->d && g->offset + g->numel == up->offset;
                sum += up ? (int)up->shape[0] : 0;
            }
            ok &= sum == w[l] && a.layer[l].n_levels == s->levels;
        }
        TAP_OK(ok, "%s: model.layers.N.mlp.levels.I.{norm,gate_proj,up_proj,down_proj}, widths sum to d_ff %d..%d",
               s->name, w[0], w[s->L - 1]);
        int slow = 0, xok = 1;
        size_t xf = 0;
        for (int i = 0; i < eng_model_n_optim_extra(m); i++) {
            const eng_tensor_info *x = eng_model_optim_extra(m, i);
            char base[96];
            snprintf(base, sizeof base, "%s", x->name);
            char *dot = strstr(base, ".grad_acc");
            if (dot)
                *dot = '\0';
            const eng_tensor_info *p = eng_model_find_tensor(m, base);
            xok &= dot && p && p->numel == x->numel && x->offset == xf && !strstr(base, "levels.0.");
            xf += x->numel;
            slow++;
        }
        TAP_OK(xok && slow == 4 * s->L * (s->levels - 1) && xf == eng_model_optim_extra_floats(m),
               "%s: %d accumulators (<name>.grad_acc) for the slow levels' tensors, %zu floats", s->name, slow, xf);
        eng_model_free(m);
    }
}

/* ------------------------------------------------------------ one level = Transformer */
static void test_transformer_equivalence(void)
{
    enum { B = 2, T = 12, STEPS = 5 };
    const tm_spec ts = {"transformer", "transformer", "", "cosine", 32, 3, 4, 2, 64, 40, 0, 0.05};
    const hope_spec hs = {"hope 1 level", "cosine", 32, 3, 4, 2, 64, 40, 0, 1, "[1]", 16, 0.05};
    eng_config tc, hc;
    tlm_err e = {0};
    eng_model *tm, *hm;
    if (tm_config(&ts, T, &tc, &e) || hs_config(&hs, T, &hc, &e) || eng_model_create(&tm, &tc, BE, B, T, &e) ||
        eng_model_create(&hm, &hc, BE, B, T, &e)) {
        TAP_OK(0, "one level: build: %s", e.msg);
        return;
    }
    eng_model_init_weights(tm, 5);
    eng_model_init_weights(hm, 5);
    size_t n = eng_model_slab_floats(tm);
    TAP_OK(eng_model_param_count(tm) == eng_model_param_count(hm) && n == eng_model_slab_floats(hm),
           "one level: %zu parameters, as the Transformer, in a slab as long", eng_model_param_count(tm));
    float *pt = malloc(n * sizeof *pt), *ph = malloc(n * sizeof *ph), *gt = malloc(n * sizeof *gt),
          *gh = malloc(n * sizeof *gh);
    eng_model_get_params(tm, pt);
    /* the Transformer's weights under the level names */
    int mapped = 1;
    for (int i = 0; i < eng_model_n_tensors(tm); i++) {
        const eng_tensor_info *t = eng_model_tensor(tm, i);
        char name[160];
        int l;
        char rest[64];
        snprintf(name, sizeof name, "%s", t->name);
        if (sscanf(t->name, "model.layers.%d.post_attention_layernorm.%63s", &l, rest) == 2)
            snprintf(name, sizeof name, "model.layers.%d.mlp.levels.0.norm.%s", l, rest);
        else if (sscanf(t->name, "model.layers.%d.mlp.%63s", &l, rest) == 2)
            snprintf(name, sizeof name, "model.layers.%d.mlp.levels.0.%s", l, rest);
        const eng_tensor_info *h = eng_model_find_tensor(hm, name);
        mapped &= h && h->numel == t->numel;
        if (h)
            memcpy(ph + h->offset, pt + t->offset, t->numel * sizeof *ph);
    }
    eng_model_set_params(hm, ph);
    int32_t tok[B * T], tgt[B * T];
    tm_batch(4, B, T, 40, tok, tgt);
    int same = mapped, rc = 0;
    double lt[STEPS], lh[STEPS];
    for (int st = 0; st < STEPS && !rc; st++) {
        eng_model_zero_grads(tm);
        eng_model_zero_grads(hm);
        rc = eng_model_forward(tm, tok, tgt, B, T, &lt[st], NULL, &e) || eng_model_backward(tm, 1.0f, &e) ||
             eng_model_forward(hm, tok, tgt, B, T, &lh[st], NULL, &e) || eng_model_backward(hm, 1.0f, &e);
        double nt = eng_model_grad_norm(tm), nh = eng_model_grad_norm(hm);
        same &= lt[st] == lh[st] && nt == nh;
        if (st == 0) {
            eng_model_get_grads(tm, gt);
            eng_model_get_grads(hm, gh);
            for (int i = 0; i < eng_model_n_tensors(tm); i++) {
                const eng_tensor_info *t = eng_model_tensor(tm, i);
                const eng_tensor_info *h = eng_model_tensor(hm, i); /* same order: norm, gate, up, down */
                same &= !memcmp(gt + t->offset, gh + h->offset, t->numel * sizeof *gt);
            }
        }
        eng_adamw opt = {3e-3, 0.9, 0.95, 1e-8, 0.1, st + 1, nt > 1.0 ? 1.0 / nt : 1.0};
        rc = rc || eng_model_step(tm, &opt, &e) || eng_model_step(hm, &opt, &e);
    }
    TAP_OK(rc == 0 && same, "one level with chunk 1 is the Transformer: bit-identical gradients and %d losses "
           "(%.6f -> %.6f)", STEPS, lt[0], lt[STEPS - 1]);
    free(pt);
    free(ph);
    free(gt);
    free(gh);
    eng_model_free(tm);
    eng_model_free(hm);
}

/* ------------------------------------------------------------ finite differences */
#define FD_B 2
#define FD_T 9

static int level_tensor(const char *name)
{
    return strstr(name, ".levels.") != NULL;
}

static void fd_check(const hope_spec *s)
{
    eng_config c;
    tlm_err e = {0};
    static const float h[] = {2e-3f};
    tm_tap_fd(s->name, hs_config(s, FD_T, &c, &e), &c, BE, FD_B, FD_T, &(tm_fd){h, 1, 777, level_tensor}, "level");
}

/* ------------------------------------------------------------ the multi-frequency optimizer */
enum { OB = 2, OT = 16 };
static const hope_spec opt_spec = {"hope chunks 1, 2, 4", "cosine", 32, 2, 4, 4, 96, 48, 0, 3, "[1, 2, 4]", 16,
                                   0.1};
#define LR 4e-3
#define WD 0.1
#define B1 0.9
#define B2 0.95
#define EPS 1e-8
#define CLIP 0.5

/* One training step on a batch that depends on the step; returns the loss
 * and, when wanted, the gradients and clipping factor used. */
static int train_step(eng_model *m, int64_t t, double *loss, float *grads, double *scale, tlm_err *e)
{
    int32_t tok[OB * OT], tgt[OB * OT];
    tm_batch(100 + (uint64_t)t, OB, OT, opt_spec.V, tok, tgt);
    eng_model_zero_grads(m);
    int rc = eng_model_forward(m, tok, tgt, OB, OT, loss, NULL, e) || eng_model_backward(m, 1.0f, e);
    if (rc)
        return -1;
    double gn = eng_model_grad_norm(m);
    eng_adamw opt = {LR, B1, B2, EPS, WD, t, gn > CLIP ? CLIP / gn : 1.0};
    if (grads)
        eng_model_get_grads(m, grads);
    if (scale)
        *scale = opt.grad_scale;
    return eng_model_step(m, &opt, e);
}

static int create_opt_model(eng_model **m, tlm_err *e)
{
    eng_config c;
    int rc = hs_config(&opt_spec, OT, &c, e);
    if (!rc)
        rc = eng_model_create(m, &c, BE, OB, OT, e);
    if (!rc)
        eng_model_init_weights(*m, 21);
    return rc;
}

static void test_schedule(void)
{
    eng_model *m;
    tlm_err e = {0};
    if (create_opt_model(&m, &e)) {
        TAP_OK(0, "schedule: build: %s", e.msg);
        return;
    }
    size_t n = eng_model_slab_floats(m), nx = eng_model_optim_extra_floats(m);
    float *p0 = malloc(n * sizeof *p0), *p1 = malloc(n * sizeof *p1), *g = malloc(n * sizeof *g);
    float *x = malloc(nx * sizeof *x);
    double *gsum = calloc(n, sizeof *gsum);
    const int C[3] = {1, 2, 4};
    int changes_ok = 1, acc_ok = 1, rc = 0;
    double worst_ref = 0;
    int n_ref = 0;
    for (int64_t t = 1; t <= 8 && !rc; t++) {
        double loss, s;
        eng_model_get_params(m, p0);
        rc = train_step(m, t, &loss, g, &s, &e);
        eng_model_get_params(m, p1);
        eng_model_get_optim_extra(m, x);
        for (int i = 0; i < eng_model_n_tensors(m); i++) {
            const eng_tensor_info *ti = eng_model_tensor(m, i);
            int lv = -1;
            const char *q = strstr(ti->name, ".levels.");
            if (q)
                lv = q[8] - '0';
            int period = lv >= 0 ? C[lv] : 1;
            int changed = memcmp(p0 + ti->offset, p1 + ti->offset, ti->numel * sizeof *p0) != 0;
            changes_ok &= changed == (t % period == 0);
            if (period > 1)
                for (size_t j = 0; j < ti->numel; j++)
                    gsum[ti->offset + j] += s * g[ti->offset + j];
            /* the level's first update (t == C): AdamW from zero moments on the mean, bias correction 1 */
            if (period > 1 && t == period) {
                for (size_t j = 0; j < ti->numel; j++) {
                    double gm = gsum[ti->offset + j] / period, mo = (1 - B1) * gm, v = (1 - B2) * gm * gm;
                    double wd = ti->decay ? WD : 0.0;
                    double want = p0[ti->offset + j] * (1 - LR * wd) - LR * (mo / (1 - B1)) / (sqrt(v / (1 - B2)) + EPS);
                    worst_ref = fmax(worst_ref, fabs(want - p1[ti->offset + j]) / LR);
                    n_ref++;
                }
            }
            if (period > 1 && t % period == 0)
                for (size_t j = 0; j < ti->numel; j++)
                    gsum[ti->offset + j] = 0;
        }
        for (int i = 0; i < eng_model_n_optim_extra(m); i++) {
            const eng_tensor_info *xi = eng_model_optim_extra(m, i);
            int lv = strstr(xi->name, ".levels.")[8] - '0';
            int zero = 1;
            for (size_t j = 0; j < xi->numel; j++)
                zero &= x[xi->offset + j] == 0.0f;
            acc_ok &= zero == (t % C[lv] == 0);
        }
    }
    TAP_OK(rc == 0 && changes_ok, "chunks 1, 2, 4 over 8 steps: each level's weights change exactly at steps that are "
           "multiples of its chunk, the attention's every step");
    TAP_OK(acc_ok, "a slow level's accumulator holds gradients between its updates and is empty after one");
    TAP_OK(n_ref > 0 && worst_ref < 1e-4, "first update of the slow levels (%d weights): AdamW on the mean of the "
           "clipped gradients, bias correction by the level's own count: max |d| %.2e x lr (bound 1e-4)",
           n_ref, worst_ref);
    free(p0);
    free(p1);
    free(g);
    free(x);
    free(gsum);
    eng_model_free(m);
}

/* Interrupt at step 6 (mid-chunk for C = 4), restore into a fresh model,
 * continue to 12: bit-identical to the uninterrupted run. */
static void test_state_resume(void)
{
    enum { K = 6, END = 12 };
    eng_model *a, *b, *c;
    tlm_err e = {0};
    if (create_opt_model(&a, &e) || create_opt_model(&b, &e) || create_opt_model(&c, &e)) {
        TAP_OK(0, "resume: build: %s", e.msg);
        return;
    }
    size_t n = eng_model_slab_floats(a), nx = eng_model_optim_extra_floats(a);
    float *p = malloc(n * sizeof *p), *mo = malloc(n * sizeof *mo), *v = malloc(n * sizeof *v),
          *x = malloc(nx * sizeof *x), *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
    double la[END + 1], lb[END + 1], lc[END + 1];
    int rc = 0;
    for (int64_t t = 1; t <= END && !rc; t++) {
        rc = train_step(a, t, &la[t], NULL, NULL, &e);
        if (t == K) {
            eng_model_get_params(a, p);
            eng_model_get_optim(a, mo, v);
            eng_model_get_optim_extra(a, x);
        }
    }
    int nonzero = 0;
    for (size_t j = 0; j < nx; j++)
        nonzero |= x[j] != 0;
    eng_model_set_params(b, p);
    eng_model_set_optim(b, mo, v);
    eng_model_set_optim_extra(b, x);
    eng_model_set_params(c, p);
    eng_model_set_optim(c, mo, v); /* accumulators left empty */
    for (int64_t t = K + 1; t <= END && !rc; t++)
        rc = train_step(b, t, &lb[t], NULL, NULL, &e) || train_step(c, t, &lc[t], NULL, NULL, &e);
    eng_model_get_params(a, pa);
    eng_model_get_params(b, pb);
    TAP_OK(rc == 0 && nonzero && !memcmp(la + K + 1, lb + K + 1, (END - K) * sizeof *la) && !memcmp(pa, pb, n * 4),
           "weights + moments + accumulators restored at step %d (mid-chunk): steps %d..%d and the final weights "
           "bit-identical", K, K + 1, END);
    eng_model_get_params(c, pb);
    TAP_OK(memcmp(pa, pb, n * 4) != 0, "without the accumulators the run differs (they are state)");
    free(p);
    free(mo);
    free(v);
    free(x);
    free(pa);
    free(pb);
    eng_model_free(a);
    eng_model_free(b);
    eng_model_free(c);
}

/* ------------------------------------------------------------ determinism, learning */
static int run(const hope_spec *s, int steps, double *losses, int threads)
{
    enum { Bm = 8, Tm = 32 };
    eng_config c;
    tlm_err e = {0};
    eng_model *m;
    int th = eng_backend_cpu_threads(BE);
    if (hs_config(s, Tm, &c, &e) || eng_model_create(&m, &c, BE, Bm, Tm, &e))
        return -1;
    eng_backend_cpu_set_threads(BE, threads);
    eng_model_init_weights(m, 11);
    static int32_t tok[Bm * Tm], tgt[Bm * Tm];
    int rc = 0;
    for (int st = 0; st < steps && !rc; st++) {
        for (int i = 0; i < Bm * Tm; i++) { /* token t+1 = (3 token t + 1) mod V */
            int b = i / Tm, t = i % Tm, x = (7 * b + 5 * st + 1) % s->V;
            for (int u = 0; u < t; u++)
                x = (3 * x + 1) % s->V;
            tok[i] = x;
            tgt[i] = (3 * x + 1) % s->V;
        }
        eng_model_zero_grads(m);
        rc = eng_model_forward(m, tok, tgt, Bm, Tm, &losses[st], NULL, &e) || eng_model_backward(m, 1.0f, &e);
        double gn = eng_model_grad_norm(m);
        eng_adamw opt = {3e-3, 0.9, 0.95, 1e-8, 0.1, st + 1, gn > 1.0 ? 1.0 / gn : 1.0};
        rc = rc || eng_model_step(m, &opt, &e);
    }
    eng_backend_cpu_set_threads(BE, th);
    eng_model_free(m);
    return rc;
}

static void test_determinism(void)
{
    enum { STEPS = 40 };
    static const hope_spec s = {"hope learns", "cosine", 64, 3, 4, 4, 192, 64, 0, 3, "[1, 4, 16]", 16, 0.02};
    double a[STEPS], b[STEPS], c[STEPS];
    int th = eng_backend_cpu_threads(BE);
    int rc = run(&s, STEPS, a, th) | run(&s, STEPS, b, th) | run(&s, STEPS, c, 1);
    TAP_OK(rc == 0 && !memcmp(a, b, sizeof a), "same seed, %d threads: bit-identical %d losses", th, STEPS);
    double d = tap_max_rel(a, c, STEPS);
    TAP_OK(rc == 0 && d <= TAP_CROSS_RUN_TOL, "1 thread's %d losses within %.0e of %d threads' (max rel %.2e)", STEPS,
           TAP_CROSS_RUN_TOL, th, d);
    TAP_OK(a[STEPS - 1] < 0.5 * a[0], "a tiny hope_attn learns with chunks 1, 4, 16: loss %.3f -> %.3f", a[0],
           a[STEPS - 1]);
}

int main(int argc, char **argv)
{
    if (!(BE = tm_cpu_backend(argc, argv)))
        return 1;
    test_split();
    test_config();
    test_layout();
    test_transformer_equivalence();
    static const hope_spec fd[] = {
        /* the CMS block alone: one layer, four levels of 16 */
        {"block: 1 layer, 4 levels", "uniform", 16, 1, 2, 2, 64, 32, 1, 4, "[1, 2, 4, 8]", 16, 0.3},
        {"hope cosine tied, 3 levels", "cosine", 16, 4, 2, 2, 64, 32, 1, 3, "[1, 4, 16]", 8, 0.3},
        {"hope uniform untied gqa, 2 levels", "uniform", 16, 2, 4, 2, 48, 32, 0, 2, "[1, 4]", 8, 0.3},
        {"hope cosine untied, 3 unequal levels", "cosine", 16, 3, 2, 1, 80, 32, 0, 3, "[1, 2, 4]", 8, 0.3},
    };
    for (size_t i = 0; i < sizeof fd / sizeof fd[0]; i++)
        fd_check(&fd[i]);
    test_schedule();
    test_state_resume();
    test_determinism();
    return tap_done();
}
