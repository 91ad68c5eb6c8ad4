/* fmt.h: numbers and durations for people (progress lines, plans, report
 * titles) and numbers that read back exactly (configs, CSV, JSON).
 *
 * Each program keeps its own way of writing a number (tlm-worker "1.25M",
 * tlmd "1.2M", tlm-data "1.2 MB", tlm-report "30B"): the helpers take the
 * scale and formats as parameters, so the lines people and scripts read
 * stay as they were.  Every output is cut to cap bytes, NUL included. */
#ifndef TLM_COMMON_FMT_H
#define TLM_COMMON_FMT_H

#include <stddef.h>

/* Bytes that hold any double as tlm_fmt_exact writes it. */
#define TLM_NUMBER_TEXT 32

/* The shortest %.*g text that reads back (strtod) as exactly v:
 * 0.1, 3e+10, 1e-05. */
void tlm_fmt_shortest(char *out, size_t cap, double v);
/* The same, but integers up to 2^53 as integers: 30000000000, not 3e+10. */
void tlm_fmt_exact(char *out, size_t cap, double v);

/* One step of a fixed scale: a value v >= at prints as fmt with v / div
 * (or fmt_whole, when given and v / div is a whole number). */
typedef struct tlm_fmt_step {
    double at, div;
    const char *fmt, *fmt_whole;
} tlm_fmt_step;

/* v by the first of steps[0, n) that it reaches, largest first; the last
 * step takes whatever reaches none (NaN and negative values too). */
void tlm_fmt_steps(char *out, size_t cap, double v, const tlm_fmt_step *steps, size_t n);

/* v in decimal (SI) units: divided by 1000 while |v| >= 1000 and a unit
 * is left (k, M, G, T, P, E, Z, Y: at most max_unit of them), then
 * printed with fmt_scaled (or fmt_plain when it was not divided) and the
 * unit's suffix as its two arguments: tlm_fmt_si(b, n, 1234567, 4,
 * "%.1f%s", "%.0f%s") is "1.2M". */
void tlm_fmt_si(char *out, size_t cap, double v, int max_unit, const char *fmt_scaled, const char *fmt_plain);

/* How tlm_fmt_duration comes to whole units. */
typedef enum tlm_dur_round {
    TLM_DUR_NEAREST, /* to the nearest second first: 119.6 s is 2m00s */
    TLM_DUR_DOWN     /* each unit cut down (119.6 s is 1m59s), seconds under a minute to the nearest */
} tlm_dur_round;

/* s seconds as "2h05m", "3m07s" or "42s"; "?" when s is negative or not
 * finite. */
void tlm_fmt_duration(char *out, size_t cap, double s, tlm_dur_round how);

#endif
