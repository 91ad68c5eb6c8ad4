/* progress.c: what tlmd shows while it runs.  On a terminal: a live block
 * redrawn a few times a second, one bar per running job (tokens done /
 * total, loss, tokens/s, ETA) and a line per sweep, with log lines
 * scrolling above it.  Elsewhere (a file, a pipe, CI): plain timestamped
 * log lines, and a progress line per running job every 30 s.  Ends with a
 * summary.
 * Must not: write to results.db or slow the loop (it only reads memory). */
#include "orchestrator/daemon.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fmt.h"

#define DRAW_EVERY_S 0.25
#define PLAIN_EVERY_S 30.0
#define BAR 24

static void fmt_dur(double s, char *out, size_t cap) { tlm_fmt_duration(out, cap, s, TLM_DUR_NEAREST); }

/* tlmd's numbers: 1.2M tokens */
static void fmt_num(double v, char *out, size_t cap) { tlm_fmt_si(out, cap, v, 4, "%.1f%s", "%.0f%s"); }

static void clear_view(orc_daemon *d)
{
    if (d->tty && d->drawn) {
        printf("\033[%dA\033[J", d->drawn);
        d->drawn = 0;
    }
}

void orc_say(orc_daemon *d, const char *fmt, ...)
{
    clear_view(d);
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    printf("%02d:%02d:%02d tlmd: ", tm.tm_hour, tm.tm_min, tm.tm_sec);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    d->last_draw = 0; /* redraw the live view at the next tick */
}

void orc_notice(orc_daemon *d, const char *job, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    orc_say(d, "%s", msg);
    struct stat so, se;
    if (fstat(STDOUT_FILENO, &so) != 0 || fstat(STDERR_FILENO, &se) != 0 || so.st_dev != se.st_dev ||
        so.st_ino != se.st_ino) {
        fprintf(stderr, "tlmd: %s\n", msg);
        fflush(stderr);
    }
    if (d->db && !d->fatal) {
        tlm_err e;
        orc_batch(d);
        if (db_log(d->db, job, 0, "warn", msg, &e))
            orc_fatal(d, &e);
    }
}

/* One job's progress in words: "45% 1.2M/2.0M tokens, loss 3.21, 12.3k tok/s, ETA 1m05s". */
static void run_line(const orc_daemon *d, const orc_run *r, double now, char *out, size_t cap, int bar)
{
    const orc_job *j = &d->plan.jobs.v[r->job];
    int64_t total = r->total_tokens > 0 ? r->total_tokens : j->tokens_total;
    int64_t tokens = r->tokens > 0 ? r->tokens : 0; /* -1 before the start event */
    double frac = total > 0 ? (double)tokens / (double)total : 0;
    if (frac > 1)
        frac = 1;
    char done[32], tot[32], tps[32], eta[32], loss[32];
    fmt_num((double)tokens, done, sizeof done);
    fmt_num((double)total, tot, sizeof tot);
    fmt_num(r->tokens_per_s, tps, sizeof tps);
    fmt_dur(r->tokens_per_s > 0 ? (double)(total - tokens) / r->tokens_per_s : NAN, eta, sizeof eta);
    if (r->has_loss)
        snprintf(loss, sizeof loss, "%.4g", r->loss);
    else
        snprintf(loss, sizeof loss, "-");
    char b[BAR + 3] = "";
    if (bar) {
        int fill = (int)(frac * BAR + 0.5);
        b[0] = '[';
        for (int i = 0; i < BAR; i++)
            b[1 + i] = i < fill ? '#' : '.';
        b[BAR + 1] = ']';
        b[BAR + 2] = '\0';
    }
    char age[32] = "";
    if (r->term_sent)
        snprintf(age, sizeof age, " stopping");
    else if (now - r->last_event > 30)
        snprintf(age, sizeof age, " silent %.0fs", now - r->last_event);
    snprintf(out, cap, "%-7s %.12s %-18.26s %s%s%3.0f%% %s/%s loss %s %s tok/s ETA %s%s", d->slots[r->slot].spec.name,
             j->key, r->label, b, bar ? " " : "", frac * 100, done, tot, loss, tps, eta, age);
}

typedef struct {
    size_t done, failed, running, pending;
} counts;

