/* protocol.c: the event protocol's names by value and by name, and the
 * checkpoints' names in a run folder (protocol.h). */
#include "common/protocol.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const EVENTS[TLM_EV_COUNT] = {
#define TLM_XX_(id, name) [TLM_EV_##id] = (name),
    TLM_EVENT_MAP(TLM_XX_)
#undef TLM_XX_
};

static const char *const PHASES[TLM_PHASE_COUNT] = {
#define TLM_XX_(id, name) [TLM_PHASE_##id] = (name),
    TLM_PHASE_MAP(TLM_XX_)
#undef TLM_XX_
};

static int find(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

const char *tlm_event_name(int ev) { return ev >= 0 && ev < TLM_EV_COUNT ? EVENTS[ev] : "?"; }
int tlm_event_find(const char *name) { return find(EVENTS, TLM_EV_COUNT, name); }
const char *tlm_phase_name(int phase) { return phase >= 0 && phase < TLM_PHASE_COUNT ? PHASES[phase] : "?"; }
int tlm_phase_find(const char *name) { return find(PHASES, TLM_PHASE_COUNT, name); }

void tlm_ckpt_name(int64_t step, char out[TLM_CKPT_NAME_MAX])
{
    snprintf(out, TLM_CKPT_NAME_MAX, TLM_CKPT_PREFIX "%08" PRId64, step);
}

int64_t tlm_ckpt_step_of(const char *name)
{
    const size_t np = sizeof TLM_CKPT_PREFIX - 1;
    if (strncmp(name, TLM_CKPT_PREFIX, np) != 0 || !name[np])
        return -1;
    int64_t v = 0;
    for (const char *p = name + np; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - (*p - '0')) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}
