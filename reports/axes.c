/* axes.c: reading the axis columns the way the paper names things:
 * which third of the network a blocks schedule widens, which schedules
 * have ratios, which group is uniform or the taper, titles of panels,
 * token counts.
 * Must not: touch the database. */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"

int rpt_group_rank(const rpt_ctx *c, const rpt_group *g, int blocks_apart)
{
    if (!strcmp(g->schedule, "uniform"))
        return 0;
    if (!strcmp(g->schedule, c->taper_schedule) && fabs(g->ratio_start - c->taper_start) < 1e-9 &&
        fabs(g->ratio_end - c->taper_end) < 1e-9)
        return 1;
    return blocks_apart && strcmp(g->schedule, "blocks") ? 3 : 2;
}

const char *rpt_blocks_kind(const char *groups)
{
    if (!groups)
        return NULL;
    double g[64];
    int n = 0;
    const char *p = groups;
    while (n < 64) {
        char *end;
        double v = strtod(p, &end);
        if (end == p)
            return NULL;
        g[n++] = v;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        if (*p != ',')
            return NULL;
        p++;
    }
    if (n < 2)
        return "flat";
    int widest = 0, ties = 0;
    for (int i = 1; i < n; i++) {
        if (g[i] > g[widest]) {
            widest = i;
            ties = 0;
        } else if (g[i] == g[widest]) {
            ties++;
        }
    }
    if (ties)
        return "flat";
    /* position of the widest group along depth, in thirds */
    double t = (double)widest / (n - 1);
    return t < 1.0 / 3 ? "wider-early" : t > 2.0 / 3 ? "wider-late" : "wider-middle";
}

int rpt_is_ratio_schedule(const char *s)
{
    return s && (!strcmp(s, "linear") || !strcmp(s, "cosine") || !strcmp(s, "sigmoid"));
}

void rpt_fmt_tokens(char *out, size_t cap, int64_t tokens)
{
    static const tlm_fmt_step steps[] = {{1e12, 1e12, "%.3gT", "%.0fT"},
                                         {1e9, 1e9, "%.3gB", "%.0fB"},
                                         {1e6, 1e6, "%.3gM", "%.0fM"},
                                         {1e3, 1e3, "%.3gK", "%.0fK"}};
    if ((double)tokens < 1e3)
        snprintf(out, cap, "%lld", (long long)tokens);
    else
        tlm_fmt_steps(out, cap, (double)tokens, steps, 4);
}

const char *rpt_panel_title(rpt_arena *a, const char *arch, const char *scale, int64_t tokens)
{
    char tok[32];
    rpt_fmt_tokens(tok, sizeof tok, tokens);
    if (arch)
        return rpt_printf(a, "%s, %s, %s tokens", rpt_arch_title(arch), scale, tok);
    return rpt_printf(a, "%s, %s tokens", scale, tok);
}
