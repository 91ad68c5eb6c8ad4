/* test_grad_model.c: whole-model gradient check by finite differences, for
 * tiny models of each architecture, tapered (cosine 1.5 -> 0.5) and
 * uniform, tied and untied, grouped and full KV heads.
 *
 * The model runs in fp32, so the numerical derivative uses the 4-point
 * central stencil (truncation O(h^4)) with h = 2e-3 and a large init_std
 * (so gradients are O(0.1) and not buried in fp32 rounding).  Checked per
 * tensor (tests/lib/model_util.h, tm_fd_check): the 4 largest-gradient
 * coordinates and 4 random ones.  Asserted:
 * the norm-wise relative error over all checked coordinates, and per
 * tensor the largest error relative to that tensor's gradient scale. */
#include <math.h>
#include <stdlib.h>

#include "engine/model/model.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/tap.h"
#include "tests/lib/model_util.h"

static eng_backend *BE; /* the CPU backend every model here runs on */

#define B 2
#define T 9

static void check(const tm_spec *s)
{
    eng_config c;
    tlm_err e = {0};
    static const float h[] = {2e-3f};
    tm_tap_fd(s->name, tm_config(s, T, &c, &e), &c, BE, B, T, &(tm_fd){h, 1, 12345, NULL}, NULL);
}

int main(int argc, char **argv)
{
    if (!(BE = tm_cpu_backend(argc, argv)))
        return 1;
    static const tm_spec specs[] = {
        {"transformer cosine tied", "transformer", "", "cosine", 16, 4, 2, 2, 64, 32, 1, 0.3},
        {"transformer uniform untied gqa", "transformer", "", "uniform", 16, 2, 4, 2, 32, 32, 0, 0.3},
        {"gated_attn elementwise cosine untied", "gated_attn", "elementwise", "cosine", 16, 4, 2, 2, 64, 32, 0, 0.3},
        {"gated_attn headwise cosine gqa", "gated_attn", "headwise", "cosine", 16, 4, 4, 2, 64, 32, 1, 0.3},
        {"gated_attn elementwise uniform", "gated_attn", "elementwise", "uniform", 16, 2, 2, 2, 32, 32, 1, 0.3},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        check(&specs[i]);
    return tap_done();
}
