/* parity_hope_dump.c: the engine's side of the Hope-attention PyTorch
 * parity test (tests/parity/parity_hope.py runs it).  For each tiny hope_attn
 * variant it writes
 *   DIR/<variant>.model.safetensors  the initial weights (HF names,
 *                                    model.layers.N.mlp.levels.I.*) and, in
 *                                    the metadata, the shape, the levels'
 *                                    chunk sizes and the optimizer settings
 *                                    as JSON ("tlm_parity")
 *   DIR/<variant>.out.safetensors    tokens, targets (I32, (STEPS, B, T):
 *                                    a new batch every step), the step-0
 *                                    loss (1) and logits (B, T, V),
 *                                    "grad.<name>" for every parameter at
 *                                    step 0, "losses" (STEPS) of STEPS AdamW
 *                                    steps with clipping and the levels'
 *                                    multi-frequency updates, and
 *                                    "final.<name>" the weights after them
 * Usage: parity_hope_dump DIR */
#include "tests/lib/hope_util.h"
#include "tests/parity/dump_util.h"
#include "tests/lib/model_util.h"

static const hope_spec specs[] = {
    {"hope_cosine_tied_c124", "cosine", 32, 4, 4, 4, 96, 64, 1, 3, "[1, 2, 4]", 16, 0.1},
    {"hope_uniform_untied_gqa_c124", "uniform", 32, 3, 4, 2, 96, 64, 0, 3, "[1, 2, 4]", 16, 0.1},
    {"hope_cosine_untied_4levels_c2124", "cosine", 32, 3, 4, 4, 112, 64, 0, 4, "[2, 1, 2, 4]", 8, 0.1},
};

static void meta(eng_model *m, const eng_config *c, const void *spec, char *buf, size_t cap)
{
    (void)m;
    const hope_spec *s = spec;
    char chunks[128] = "";
    for (int l = 0; l < c->model.hope_levels; l++)
        snprintf(chunks + strlen(chunks), sizeof chunks - strlen(chunks), "%s%d", l ? "," : "",
                 (int)c->model.hope_chunks[l]);
    snprintf(buf, cap,
             "{\"arch\":\"hope_attn\",\"d\":%d,\"layers\":%d,\"heads\":%d,\"kv_heads\":%d,\"vocab\":%d,"
             "\"tied\":%d,\"norm_eps\":%.17g,\"rope_theta\":%.17g,\"levels\":%d,\"chunks\":[%s]," PD_RECIPE_FMT,
             s->d, s->L, s->H, s->kv, s->V, s->tied, c->model.norm_eps, c->model.rope_theta, c->model.hope_levels,
             chunks, PD_RECIPE_ARGS);
}

static int config(const void *row, eng_config *c, tlm_err *e) { return hs_config(row, PD_T, c, e); }

/* a batch per step, and the final weights: the levels update at their own steps */
int main(int argc, char **argv)
{
    static const pd_dumper d = {"parity_hope_dump", specs, sizeof specs / sizeof specs[0], sizeof specs[0],
                                config, meta, 2025, 1, 1};
    return pd_main(argc, argv, &d);
}