static counts count_jobs(const orc_daemon *d, const uint32_t *idx, size_t n)
{
    counts c = {0};
    for (size_t i = 0; i < n; i++) {
        int s = d->plan.jobs.v[idx ? idx[i] : i].status;
        c.done += s == ORC_DONE;
        c.failed += s == ORC_FAILED;
        c.running += s == ORC_RUNNING;
        c.pending += s == ORC_PENDING || s == ORC_INTERRUPTED;
    }
    return c;
}

void orc_progress_tick(orc_daemon *d, double now)
{
    if (d->o->progress == 0)
        return;
    if (!d->tty) {
        if (now - d->last_plain < PLAIN_EVERY_S)
            return;
        if (d->last_plain == 0) {
            d->last_plain = now;
            return;
        }
        d->last_plain = now;
        for (int s = 0; s < d->n_slots; s++) {
            char line[256];
            if (d->slots[s].run && d->slots[s].run->got_start) {
                run_line(d, d->slots[s].run, now, line, sizeof line, 0);
                orc_say(d, "%s", line);
            }
        }
        return;
    }
    if (now - d->last_draw < DRAW_EVERY_S)
        return;
    d->last_draw = now;
    clear_view(d);
    int lines = 0;
    for (int s = 0; s < d->n_slots; s++) {
        orc_run *r = d->slots[s].run;
        if (!r)
            continue;
        char line[256];
        run_line(d, r, now, line, sizeof line, 1);
        printf("%s\n", line);
        lines++;
    }
    for (size_t i = 0; i < d->plan.n_sweeps; i++) {
        const orc_plan_sweep *ps = &d->plan.sweeps[i];
        counts c = count_jobs(d, ps->jobs, ps->n_jobs);
        printf("sweep %-24s %zu/%zu done, %zu running, %zu pending, %zu failed\n", ps->name, c.done, ps->n_jobs,
               c.running, c.pending, c.failed);
        lines++;
    }
    char el[32];
    fmt_dur(now - d->t0, el, sizeof el);
    printf("%s elapsed, %llu events%s\n", el, (unsigned long long)d->events,
           d->stopping ? ", stopping (send the signal again to force)" : "");
    lines++;
    fflush(stdout);
    d->drawn = lines;
}

void orc_summary(orc_daemon *d, FILE *out)
{
    clear_view(d);
    counts all = count_jobs(d, NULL, d->plan.jobs.n);
    fprintf(out, "tlmd: summary\n");
    for (size_t i = 0; i < d->plan.n_sweeps; i++) {
        const orc_plan_sweep *ps = &d->plan.sweeps[i];
        counts c = count_jobs(d, ps->jobs, ps->n_jobs);
        fprintf(out, "  sweep %s: %zu jobs, %zu done, %zu failed, %zu not finished\n", ps->name, ps->n_jobs, c.done,
                c.failed, c.pending + c.running);
    }
    for (size_t i = 0; i < d->plan.jobs.n; i++) {
        const orc_job *j = &d->plan.jobs.v[i];
        if (j->status == ORC_FAILED)
            fprintf(out, "  failed: %.12s after %d attempt(s) (tlmd status shows why)\n", j->key, j->attempts);
    }
    char el[32];
    fmt_dur(tlm_clock_mono() - d->t0, el, sizeof el);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(out,
            "  %zu jobs: %zu done (%llu in this run), %zu failed, %zu not finished; %llu attempts started, %llu "
            "retried\n",
            d->plan.jobs.n, all.done, (unsigned long long)d->done_now, all.failed, all.pending + all.running,
            (unsigned long long)d->attempts_started, (unsigned long long)d->retried_now);
    fprintf(out,
            "  %s; %llu events (%llu refused), %llu commits (longest %.1f ms), dispatch %.2f ms/job (longest "
            "%.1f ms), peak memory %.1f MiB\n",
            el, (unsigned long long)d->events, (unsigned long long)d->bad_lines, (unsigned long long)d->commits,
            d->commit_ms_max, d->attempts_started ? d->dispatch_ms_total / (double)d->attempts_started : 0.0,
            d->dispatch_ms_max, ru.ru_maxrss / 1024.0);
    fflush(out);
}
