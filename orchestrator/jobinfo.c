/* jobinfo.c: labels, widths and accounts of resolved jobs (see jobinfo.h). */
#include "orchestrator/jobinfo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/config/account.h"
#include "engine/config/taper.h"

static void num(char *out, size_t cap, double v) { snprintf(out, cap, "%.6g", v); }

static void make_label(const eng_config *c, orc_jobinfo *j)
{
    const char *sched = eng_schedule_name(c->taper.schedule);
    const eng_taper_cfg *t = &c->taper;
    char a[16], b[16];
    switch (t->schedule) {
    case ENG_TAPER_LINEAR:
    case ENG_TAPER_COSINE:
    case ENG_TAPER_SIGMOID:
        num(a, sizeof a, t->ratio[0]);
        num(b, sizeof b, t->ratio[1]);
        snprintf(j->label, sizeof j->label, "%s %s->%s", sched, a, b);
        break;
    case ENG_TAPER_BLOCKS: {
        /* three groups with one widest: the paper's Figure 2 names */
        int widest = -1, ties = 0;
        for (int g = 0; g < t->n_groups; g++) {
            if (widest < 0 || t->groups[g] > t->groups[widest]) {
                widest = g;
                ties = 0;
            } else if (t->groups[g] == t->groups[widest]) {
                ties++;
            }
        }
        static const char *const names[] = {"wider-early", "wider-middle", "wider-late"};
        if (t->n_groups == 3 && !ties)
            snprintf(j->label, sizeof j->label, "%s", names[widest]);
        else
            tlm_msg_printf(j->label, sizeof j->label, "blocks %s", j->groups);
        break;
    }
    default:
        snprintf(j->label, sizeof j->label, "%s", sched);
    }
}

/* Run-length form when the widths take few values, else first..last. */
static void summarise(const int *w, int L, char *out, size_t cap)
{
    int runs = 1;
    for (int l = 1; l < L; l++)
        runs += w[l] != w[l - 1];
    if (runs <= 4) {
        size_t at = 0;
        out[0] = '\0';
        for (int l = 0; l < L;) {
            int r = l;
            while (r < L && w[r] == w[l])
                r++;
            at += (size_t)snprintf(out + at, at < cap ? cap - at : 0, "%s%dx%d", l ? " " : "", w[l], r - l);
            if (at >= cap)
                break;
            l = r;
        }
        return;
    }
    snprintf(out, cap, "%d..%d (%d)", w[0], w[L - 1], L);
}

int orc_jobinfo_compute(const eng_config *c, orc_jobinfo *j, tlm_err *e)
{
    memset(j, 0, sizeof *j);
    j->ratio_start = j->ratio_end = NAN;
    const eng_taper_cfg *t = &c->taper;
    if (t->schedule == ENG_TAPER_LINEAR || t->schedule == ENG_TAPER_COSINE || t->schedule == ENG_TAPER_SIGMOID) {
        j->ratio_start = t->ratio[0];
        j->ratio_end = t->ratio[1];
    }
    if (t->schedule == ENG_TAPER_BLOCKS) {
        /* an axis column that reports group jobs by: exact, never cut (16 numbers of at most 31 bytes, commas) */
        size_t at = 0;
        for (int g = 0; g < t->n_groups; g++) {
            char v[TLM_NUMBER_TEXT];
            tlm_fmt_exact(v, sizeof v, t->groups[g]);
            at += (size_t)snprintf(j->groups + at, sizeof j->groups - at, "%s%s", g ? "," : "", v);
        }
    }
    make_label(c, j);

    int w[ENG_MAX_LAYERS];
    if (eng_taper_widths(c, w, e))
        return TLM_ECONFIG;
    size_t at = 0;
    j->widths[at++] = '[';
    for (int l = 0; l < c->model.layers; l++)
        at += (size_t)snprintf(j->widths + at, sizeof j->widths - at, "%s%d", l ? "," : "", w[l]);
    snprintf(j->widths + at, sizeof j->widths - at, "]");
    summarise(w, c->model.layers, j->dff, sizeof j->dff);

    eng_account a;
    if (eng_account_compute(c, &a, e))
        return TLM_ECONFIG;
    j->params = a.total;
    j->flops_per_token = a.flops_train;
    return 0;
}
