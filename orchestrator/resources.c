/* resources.c: a sweep's resources: block and its checks (see resources.h). */
#include "orchestrator/resources.h"

#include <stdio.h>
#include <string.h>

static const char *const KEYS[] = {"gpus", "cpus", "time", "partition", "account", "qos", "sbatch", "nodes",
                                   "ranks_per_node"};
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
    r->gpus = r->cpus = r->n_extra = r->nodes = r->ranks_per_node = -1;
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
        while (j < N_KEYS && strcmp(k, KEYS[j]))
            j++;
        if (j == N_KEYS)
            return tlm_cfg_errf(e, b->keys[i],
                            "unknown key '%s' in resources (expected gpus, cpus, time, partition, account, qos, "
                            "sbatch, nodes, ranks_per_node)",
                            k);
        int64_t x;
        tlm_err sub;
        switch (j) {
        case 0:
            if (tlm_cfg_get_int_in(v, "resources.gpus", 0, 64, &x, e))
                return TLM_ECONFIG;
            r->gpus = (int)x;
            break;
        case 1:
            if (tlm_cfg_get_int_in(v, "resources.cpus", 1, 4096, &x, e))
                return TLM_ECONFIG;
            r->cpus = (int)x;
            break;
        case 2:
            if (tlm_cfg_get_string(v, "resources.time", r->time, sizeof r->time, e))
                return TLM_ECONFIG;
            if (orc_res_check_time("resources.time", r->time, &sub))
                return tlm_cfg_errf(e, v, "%s", sub.msg);
            break;
        case 3:
            if (get_name(v, "resources.partition", r->partition, sizeof r->partition, e))
                return TLM_ECONFIG;
            break;
        case 4:
            if (get_name(v, "resources.account", r->account, sizeof r->account, e))
                return TLM_ECONFIG;
            break;
        case 5:
            if (get_name(v, "resources.qos", r->qos, sizeof r->qos, e))
                return TLM_ECONFIG;
            break;
        case 6:
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
        case 7:
            if (tlm_cfg_get_int_in(v, "resources.nodes", 1, 4096, &x, e))
                return TLM_ECONFIG;
            r->nodes = (int)x;
            break;
        case 8:
            if (tlm_cfg_get_int_in(v, "resources.ranks_per_node", 1, 1024, &x, e))
                return TLM_ECONFIG;
            r->ranks_per_node = (int)x;
            break;
        }
    }
    return 0;
}

void orc_resources_merge(orc_resources *out, const orc_resources *base, const orc_resources *over)
{
    *out = *base;
    if (over->gpus >= 0)
        out->gpus = over->gpus;
    if (over->cpus >= 0)
        out->cpus = over->cpus;
    if (over->time[0])
        memcpy(out->time, over->time, sizeof out->time);
    if (over->partition[0])
        memcpy(out->partition, over->partition, sizeof out->partition);
    if (over->account[0])
        memcpy(out->account, over->account, sizeof out->account);
    if (over->qos[0])
        memcpy(out->qos, over->qos, sizeof out->qos);
    if (over->nodes >= 0)
        out->nodes = over->nodes;
    if (over->ranks_per_node >= 0)
        out->ranks_per_node = over->ranks_per_node;
    if (over->n_extra >= 0) {
        out->n_extra = over->n_extra;
        memcpy(out->extra, over->extra, sizeof out->extra);
    }
}
