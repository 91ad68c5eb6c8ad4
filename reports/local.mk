# reports/local.mk: tlm-report (included by Makefile.am).  librpt.a holds
# everything but main() so that the tests and the benchmark link the same
# code.  Figures are SVG written here; PNG and PDF come from rsvg-convert
# (librsvg2-bin) at run time.
noinst_LIBRARIES += reports/librpt.a
reports_librpt_a_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
reports_librpt_a_SOURCES = \
	reports/rpt.h reports/plot.h reports/plot_internal.h reports/all.h \
	reports/arena.c \
	reports/ctx.c \
	reports/metrics.c \
	reports/stats.c \
	reports/summary.c \
	reports/axes.c \
	reports/table.c \
	reports/tables.c \
	reports/paper.c \
	reports/t_wider.c \
	reports/t_ratio.c \
	reports/t_main.c \
	reports/t_align.c \
	reports/t_niah.c \
	reports/t_runs.c \
	reports/render.c \
	reports/render_md.c \
	reports/render_csv.c \
	reports/render_latex.c \
	reports/render_json.c \
	reports/plot.c \
	reports/plot_axis.c \
	reports/plot_text.c \
	reports/plot_svg.c \
	reports/plot_convert.c \
	reports/font_widths.c \
	reports/figures.c \
	reports/fig_loss.c \
	reports/fig_dff.c \
	reports/fig_rho.c \
	reports/fig_ppl.c \
	reports/fig_wider.c \
	reports/fig_delta.c \
	reports/list.c \
	reports/all.c

bin_PROGRAMS += reports/tlm-report
reports_tlm_report_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
reports_tlm_report_SOURCES = reports/main.c
# Everything that links the report code links these.
RPT_LIBS = reports/librpt.a $(DB_LIBS)
reports_tlm_report_LDADD = $(RPT_LIBS)
EXTRA_DIST += reports/font_widths.py
