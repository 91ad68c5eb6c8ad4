/* protocol.c: the event protocol's names by value and by name (protocol.h). */
#include "common/protocol.h"

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
