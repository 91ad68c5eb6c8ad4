#!/bin/sh
# test_http.sh: tlm-dash against bad requests, no browser needed: the token,
# path traversal, oversized and malformed HTTP, methods, SQL in parameters,
# ETags, many connections (http_check.py), on the report tests' fixture
# database; then a missing database, one that is not a database and one
# with corrupt pages (a clear answer, the server lives on and picks up the
# file once it is there), the Unix socket (mode 0600, never replacing a
# file) and the warning for a non-loopback --listen.
. "$TLM_SRCDIR/tests/dashboard/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "# SKIP: python3 is needed"; exit 77; }

"$TLM_BUILDDIR/tests/report/report_mkdb" fx.db >/dev/null
ok $? "fixture database"
# uPlot where tlm-dash serves it from: the set-up's npm install, else one
# into this test's folder (a build from the dist tarball has no
# dashboard/node_modules); without npm that one check says it was not made
VENDOR="$NM/uplot/dist"
if [ ! -f "$VENDOR/uPlot.iife.min.js" ] && command -v npm >/dev/null 2>&1; then
    timeout 180 npm install --prefix "$tmp/npm" --no-audit --no-fund --no-save --loglevel=error \
        "uplot@$(sed -n 's/.*"uplot": "\(.*\)".*/\1/p' "$TLM_SRCDIR/dashboard/package.json")" >"$tmp/npm.log" 2>&1
    VENDOR="$tmp/npm/node_modules/uplot/dist"
fi
UPLOT_OK=0
[ -f "$VENDOR/uPlot.iife.min.js" ] && UPLOT_OK=1
export UPLOT_OK
start_dash dash.out --db fx.db --vendor "$VENDOR"
ok $? "tlm-dash started ($base)"
case $url in http://127.0.0.1:*/\?t=*) r=0 ;; *) r=1 ;; esac
ok $r "by default on 127.0.0.1, the URL carries the token"
[ ${#token} = 64 ]
ok $? "a 64-hex-digit random token"
python3 "$TLM_SRCDIR/tests/dashboard/http_check.py" "$base" "$token" fx.db "$TLM_SRCDIR" >http.out 2>&1
relay http.out $? http_check.py
kill -0 "$dp"
ok $? "tlm-dash survived every request"
kill "$dp"; wait "$dp"
ok $? "...and stops on SIGTERM with status 0"

# fetch PATH: the status of one request to the server started last (its body in ./body)
fetch() { curl -s -o body -w '%{http_code}' "$base$1" 2>/dev/null; }

# a database that is not there yet: the page loads, the API says what to do; then it appears
start_dash dash2.out --db later.db
ok $? "tlm-dash starts without a database"
[ "$(fetch "/?t=$token")" = 200 ]
ok $? "...the page loads"
[ "$(fetch "/api/jobs?t=$token")" = 503 ] && grep -q "later.db: no such file (tlmd writes it" body
ok $? "...the API answers 503: no such file, run tlmd first ($(cat body))"
cp fx.db later.db
[ "$(fetch "/api/jobs?t=$token")" = 200 ] && grep -q '"rows":\[\[' body
ok $? "...and serves it once it is there"
kill "$dp"; wait "$dp"

# no charting library where --vendor points: its files are a 404 that says
# how to install it, and the server lives on (it crashed on the second file)
start_dash dash-nouplot.out --db fx.db --vendor "$PWD/no-uplot-here"
grep -q "^tlm-dash: warning: uPlot, the charting library, is missing .*no-uplot-here.*install it with scripts/setup.sh" dash-nouplot.out.err
ok $? "without uPlot: tlm-dash warns at start and says how to install it"
[ "$(fetch "/vendor/uPlot.min.css?t=$token")" = 404 ] && grep -q "charting library is not installed" body &&
    [ "$(fetch "/vendor/uPlot.iife.min.js?t=$token")" = 404 ] && [ "$(fetch "/?t=$token")" = 200 ] &&
    grep -q "app.js" body && ! grep -q "/vendor/" body
ok $? "without uPlot: both of its files are a 404 saying how to install it, the page loads without asking for them"
kill -0 "$dp"
ok $? "...and the server lives on"
kill "$dp"; wait "$dp"

echo "not a database, just text" >text.db
start_dash dash3.out --db text.db
[ "$(fetch "/api/jobs?t=$token")" = 503 ] && grep -q "text.db: not an SQLite database" body
ok $? "a file that is not a database: 503 saying so ($(cat body))"
kill -0 "$dp"
ok $? "...and the server lives on"
kill "$dp"; wait "$dp"

# corrupt pages in the middle of a real database
cp fx.db bad.db
python3 - bad.db <<'PY'
import os, sys
n = os.path.getsize(sys.argv[1])
with open(sys.argv[1], "r+b") as f:
    for off in range(4096 * 2, n, 4096 * 3):
        f.seek(off)
        f.write(os.urandom(4096))
PY
start_dash dash4.out --db bad.db
codes=""
for p in /api/sweeps /api/jobs "/api/table?name=runs"; do
    c=$(curl -s -o body -w '%{http_code}' "$base$p$(case $p in *\?*) echo "&" ;; *) echo "?" ;; esac)t=$token")
    codes="$codes $c"
    case $c in 200 | 500 | 503) ;; *) codes="$codes(bad)" ;; esac
    case $c in 500 | 503) grep -q '"error":' body || codes="$codes(no message)" ;; esac
