/* plot.h: tlm-report's figures: a figure is a set of line series with
 * labels, built from results.db by a fig_*.c file and drawn by plot.c
 * through PLplot's cairo drivers (svgcairo, pngcairo) into an SVG or PNG.
 * Must not: let PLplot exit the program: plot.c checks the device and the
 * data before PLplot sees them. */
#ifndef TLM_REPORTS_PLOT_H
#define TLM_REPORTS_PLOT_H

#include "reports/rpt.h"

typedef struct rpt_series {
    const char *label;
    double *x, *y; /* n points; NaN y breaks the line */
    double *err;   /* NULL, or +-err drawn as error bars */
    int n;
    int color;     /* 0.. (palette index) */
    int dashed;
    int points;    /* draw a marker at each point */
    int no_line;   /* markers (and error bars) only: points that are categories, not a curve */
} rpt_series;

typedef struct rpt_figure {
    const char *title, *xlabel, *ylabel;
    rpt_series *s;
    int n, cap;
    int logy;
    double ylo_hint; /* NaN, or the lowest value the y range must show (e.g. 0) */
    double yclip;    /* > 0: y range from the points after this fraction of x (skips an early spike) */
    const char *note; /* why it is empty, or what it leaves out (stderr) */
    const char **xticks; /* NULL, or names of the categories at x = 1 .. n_xticks (written under the axis) */
    int n_xticks;
    rpt_arena a;
} rpt_figure;

void rpt_figure_init(rpt_figure *f);
void rpt_figure_clear(rpt_figure *f);
/* A series with room for n points (arena-owned); NULL when out of memory. */
rpt_series *rpt_figure_series(rpt_figure *f, const char *label, int n, int with_err);
/* Points drawn (finite ones) over every series. */
int rpt_figure_points(const rpt_figure *f);

enum { RPT_IMG_SVG = 0, RPT_IMG_PNG = 1 };
/* ".svg" | ".png" from the file name; -1 otherwise. */
int rpt_image_kind(const char *path);
/* Whether PLplot's cairo device for kind is installed; fills e when not. */
int rpt_plot_device_check(int kind, tlm_err *e);
/* Draws f into path (SVG or PNG by its extension), atomically. */
int rpt_plot_write(const rpt_figure *f, const char *path, tlm_err *e);

/* PLplot text starts escapes with '#': doubles them, for text from results.db. */
void rpt_pl_escape(char *out, size_t cap, const char *s);

typedef struct rpt_figure_def {
    const char *name;
    const char *what;
    int (*build)(rpt_ctx *c, rpt_figure *f, tlm_err *e);
    unsigned uses; /* RPT_USES_* (rpt.h) */
} rpt_figure_def;

extern const rpt_figure_def rpt_figure_defs[];
extern const int rpt_n_figure_defs;
const rpt_figure_def *rpt_figure_find(const char *name);

/* The panel with the most groups that counts accepts (the first of equals),
 * or -1 when no panel has one: a figure of one panel draws that one. */
int rpt_figure_best_panel(const rpt_ctx *c, int (*counts)(const rpt_ctx *c, const rpt_group *g));
/* f->title as "what: Arch, scale, N tokens" of the panel, escaped for PLplot. */
void rpt_figure_panel_title(rpt_figure *f, const char *what, const rpt_pgroup *pg);

int rpt_fig_loss(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_dff(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_rho(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_ppl_ratio(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_delta(rpt_ctx *c, rpt_figure *f, tlm_err *e);

#endif
