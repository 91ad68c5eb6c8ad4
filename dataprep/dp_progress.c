/* dp_progress.c: progress for long runs: a redrawn bar with rate and ETA
 * when stderr is a terminal, otherwise a plain line every 10% (logs and CI
 * must not fill with carriage returns). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataprep/dataprep.h"
#include "common/cfgtree.h"
#include "common/clock.h"
#include "common/fmt.h"

void dp_progress_start(dp_progress *p, const char *what, uint64_t total)
{
    memset(p, 0, sizeof *p);
    const char *term = getenv("TERM");
    p->tty = isatty(2) && !(term && !strcmp(term, "dumb"));
    p->what = what;
    p->total = total;
    p->t0 = tlm_clock_mono();
    p->last_pct = -1;
}

/* tlm-data's sizes: 1.25 GB, 3.4 MB, 12 kB */
static void human(double bytes, char *out, size_t cap)
{
    static const tlm_fmt_step steps[] = {
        {1e9, 1e9, "%.2f GB", NULL}, {1e6, 1e6, "%.1f MB", NULL}, {0, 1e3, "%.0f kB", NULL}};
    tlm_fmt_steps(out, cap, bytes, steps, 3);
}

void dp_progress_update(dp_progress *p, uint64_t done, const char *label)
{
    p->done = done;
    double now = tlm_clock_mono();
    int pct = p->total ? (int)(100.0 * (double)done / (double)p->total) : 100;
    if (pct > 100)
        pct = 100;
    if (!p->tty) {
        if (pct / 10 > p->last_pct / 10 || p->last_pct < 0) {
            p->last_pct = pct;
            fprintf(stderr, "tlm-data: %s %3d%%\n", p->what, pct);
        }
        return;
    }
    if (now - p->last_draw < 0.1 && done < p->total)
        return;
    p->last_draw = now;
    double el = now - p->t0, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(p->total - (done < p->total ? done : p->total)) / rate : 0;
    char bar[31], d[32], t[32], r[32];
    int fill = pct * 30 / 100;
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    human((double)done, d, sizeof d);
    human((double)p->total, t, sizeof t);
    human(rate, r, sizeof r);
    char lab[41] = "";
    if (label) {
        size_t n = strlen(label);
        snprintf(lab, sizeof lab, "%s", n > 40 ? label + n - 40 : label);
    }
    fprintf(stderr, "\r\033[K%s [%s] %3d%% %s/%s %s/s ETA %.0fs %s", p->what, bar, pct, d, t, r, eta, lab);
    fflush(stderr);
}

void dp_progress_end(dp_progress *p, const char *summary)
{
    if (p->tty)
        fprintf(stderr, "\r\033[K");
    if (summary)
        fprintf(stderr, "tlm-data: %s (%.1f s)\n", summary, tlm_clock_mono() - p->t0);
}

int dp_parse_size(const char *s, uint64_t *out)
{
    /* the number before the suffix is a plain decimal: strtod alone takes nan, inf and hex (0x10) */
    size_t n = strspn(s, "0123456789.eE+-");
    char num[64];
    double v;
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, s, n);
    num[n] = '\0';
    if (tlm_cfg_parse_number_text(num, &v) != TLM_CFG_NUM_OK || v < 0)
        return -1;
    const char *end = s + n;
    double m = 1;
    if (*end == 'k' || *end == 'K')
        m = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        m = 1024.0 * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        m = 1024.0 * 1024 * 1024, end++;
    /* a fraction of a byte or token is no size (1.5 was taken as 1) */
    if (*end || v * m >= 1.8e19 || v * m != floor(v * m))
        return -1;
    *out = (uint64_t)(v * m);
    return 0;
}
