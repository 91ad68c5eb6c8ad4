# tests/dashboard/local.mk: tlm-dash over HTTP (bad requests, limits, the database's failures) and in Chromium
# (a real sweep; every view on a fixed database against reviewed screenshots in tests/dashboard/shots/).
check_PROGRAMS += tests/dashboard/dash_mkdb
tests_dashboard_dash_mkdb_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_dashboard_dash_mkdb_LDADD = $(DB_LIBS)
TESTS += tests/dashboard/test_http.sh tests/dashboard/test_browser.sh tests/dashboard/test_live.sh tests/dashboard/test_views.sh
dist_check_SCRIPTS += tests/dashboard/test_http.sh tests/dashboard/test_browser.sh tests/dashboard/test_live.sh \
	tests/dashboard/test_views.sh
EXTRA_DIST += tests/dashboard/lib.sh tests/dashboard/browser.mjs tests/dashboard/http_check.py tests/dashboard/views.mjs \
	tests/dashboard/session.mjs tests/dashboard/shots
# the screenshots the browser tests save (their folder, empty, may stay)
CLEANFILES += tests/dashboard/screenshots/*.png tests/dashboard/screenshots/*.jpg
