#!/usr/bin/env python3
"""http_check.py: tlm-dash over raw sockets, for tests/dashboard/test_http.sh.

usage: http_check.py BASE TOKEN DB SRCDIR

The token (403 without it, the cookie it sets), the pages (byte for byte
the files of dashboard/assets/), paths that try to leave them, oversized
and malformed requests, methods other than GET, SQL in parameters,
conditional answers (ETag/304, a new ETag after a commit), and many
connections at once.  Prints "ok - ..." / "not ok - ..." lines; the shell
numbers them.  Exit status 1 when a check failed.
"""
import concurrent.futures
import hashlib
import json
import os
import socket
import sqlite3
import sys
import time
import urllib.parse

base, token, dbpath, src = sys.argv[1:5]
u = urllib.parse.urlparse(base)
HOST, PORT = u.hostname, u.port
failed = 0


def check(cond, what, detail=None):
    global failed
    print(("ok - " if cond else "not ok - ") + what)
    if not cond:
        failed += 1
        if detail is not None:
            for line in str(detail).splitlines()[:20]:
                print("# " + line)


def raw(data, timeout=10):
    """Sends bytes, returns (status or None, headers dict, body bytes) of the answer."""
    s = socket.create_connection((HOST, PORT), timeout=timeout)
    try:
        s.sendall(data)
        buf = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    if not buf.startswith(b"HTTP/"):
        return None, {}, buf
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), hdrs, body


def get(path, headers=None, method="GET"):
    h = {"Host": "%s:%d" % (HOST, PORT), "Connection": "close"}
    h.update(headers or {})
    req = "%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
    return raw(req.encode("latin-1"))


def alive():
    st, _, _ = get("/api/sweeps?t=" + token)
    return st == 200


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


db_sha = sha(dbpath)
cookie = {"Cookie": "tlm_dash=" + token}

# ---------------------------------------------------------------- the token
for path, what in [("/", "the page"), ("/app.js", "an asset"), ("/api/jobs", "the API"),
                   ("/vendor/uPlot.iife.min.js", "the charting library")]:
    st, _, body = get(path)
    check(st == 403 and b"token" in body, "no token: 403 for %s (%s)" % (what, path), st)
st, _, _ = get("/api/jobs?t=" + "0" * len(token))
check(st == 403, "a wrong token of the right length: 403", st)
st, _, _ = get("/api/jobs?t=" + token[:-1])
check(st == 403, "the token less its last character: 403", st)
st, _, _ = get("/api/jobs", {"Cookie": "tlm_dash=" + token[::-1]})
check(st == 403, "a wrong cookie: 403", st)
st, h, _ = get("/?t=" + token)
ck = h.get("set-cookie", "")
check(st == 200 and ck.startswith("tlm_dash=" + token) and "HttpOnly" in ck and "SameSite=Strict" in ck,
      "the token in the URL: 200 and an HttpOnly, SameSite=Strict cookie", (st, ck))
st, h, _ = get("/api/jobs", cookie)
check(st == 200, "the cookie alone is enough", st)
check("default-src 'none'" in h.get("content-security-policy", "") and h.get("x-content-type-options") == "nosniff",
      "answers carry a CSP that allows the server's own scripts only, and nosniff", h)

# ---------------------------------------------------------------- its own assets, nothing else
for url, name in [("/", "index.html"), ("/index.html", "index.html"), ("/app.js", "app.js"), ("/app.css", "app.css")]:
    st, h, body = get(url, cookie)
    check(st == 200 and body == open(os.path.join(src, "dashboard/assets", name), "rb").read(),
          "%s is dashboard/assets/%s byte for byte (%s)" % (url, name, h.get("content-type")), (st, len(body)))
st, h, body = get("/vendor/uPlot.iife.min.js", cookie)
if os.environ.get("UPLOT_OK") == "0":
    # not a pass: said as not checked (no npm install of uPlot could be had)
    print("# not checked: /vendor/uPlot.iife.min.js (uPlot is not installed and npm could not install it)")
else:
    check(st == 200 and body[:200].find(b"uPlot") >= 0 and h.get("content-type", "").startswith("text/javascript"),
          "/vendor/uPlot.iife.min.js: uPlot from the npm install", (st, body[:80]))
for path in ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/vendor/../../package.json",
             "/vendor/..%2f..%2fpackage.json", "/app.js/../../../../etc/passwd", "//etc/passwd",
             "/api/../../../etc/passwd", "/vendor/uPlot.min.css/../../../package.json", "/dashboard/dash.h",
             "/vendor/uPlot.d.ts", "/..%5c..%5cetc%5cpasswd"]:
    st, _, body = get(path, cookie)
    check(st in (400, 404) and b"root:" not in body and b"playwright" not in body,
          "path outside the assets refused: %s (%s)" % (path, st), body[:200])

