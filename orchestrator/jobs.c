/* jobs.c: the in-memory job table and its key index (see jobs.h). */
#include "orchestrator/jobs.h"

#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

int orc_status_from_name(const char *name) { return db_job_status_find(name); }

/* Keys are SHA-256 hex: their first 16 digits are already a good hash. */
static uint64_t key_hash(const char *key)
{
    uint64_t h = 0;
    for (int i = 0; i < 16 && key[i]; i++) {
        char c = key[i];
        h = h << 4 | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return h;
}

static int rehash(orc_jobs *t, size_t cap)
{
    uint32_t *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = key_hash(t->v[i].key) & (cap - 1);
        while (slot[j])
            j = (j + 1) & (cap - 1);
        slot[j] = (uint32_t)(i + 1);
    }
    free(t->slot);
    t->slot = slot;
    t->slot_cap = cap;
    return 0;
}

/* Index or -1. */
static long orc_jobs_find(const orc_jobs *t, const char *key)
{
    if (!t->slot_cap)
        return -1;
    size_t j = key_hash(key) & (t->slot_cap - 1);
    while (t->slot[j]) {
        size_t i = t->slot[j] - 1;
        if (!strcmp(t->v[i].key, key))
            return (long)i;
        j = (j + 1) & (t->slot_cap - 1);
    }
    return -1;
}

int orc_jobs_add(orc_jobs *t, const char *key, size_t *idx, int *added)
{
    long found = orc_jobs_find(t, key);
    if (found >= 0) {
        *idx = (size_t)found;
        *added = 0;
        return 0;
    }
    if (TLM_GROW(t->v, t->cap, t->n + 1, 256))
        return -1;
    if (2 * (t->n + 1) > t->slot_cap && rehash(t, t->slot_cap ? t->slot_cap * 2 : 1024))
        return -1;
    orc_job *j = &t->v[t->n];
    memset(j, 0, sizeof *j);
    memcpy(j->key, key, 64);
    j->key[64] = '\0';
    size_t s = key_hash(key) & (t->slot_cap - 1);
    while (t->slot[s])
        s = (s + 1) & (t->slot_cap - 1);
    t->slot[s] = (uint32_t)(t->n + 1);
    *idx = t->n++;
    *added = 1;
    return 0;
}

void orc_jobs_clear(orc_jobs *t)
{
    free(t->v);
    free(t->slot);
    memset(t, 0, sizeof *t);
}
