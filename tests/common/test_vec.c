/* test_vec.c: tlm_grow / TLM_GROW (common/vec.c), which every growable
 * array of the tree now uses: the capacities are the ones the hand-written
 * loops chose (first, then doubling; a jump doubles until it fits), the
 * elements survive, and a size that cannot be had changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "tests/lib/tap.h"

typedef struct {
    int64_t a;
    char name[20];
} item;

int main(void)
{
    uint32_t *ids = NULL;
    size_t n = 0, cap = 0;
    int ok = 1, caps_ok = 1;
    size_t want_cap = 1024;
    for (uint32_t i = 0; i < 5000; i++) {
        if (TLM_GROW(ids, cap, n + 1, 1024)) {
            ok = 0;
            break;
        }
        if (n == want_cap)
            want_cap *= 2;
        caps_ok &= cap == want_cap;
        ids[n++] = i * 7u;
    }
    for (size_t i = 0; ok && i < n; i++)
        ok &= ids[i] == (uint32_t)i * 7u;
    TAP_OK(ok && n == 5000, "5000 pushes keep every element");
    TAP_OK(caps_ok && cap == 8192, "capacity 1024, then doubling (8192 for 5000: %zu)", cap);

    uint32_t *before = ids;
    TAP_OK(TLM_GROW(ids, cap, 100, 1024) == 0 && ids == before && cap == 8192, "need <= cap: nothing moves");

    char *text = NULL;
    size_t tcap = 0;
    TAP_OK(TLM_GROW(text, tcap, 5000, 256) == 0 && tcap == 8192, "a jump from empty: 256 doubled to 8192");
    TAP_OK(TLM_GROW(text, tcap, 8193, 256) == 0 && tcap == 16384, "one past: doubled once");
    free(text);

    item *v = NULL;
    size_t vcap = 0;
    TAP_OK(TLM_GROW(v, vcap, 1, 16) == 0 && vcap == 16, "a struct array starts at first (16)");
    strcpy(v[0].name, "kept");
    v[0].a = -5;
    TAP_OK(TLM_GROW(v, vcap, 17, 16) == 0 && vcap == 32 && v[0].a == -5 && !strcmp(v[0].name, "kept"),
           "structs survive the move");

    item *keep = v;
    size_t keep_cap = vcap;
    TAP_OK(TLM_GROW(v, vcap, SIZE_MAX / 8, 16) == -1 && v == keep && vcap == keep_cap,
           "a size past SIZE_MAX: -1, array and capacity unchanged");
    TAP_OK(tlm_grow(&v, &vcap, (size_t)1 << 62, sizeof *v, 16) == -1 && v == keep && vcap == keep_cap,
           "an element count whose bytes overflow: -1, unchanged");
    TAP_OK(tlm_grow_size(0, 1, 1024) == 1024 && tlm_grow_size(1024, 1025, 1024) == 2048 &&
               tlm_grow_size(256, 5000, 4096) == 8192 && tlm_grow_size(SIZE_MAX / 2 + 2, SIZE_MAX, 1) == SIZE_MAX,
           "tlm_grow_size: the capacity asked for, SIZE_MAX past the top");
    free(v);
    free(ids);
    return tap_done();
}
