/* describe.c: builds the --describe document with Jansson. */
#include "worker/describe.h"

#include <jansson.h>
#include <stdlib.h>

#include "engine/config/account.h"
#include "engine/config/arch.h"

static json_t *account_json(const eng_account *a)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "total", (json_int_t)a->total, "embedding",
                     (json_int_t)a->embedding, "non_embedding", (json_int_t)a->non_embedding, "mlp",
                     (json_int_t)a->mlp, "attention", (json_int_t)a->attn, "norm", (json_int_t)a->norm, "extra",
                     (json_int_t)a->extra, "mlp_share", a->mlp_share);
}

int wrk_describe(const eng_config *cfg, FILE *out, eng_err *e)
{
    eng_account acc, uni;
    int rc = eng_account_compute(cfg, &acc, e);
    if (rc)
        return rc;
    eng_config u = *cfg;
    u.taper.schedule = ENG_TAPER_UNIFORM;
    if ((rc = eng_account_compute(&u, &uni, e)))
        return rc;

    char *full = eng_config_json(cfg);
    char id[65];
    eng_config_id(cfg, id);
    json_error_t jerr;
    json_t *cj = full ? json_loads(full, 0, &jerr) : NULL;
    free(full);
    if (!cj)
        return eng_errf(e, ENG_EINTERNAL, "describe: cannot re-read the resolved config");

    json_t *widths = json_array(), *layers = json_array();
    long sum = 0;
    for (int l = 0; l < acc.n_layers; l++) {
        const eng_layer_account *la = &acc.layer[l];
        sum += la->d_ff;
        json_array_append_new(widths, json_integer(la->d_ff));
        json_t *lj = json_pack("{s:i, s:i, s:f, s:I, s:I, s:I, s:I, s:f}", "layer", l, "d_ff", la->d_ff, "ratio",
                               (double)la->d_ff / cfg->model.d_ff, "params", (json_int_t)la->total, "mlp",
                               (json_int_t)la->mlp, "attention", (json_int_t)la->attn, "extra", (json_int_t)la->extra,
                               "flops_fwd_per_token", la->flops_fwd);
        if (lj && la->n_levels) { /* hope_attn: the CMS levels' widths and update periods, fastest first */
            json_t *lv = json_array();
            for (int i = 0; i < la->n_levels; i++)
                json_array_append_new(lv, json_pack("{s:i, s:i, s:I}", "d_ff", la->level_d_ff[i], "chunk",
                                                    la->level_chunk[i], "params",
                                                    (json_int_t)(3 * (int64_t)cfg->model.d_model * la->level_d_ff[i] +
                                                                 cfg->model.d_model)));
            json_object_set_new(lj, "levels", lv);
        }
        if (lj && cfg->arch == ENG_ARCH_TITANS) { /* the layer's extra, by part (docs/titans.md) */
            eng_titans_parts tp;
            eng_titans_parts_of(cfg, &tp);
            json_object_set_new(lj, "titans",
                                json_pack("{s:I, s:I, s:I, s:I, s:f}", "memory", (json_int_t)tp.memory, "gates",
                                          (json_int_t)tp.gates, "persistent", (json_int_t)tp.persistent,
                                          "attention_norm", (json_int_t)tp.attn_norm, "memory_flops_fwd_per_token",
                                          tp.memory_flops));
        }
        json_array_append_new(layers, lj);
    }
    json_t *doc = json_pack(
        "{s:s, s:o, s:{s:s, s:o, s:I, s:I, s:b}, s:o, s:o, s:{s:f, s:f, s:f}, s:o}", "id", id, "config", cj,
        "widths", "schedule", eng_schedule_name(cfg->taper.schedule), "d_ff", widths, "sum", (json_int_t)sum,
        "budget", (json_int_t)cfg->model.layers * cfg->model.d_ff, "exact",
        sum == (long)cfg->model.layers * cfg->model.d_ff, "params", account_json(&acc), "uniform_params",
        account_json(&uni), "flops_per_token", "train", acc.flops_train, "forward", acc.flops_fwd, "attention",
        acc.flops_attention, "layers", layers);
    if (!doc)
        return eng_errf(e, ENG_EINTERNAL, "describe: cannot build the JSON document");
    int bad = json_dumpf(doc, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) || fputc('\n', out) == EOF;
    json_decref(doc);
    if (bad || fflush(out))
        return eng_errf(e, ENG_EIO, "describe: cannot write the output");
    return 0;
}
