/* parity_dump.c: the engine's side of the PyTorch parity test
 * (tests/parity/parity_torch.py runs it).  For each tiny model variant it writes
 *   DIR/<variant>.model.safetensors  the initial weights (HF names) and, in
 *                                    the metadata, the model's shape and the
 *                                    optimizer settings as JSON ("tlm_parity")
 *   DIR/<variant>.out.safetensors    tokens, targets (I32, (B, T)), the step-0
 *                                    loss (1), logits (B, T, V), "grad.<name>"
 *                                    for every parameter, and "losses" (10):
 *                                    the losses of 10 AdamW steps on the same
 *                                    batch with clipping at 1.0
 * Usage: parity_dump DIR */
#include "tests/parity/dump_util.h"
#include "tests/lib/model_util.h"

static const tm_spec specs[] = {
    {"transformer_cosine_tied", "transformer", "", "cosine", 32, 4, 4, 4, 64, 64, 1, 0.1},
    {"transformer_uniform_untied_gqa", "transformer", "", "uniform", 32, 3, 4, 2, 64, 64, 0, 0.1},
    {"gated_elementwise_cosine", "gated_attn", "elementwise", "cosine", 32, 4, 4, 4, 64, 64, 1, 0.1},
    {"gated_elementwise_uniform", "gated_attn", "elementwise", "uniform", 32, 4, 4, 4, 64, 64, 1, 0.1},
    {"gated_headwise_cosine_untied_gqa", "gated_attn", "headwise", "cosine", 32, 4, 4, 2, 64, 64, 0, 0.1},
};

static void meta(eng_model *m, const eng_config *c, const void *spec, char *buf, size_t cap)
{
    const tm_spec *s = spec;
    char widths[512];
    pd_widths(m, s->L, widths, sizeof widths);
    snprintf(buf, cap,
             "{\"arch\":\"%s\",\"gate\":\"%s\",\"d\":%d,\"layers\":%d,\"heads\":%d,\"kv_heads\":%d,\"vocab\":%d,"
             "\"tied\":%d,\"norm_eps\":%.17g,\"rope_theta\":%.17g,\"widths\":[%s]," PD_RECIPE_FMT,
             s->arch, s->gate, s->d, s->L, s->H, s->kv, s->V, s->tied, c->model.norm_eps, c->model.rope_theta, widths,
             PD_RECIPE_ARGS);
}

static int config(const void *row, eng_config *c, tlm_err *e) { return tm_config(row, PD_T, c, e); }

int main(int argc, char **argv)
{
    static const pd_dumper d = {"parity_dump", specs, sizeof specs / sizeof specs[0], sizeof specs[0],
                                config, meta, 2024, 0, 0};
    return pd_main(argc, argv, &d);
}
