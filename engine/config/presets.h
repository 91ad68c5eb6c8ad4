/* presets.h: named model scales.  A preset fills every model.* field and the
 * training defaults of its scale; any field can still be overridden.  The
 * reasoning behind each shape is in docs/presets.md. */
#ifndef TLM_ENGINE_PRESETS_H
#define TLM_ENGINE_PRESETS_H

#include <stddef.h>
#include <stdint.h>

typedef struct eng_preset {
    const char *name;        /* total parameter count with its tokenizer: "440m" */
    int d_model, layers, heads, kv_heads, d_ff;
    const char *tokenizer;   /* default tokenizer; sets the vocabulary */
    int tied;
    int seq_len;
    int64_t batch_tokens;
    int64_t tokens;          /* default training budget */
    int64_t warmup_tokens;
    int64_t eval_every_tokens;
    int64_t val_tokens;
    const char *why;         /* one line: where the shape comes from */
} eng_preset;

const eng_preset *eng_preset_find(const char *name);
const eng_preset *eng_preset_at(size_t i); /* NULL past the end */

#endif