done
kill -0 "$dp" && ! echo "$codes" | grep -q "(bad)\|(no message)"
ok $? "a database with corrupt pages: answers or errors with a message, no crash ($codes)"
kill "$dp"; wait "$dp"

# a Unix socket: 0600, answering; a file at the path is never replaced
start_dash dash5.out --db fx.db --listen "unix:$tmp/d.sock"
ok $? "--listen unix:PATH starts"
[ "$(stat -c %a "$tmp/d.sock")" = 600 ]
ok $? "...the socket is mode 0600 ($(stat -c %a "$tmp/d.sock"))"
[ "$(curl -s --unix-socket "$tmp/d.sock" -o body -w '%{http_code}' "http://localhost/api/jobs?t=$token")" = 200 ]
ok $? "...answers with the token"
[ "$(curl -s --unix-socket "$tmp/d.sock" -o body -w '%{http_code}' "http://localhost/api/jobs")" = 403 ]
ok $? "...403 without it"
kill "$dp"; wait "$dp"
[ ! -e "$tmp/d.sock" ]
ok $? "...and removes its socket when stopped"
echo "a user's file" >keep.txt
timeout 10 "$D" --db fx.db --listen "unix:$tmp/keep.txt" >o 2>e
[ $? = 1 ] && grep -q "exists and is not a socket" e && [ "$(cat keep.txt)" = "a user's file" ]
ok $? "a file at the socket path: refused, the file left as it was"

# a non-loopback address: a warning
start_dash dash6.out --db fx.db --listen 0.0.0.0:0
grep -q "warning: --listen 0.0.0.0:0 is reachable from other machines" dash6.out.err
ok $? "--listen 0.0.0.0: warns that other machines can reach it"
kill "$dp"; wait "$dp"
timeout 10 "$D" --db fx.db --listen nonsense >o 2>e
[ $? != 0 ] && grep -q "expected HOST:PORT" e
ok $? "--listen nonsense: refused, saying what is expected"
timeout 10 "$D" --db fx.db --token 'abc;def ghi=jklmnop' >o 2>e
[ $? = 1 ] && grep -q "token: expected 16 to 64 letters" e
ok $? "--token with a ';': refused (it goes into a cookie)"
# --token-file: made 0600 with a new token, the same token at the next start, refused when others can read it
start_dash dash7.out --db fx.db --token-file "$tmp/tok"
t1=$token
[ "$(stat -c %a "$tmp/tok")" = 600 ] && [ "$(cat "$tmp/tok")" = "$t1" ] && [ ${#t1} = 64 ] &&
    grep -q "a new access token in $tmp/tok (mode 0600)" dash7.out.err
ok $? "--token-file, missing: created with mode 0600 holding the URL's new token"
kill "$dp"; wait "$dp"
start_dash dash8.out --db fx.db --token-file "$tmp/tok"
[ "$token" = "$t1" ] && [ "$(fetch "/api/sweeps?t=$t1")" = 200 ] && ! grep -q "new access token" dash8.out.err
ok $? "--token-file at the next start: the same token, so bookmarks still open"
kill "$dp"; wait "$dp"
chmod 640 "$tmp/tok"
timeout 10 "$D" --db fx.db --token-file "$tmp/tok" >o 2>e
[ $? = 2 ] && grep -q "mode 0640 lets its group at the token; run chmod 600" e
ok $? "--token-file readable by its group: refused, saying chmod 600 ($(cat e))"
chmod 604 "$tmp/tok"
timeout 10 "$D" --db fx.db --token-file "$tmp/tok" >o 2>e
[ $? = 2 ] && grep -q "lets everyone at the token" e
ok $? "--token-file readable by others: refused"
chmod 600 "$tmp/tok"
ln -s "$tmp/tok" "$tmp/tok-link"
timeout 10 "$D" --db fx.db --token-file "$tmp/tok-link" >o 2>e
[ $? = 2 ] && grep -q "is a symbolic link" e
ok $? "--token-file a symbolic link: refused"
printf 'short\n' >"$tmp/tok-bad" && chmod 600 "$tmp/tok-bad"
timeout 10 "$D" --db fx.db --token-file "$tmp/tok-bad" >o 2>e
[ $? = 2 ] && grep -q "expected one line of 16 to 64 letters" e
ok $? "--token-file holding no token: refused, saying what it must hold"
timeout 10 "$D" --db fx.db --token-file "$tmp" >o 2>e
[ $? = 2 ] && grep -q "is not a regular file" e
ok $? "--token-file a folder: refused"
timeout 10 "$D" --db fx.db --token-file "$tmp/tok" --token abcdefghijklmnopq >o 2>e
[ $? = 2 ] && grep -q -- "--token and --token-file: give one of them" e
ok $? "--token with --token-file: a usage error"
timeout 10 "$D" --db fx.db --max-connections 0 >o 2>e
[ $? = 2 ] && grep -q "max-connections" e
ok $? "--max-connections 0: a usage error"
"$D" --help >o 2>e && grep -q "^usage: tlm-dash" o && ! grep -q -- "--token TOKEN" o && grep -q -- "--token-file FILE" o
ok $? "--help: the usage, with --token-file and without the scripts' --token"
timeout 10 "$D" --db fx.db --lisen x >o 2>e
[ $? = 2 ] && grep -q "unrecognized option '--lisen'" e
ok $? "an unknown option: status 2"

# more jobs than the server orders at first (its first 1,000 ids, without
# words in the filter): pages past them, the count and the order, sorted by
# the numbers the jobs keep (schema 7), against Python's sort of the view's
cp fx.db many.db
python3 - many.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in c.execute("PRAGMA table_info(jobs)") if r[1] not in
        ("key", "seed", "final_loss", "last_step", "last_loss", "last_tokens_per_s", "val_loss", "val_ppl")]
keys = [r[0] for r in c.execute("SELECT key FROM jobs ORDER BY rowid")]
for n in range(2500):
    t, k = keys[n % len(keys)], "m%063d" % n
    c.execute("INSERT INTO jobs(key, seed, final_loss, %s) SELECT ?, ?, final_loss + ? * 1e-4, %s FROM jobs WHERE key = ?"
              % (", ".join(cols), ", ".join(cols)), (k, 1000 + n, n, t))
    c.execute("INSERT INTO steps(job, step, tokens, loss, lr, grad_norm, tokens_per_s, step_ms) SELECT ?, step, tokens,"
              " loss + ? * 1e-4, lr, grad_norm, tokens_per_s, step_ms FROM steps WHERE job = ?", (k, n, t))
    c.execute("INSERT INTO evals(job, step, tokens, suite, task, metric, value, n) SELECT ?, step, tokens, suite, task,"
              " metric, value + ? * 1e-3, n FROM evals WHERE job = ? AND suite = 'val'", (k, n % 700, t))
c.commit()
PY
ok $? "a database of $(sqlite3 many.db 'SELECT count(*) FROM jobs') jobs"
start_dash dash-many.out --db many.db
python3 - "$base" "$token" many.db >many.out 2>&1 <<'PY'
import json, sqlite3, sys, urllib.request
base, token, path = sys.argv[1:4]
c = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
rank = {k: i for i, (k,) in enumerate(c.execute("SELECT key FROM jobs ORDER BY rowid"))}
res = {r[0]: r[1:] for r in c.execute("SELECT key, val_ppl, train_loss, status FROM results")}
def want(col, desc, status=None):
    ks = [k for k in rank if status is None or res[k][2] == status]
    v = lambda k: res[k][col]
    return sorted(ks, key=lambda k: (v(k) is None, 0 if v(k) is None else (-v(k) if desc else v(k)), rank[k]))
def get(q):
    d = json.load(urllib.request.urlopen("%s/api/jobs?%s&t=%s" % (base, q, token)))
    return [r[0] for r in d["rows"]], d["total"]
for what, col, desc, status, qs in [("val_ppl desc", 0, True, None, "sort=val_ppl&dir=desc"),
                                    ("train_loss", 1, False, None, "sort=train_loss"),
                                    ("done by val_ppl", 0, False, "done", "sort=val_ppl&status=done")]:
    w = want(col, desc, status)
    for off, lim in [(0, 100), (900, 100), (950, 100), (1000, 1000), (len(w) - 50, 100), (0, 1000)]:
        got, total = get("%s&offset=%d&limit=%d" % (qs, off, lim))
        print("%s - many.db, %s, offset %d, limit %d: the rows of Python's sort of the view's, and the count (%d)" % (
            "ok" if got == w[off:off + lim] and total == len(w) else "not ok", what, off, lim, len(w)))
PY
relay many.out $? "the jobs pages of many.db"
kill "$dp"; wait "$dp"
finish
