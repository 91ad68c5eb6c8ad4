# dashboard/local.mk: tlm-dash, the web dashboard (included by Makefile.am).
# It links the report code (reports/librpt.a: the paper's tables, the same
# as tlm-report --table) and GNU libmicrohttpd; its pages are compiled in
# (embed.awk); uPlot is read at start from the npm install that
# scripts/setup.sh makes in dashboard/node_modules (--vendor overrides).
DASH_ASSETS = dashboard/assets/index.html dashboard/assets/app.js dashboard/assets/app.css
bin_PROGRAMS += dashboard/tlm-dash
dashboard_tlm_dash_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) $(PLPLOT_CFLAGS) $(MHD_CFLAGS) \
	-DDASH_VENDOR_DIR='"$(abs_top_srcdir)/dashboard/node_modules/uplot/dist"'
dashboard_tlm_dash_SOURCES = dashboard/dash.h dashboard/main.c dashboard/server.c dashboard/api.c dashboard/jobs.c dashboard/tables.c \
	dashboard/token.c
nodist_dashboard_tlm_dash_SOURCES = dashboard/assets_gen.c
dashboard_tlm_dash_LDADD = $(RPT_LIBS) $(MHD_LIBS)
EXTRA_DIST += $(DASH_ASSETS) dashboard/embed.awk dashboard/package.json dashboard/package-lock.json
CLEANFILES += dashboard/assets_gen.c

dashboard/assets_gen.c: $(DASH_ASSETS:%=$(srcdir)/%) $(srcdir)/dashboard/embed.awk
	$(AM_V_GEN)$(MKDIR_P) dashboard && $(AWK) -f $(srcdir)/dashboard/embed.awk $(DASH_ASSETS:%=$(srcdir)/%) >$@-t && mv $@-t $@
