/* parity_titans_dump.c: the engine's side of the Titans PyTorch parity
 * test (tests/parity/parity_titans.py runs it).  For each tiny titans variant it
 * writes
 *   DIR/<variant>.model.safetensors  the initial weights (HF names, the
 *                                    Titans tensors under each layer's
 *                                    prefix) and, in the metadata, the
 *                                    model's shape, its Titans settings and
 *                                    the optimizer's as JSON ("tlm_parity")
 *   DIR/<variant>.out.safetensors    tokens, targets (I32, (B, T)), the
 *                                    step-0 loss (1), logits (B, T, V),
 *                                    "grad.<name>" for every parameter, and
 *                                    "losses" (10): the losses of 10 AdamW
 *                                    steps on the same batch, clipping at 1
 * Usage: parity_titans_dump DIR */
#include "tests/parity/dump_util.h"
#include "tests/lib/model_util.h"
#include "tests/lib/titans_util.h"

/* name, variant, schedule, d, L, H, kv, dff, V, tied, window, persistent, chunk, depth, hidden, max_lr, init_std */
static const titans_spec specs[] = {
    {"mag_cosine_tied_chunk4_window6", "mag", "cosine", 32, 3, 4, 4, 64, 64, 1, 6, 2, 4, 2, 0, 0.1, 0.1},
    {"mal_cosine_untied_gqa_depth1_chunk5", "mal", "cosine", 32, 3, 4, 2, 64, 64, 0, 32, 0, 5, 1, 0, 0.1, 0.1},
    {"mag_uniform_gqa_b1_window16_hidden12", "mag", "uniform", 32, 2, 4, 2, 64, 64, 1, 16, 3, 1, 2, 12, 0.1, 0.1},
    {"mal_uniform_chunk3_window4", "mal", "uniform", 32, 2, 2, 2, 64, 64, 0, 4, 1, 3, 2, 0, 0.1, 0.1},
};

static void meta(eng_model *m, const eng_config *c, const void *spec, char *buf, size_t cap)
{
    const titans_spec *s = spec;
    char widths[512];
    pd_widths(m, s->L, widths, sizeof widths);
    const eng_model_cfg *mc = &c->model;
    snprintf(buf, cap,
             "{\"arch\":\"titans\",\"variant\":\"%s\",\"window\":%d,\"persistent\":%d,\"chunk\":%d,"
             "\"mem_depth\":%d,\"mem_hidden\":%d,\"max_lr\":%.17g,\"d\":%d,\"layers\":%d,\"heads\":%d,"
             "\"kv_heads\":%d,\"vocab\":%d,\"tied\":%d,\"norm_eps\":%.17g,\"rope_theta\":%.17g,"
             "\"widths\":[%s]," PD_RECIPE_FMT,
             s->variant, mc->titans_window, mc->titans_persistent, mc->titans_chunk, mc->titans_mem_depth,
             mc->titans_mem_hidden, mc->titans_max_lr, s->d, s->L, s->H, s->kv, s->V, s->tied, mc->norm_eps,
             mc->rope_theta, widths, PD_RECIPE_ARGS);
}

static int config(const void *row, eng_config *c, tlm_err *e) { return ts_config(row, PD_T, c, e); }

int main(int argc, char **argv)
{
    static const pd_dumper d = {"parity_titans_dump", specs, sizeof specs / sizeof specs[0], sizeof specs[0],
                                config, meta, 2024, 0, 0};
    return pd_main(argc, argv, &d);
}
