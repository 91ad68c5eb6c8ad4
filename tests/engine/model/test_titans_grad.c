/* test_titans_grad.c: whole tiny Titans models against finite differences
 * of the fp32 model (as test_grad_model does for the other architectures):
 * both variants (MAG, MAL), a tapered (cosine 1.5 -> 0.5) and a uniform
 * schedule, memory depth 1 and 2, chunk sizes that divide T = 9 (3), that
 * do not (4, 5), b = 1 and one chunk longer than T, sliding windows shorter
 * and longer than T, with and without persistent entries, grouped KV.
 *
 * 4-point central stencil (truncation O(h^4)), init_std 0.3 and max_lr
 * 0.3-0.5 so that gradients are O(0.1) and the memory moves a lot within a
 * sequence (its second-order terms matter).  The memory makes the loss
 * nonlinear enough that no single step suits every coordinate in fp32 (the
 * small gate-bias gradients want h >= 5e-3 against rounding noise, the
 * b = 1 recurrence h <= 2e-3 against truncation): each coordinate takes
 * the closer of the h = 2e-3 and h = 5e-3 estimates (a wrong gradient
 * matches neither).  Checked per tensor:
 * the 4 largest-gradient coordinates and 4 random ones.  Asserted: the
 * norm-wise relative error over all checked coordinates, and per tensor the
 * largest error relative to that tensor's gradient scale. */
#include <math.h>
#include <stdlib.h>

#include "engine/model/model.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/tap.h"
#include "tests/lib/model_util.h"
#include "tests/lib/titans_util.h"

static eng_backend *BE; /* the CPU backend every model here runs on */

#define B 2
#define T 9

/* the tensors titans adds to the Transformer's */
static int titans_only(const char *name)
{
    return strstr(name, "memory.") != NULL || strstr(name, "persistent") != NULL ||
           strstr(name, "self_attn.norm") != NULL;
}

static void check(const titans_spec *s)
{
    eng_config c;
    tlm_err e = {0};
    static const float h[] = {2e-3f, 5e-3f};
    tm_tap_fd(s->name, ts_config(s, T, &c, &e), &c, BE, B, T, &(tm_fd){h, 2, 12345, titans_only}, "Titans-only");
}

int main(int argc, char **argv)
{
    if (!(BE = tm_cpu_backend(argc, argv)))
        return 1;
    /* name, variant, schedule, d, L, H, kv, dff, V, tied, window, persistent, chunk, depth, hidden, max_lr, std */
    static const titans_spec specs[] = {
        {"mag cosine tied, chunk 3 | 9, window 4 < T, 2 persistent, depth 2", "mag", "cosine", 16, 4, 2, 2, 32, 32, 1,
         4, 2, 3, 2, 0, 0.5, 0.3},
        {"mag cosine untied gqa, chunk 4 (does not divide 9), window 16 > T, depth 1", "mag", "cosine", 16, 4, 4, 2,
         32, 32, 0, 16, 0, 4, 1, 0, 0.5, 0.3},
        {"mal cosine, b = 1, window 3, 3 persistent, depth 2 hidden 12", "mal", "cosine", 16, 4, 2, 2, 32, 32, 1, 3,
         3, 1, 2, 12, 0.3, 0.3},
        {"mal uniform gqa, chunk 5, window 20 > T, 1 persistent, depth 1", "mal", "uniform", 16, 2, 4, 2, 32, 32, 0,
         20, 1, 5, 1, 0, 0.5, 0.3},
        {"mag uniform, one chunk longer than T (16), window 1, 1 persistent, depth 2", "mag", "uniform", 16, 2, 2, 1,
         32, 32, 1, 1, 1, 16, 2, 0, 0.5, 0.3},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        check(&specs[i]);
    return tap_done();
}
