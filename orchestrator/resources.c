/* resources.c: a sweep's resources: block and its checks (see resources.h). */
#include "orchestrator/resources.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The keys of a resources: block, one row each: how its value is read
 * and checked, and the field it goes to.  Parsing, the "not given" state
 * (orc_resources_init) and the merge of a sweep's block over the command
 * line's are all made from these rows. */
typedef enum res_kind {
    RES_INT,    /* int in [lo, hi]; -1: not given */
    RES_TIME,   /* sbatch --time (orc_res_check_time); "": not given */
    RES_NAME,   /* a Slurm name (orc_res_check_name); "": not given */
    RES_SBATCH, /* extra[] and n_extra; n_extra -1: not given */
} res_kind;

#define FIELD(m) offsetof(orc_resources, m), sizeof(((orc_resources *)0)->m)
static const struct res_key {
    const char *name;
    res_kind kind;
    size_t off, size;
    int lo, hi;
} KEYS[] = {
    {"gpus", RES_INT, FIELD(gpus), 0, 64},
    {"cpus", RES_INT, FIELD(cpus), 1, 4096},
    {"time", RES_TIME, FIELD(time), 0, 0},
    {"partition", RES_NAME, FIELD(partition), 0, 0},
    {"account", RES_NAME, FIELD(account), 0, 0},
    {"qos", RES_NAME, FIELD(qos), 0, 0},
    {"sbatch", RES_SBATCH, FIELD(extra), 0, 0},
    {"nodes", RES_INT, FIELD(nodes), 1, 4096},
    {"ranks_per_node", RES_INT, FIELD(ranks_per_node), 1, 1024},
};
#define N_KEYS (sizeof KEYS / sizeof KEYS[0])

/* sbatch options tlmd sets itself: another value would break the events
 * file, the adoption after a restart, or the checkpoint before the end. */
static const char *const OURS[] = {"--parsable", "--job-name", "--comment", "--output", "--error", "--open-mode",
                                   "--signal", "--requeue", "--no-requeue", "--wrap", "--array", "--export",
                                   "--chdir", "--gres", "--cpus-per-task", "--time", "--partition", "--account",
                                   "--qos", "--wait", "--test-only", "--nodes", "--ntasks-per-node", "--ntasks"};

void orc_resources_init(orc_resources *r)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < N_KEYS; i++)
        if (KEYS[i].kind == RES_INT)
            *(int *)((char *)r + KEYS[i].off) = -1;
    r->n_extra = -1;
}

int orc_resources_ranks(const orc_resources *r)
{
    return (r->nodes > 0 ? r->nodes : 1) * (r->ranks_per_node > 0 ? r->ranks_per_node : 1);
}

int orc_res_check_name(const char *what, const char *v, tlm_err *e)
{
    size_t n = strlen(v);
    if (!n || n > 63)
        return tlm_errf(e, TLM_ECONFIG, "%s '%.80s': expected 1 to 63 characters", what, v);
    if (v[0] == '-')
        return tlm_errf(e, TLM_ECONFIG, "%s '%.80s': may not start with '-'", what, v);
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return tlm_errf(e, TLM_ECONFIG, "%s '%.80s': expected letters, digits, '_', '-' and '.' only", what, v);
    }
    return 0;
}

/* Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S (digits only). */
int orc_res_check_time(const char *what, const char *v, tlm_err *e)
{
    size_t n = strlen(v);
    int groups = 1, day = 0, digits = 0, ok = n > 0 && n < 32;
    for (size_t i = 0; ok && i < n; i++) {
        char c = v[i];
        if (c >= '0' && c <= '9') {
            digits++;
            ok = digits <= 8;
        } else if (c == '-' && !day && groups == 1 && digits) {
            day = 1;
            digits = 0;
        } else if (c == ':' && digits) {
            groups++;
            digits = 0;
        } else {
            ok = 0;
        }
    }
    ok = ok && digits && groups <= 3;
    if (!ok)
        return tlm_errf(e, TLM_ECONFIG,
                        "%s '%.40s': expected a Slurm time limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                        "D-HH:MM:SS",
                        what, v);
    return 0;
}