# a NUL cuts the path where MHD decodes it: app.js itself at most, never another file
st, _, body = get("/app.js%00/../../../etc/passwd", cookie)
check(st == 404 or body == open(os.path.join(src, "dashboard/assets/app.js"), "rb").read(),
      "/app.js%00/../../../etc/passwd: app.js itself or nothing (" + str(st) + ")")

# ---------------------------------------------------------------- bounded and malformed requests
st, _, _ = get("/?t=" + token, {"X-Big": "a" * 100000})
check(st in (413, 431) or st is None, "a 100 KB header: refused (%s), not served" % st)
check(alive(), "...and the server still answers")
st, _, _ = get("/?t=" + token + "&pad=" + "b" * 100000)
check(st in (413, 414, 431) or st is None, "a 100 KB URL: refused (%s)" % st)
st, _, _ = get("/?t=" + token, {"X-H%d" % i: "v" * 200 for i in range(400)})
check(st in (413, 431) or st is None, "400 headers of 200 bytes: refused (%s)" % st)
for data, what in [(b"GARBAGE\r\n\r\n", "a request line of one word"),
                   (b"GET\r\n\r\n", "a method alone"),
                   (b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", "HTTP/9.9"),
                   (b"GET / HTTP/1.1\r\nNo colon here\r\n\r\n", "a header without a colon"),
                   (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", "a negative Content-Length"),
                   (b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "a bad chunk size"),
                   (bytes(range(256)) * 4, "binary junk"),
                   (b"\r\n\r\n\r\n", "empty lines")]:
    st, _, _ = raw(data, timeout=5)
    check(st is None or 400 <= st < 600, "malformed: %s: an error status or a closed connection (%s)" % (what, st))
check(alive(), "...and the server still answers")
st, _, body = get("/api/jobs?t=" + token, {"Content-Length": "5"}, method="POST")
check(st == 405, "POST: 405 (the dashboard is read-only)", st)
st, _, _ = get("/api/jobs?t=" + token, method="DELETE")
check(st == 405, "DELETE: 405", st)
st, _, body = get("/api/nope?t=" + token)
check(st == 404, "an unknown API: 404", st)

# ---------------------------------------------------------------- parameters and SQL
c = sqlite3.connect("file:%s?mode=ro" % dbpath, uri=True)
n_jobs = c.execute("SELECT count(*) FROM results").fetchone()[0]
st, _, body = get("/api/jobs?t=" + token)
def rows(body):
    d = json.loads(body)
    return [dict(zip(d["columns"], r)) for r in d["rows"]]


jobs = rows(body) if st == 200 else []
check(len(jobs) == n_jobs and {j["key"] for j in jobs} == {r[0] for r in c.execute("SELECT key FROM results")},
      "/api/jobs: every job of results, once (%d)" % n_jobs, (st, len(jobs)))
evil = urllib.parse.quote("x' OR 1=1 --")
st, _, body = get("/api/jobs?sweep=%s&t=%s" % (evil, token))
check(st == 200 and rows(body) == [], "sweep=\"x' OR 1=1 --\": no jobs (a bound parameter, not SQL)",
      body[:200])
sw = c.execute("SELECT name FROM sweeps ORDER BY name LIMIT 1").fetchone()[0]
want = c.execute("SELECT count(*) FROM sweep_jobs WHERE sweep = ? AND active = 1", (sw,)).fetchone()[0]
st, _, body = get("/api/jobs?sweep=%s&t=%s" % (urllib.parse.quote(sw), token))
check(st == 200 and len(rows(body)) == want, "sweep=%s: its %d jobs" % (sw, want), body[:200])
st, _, body = get("/api/job?key=%s&t=%s" % (urllib.parse.quote("' OR ''='"), token))
check(st == 400 and b"64 hex digits" in body, "job key not 64 hex digits: 400 saying what is expected", body[:200])
st, _, body = get("/api/job?key=%s&t=%s" % ("0" * 64, token))
check(st == 404 and b"no job" in body, "an unknown job: 404", body[:200])
st, _, body = get("/api/series?key=%s&t=%s" % ("0" * 64, token))
check(st == 404 and b"no job" in body, "the curves of an unknown job: 404", body[:200])
st, _, body = get("/api/series?%s&t=%s" % ("&".join("key=" + "a" * 64 for _ in range(65)), token))
check(st == 400 and b"at most 64" in body, "65 jobs in one series request: 400 (at most 64)", (st, body[:200]))
st, h, body = get("/api/figure?name=loss&t=" + token)
check(st == 200 and h.get("content-type") == "image/svg+xml" and b"<svg" in body[:2000],
      "/api/figure?name=loss: tlm-report's loss figure as SVG (%d bytes)" % len(body), (st, h.get("content-type")))
st, _, body = get("/api/figure?name=nope&t=" + token)
check(st == 404 and b"no figure" in body, "an unknown figure: 404", body[:200])
st, _, body = get("/api/table?name=nope&t=" + token)
check(st == 404 and b"no table" in body, "an unknown table: 404", body[:200])
st, _, body = get("/api/table?name=runs&format=xls&t=" + token)
check(st == 400, "an unknown table format: 400", st)

# ---------------------------------------------------------------- pages of the jobs table, by the server
order = [r[0] for r in c.execute("SELECT key FROM jobs ORDER BY rowid")]
st, _, body = get("/api/jobs?limit=5&offset=5&t=" + token)
d = json.loads(body) if st == 200 else {}
check(st == 200 and [r["key"] for r in rows(body)] == order[5:10] and d["total"] == n_jobs and d["offset"] == 5,
      "/api/jobs?limit=5&offset=5: rows 6-10 in creation order, and the total (%d)" % n_jobs, body[:200])
st, _, body = get("/api/jobs?limit=5&offset=%d&t=%s" % (n_jobs + 10, token))
check(st == 200 and rows(body) == [], "an offset past the end: no rows", body[:200])
for bad, what in [("limit=0", "limit"), ("limit=1001", "limit"), ("limit=x", "limit"), ("offset=-1", "offset"),
                  ("sort=nope", "sort"), ("sort=val_ppl%3B%20DROP%20TABLE%20jobs", "sort"), ("dir=sideways", "dir"),
                  ("status=lost", "status"), ("cols=key,secret", "cols"), ("q=seed%3Done", "seed="),
                  ("q=" + "+".join(["w"] * 9), "words"), ("q=" + "x" * 300, "characters")]:
    st, _, body = get("/api/jobs?%s&t=%s" % (bad, token))
    check(st == 400 and what.encode() in body, "/api/jobs?%s: 400 naming %s" % (bad[:40], what), (st, body[:200]))
# sorted by the server, NULLs last either way, ties in creation order
ppl = {r[0]: r[1] for r in c.execute("SELECT key, val_ppl FROM results")}
rank = {k: i for i, k in enumerate(order)}
for direction in ("asc", "desc"):
    want_order = sorted(order, key=lambda k: (ppl[k] is None, 0 if ppl[k] is None else (ppl[k] if direction == "asc" else -ppl[k]), rank[k]))
    st, _, body = get("/api/jobs?sort=val_ppl&dir=%s&limit=1000&cols=val_ppl&t=%s" % (direction, token))
    got = [r["key"] for r in rows(body)] if st == 200 else []
    check(got == want_order and json.loads(body)["columns"] == ["key", "val_ppl"],
          "/api/jobs?sort=val_ppl&dir=%s: every job in that order, NULLs last; cols= answers only those" % direction,
          (st, body[:200]))
st, _, body = get("/api/jobs?status=done&limit=1000&t=" + token)
want_done = [r[0] for r in c.execute("SELECT key FROM jobs WHERE status = 'done' ORDER BY rowid")]
check(st == 200 and [r["key"] for r in rows(body)] == want_done and json.loads(body)["all"] == n_jobs,
      "status=done: the done jobs (%d), and the count of all" % len(want_done), body[:200])
st, _, body = get("/api/jobs?q=%s&t=%s" % (urllib.parse.quote("' OR 1=1 --"), token))
check(st == 200 and rows(body) == [], "q=\"' OR 1=1 --\": no jobs (words are bound, not SQL)", body[:200])
st, _, body = get("/api/jobs?q=%25&t=" + token)
check(st == 200 and rows(body) == [], "q=%: no jobs (a '%' is a character to find, not LIKE's wildcard)", body[:200])
cos1 = [r[0] for r in c.execute("SELECT key FROM jobs WHERE (label LIKE '%cosine%' OR schedule LIKE '%cosine%') AND seed = 1"
                                " ORDER BY rowid")]
st, _, body = get("/api/jobs?q=COSINE+seed%3D1&limit=1000&t=" + token)
check(st == 200 and [r["key"] for r in rows(body)] == cos1 and cos1,
      "q=COSINE seed=1: the %d cosine jobs of seed 1 (words in any case, seed=N exactly)" % len(cos1), body[:200])

# ---------------------------------------------------------------- a table a page at a time; a figure without data
st, _, body = get("/api/table?name=runs&format=json&limit=3&offset=2&t=" + token)
d = json.loads(body) if st == 200 else {"panels": [{"rows": []}]}
check(st == 200 and [r["cells"]["job"] for r in d["panels"][0]["rows"]] == [k[:12] for k in order[2:5]],
      "/api/table?name=runs&limit=3&offset=2: tlm-report's rows 3-5", body[:200])
st, _, body = get("/api/table?name=runs&format=page&sort=attempts&dir=desc&limit=1000&t=" + token)
d = json.loads(body) if st == 200 else {}
att = [r["cells"]["attempts"]["value"] for r in d["table"]["panels"][0]["rows"]] if st == 200 else []
check(st == 200 and len(att) == n_jobs and att == sorted(att, reverse=True) and d["rows"] == n_jobs and d["sortable"],
      "/api/table?name=runs&sort=attempts&dir=desc: every run, most attempts first", body[:200])
st, _, body = get("/api/table?name=schedule_ratio&paper=1&sort=cosine&t=" + token)
check(st == 400 and b"its own order" in body, "sorting a table whose rows come in groups (the paper's): 400", (st, body[:200]))
st, h, body = get("/api/figure?name=ppl_ratio&sweep=other&t=" + token)
check(st == 200 and h.get("content-type") == "application/json" and json.loads(body)["why"].startswith("nothing to draw yet"),
      "a figure with nothing to draw: 200 and why, as JSON (the page shows it in the figure's place)", (st, body[:200]))
key = order[0]
st, _, body = get("/api/series?key=%s&metric=loss&points=5&t=%s" % (key, token))
d = json.loads(body)["series"][key] if st == 200 else {}
nsteps = c.execute("SELECT count(*) FROM steps WHERE job = ?", (key,)).fetchone()[0]
check(st == 200 and set(d) == {"steps", "meta"} and set(d["steps"]) == {"step", "tokens", "loss", "rows", "stride"} and
      len(d["steps"]["loss"]) <= 6 and d["steps"]["rows"] == nsteps,
      "/api/series?metric=loss&points=5: the loss alone, thinned to 5 points and the last (of %d)" % nsteps, body[:300])
for bad in ["metric=nope", "points=1", "points=20001"]:
    st, _, body = get("/api/series?key=%s&%s&t=%s" % (key, bad, token))
    check(st == 400, "/api/series?%s: 400" % bad, (st, body[:200]))

# ---------------------------------------------------------------- conditional answers
st, h, _ = get("/api/jobs?t=" + token)
tag = h.get("etag")
check(st == 200 and tag and "server-timing" in h, "an ETag and the server's time (Server-Timing: %s)" % h.get("server-timing"))
st, h2, body = get("/api/jobs?t=" + token, {"If-None-Match": tag})
check(st == 304 and body == b"", "the same ETag back: 304, no body", st)
check(sha(dbpath) == db_sha, "results.db unchanged by all of the above (read-only)")
w = sqlite3.connect(dbpath, timeout=10)
w.execute("UPDATE jobs SET tokens_done = tokens_done + 1 WHERE key = (SELECT min(key) FROM jobs)")
w.commit()
w.close()
st, h3, _ = get("/api/jobs?t=" + token, {"If-None-Match": tag})
check(st == 200 and h3.get("etag") != tag, "after a commit by another connection: 200 with a new ETag", (st, h3.get("etag")))

# ---------------------------------------------------------------- many connections at once
def one(i):
    try:
        st, _, body = get("/api/jobs?t=" + token)
        return st
    except OSError as e:
        return "error"


t0 = time.time()
with concurrent.futures.ThreadPoolExecutor(max_workers=100) as ex:
    res = list(ex.map(one, range(400)))
ok200 = res.count(200)
check(ok200 >= 1 and all(r in (200, 503, "error", None) for r in res),
      "400 requests, 100 at a time: %d answered 200, the rest refused, nothing else (%.1f s)" % (ok200, time.time() - t0),
      set(map(str, res)))
# idle connections up to the limit, then a request
idle = []
for i in range(80):
    try:
        idle.append(socket.create_connection((HOST, PORT), timeout=5))
    except OSError:
        break
st_busy = None
try:
    st_busy, _, _ = raw(("GET /api/sweeps?t=%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % token).encode(), timeout=3)
except OSError:
    pass
for s in idle:
    s.close()
time.sleep(0.3)
check(alive(), "80 idle connections held open (the limit is 64), then closed: the server answers again (while full: %s)"
      % st_busy)
sys.exit(1 if failed else 0)
