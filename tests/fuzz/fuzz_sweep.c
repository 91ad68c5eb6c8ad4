/* fuzz_sweep.c: libFuzzer target for sweep files: parse (libyaml through
 * common/cfgtree.c, then sweep.c's checks) and expand, resolving each job
 * with the engine's config code, stopping after a few hundred jobs so a
 * large grid stays quick.  Errors are expected; crashes and sanitizer
 * reports are bugs.  Built by tests/fuzz/run.sh; replay.c runs the corpus
 * in `make check`. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "orchestrator/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_job(void *ctx, const orc_sweep_job *j, tlm_err *e)
{
    size_t *n = ctx;
    volatile size_t sink = strlen(j->key) + strlen(j->axes);
    (void)sink;
    if (++*n >= 300)
        return tlm_errf(e, TLM_ECONFIG, "enough");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    orc_sweep *s = NULL;
    tlm_err e;
    if (orc_sweep_parse("fuzz.yaml", (const char *)data, size, &s, &e) == 0) {
        size_t n = 0;
        orc_sweep_expand(s, count_job, &n, NULL, NULL, &e);
        orc_sweep_free(s);
    }
    return 0;
}