int orc_res_check_extra(const char *what, const char *v, tlm_err *e)
{
    size_t n = strlen(v);
    if (n < 3 || n >= ORC_RES_ARG_MAX || strncmp(v, "--", 2) != 0)
        return tlm_errf(e, TLM_ECONFIG, "%s '%.80s': expected one long sbatch option such as --mem=64G (at most %d "
                                        "bytes)",
                        what, v, ORC_RES_ARG_MAX - 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return tlm_errf(e, TLM_ECONFIG, "%s '%.80s': control characters are not allowed", what, v);
    size_t name = strcspn(v, "=");
    for (size_t i = 0; i < sizeof OURS / sizeof OURS[0]; i++)
        if (strlen(OURS[i]) == name && !strncmp(v, OURS[i], name))
            return tlm_errf(e, TLM_ECONFIG, "%s '%.80s': tlmd sets %s itself%s", what, v, OURS[i],
                            i >= 13 ? " (use resources: gpus, cpus, time, partition, account, qos, nodes, "
                                      "ranks_per_node)"
                                    : "");
    return 0;
}

static int get_name(const tlm_cfg_node *n, const char *what, char *out, size_t cap, tlm_err *e)
{
    if (tlm_cfg_get_string(n, what, out, cap, e))
        return TLM_ECONFIG;
    tlm_err sub;
    if (orc_res_check_name(what, out, &sub))
        return tlm_cfg_errf(e, n, "%s", sub.msg);
    return 0;
}

int orc_resources_parse(const tlm_cfg_node *b, orc_resources *r, tlm_err *e)
{
    orc_resources_init(r);
    if (b->kind != TLM_CFG_MAP)
        return tlm_cfg_errf(e, b, "resources: expected a mapping (gpus, cpus, time, partition, account, qos, sbatch, "
                              "nodes, ranks_per_node), got %s",
                        tlm_cfg_describe(b));
    for (size_t i = 0; i < b->n; i++) {
        const char *k = b->keys[i]->text;
        const tlm_cfg_node *v = b->items[i];
        size_t j = 0;
        while (j < N_KEYS && strcmp(k, KEYS[j].name))
            j++;
        if (j == N_KEYS)
            return tlm_cfg_errf(e, b->keys[i],
                            "unknown key '%s' in resources (expected gpus, cpus, time, partition, account, qos, "
                            "sbatch, nodes, ranks_per_node)",
                            k);
        const struct res_key *key = &KEYS[j];
        char what[48], *field = (char *)r + key->off;
        snprintf(what, sizeof what, "resources.%s", key->name);
        int64_t x;
        tlm_err sub;
        switch (key->kind) {
        case RES_INT:
            if (tlm_cfg_get_int_in(v, what, key->lo, key->hi, &x, e))
                return TLM_ECONFIG;
            *(int *)field = (int)x;
            break;
        case RES_TIME:
            if (tlm_cfg_get_string(v, what, field, key->size, e))
                return TLM_ECONFIG;
            if (orc_res_check_time(what, field, &sub))
                return tlm_cfg_errf(e, v, "%s", sub.msg);
            break;
        case RES_NAME:
            if (get_name(v, what, field, key->size, e))
                return TLM_ECONFIG;
            break;
        case RES_SBATCH:
            if (v->kind != TLM_CFG_SEQ)
                return tlm_cfg_errf(e, v, "resources.sbatch: expected a list of sbatch options ([--mem=64G]), got %s",
                                tlm_cfg_describe(v));
            if (v->n > ORC_RES_EXTRA_MAX)
                return tlm_cfg_errf(e, v, "resources.sbatch: %zu options, more than %d", v->n, ORC_RES_EXTRA_MAX);
            r->n_extra = 0;
            for (size_t k2 = 0; k2 < v->n; k2++) {
                char *dst = r->extra[r->n_extra];
                if (tlm_cfg_get_string(v->items[k2], "resources.sbatch", dst, ORC_RES_ARG_MAX, e))
                    return TLM_ECONFIG;
                if (orc_res_check_extra("resources.sbatch", dst, &sub))
                    return tlm_cfg_errf(e, v->items[k2], "%s", sub.msg);
                r->n_extra++;
            }
            break;
        }
    }
    return 0;
}

void orc_resources_merge(orc_resources *out, const orc_resources *base, const orc_resources *over)
{
    *out = *base;
    for (size_t i = 0; i < N_KEYS; i++) {
        const struct res_key *key = &KEYS[i];
        const char *from = (const char *)over + key->off;
        char *to = (char *)out + key->off;
        int given = key->kind == RES_INT      ? *(const int *)from >= 0
                    : key->kind == RES_SBATCH ? over->n_extra >= 0
                                              : from[0] != '\0';
        if (given)
            memcpy(to, from, key->size);
        if (given && key->kind == RES_SBATCH)
            out->n_extra = over->n_extra;
    }
}
