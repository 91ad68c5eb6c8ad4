/* suites.c: the registry of evaluation suites and tasks (suites.h). */
#include "engine/config/suites.h"

#include <string.h>

#include "common/err.h"

#define TLM_XX_(id, name) [ENG_SUITE_##id] = (name),
const char *const eng_suite_names[ENG_SUITE_COUNT] = {ENG_SUITE_MAP(TLM_XX_)};
#undef TLM_XX_
#define TLM_XX_(id, name) [ENG_CS_##id] = (name),
const char *const eng_commonsense_names[ENG_CS_COUNT] = {ENG_COMMONSENSE_MAP(TLM_XX_)};
#undef TLM_XX_
#define TLM_XX_(id, name) [ENG_NIAH_##id] = (name),
const char *const eng_niah_names[ENG_NIAH_COUNT] = {ENG_NIAH_MAP(TLM_XX_)};
#undef TLM_XX_

int eng_name_find(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

const char *eng_names_join(const char *const *names, int n, char *out, size_t cap)
{
    size_t len = 0;
    if (cap)
        out[0] = '\0';
    for (int i = 0; i < n && len < cap; i++) {
        tlm_msg_printf(out + len, cap - len, "%s%s", i ? ", " : "", names[i]);
        len += strlen(out + len);
    }
    return out;
}
