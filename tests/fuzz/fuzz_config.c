/* fuzz_config.c: libFuzzer target for job configs: YAML text through
 * cfgtree.c into a resolved eng_config (presets, taper, accounting checks),
 * then the canonical JSON and the config id of what was accepted, which
 * must parse back to the same id.  Refusals are the expected outcome;
 * crashes and sanitizer reports are bugs.  Built by tests/fuzz/run.sh;
 * replay.c runs the corpus in `make check`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfgtree.h"
#include "engine/config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tlm_cfg_node *root;
    tlm_err e;
    if (tlm_cfg_parse_buffer("fuzz.yaml", (const char *)data, size, &root, &e))
        return 0;
    static eng_config cfg, back;
    int rc = eng_config_from_tree(root, &cfg, &e);
    tlm_cfg_free(root);
    if (rc)
        return 0;
    char id[65], id2[65];
    eng_config_id(&cfg, id);
    char *json = eng_config_json(&cfg);
    if (json) {
        /* what a checkpoint stores must read back as the same job */
        if (eng_config_from_json(json, &back, &e))
            __builtin_trap();
        eng_config_id(&back, id2);
        if (strcmp(id, id2))
            __builtin_trap();
        free(json);
    }
    return 0;
}
