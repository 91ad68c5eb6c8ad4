/* protocol.c: the event protocol's names by value and by name, and the
 * checkpoints' names in a run folder (protocol.h). */
#include "common/protocol.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const EVENTS[ENG_EV_COUNT] = {
#define ENG_XX_(id, name) [ENG_EV_##id] = (name),
    ENG_EVENT_MAP(ENG_XX_)
#undef ENG_XX_
};

static const char *const PHASES[ENG_PHASE_COUNT] = {
#define ENG_XX_(id, name) [ENG_PHASE_##id] = (name),
    ENG_PHASE_MAP(ENG_XX_)
#undef ENG_XX_
};

static int find(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

const char *eng_event_name(int ev) { return ev >= 0 && ev < ENG_EV_COUNT ? EVENTS[ev] : "?"; }
int eng_event_find(const char *name) { return find(EVENTS, ENG_EV_COUNT, name); }
const char *eng_phase_name(int phase) { return phase >= 0 && phase < ENG_PHASE_COUNT ? PHASES[phase] : "?"; }
int eng_phase_find(const char *name) { return find(PHASES, ENG_PHASE_COUNT, name); }

void eng_ckpt_name(int64_t step, char out[ENG_CKPT_NAME_MAX])
{
    snprintf(out, ENG_CKPT_NAME_MAX, ENG_CKPT_PREFIX "%08" PRId64, step);
}

int64_t eng_ckpt_step_of(const char *name)
{
    const size_t np = sizeof ENG_CKPT_PREFIX - 1;
    if (strncmp(name, ENG_CKPT_PREFIX, np) != 0 || !name[np])
        return -1;
    int64_t v = 0;
    for (const char *p = name + np; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - (*p - '0')) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}
