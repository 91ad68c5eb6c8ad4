# tests/dashboard/local.mk: tlm-dash over HTTP (bad requests, limits, the database's failures) and in Chromium.
TESTS += tests/dashboard/test_http.sh tests/dashboard/test_browser.sh tests/dashboard/test_live.sh
dist_check_SCRIPTS += tests/dashboard/test_http.sh tests/dashboard/test_browser.sh tests/dashboard/test_live.sh
EXTRA_DIST += tests/dashboard/lib.sh tests/dashboard/browser.mjs tests/dashboard/http_check.py
# the screenshots the browser tests save (their folder, empty, may stay)
CLEANFILES += tests/dashboard/screenshots/*.png
