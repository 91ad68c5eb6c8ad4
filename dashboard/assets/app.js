/* app.js: tlm-dash's page.  One view at a time (from the URL's #hash), drawn
 * from the server's JSON; charts are uPlot (served by tlm-dash from the npm
 * install, never from a CDN), the parallel coordinates plain SVG.  Live:
 * every 2 s the current view asks again; the server answers 304 while
 * results.db is unchanged, so nothing is redrawn, and a redraw replaces
 * what was there (charts get setData, tables are rebuilt), so the page's
 * memory does not grow over hours.
 *
 * What the server computes stays the server's: the jobs table is sorted,
 * filtered and paged there; the paper's tables arrive built and rendered
 * by reports/ (their cells' text is tlm-report's Markdown, never formatted
 * here).  Without uPlot every view still draws its tables, and a line
 * where each chart would be.
 * Text from the database is only ever set as textContent, never as HTML. */
"use strict";

const QS = new URLSearchParams(location.search);
// ?poll=MS in the page's URL changes the period (tests poll faster); never below 100 ms
const POLL_MS = Math.max(100, +QS.get("poll") || 2000);
const PAGE_SIZES = [50, 100, 200, 500, 1000]; // rows of a jobs page (the server's limit: 1000)
const MAX_COMPARE = 256; // runs on one compare chart
const SERIES_CHUNK = 64; // job keys per /api/series request (the server's limit)
const STATUSES = ["pending", "running", "done", "failed", "interrupted"];

const $ = (sel, root) => (root || document).querySelector(sel);
const tlm = { charts: {}, polls: 0, redraws: 0 }; // for the tests: the live charts and counters
window.tlm = tlm;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  return fill(e, attrs, kids);
}
function svgEl(tag, attrs, ...kids) {
  return fill(document.createElementNS("http://www.w3.org/2000/svg", tag), attrs, kids);
}
function fill(e, attrs, kids) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "on") for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}
// an object without its undefined members (uPlot copies them over its defaults)
function defined(o) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/* ------------------------------------------------------------ numbers */
function fmtNum(v, d) {
  if (v === null || v === undefined || Number.isNaN(v)) return "";
  return Number(v).toFixed(d === undefined ? 3 : d);
}
function fmtSI(v, unit) {
  if (v === null || v === undefined) return "";
  const steps = [[1e18, "E"], [1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [s, p] of steps) if (Math.abs(v) >= s) return (v / s).toFixed(v / s >= 100 ? 0 : 2) + " " + p + unit;
  return Math.round(v) + " " + unit;
}
function fmtTokens(v) {
  if (v === null || v === undefined) return "";
  const steps = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "K"]];
  for (const [s, p] of steps) if (v >= s) return +(v / s).toFixed(2) + p;
  return String(+v.toFixed(2));
}
function fmtDuration(s) {
  if (s === null || s === undefined || !isFinite(s)) return "";
  s = Math.round(s);
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h" + String(Math.floor(s % 3600 / 60)).padStart(2, "0") + "m";
  return Math.floor(s / 86400) + "d" + Math.floor(s % 86400 / 3600) + "h";
}
function fmtTime(t) {
  return t ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19) : "";
}
function fmtCount(n) {
  return Number(n).toLocaleString("en-US");
}
// a job's ratio as the jobs answer spells it (start→end, or the blocks' groups)
function ratioText(j) {
  if (j.ratio !== undefined) return j.ratio;
  if (j.ratio_start !== null && j.ratio_start !== undefined) return j.ratio_start + "\u2192" + j.ratio_end;
  return j.groups ? "[" + j.groups + "]" : "";
}

/* ------------------------------------------------------------ talking to the server */
const etags = new Map(); // url -> the ETag of what the view last drew

function banner(msg) {
  const b = $("#banner");
  b.hidden = !msg;
  b.textContent = msg || "";
}

/* The JSON at url, or null when it is what was drawn last (same ETag) and
 * `fresh` is not set.  Errors go to the banner (and return undefined). */
async function api(url, fresh) {
  let r;
  try {
    r = await fetch(url, { cache: "no-cache", credentials: "same-origin" });
  } catch (err) {
    $("#live").classList.add("stale");
    banner("tlm-dash does not answer (" + err.message + "): is it still running?");
    return undefined;
  }
  $("#live").classList.remove("stale");
  const type = r.headers.get("Content-Type") || "";
  if (!r.ok) {
    let msg = r.status + " " + r.statusText;
    if (type.startsWith("application/json")) msg = (await r.json()).error;
    else msg = (await r.text()).trim() || msg;
    banner(msg);
    return undefined;
  }
  banner("");
  const tag = r.headers.get("ETag");
  if (!fresh && tag && etags.get(url) === tag) return null;
  if (tag) etags.set(url, tag);
  return type.startsWith("application/json") ? r.json() : r.text();
}

// a query string of the members that have a value
function qs(o) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null && v !== "" && v !== false) p.set(k, v === true ? "1" : v);
  return p.toString();
}
// a view's state into the address bar without a new route: a bookmark or a reload keeps it
function setHash(path, o) {
  const q = qs(o);
  history.replaceState(null, "", location.pathname + location.search + "#/" + path + (q ? "?" + q : ""));
}

/* ------------------------------------------------------------ charts */
// Paul Tol's colour-blind-safe qualitative colours ("bright", then "muted")
const PALETTE = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#332288", "#117733",
  "#999933", "#882255", "#44aa99", "#ddcc77", "#cc6677", "#88ccee", "#aa4499", "#bbbbbb"];
const colour = (i) => PALETTE[i % PALETTE.length];
const alpha = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, "0");

/* Several (x, y) series on one x axis: the union of their xs (each sorted),
 * each series null where it has no point (spanGaps joins its line). */
function joinXY(pairs) {
  const all = [];
  for (const [xs] of pairs) for (const x of xs) all.push(x);
  all.sort((a, b) => a - b);
  const grid = [];
  for (const x of all) if (!grid.length || grid[grid.length - 1] !== x) grid.push(x);
  const out = [grid];
  for (const [xs, ys] of pairs) {
    const col = new Array(grid.length).fill(null);
    for (let i = 0, j = 0; i < xs.length; i++) {
      while (grid[j] < xs[i]) j++;
      col[j] = ys[i] === undefined ? null : ys[i];
    }
    out.push(col);
  }
  return out;
}

/* ys (at xs) linearly interpolated at the points of grid inside their own
 * range, null outside it: seeds of one configuration share their xs, so
 * this only bridges runs that logged at other steps. */
function interp(xs, ys, grid) {
  const px = [], py = [];
  for (let i = 0; i < xs.length; i++) if (ys[i] !== null && isFinite(ys[i])) { px.push(xs[i]); py.push(ys[i]); }
  const out = new Array(grid.length).fill(null);
  if (!px.length) return out;
  for (let i = 0, k = 0; i < grid.length; i++) {
    const x = grid[i];
    if (x < px[0] || x > px[px.length - 1]) continue;
    while (k + 1 < px.length && px[k + 1] < x) k++;
    if (px[k] === x) out[i] = py[k];
    else if (px[k + 1] === x) out[i] = py[k + 1];
    else out[i] = py[k] + (x - px[k]) / (px[k + 1] - px[k]) * (py[k + 1] - py[k]);
  }
  return out;
}

/* Exponential moving average, de-biased as TensorBoard and W&B do it: the
 * running average starts at 0 and is divided by 1 - a^n (n values so far),
 * the sum of the weights it gave them, so that the first points are the
 * average of what was seen, not pulled towards 0 or the first value.  NaN
 * (null) stays a gap and does not count. */
function smoothEMA(ys, a) {
  if (!a) return ys.slice();
  let last = 0, n = 0;
  return ys.map((y) => {
    if (y === null || y === undefined || !isFinite(y)) return null;
    last = last * a + (1 - a) * y;
    n++;
    return last / (1 - Math.pow(a, n));
  });
}
tlm.smooth = smoothEMA;

/* Mean and band of several columns (same length; null where a run has no
 * value): band "minmax" or "std" (mean ± sample std). */
function aggregate(cols, band) {
  const n = cols.length ? cols[0].length : 0;
  const mean = new Array(n).fill(null), lo = new Array(n).fill(null), hi = new Array(n).fill(null);
  for (let i = 0; i < n; i++) {
    let s = 0, c = 0, mn = Infinity, mx = -Infinity;
    for (const col of cols) {
      const v = col[i];
      if (v === null) continue;
      s += v; c++;
      if (v < mn) mn = v;
      if (v > mx) mx = v;
    }
    if (!c) continue;
    const m = s / c;
    mean[i] = m;
    if (band === "std") {
      let ss = 0;
      for (const col of cols) if (col[i] !== null) ss += (col[i] - m) * (col[i] - m);
      const sd = c > 1 ? Math.sqrt(ss / (c - 1)) : 0;
      lo[i] = m - sd; hi[i] = m + sd;
    } else {
      lo[i] = mn; hi[i] = mx;
    }
  }
  return { mean, lo, hi };
}

// a log axis's range: the data's own, so that it stops where they stop (pad: a little room, in log space)
function fitLog(pad) {
  return (u, min, max) => {
    if (min === null || max === null || !(min > 0) || !(max > 0)) return [min, max];
    if (min === max) return [min / 1.25, max * 1.25];
    const f = Math.pow(max / min, pad);
    return [min / f, max * f];
  };
}
// an axis as wide as its longest value (uPlot's fixed 50 px cut long ones)
function axisSize(u, values, i, cycle) {
  const a = u.axes[i];
  if (cycle > 1) return a._size;
  let w = 0;
  if (values) {
    u.ctx.font = a.font[0];
    for (const v of values) if (v) w = Math.max(w, u.ctx.measureText(v).width);
  }
  return Math.ceil(w / (window.devicePixelRatio || 1)) + a.ticks.size + a.gap + 6;
}

/* A chart in box, or its data replaced when it exists with the same shape
 * (uPlot's setData).  o: title, xlabel, ylabel, logx, logy, layers (the x
 * axis is layers 0..layers-1, ticked at whole numbers), series [{label,
 * color, width, cls, points}], bands, legend, height.  Without uPlot: a
 * line saying that the chart is not drawn, and why. */
function chart(id, box, data, o) {
  const pts = data.length > 1 ? data[1].filter((v) => v !== null && v !== undefined).length : 0;
  const shape = JSON.stringify([o.title, o.xlabel, o.ylabel, !!o.logx, !!o.logy, o.layers, o.series, o.bands, !!o.legend, o.height]);
  box.dataset.points = pts;
  let c = tlm.charts[id];
  if (c && c.shape === shape && c.box === box) {
    c.data = data;
    if (c.u) c.u.setData(data);
    return c;
  }
  if (c && c.u) c.u.destroy();
  box.textContent = "";
  box.dataset.title = o.title || "";
  box.dataset.ylabel = o.ylabel || "";
  if (typeof uPlot === "undefined") {
    box.append(el("div", { class: "nochart", text: (o.title ? o.title + ": " : "") +
      "chart not drawn: the charting library (uPlot) did not load; tlm-dash says how to install it when it starts" }));
    return (tlm.charts[id] = { u: null, shape, box, data });
  }
  const xfmt = o.layers ? (v) => String(v) : fmtTokens;
  const x = { time: false, distr: o.logx ? 3 : 1 };
  if (o.layers) x.range = () => [-0.5, Math.max(1, o.layers) - 0.5]; // no point on the frame
  else if (o.logx) x.range = fitLog(0);
  const y = { distr: o.logy ? 3 : 1 };
  if (o.logy) y.range = fitLog(0.04);
  const u = new uPlot(defined({
    title: o.title || undefined,
    width: Math.max(300, (box.clientWidth || 452) - 12),
    height: o.height || 220,
    scales: { x, y },
    axes: [
      defined({ label: o.xlabel, values: (u, vs) => vs.map(xfmt), incrs: o.layers ? [1, 2, 5, 10, 20, 50, 100] : undefined }),
      { label: o.ylabel || "", size: axisSize },
    ],
    series: [{ label: o.xlabel, value: (u, v) => (v === null || v === undefined ? "" : xfmt(v)) }].concat(o.series.map((s) => defined({
      label: s.label, stroke: s.color, width: s.width === undefined ? 1.5 : s.width, spanGaps: true, class: s.cls,
      points: o.layers ? { show: true, size: 7 } : { show: s.points === undefined ? undefined : s.points, size: 4 },
    }))),
    bands: o.bands || [],
    legend: { show: !!o.legend },
    hooks: o.hooks || {},
  }), data, box);
  return (tlm.charts[id] = { u, shape, box, data });
}

function destroyCharts() {
  for (const c of Object.values(tlm.charts)) if (c.u) c.u.destroy();
  tlm.charts = {};
}

/* ------------------------------------------------------------ tables */
/* A table: cols [{key, title, num, get(row), show(row), link(row), node(row), cls(row)}].
 * sort: {key, dir, onSort(key)}: headers that sort (the server's order), or none. */
function grid(cols, rows, sort) {
  const thead = el("tr", {}, ...cols.map((c) => {
    const cls = [];
    if (c.num) cls.push("num");
    if (sort && c.sorts !== false) cls.push("sort");
    if (sort && sort.key === c.key) cls.push(sort.dir === "desc" ? "desc" : "asc");
    return el("th", { class: cls.join(" ") || null, "data-col": c.key, text: c.head ? null : c.title,
      on: sort && c.sorts !== false ? { click: () => sort.onSort(c.key) } : null }, c.head ? c.head() : null);
  }));
  const get = (c, r) => (c.get ? c.get(r) : r[c.key]);
  const body = el("tbody");
  for (const r of rows) {
    const tr = el("tr", { "data-key": r.key });
    for (const c of cols) {
      const v = c.show ? c.show(r) : get(c, r);
      const td = el("td", { class: ((c.num ? "num " : "") + (c.cls ? c.cls(r) : "")).trim() || null, "data-col": c.key });
      if (c.node) td.append(c.node(r));
      else if (c.link) td.append(el("a", { href: c.link(r), text: v === null || v === undefined ? "" : String(v) }));
      else td.textContent = v === null || v === undefined ? "" : String(v);
      tr.append(td);
    }
    body.append(tr);
  }
  return el("table", { class: "grid" }, el("thead", {}, thead), body);
}

// rows sorted here (small tables the server answers whole: sweeps, attempts)
function sortRows(rows, key, dir) {
  if (!key) return rows;
  return rows.slice().sort((a, b) => {
    const x = a[key], y = b[key];
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * (dir === "desc" ? -1 : 1);
  });
}

// the jobs answer's rows as objects
function rowsOf(d) {
  return d.rows.map((r) => Object.fromEntries(d.columns.map((c, i) => [c, r[i]])));
}

/* ------------------------------------------------------------ views */
const views = {};
let current = null; // { name, refresh(), leave() }

views.sweeps = function () {
  const view = $("#view");
  const box = el("div", { id: "sweeps" }); // its own element: an answer that comes after the view changed draws nowhere
  view.replaceChildren(el("h2", { text: "Sweeps" }), box);
  const state = { key: null, dir: "asc" };
  let last = null;
  function draw() {
    const cols = [
      { key: "name", title: "sweep", node: (s) => el("span", {}, el("a", { href: "#/jobs?" + qs({ sweep: s.name }), text: s.name }),
        s.description ? el("div", { class: "muted small", text: s.description }) : null) },
      { key: "jobs", title: "jobs", num: true },
    ].concat(STATUSES.map((st) => ({ key: st, title: st, num: true, cls: () => "status-" + st })), [
      { key: "progress", title: "tokens", get: (s) => (s.tokens_total ? s.tokens_done / s.tokens_total : 0),
        node: (s) => el("span", {}, el("span", { class: "bar" }, el("span")),
          " " + fmtTokens(s.tokens_done) + " / " + fmtTokens(s.tokens_total)) },
      { key: "flops_done", title: "FLOPs done", num: true, show: (s) => fmtSI(s.flops_done, "FLOP") },
      { key: "flops_total", title: "of", num: true, show: (s) => fmtSI(s.flops_total, "FLOP") },
      { key: "updated_at", title: "updated", show: (s) => fmtTime(s.updated_at).slice(0, 16) },
      { key: "views", title: "", sorts: false, node: (s) => el("span", { class: "links" },
        el("a", { href: "#/compare?" + qs({ sel: 1, sweep: s.name, group: "arch,scale,schedule,ratio" }), text: "compare", title: "every job of the sweep, seeds grouped" }), " ",
        el("a", { href: "#/parallel?" + qs({ sweep: s.name }), text: "parallel", title: "parallel coordinates of its axes against val ppl" })) },
    ]);
    const rows = sortRows(last.sweeps.map((s) => Object.assign({ progress: s.tokens_total ? s.tokens_done / s.tokens_total : 0 }, s)), state.key, state.dir);
    const t = grid(cols, rows, { key: state.key, dir: state.dir, onSort: (k) => {
      state.dir = state.key === k && state.dir === "asc" ? "desc" : "asc"; state.key = k; draw(); } });
    // the progress bars' widths: a CSSOM property (the page's CSP allows no inline style attributes)
    t.querySelectorAll("td[data-col=progress] .bar > span").forEach((b, i) => {
      b.style.width = (100 * rows[i].progress).toFixed(1) + "%";
    });
    box.replaceChildren(rows.length ? el("div", { class: "scroll" }, t) : el("p", { class: "muted", text: "No sweeps in results.db yet: start tlmd with --sweeps FILE." }));
  }
  async function refresh(fresh) {
    const d = await api("/api/sweeps", fresh);
    if (!d) return;
    tlm.redraws++;
    last = d;
    draw();
  }
  return { refresh };
};

/* The jobs table's columns: `need` the answer's columns a cell shows
 * (default: its key), `std` shown until the user chooses. */
const JOB_COLS = [
  { key: "label", title: "label", link: (j) => "#/job/" + j.key, std: 1 },
  { key: "sweep", title: "sweep" },
  { key: "arch", title: "arch", std: 1 },
  { key: "scale", title: "scale", std: 1 },
  { key: "schedule", title: "schedule", std: 1 },
  { key: "ratio", title: "ratio", std: 1 },
  { key: "seed", title: "seed", num: true, std: 1 },
  { key: "status", title: "status", cls: (j) => "status-" + j.status, std: 1 },
  { key: "attempts", title: "attempts", num: true, std: 1 },
  { key: "reason", title: "last failure" },
  { key: "tokens_done", title: "tokens", num: true, need: ["tokens_done", "tokens_total"], std: 1,
    show: (j) => fmtTokens(j.tokens_done) + " / " + fmtTokens(j.tokens_total) },
  { key: "train_loss", title: "last loss", num: true, show: (j) => fmtNum(j.train_loss, 4), std: 1 },
  { key: "val_loss", title: "val loss", num: true, show: (j) => fmtNum(j.val_loss, 4) },
  { key: "val_ppl", title: "val ppl", num: true, show: (j) => fmtNum(j.val_ppl, 3), std: 1 },
  { key: "tokens_per_s", title: "tokens/s", num: true, show: (j) => (j.tokens_per_s === null ? "" : Math.round(j.tokens_per_s)), std: 1 },
  { key: "eta", title: "ETA", num: true, show: (j) => fmtDuration(j.eta), std: 1 },
  { key: "params", title: "params", num: true, show: (j) => fmtSI(j.params, "").trim() },
  { key: "flops_per_token", title: "FLOPs/token", num: true, show: (j) => fmtSI(j.flops_per_token, "").trim() },
  { key: "train_seconds", title: "training time", num: true, show: (j) => fmtDuration(j.train_seconds) },
  { key: "created_at", title: "created", show: (j) => fmtTime(j.created_at) },
  { key: "finished_at", title: "finished", show: (j) => fmtTime(j.finished_at) },
];
const COLS_KEY = "tlm-dash.columns";
function chosenCols() {
  let keys = null;
  try { keys = JSON.parse(localStorage.getItem(COLS_KEY)); } catch (e) { keys = null; }
  const known = Array.isArray(keys) ? JOB_COLS.filter((c) => keys.includes(c.key)) : [];
  return known.length ? known : JOB_COLS.filter((c) => c.std);
}

views.jobs = function (params) {
  const view = $("#view");
  const limit = +params.get("limit");
  const st = {
    sweep: params.get("sweep") || "", q: params.get("q") || "", status: params.get("status") || "",
    sort: params.get("sort") || "", dir: params.get("dir") === "desc" ? "desc" : "asc",
    offset: Math.max(0, Math.floor(+params.get("offset") || 0)), limit: limit >= 1 && limit <= 1000 ? Math.floor(limit) : 100,
    picked: new Set(), all: false,
  };
  let cols = chosenCols(), last = null, seq = 0;
  const save = () => setHash("jobs", { sweep: st.sweep, q: st.q, status: st.status, sort: st.sort, dir: st.sort && st.dir === "desc" ? "desc" : "",
    offset: st.offset || "", limit: st.limit === 100 ? "" : st.limit });
  const filter = el("input", { type: "search", id: "filter", placeholder: "filter: words of label, arch, scale, schedule, status, seed=N...", value: st.q });
  const status = el("select", { id: "status" }, el("option", { value: "", text: "any status" }),
    ...STATUSES.map((s) => el("option", { value: s, text: s, selected: s === st.status })));
  const size = el("select", { id: "page-size", title: "rows per page" },
    ...[...new Set(PAGE_SIZES.concat(st.limit))].sort((a, b) => a - b).map((n) => el("option", { value: n, text: n + " a page", selected: n === st.limit })));
  const count = el("span", { class: "muted", id: "count" });
  const compare = el("button", { id: "compare", text: "compare selected", disabled: true, on: { click: () => {
    location.hash = st.all ? "#/compare?" + qs({ sel: 1, sweep: st.sweep, q: st.q, status: st.status, sort: st.sort, dir: st.sort ? st.dir : "" })
      : "#/compare?keys=" + [...st.picked].join(",");
  } } });
  const selAll = el("button", { id: "select-all", class: "link", hidden: true, on: { click: () => { st.all = true; draw(); } } });
  const clear = el("button", { id: "select-none", class: "link", text: "clear selection", hidden: true,
    on: { click: () => { st.all = false; st.picked.clear(); draw(); } } });
  const colMenu = el("details", { class: "menu", id: "columns" }, el("summary", { text: "columns" }),
    el("div", { class: "menu-body" }, ...JOB_COLS.map((c) => el("label", {}, el("input", { type: "checkbox", value: c.key,
      checked: cols.includes(c), on: { change: () => {
        const keys = [...colMenu.querySelectorAll("input:checked")].map((i) => i.value);
        if (!keys.length) return;
        localStorage.setItem(COLS_KEY, JSON.stringify(keys));
        cols = chosenCols();
        refresh(true);
      } } }), " " + c.title))));
  const pager = el("span", { class: "pager", id: "pager" });
  let typing = null;
  filter.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { st.q = filter.value.trim(); st.offset = 0; st.all = false; save(); refresh(true); }, 250);
  });
  status.addEventListener("change", () => { st.status = status.value; st.offset = 0; st.all = false; save(); refresh(true); });
  size.addEventListener("change", () => { st.limit = +size.value; st.offset = 0; save(); refresh(true); });
  const holder = el("div", { id: "jobs" });
  view.replaceChildren(el("h2", { text: st.sweep ? "Jobs of sweep " + st.sweep : "Jobs" }),
    el("div", { class: "tools" }, filter, status, colMenu, compare, selAll, clear, count),
    holder, el("div", { class: "tools" }, pager, size));

  function url() {
    const need = new Set(["key", "status"]);
    for (const c of cols) for (const k of c.need || [c.key]) need.add(k);
    return "/api/jobs?" + qs({ sweep: st.sweep, q: st.q, status: st.status, sort: st.sort, dir: st.sort ? st.dir : "",
      offset: st.offset, limit: st.limit, cols: [...need].join(",") });
  }
  function go(offset) {
    st.offset = Math.max(0, offset);
    save();
    refresh(true);
  }
  function draw() {
    if (!last) return;
    const rows = rowsOf(last);
    const onPage = rows.length > 0 && rows.every((j) => st.picked.has(j.key));
    const pageBox = el("input", { type: "checkbox", id: "pick-page", title: "select the jobs of this page", checked: onPage || st.all,
      on: { change: (ev) => { for (const j of rows) ev.target.checked ? st.picked.add(j.key) : st.picked.delete(j.key);
        if (!ev.target.checked) st.all = false; draw(); } } });
    const pick = { key: "pick", title: "", sorts: false, head: () => pageBox,
      node: (j) => el("input", { type: "checkbox", checked: st.all || st.picked.has(j.key), on: { change: (ev) => {
        ev.target.checked ? st.picked.add(j.key) : st.picked.delete(j.key);
        if (!ev.target.checked) st.all = false;
        draw();
      } } }) };
    const t = grid([pick].concat(cols), rows, { key: st.sort, dir: st.dir, onSort: (k) => {
      st.dir = st.sort === k && st.dir === "asc" ? "desc" : "asc";
      st.sort = k;
      go(0);
    } });
    t.id = "jobs-table";
    holder.replaceChildren(el("div", { class: "scroll" }, t));
    const n = st.all ? last.total : st.picked.size;
    compare.disabled = n < 1;
    compare.textContent = n ? (st.all && n > MAX_COMPARE ? `compare the first ${MAX_COMPARE} of ${fmtCount(n)}` : `compare ${fmtCount(n)} selected`) : "compare selected";
    if (!st.all && st.picked.size > MAX_COMPARE) {
      compare.disabled = true;
      compare.textContent = `compare: at most ${MAX_COMPARE} (${fmtCount(st.picked.size)} selected)`;
    }
    selAll.hidden = st.all || !onPage || last.total <= rows.length;
    selAll.textContent = `select all ${fmtCount(last.total)} matching`;
    clear.hidden = !st.all && !st.picked.size;
    const from = rows.length ? last.offset + 1 : 0, to = last.offset + rows.length;
    count.textContent = (st.q || st.status ? `${fmtCount(last.total)} of ${fmtCount(last.all)} jobs match` : `${fmtCount(last.all)} jobs`) +
      (st.all ? ` \u00b7 all ${fmtCount(last.total)} selected` : st.picked.size ? ` \u00b7 ${fmtCount(st.picked.size)} selected` : "");
    const lastPage = Math.max(0, Math.floor((last.total - 1) / st.limit) * st.limit);
    pager.replaceChildren(
      el("button", { id: "page-first", text: "\u00ab", title: "first page", disabled: st.offset === 0, on: { click: () => go(0) } }),
      el("button", { id: "page-prev", text: "\u2039 previous", disabled: st.offset === 0, on: { click: () => go(st.offset - st.limit) } }),
      el("span", { id: "page-of", text: ` ${fmtCount(from)}\u2013${fmtCount(to)} of ${fmtCount(last.total)} ` }),
      el("button", { id: "page-next", text: "next \u203a", disabled: to >= last.total, on: { click: () => go(st.offset + st.limit) } }),
      el("button", { id: "page-last", text: "\u00bb", title: "last page", disabled: to >= last.total, on: { click: () => go(lastPage) } }));
  }
  async function refresh(fresh) {
    const mine = ++seq, u = url();
    const d = await api(u, fresh);
    if (d && mine !== seq) etags.delete(u); // overtaken by a newer request: not drawn, so that one must not read as unchanged
    if (!d || mine !== seq) return;
    tlm.redraws++;
    last = d;
    if (d.total && st.offset >= d.total) return go(Math.floor((d.total - 1) / st.limit) * st.limit); // past the end (jobs went away)
    draw();
  }
  return { refresh };
};

function kvTable(pairs) {
  return el("table", { class: "kv" }, el("tbody", {}, ...pairs.filter((p) => p[1] !== null && p[1] !== undefined && p[1] !== "")
    .map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { text: String(v) })))));
}

/* uPlot data from the server's columns: [x, y1, y2...] (NaN arrives as null). */
function cols(c, x, ...ys) {
  return [c[x]].concat(ys.map((y) => c[y]));
}

const JOB_CHARTS = [
  ["loss", "training and validation loss", "loss"], ["ppl", "validation perplexity", "perplexity"],
  ["lr", "learning rate", "learning rate"], ["grad", "gradient norm (before clipping)", "gradient norm"],
  ["tps", "tokens/s", "tokens/s"], ["dff", "d_ff per layer", "d_ff"], ["rho", "rho per layer", "rho"],
];

views.job = function (params, key) {
  const view = $("#view");
  const head = el("div", { id: "job-head" });
  const charts = el("div", { class: "charts" });
  const boxes = {};
  let points = 0; // 0: the server's default; "all points" asks for its maximum
  for (const [id, title] of JOB_CHARTS) {
    boxes[id] = el("div", { class: "plot", id: "chart-" + id });
    charts.append(el("div", { class: "chart" }, el("div", { class: "title", text: title }), boxes[id]));
  }
  const thin = el("p", { class: "muted", id: "thinned", hidden: true });
  const rest = el("div", { id: "job-rest" });
  view.replaceChildren(head, charts, thin, rest);
  async function refresh(fresh) {
    const [j, s] = await Promise.all([api("/api/job?key=" + key, fresh),
      api("/api/series?key=" + key + (points ? "&points=" + points : ""), fresh)]);
    if (j === undefined || s === undefined) return;
    if (j === null && s === null) return;
    tlm.redraws++;
    const job = j ? j.job[0] : refresh.job;
    if (j) { refresh.job = job; refresh.detail = j; }
    if (!job) return;
    const series = s ? s.series[key] : refresh.series;
    if (s) refresh.series = series;
    head.replaceChildren(el("h2", { text: job.label + "  \u00b7  " + job.arch + " " + job.scale + " seed " + job.seed }),
      el("p", {}, el("span", { class: "status-" + job.status, text: job.status }),
        ` \u00b7 ${fmtTokens(job.tokens_done)} of ${fmtTokens(job.tokens_total)} tokens \u00b7 attempts ${job.attempts}` +
        (job.reason ? ` \u00b7 last failure: ${job.reason}` : "") + ` \u00b7 key ${job.key.slice(0, 12)}`),
      el("p", {}, el("a", { href: "#/compare?keys=" + key, text: "compare with others" })));
    const st = series.steps, v = series.val;
    thin.hidden = st.stride <= 1 && v.stride <= 1;
    thin.replaceChildren(`Curves thinned evenly to every ${st.stride}th of ${fmtCount(st.rows)} steps (the last one kept). `,
      points ? null : el("a", { href: "#", id: "all-points", text: "all points (up to 20,000)", on: { click: (ev) => {
        ev.preventDefault(); points = 20000; refresh(true); } } }));
    const y = Object.fromEntries(JOB_CHARTS.map(([id, , label]) => [id, label]));
    chart("loss", boxes.loss, joinXY([[st.tokens, st.loss], [v.tokens, v.val_loss]]),
      { xlabel: "tokens", ylabel: y.loss, series: [{ label: "train loss", color: colour(0) }, { label: "val loss", color: colour(1) }], legend: true });
    chart("ppl", boxes.ppl, cols(v, "tokens", "val_ppl"), { xlabel: "tokens", ylabel: y.ppl, series: [{ label: "val ppl", color: colour(0) }] });
    chart("lr", boxes.lr, cols(st, "tokens", "lr"), { xlabel: "tokens", ylabel: y.lr, series: [{ label: "lr", color: colour(0) }] });
    chart("grad", boxes.grad, cols(st, "tokens", "grad_norm"), { xlabel: "tokens", ylabel: y.grad, series: [{ label: "grad norm", color: colour(0) }] });
    chart("tps", boxes.tps, cols(st, "tokens", "tokens_per_s"), { xlabel: "tokens", ylabel: y.tps, series: [{ label: "tokens/s", color: colour(0) }] });
    const layers = (refresh.detail || {}).layers || [];
    const widths = job.widths ? JSON.parse(job.widths) : layers.filter((l) => l.name === "d_ff").map((l) => l.value);
    chart("dff", boxes.dff, [widths.map((w, i) => i), widths], { xlabel: "layer", ylabel: y.dff, layers: widths.length,
      series: [{ label: "d_ff", color: colour(0), width: 1 }], legend: true });
    const rho = layers.filter((l) => l.name.startsWith("rho"));
    const rhoNames = [...new Set(rho.map((l) => l.name))];
    if (rhoNames.length) {
      const n = Math.max(...rho.map((l) => l.layer)) + 1;
      const xs = [...Array(n).keys()];
      const data = [xs].concat(rhoNames.map((nm) => xs.map((i) => {
        const l = rho.find((x) => x.name === nm && x.layer === i);
        return l ? l.value : null;
      })));
      chart("rho", boxes.rho, data, { xlabel: "layer", ylabel: y.rho, layers: n, legend: true,
        series: rhoNames.map((nm, i) => ({ label: nm, color: colour(i), width: 1 })) });
    } else {
      boxes.rho.replaceChildren(el("div", { class: "empty", text: "not measured for this job (model.probe, docs/engine.md)" }));
    }
    if (j) {
      const d = j;
      rest.replaceChildren(
        el("h3", { text: "Attempts" }),
        grid([
          { key: "n", title: "#", num: true }, { key: "host", title: "node" }, { key: "device", title: "device" },
          { key: "started_at", title: "started", show: (a) => fmtTime(a.started_at) },
          { key: "ended_at", title: "ended", show: (a) => fmtTime(a.ended_at) },
          { key: "reason", title: "reason" }, { key: "message", title: "message" },
          { key: "step", title: "last step", num: true }, { key: "resumed_from_step", title: "resumed from", num: true },
          { key: "exit_code", title: "exit", num: true },
        ], d.attempts),
        el("h3", { text: "Latest evaluations" }),
        grid([{ key: "suite", title: "suite" }, { key: "task", title: "task" }, { key: "metric", title: "metric" },
          { key: "value", title: "value", num: true, show: (e) => (e.nonfinite || fmtNum(e.value, 4)) },
          { key: "step", title: "step", num: true }, { key: "n", title: "n", num: true }], d.evals),
        el("h3", { text: "Environment (last attempt)" }),
        kvTable(Object.entries(d.attempts.length ? d.attempts[d.attempts.length - 1] : {})
          .filter(([k]) => ["git_commit", "tlm_version", "compiler", "blas", "blas_kernel", "threads", "cuda", "driver", "os", "cmdline", "host"].includes(k))),
        el("h3", { text: "Job" }),
        kvTable([["key", job.key], ["sweep", job.sweep], ["params", job.params], ["FLOPs per token", job.flops_per_token],
          ["run folder", job.run_dir], ["created", fmtTime(job.created_at)], ["finished", fmtTime(job.finished_at)],
          ["training time", fmtDuration(job.train_seconds)], ["message", job.message]]),
        el("h3", { text: "Config" }),
        el("pre", { id: "config", text: prettyJSON(job.config) }));
    }
  }
  return { refresh };
};

function prettyJSON(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch (e) { return s; }
}

/* ------------------------------------------------------------ compare */
// metric: [the series' part, its column, the chart's title, the y axis's label]
const METRICS = {
  loss: ["steps", "loss", "training loss", "loss"],
  val_loss: ["val", "val_loss", "validation loss", "loss"],
  val_ppl: ["val", "val_ppl", "validation perplexity", "perplexity"],
  lr: ["steps", "lr", "learning rate", "learning rate"],
  grad_norm: ["steps", "grad_norm", "gradient norm (before clipping)", "gradient norm"],
  tokens_per_s: ["steps", "tokens_per_s", "tokens/s", "tokens/s"],
};
// the sweep's axes a compare can group by (seeds always fold into a group)
const AXES = {
  arch: ["architecture", (m) => m.arch],
  scale: ["scale", (m) => m.scale],
  schedule: ["schedule", (m) => m.schedule],
  ratio: ["ratio", (m) => ratioText(m) || "none"],
};
const BANDS = { minmax: "min\u2013max of the runs", std: "mean \u00b1 1 std of the runs" };

views.compare = function (params) {
  const view = $("#view");
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  const st = {
    keys: (params.get("keys") || "").split(",").filter((k) => /^[0-9a-f]{64}$/.test(k)).slice(0, MAX_COMPARE),
    sel: params.get("sel") === "1" ? { sweep: params.get("sweep") || "", q: params.get("q") || "", status: params.get("status") || "",
      sort: params.get("sort") || "", dir: params.get("dir") || "" } : null,
    metric: METRICS[params.get("metric")] ? params.get("metric") : "loss",
    smooth: clamp(+params.get("smooth") || 0, 0, 0.99),
    raw: params.get("raw") === "1", logx: params.get("logx") === "1", logy: params.get("logy") === "1",
    group: (params.get("group") || "").split(",").filter((g) => AXES[g]),
    band: BANDS[params.get("band")] ? params.get("band") : "minmax",
    runs: params.get("runs") === "1",
  };
  if (!st.keys.length && !st.sel) {
    view.replaceChildren(el("h2", { text: "Compare" }),
      el("p", { class: "muted", text: `Tick jobs in the Jobs view (or select all that match a filter) and press \u201ccompare\u201d: up to ${MAX_COMPARE} runs, grouped by any axis.` }));
    return { refresh() {} };
  }
  const save = () => setHash("compare", Object.assign(st.sel ? { sel: 1 } : { keys: st.keys.join(",") }, st.sel || {}, {
    metric: st.metric === "loss" ? "" : st.metric, smooth: st.smooth || "", raw: st.raw, logx: st.logx, logy: st.logy,
    group: st.group.join(","), band: st.band === "minmax" ? "" : st.band, runs: st.runs }));
  const metric = el("select", { id: "metric" }, ...Object.entries(METRICS).map(([k, m]) => el("option", { value: k, text: m[2], selected: k === st.metric })));
  const sm = el("input", { type: "range", id: "smooth", min: 0, max: 0.99, step: 0.01, value: st.smooth });
  const smv = el("span", { class: "muted", id: "smooth-value", text: st.smooth.toFixed(2) });
  const box = (id, on, title) => el("input", { type: "checkbox", id, checked: on, title });
  const raw = box("raw", st.raw, "the unsmoothed values, faint, behind each line");
  const logx = box("logx", st.logx), logy = box("logy", st.logy);
  const groupBoxes = Object.entries(AXES).map(([k, [title]]) => el("label", {}, box("group-" + k, st.group.includes(k)), " " + title));
  const band = el("select", { id: "band" }, ...Object.entries(BANDS).map(([k, t]) => el("option", { value: k, text: "band: " + t, selected: k === st.band })));
  const runs = box("runs", st.runs, "each run of a group as a thin line");
  const plot = el("div", { class: "plot", id: "chart-compare" });
  const note = el("p", { class: "muted", id: "compare-note" });
  const legend = el("div", { id: "compare-legend" });
  const heading = el("h2", { text: "Compare" });
  let keys = st.keys, data = {}, lastSel = null, total = 0;
  const metricChanged = () => { data = {}; etags.clear(); refresh(true); };
  const redraw = () => {
    const m = metric.value !== st.metric;
    st.metric = metric.value; st.smooth = +sm.value; st.raw = raw.checked; st.logx = logx.checked; st.logy = logy.checked;
    st.group = Object.keys(AXES).filter((k, i) => groupBoxes[i].firstChild.checked);
    st.band = band.value; st.runs = runs.checked;
    smv.textContent = st.smooth.toFixed(2);
    save();
    if (m) metricChanged(); else draw();
  };
  for (const c of [metric, sm, raw, logx, logy, band, runs, ...groupBoxes.map((l) => l.firstChild)]) c.addEventListener("input", redraw);
  view.replaceChildren(heading,
    el("div", { class: "tools" }, el("label", {}, "metric ", metric), el("label", {}, "smoothing ", sm, " ", smv),
      el("label", {}, raw, " raw"), el("label", {}, logx, " log x"), el("label", {}, logy, " log y")),
    el("div", { class: "tools" }, el("span", {}, "group by"), ...groupBoxes, band, el("label", {}, runs, " runs of each group"),
      el("span", { class: "muted", text: "(seeds fold into their group)" })),
    el("div", { class: "chart" }, plot), note, legend);

  // every run's curve of this metric: [{key, meta, xs, ys}], those with no point left out
  function runsOf() {
    const [part, col] = METRICS[st.metric];
    const out = [];
    for (const k of keys) {
      const s = data[k];
      if (!s || !s[part] || !s[part].tokens.length) continue; // a job with no point yet (pending)
      const xs = [], ys = [];
      const y0 = s[part][col];
      for (let i = 0; i < s[part].tokens.length; i++) {
        if (st.logx && !(s[part].tokens[i] > 0)) continue; // a log axis shows positive values only
        xs.push(s[part].tokens[i]);
        ys.push(y0[i]);
      }
      out.push({ key: k, meta: s.meta[0], xs, ys });
    }
    return out;
  }
  const positive = (ys) => (st.logy ? ys.map((v) => (v !== null && v > 0 ? v : null)) : ys);
  const runName = (m, k) => `${m.label} s${m.seed} ${k.slice(0, 6)}`;

  function draw() {
    const runsNow = runsOf();
    const [, , title, ylabel] = METRICS[st.metric];
    // the lines: one per run, or one per group of runs that agree on the chosen axes
    let lines;
    if (st.group.length) {
      const byName = new Map();
      for (const r of runsNow) {
        const name = st.group.map((g) => AXES[g][1](r.meta)).join(" \u00b7 ");
        if (!byName.has(name)) byName.set(name, []);
        byName.get(name).push(r);
      }
      lines = [...byName.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([name, members]) => {
        const xs = joinXY(members.map((r) => [r.xs, r.ys]))[0];
        const on = (f) => members.map((r) => interp(r.xs, f(r.ys), xs));
        const agg = aggregate(on((ys) => positive(smoothEMA(ys, st.smooth))), st.band);
        return { name, members, xs, ys: agg.mean, lo: agg.lo, hi: agg.hi,
          raw: st.raw && st.smooth ? aggregate(on((ys) => positive(ys)), "minmax").mean : null,
          each: st.runs ? members.map((r) => ({ r, ys: positive(smoothEMA(r.ys, st.smooth)) })) : [] };
      });
    } else {
      lines = runsNow.map((r) => ({ name: runName(r.meta, r.key), members: [r], xs: r.xs, ys: positive(smoothEMA(r.ys, st.smooth)),
        raw: st.raw && st.smooth ? positive(r.ys) : null, each: [] }));
    }
    // uPlot's series, in drawing order: band edges, each run, raw, then the line on top
    const pairs = [], series = [], bands = [];
    lines.forEach((l, i) => {
      const c = colour(i);
      l.colour = c;
      if (l.lo) {
        pairs.push([l.xs, l.hi], [l.xs, l.lo]);
        series.push({ label: l.name + " (band top)", color: "transparent", width: 0, cls: "band-edge", points: false },
          { label: l.name + " (band bottom)", color: "transparent", width: 0, cls: "band-edge", points: false });
        bands.push({ series: [series.length - 1, series.length], fill: alpha(c, 0.18) });
      }
      for (const e of l.each) {
        pairs.push([e.r.xs, e.ys]);
        series.push({ label: runName(e.r.meta, e.r.key), color: alpha(c, 0.45), width: 1, cls: "member", points: false });
      }
      if (l.raw) {
        pairs.push([l.xs, l.raw]);
        series.push({ label: l.name + " (raw)", color: alpha(c, 0.3), width: 1, cls: "raw", points: false });
      }
      pairs.push([l.xs, l.ys]);
      series.push({ label: l.name, color: c, width: st.group.length ? 2 : 1.5, cls: "line" });
      l.index = series.length; // uPlot's index of the line (0 is x)
    });
    const chartTitle = title + (st.smooth ? ` (smoothed ${st.smooth.toFixed(2)}, de-biased EMA)` : "") +
      (st.group.length ? ` \u00b7 mean of each group, band ${BANDS[st.band]}` : "");
    const c = chart("compare", plot, joinXY(pairs), { title: chartTitle, xlabel: "tokens", ylabel, logx: st.logx, logy: st.logy,
      series, bands, height: 420, hooks: { setCursor: [(u) => cursorValues(u)] } });
    tlm.compare = { title: chartTitle, ylabel, lines: lines.map((l) => ({ name: l.name, runs: l.members.map((r) => r.key), index: l.index,
      ys: l.ys, xs: l.xs, lo: l.lo || null, hi: l.hi || null, raw: l.raw })), series: series.map((s) => s.label) };
    heading.textContent = `Compare ${fmtCount(runsNow.length)} runs` + (st.group.length ? ` in ${lines.length} groups` : "");
    note.textContent = (st.sel && total > keys.length ? `The first ${MAX_COMPARE} of ${fmtCount(total)} jobs that match (in the jobs table's order). ` : "") +
      (runsNow.length < keys.length ? `${keys.length - runsNow.length} of the jobs have no ${title} yet. ` : "");
    // the legend: each line's colour, name, runs (the runs behind a group on demand), last value, value at the cursor
    const body = el("tbody");
    for (const l of lines) {
      const lastV = [...l.ys].reverse().find((v) => v !== null);
      const who = l.members.length > 1 || st.group.length ? el("details", {}, el("summary", { text: l.members.length + (l.members.length > 1 ? " runs" : " run") }),
        el("ul", {}, ...l.members.map((r) => el("li", {}, el("a", { href: "#/job/" + r.key, text: runName(r.meta, r.key) })))))
        : el("a", { href: "#/job/" + l.members[0].key, text: "job" });
      body.append(el("tr", { "data-line": l.name }, el("td", {}, el("span", { class: "swatch", "data-colour": l.colour })),
        el("td", { text: l.name }), el("td", {}, who), el("td", { class: "num", text: lastV === undefined ? "" : fmtNum(lastV, 4) }),
        el("td", { class: "num cursor-value" })));
    }
    legend.replaceChildren(el("table", { class: "grid", id: "compare-lines" }, el("thead", {}, el("tr", {},
      el("th", {}), el("th", { text: st.group.length ? "group (" + st.group.map((g) => AXES[g][0]).join(", ") + ")" : "run" }),
      el("th", { text: "runs" }), el("th", { class: "num", text: "last" }), el("th", { class: "num", text: "at the cursor" }))), body));
    // swatches: a CSSOM property (no inline style attributes under the page's CSP)
    legend.querySelectorAll(".swatch").forEach((s) => { s.style.background = s.dataset.colour; });
    function cursorValues(u) {
      const i = u.cursor.idx;
      legend.querySelectorAll("tbody tr").forEach((tr, k) => {
        const v = i === null || i === undefined ? null : u.data[lines[k].index][i];
        tr.lastChild.textContent = v === null || v === undefined ? "" : fmtNum(v, 4);
      });
    }
    return c;
  }
  async function refresh(fresh) {
    if (st.sel) {
      const d = await api("/api/jobs?" + qs(Object.assign({}, st.sel, { dir: st.sel.sort ? st.sel.dir : "", limit: MAX_COMPARE, cols: "key" })), fresh || !lastSel);
      if (d === undefined) return;
      if (d) { lastSel = d; total = d.total; keys = rowsOf(d).map((r) => r.key); }
    }
    const points = keys.length <= 16 ? 2000 : Math.max(200, Math.floor(32000 / keys.length));
    const urls = [];
    for (let i = 0; i < keys.length; i += SERIES_CHUNK)
      urls.push("/api/series?" + qs({ metric: st.metric, points }) + "&" + keys.slice(i, i + SERIES_CHUNK).map((k) => "key=" + k).join("&"));
    const got = await Promise.all(urls.map((u) => api(u, fresh || !Object.keys(data).length)));
    if (got.some((d) => d === undefined)) return;
    if (got.every((d) => d === null) && !fresh) return;
    tlm.redraws++;
    for (const d of got) if (d) Object.assign(data, d.series);
    draw();
  }
  return { refresh };
};

/* ------------------------------------------------------------ parallel coordinates */
// the axes a sweep can vary, and val ppl; categorical ones list their values, in this order
const PC_AXES = [
  { key: "arch", title: "architecture" },
  { key: "scale", title: "scale", order: "params" },
  { key: "schedule", title: "schedule" },
  { key: "ratio", title: "ratio", get: (j) => j.ratio || "none" },
  { key: "tokens_total", title: "tokens", num: true, show: fmtTokens, cat: true },
  { key: "seed", title: "seed", num: true, cat: true },
  { key: "val_ppl", title: "val ppl", num: true },
];
const PC_LIMIT = 1000;
// a sequential colour-blind-safe ramp (viridis, stopped before its pale yellow end), low perplexity dark
const RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [160, 218, 57]];
function ramp(t) {
  t = Math.min(1, Math.max(0, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(t)), f = t - i;
  const c = RAMP[i].map((v, k) => Math.round(v + (RAMP[i + 1][k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}
function niceTicks(lo, hi, n) {
  const span = hi - lo || Math.abs(hi) || 1;
  const step0 = span / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

views.parallel = function (params) {
  const view = $("#view");
  const sweep = params.get("sweep") || "";
  const holder = el("div", { id: "parallel", class: "chart" });
  const note = el("p", { class: "muted", id: "parallel-note" });
  const picked = el("p", { id: "parallel-picked" });
  view.replaceChildren(el("h2", { text: "Parallel coordinates" + (sweep ? " of sweep " + sweep : "") }),
    el("p", { class: "muted", text: "Each line is a finished job: the sweep's axes that vary, and its validation perplexity (colour: lower is darker). Drag along an axis to keep the lines that pass through that range; click the axis to clear it." }),
    holder, note, picked);
  const brush = {}; // axis key -> [lo, hi] in pixels
  let last = null;
  function draw() {
    const jobs = rowsOf(last).filter((j) => j.val_ppl !== null);
    tlm.parallel = { jobs: jobs.length, total: last.total, axes: [], kept: jobs.length };
    note.textContent = (last.total > PC_LIMIT ? `The ${PC_LIMIT} jobs of lowest val ppl of the ${fmtCount(last.total)} done. ` : "") +
      (jobs.length ? "" : "No finished job with a validation perplexity yet.");
    if (!jobs.length) { holder.replaceChildren(); picked.replaceChildren(); return; }
    const axes = PC_AXES.map((a) => {
      const get = a.get || ((j) => j[a.key]);
      let values = [...new Set(jobs.map(get))];
      if (a.cat || !a.num) {
        if (a.order) { // scale: by the jobs' size
          const size = new Map(jobs.map((j) => [get(j), j[a.order]]));
          values.sort((x, y) => size.get(x) - size.get(y));
        } else {
          values.sort((x, y) => (a.num ? x - y : String(x).localeCompare(String(y))));
        }
      }
      return Object.assign({ get, values }, a);
    }).filter((a) => a.key === "val_ppl" || a.values.length > 1);
    const W = Math.max(640, holder.clientWidth - 12), H = 420, top = 30, bottom = H - 40, left = 70, right = W - 80;
    const xOf = (i) => left + (axes.length > 1 ? i * (right - left) / (axes.length - 1) : 0);
    const ppl = jobs.map((j) => j.val_ppl);
    const pmin = Math.min(...ppl), pmax = Math.max(...ppl);
    // where a job crosses each axis: categories spread evenly, numbers linear (low at the bottom)
    for (const a of axes) {
      if (a.num && !a.cat) {
        const lo = a.key === "val_ppl" ? pmin : Math.min(...a.values), hi = a.key === "val_ppl" ? pmax : Math.max(...a.values);
        const pad = (hi - lo) * 0.04 || Math.abs(hi) * 0.01 || 1;
        a.lo = lo - pad; a.hi = hi + pad;
        a.y = (v) => bottom - (v - a.lo) / (a.hi - a.lo) * (bottom - top);
        const ticks = niceTicks(a.lo, a.hi, 6);
        const step = ticks.length > 1 ? ticks[1] - ticks[0] : 1;
        a.ticks = ticks.map((v) => [a.y(v), fmtNum(v, Math.max(0, -Math.floor(Math.log10(step) + 1e-9)))]);
      } else {
        const n = a.values.length;
        a.y = (v) => (n === 1 ? (top + bottom) / 2 : bottom - a.values.indexOf(v) * (bottom - top) / (n - 1));
        a.ticks = a.values.map((v) => [a.y(v), a.show ? a.show(v) : String(v)]);
      }
    }
    tlm.parallel.axes = axes.map((a) => a.title);
    const va = axes.find((a) => a.key === "val_ppl");
    tlm.parallel.scale = { lo: va.lo, hi: va.hi, top, bottom }; // for the tests: where a perplexity is drawn
    const svg = svgEl("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "pc" });
    const lines = svgEl("g", { class: "pc-lines" });
    const order = jobs.map((j, i) => i).sort((p, q) => jobs[q].val_ppl - jobs[p].val_ppl); // best drawn last, on top
    const paths = [];
    for (const i of order) {
      const j = jobs[i];
      const d = axes.map((a, k) => (k ? "L" : "M") + xOf(k).toFixed(1) + " " + a.y(a.get(j)).toFixed(1)).join(" ");
      const p = svgEl("path", { d, stroke: ramp(pmax > pmin ? (j.val_ppl - pmin) / (pmax - pmin) : 0), "data-key": j.key },
        svgEl("title", { text: `${j.label} s${j.seed}: val ppl ${fmtNum(j.val_ppl, 3)}` }));
      p.addEventListener("click", () => { location.hash = "#/job/" + j.key; });
      paths.push({ p, j });
      lines.append(p);
    }
    svg.append(lines);
    axes.forEach((a, k) => {
      const x = xOf(k);
      const g = svgEl("g", { class: "pc-axis", "data-axis": a.key });
      g.append(svgEl("line", { x1: x, x2: x, y1: top, y2: bottom }),
        svgEl("text", { x, y: top - 12, "text-anchor": "middle", class: "pc-title", text: a.title }));
      for (const [y, label] of a.ticks) g.append(svgEl("line", { x1: x - 4, x2: x, y1: y, y2: y }),
        svgEl("text", { x: x - 7, y: y + 4, "text-anchor": "end", text: label }));
      const b = brush[a.key];
      const rect = svgEl("rect", { class: "pc-brush", x: x - 8, width: 16, y: b ? b[0] : 0, height: b ? b[1] - b[0] : 0 });
      // the axis's grip: a wide invisible strip to drag along
      const grip = svgEl("rect", { class: "pc-grip", x: x - 14, width: 28, y: top - 4, height: bottom - top + 8 });
      g.append(rect, grip);
      const yIn = (e) => e.clientY - svg.getBoundingClientRect().top; // in the SVG's own units (drawn 1:1)
      grip.addEventListener("pointerdown", (ev) => {
        const y0 = yIn(ev);
        let moved = false;
        grip.setPointerCapture(ev.pointerId);
        const move = (e) => {
          moved = true;
          const lo = Math.min(y0, yIn(e)), hi = Math.max(y0, yIn(e));
          brush[a.key] = [lo, hi];
          rect.setAttribute("y", lo);
          rect.setAttribute("height", hi - lo);
          apply();
        };
        const up = () => {
          grip.removeEventListener("pointermove", move);
          grip.removeEventListener("pointerup", up);
          if (!moved || (brush[a.key] && brush[a.key][1] - brush[a.key][0] < 3)) {
            delete brush[a.key];
            rect.setAttribute("height", 0);
          }
          apply();
        };
        grip.addEventListener("pointermove", move);
        grip.addEventListener("pointerup", up);
      });
      svg.append(g);
    });
    holder.replaceChildren(svg);
    function apply() {
      const kept = [];
      for (const { p, j } of paths) {
        const inside = axes.every((a) => {
          const b = brush[a.key];
          if (!b) return true;
          const y = a.y(a.get(j));
          return y >= b[0] && y <= b[1];
        });
        p.classList.toggle("dim", !inside);
        if (inside) kept.push(j);
      }
      tlm.parallel.kept = kept.length;
      const any = Object.keys(brush).length > 0;
      picked.replaceChildren(...(any ? [`${kept.length} of ${jobs.length} runs pass every selected range. `] : []),
        ...(any && kept.length ? [el("a", { id: "parallel-compare", href: "#/compare?keys=" + kept.slice(0, MAX_COMPARE).map((j) => j.key).join(","),
          text: kept.length > MAX_COMPARE ? `compare the first ${MAX_COMPARE}` : "compare them" }),
        " \u00b7 the best of them: " + kept.reduce((b, j) => (j.val_ppl < b.val_ppl ? j : b)).label] : []));
    }
    apply();
  }
  async function refresh(fresh) {
    const d = await api("/api/jobs?" + qs({ sweep, status: "done", sort: "val_ppl", limit: PC_LIMIT,
      cols: "label,arch,scale,schedule,ratio,seed,tokens_total,params,val_ppl" }), fresh);
    if (!d) return;
    tlm.redraws++;
    last = d;
    draw();
  }
  return { refresh };
};

/* ------------------------------------------------------------ the paper's tables */
/* The cells of tlm-report's Markdown tables, block by block: [[header, rows...]...]
 * with each cell's text as printed (the renderer escapes '|' as "\|"). */
function mdTables(md) {
  const blocks = [];
  let cur = null;
  for (const line of md.split("\n")) {
    if (!line.startsWith("|")) { cur = null; continue; }
    const cells = [];
    let cell = "";
    for (let i = 1; i < line.length; i++) {
      if (line[i] === "\\" && line[i + 1] === "|") { cell += "|"; i++; }
      else if (line[i] === "|") { cells.push(cell.trim()); cell = ""; }
      else cell += line[i];
    }
    if (!cur) blocks.push((cur = []));
    if (!/^\|(-+:?\|)+$/.test(line)) cur.push(cells); // not the |---|---:| line under the header
  }
  return blocks;
}
// one cell of the Markdown as the page shows it: **bold** (the best value), _italics_ (why a cell is empty, a row's role)
function mdCell(td, text) {
  if (/^_.*_$/.test(text) && text.length > 1) {
    td.append(el("em", { text: text.slice(1, -1) }));
    return;
  }
  text.split("**").forEach((part, i) => { if (part) td.append(i % 2 ? el("strong", { text: part }) : part); });
}

/* A figure, or a placeholder that says why there is none (never a broken image). */
function figureBox(name, what, url) {
  const holder = el("div", { class: "figure-box", "data-figure": name }, el("div", { class: "figure-empty", text: "loading\u2026" }));
  let tag = null, inflight = null;
  // one request at a time: a poll while the server still draws it (seconds
  // on a loaded machine, one figure at a time) waits for that answer instead
  // of queueing the same drawing again behind it
  function load() {
    if (!inflight) inflight = fetchOnce().finally(() => { inflight = null; });
    return inflight;
  }
  async function fetchOnce() {
    let r;
    try {
      r = await fetch(url, { cache: "no-cache", credentials: "same-origin" });
    } catch (e) {
      return;
    }
    if (r.ok && r.headers.get("ETag") === tag) return;
    tag = r.headers.get("ETag");
    const type = r.headers.get("Content-Type") || "";
    if (r.ok && type.startsWith("application/json")) { // nothing to draw yet: the server says why
      const d = await r.json();
      holder.replaceChildren(el("div", { class: "figure-empty", text: `No ${name} figure: ${d.why}` }));
      holder.dataset.state = "empty";
    } else if (r.ok) {
      const svgText = await r.text();
      // a data: URL (the CSP allows data: images): an SVG in <img> runs nothing
      holder.replaceChildren(el("img", { class: "figure", alt: name + ": " + what, src: "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svgText) }));
      holder.dataset.state = "drawn";
    } else {
      let why = r.status + " " + r.statusText;
      try { why = (await r.json()).error; } catch (e) { /* not JSON */ }
      holder.replaceChildren(el("div", { class: "figure-empty", text: `No ${name} figure: ${why}` }));
      holder.dataset.state = "empty";
    }
  }
  return { holder, load };
}

views.tables = function (params, name) {
  const view = $("#view");
  const paper = params.get("paper") === "1";
  const sweep = params.get("sweep") || "";
  // a big table (runs: one row per job) comes a page at a time, sorted by the server
  const st = { sort: params.get("sort") || "", dir: params.get("dir") === "desc" ? "desc" : "asc", offset: Math.max(0, Math.floor(+params.get("offset") || 0)) };
  const LIMIT = 100;
  const q = (n, extra) => "name=" + encodeURIComponent(n) + (sweep ? "&sweep=" + encodeURIComponent(sweep) : "") + (extra || "");
  const out = el("div", { id: "table-out" });
  view.replaceChildren(el("h2", { text: name ? "Table: " + name : "The paper's tables and figures" }), out);
  const save = () => setHash("tables/" + name, { paper, sweep, sort: st.sort, dir: st.sort && st.dir === "desc" ? "desc" : "", offset: st.offset || "" });
  let figures = null, seq = 0;
  async function refresh(fresh) {
    if (!name) {
      const d = await api("/api/tables", fresh);
      if (d) {
        figures = d.figures.map((f) => Object.assign(figureBox(f.name, f.what, "/api/figure?" + q(f.name)), f));
        out.replaceChildren(el("p", { class: "muted", text: "The same tables as tlm-report --table NAME (the same code), with the paper's figures beside ours where it has them." }),
          el("ul", {}, ...d.tables.map((t) => el("li", {}, el("a", { href: "#/tables/" + t.name + (t.paper ? "?paper=1" : ""), text: t.name }), " \u2014 " + t.what))),
          el("h3", { text: "Figures" }),
          ...figures.map((f) => el("div", { class: "figure-item" }, el("h3", { text: f.name + " \u2014 " + f.what }), f.holder)));
      }
      if (figures) await Promise.all(figures.map((f) => f.load()));
      return;
    }
    const mine = ++seq;
    const u = "/api/table?" + q(name, (paper ? "&paper=1" : "") + "&format=page&" +
      qs({ sort: st.sort, dir: st.sort ? st.dir : "", offset: st.offset, limit: LIMIT }));
    const d = await api(u, fresh);
    if (d && mine !== seq) etags.delete(u); // overtaken by a newer request: not drawn, so that one must not read as unchanged
    if (!d || mine !== seq) return;
    const list = refresh.list || (refresh.list = await api("/api/tables", true));
    tlm.redraws++;
    const t = d.table, blocks = mdTables(d.md);
    const def = ((list || {}).tables || []).find((x) => x.name === name);
    const go = (offset) => { st.offset = Math.max(0, offset); save(); refresh(true); };
    const sortBy = (key) => { st.dir = st.sort === key && st.dir === "asc" ? "desc" : "asc"; st.sort = key; go(0); };
    const parts = [el("p", {}, el("strong", { text: t.title })), def && def.paper ? el("p", {},
      el("a", { href: "#/tables/" + name + (paper ? "" : "?paper=1"), text: paper ? "without the paper's figures" : "with the paper's figures" })) : null];
    for (const n of t.notes) parts.push(el("p", { class: "muted", text: n }));
    t.panels.forEach((p, pi) => {
      const cells = blocks[pi] || [];
      if (p.title) parts.push(el("h3", { text: p.title }));
      const head = el("tr", {}, ...p.columns.map((c, ci) => {
        const cls = [c.kind === "text" ? "" : "num", d.sortable ? "sort" : "", st.sort === c.key ? st.dir : ""].join(" ").trim();
        return el("th", { class: cls || null, "data-col": c.key, text: cells[0] ? cells[0][ci] : c.title,
          on: d.sortable ? { click: () => sortBy(c.key) } : null });
      }));
      const body = el("tbody", {}, ...p.rows.map((r, ri) => el("tr", { class: r.source === "ours" ? null : "paper", "data-source": r.source },
        ...p.columns.map((c, ci) => {
          const cell = r.cells[c.key];
          const td = el("td", { class: [c.kind === "text" ? "" : "num", cell && cell.significant ? "sig" : ""].join(" ").trim() || null, "data-col": c.key });
          mdCell(td, cells[ri + 1] ? cells[ri + 1][ci] || "" : "");
          return td;
        }))));
      parts.push(el("table", { class: "rpt" }, el("thead", {}, head), body));
      for (const n of p.notes) parts.push(el("p", { class: "muted", text: n }));
    });
    if (!t.panels.length) parts.push(el("p", { class: "muted", text: "Nothing in results.db for this table yet." }));
    const shown = t.panels.reduce((n, p) => n + p.rows.length, 0);
    if (d.rows > shown || d.offset > 0) {
      const to = d.offset + shown;
      parts.push(el("div", { class: "tools pager", id: "table-pager" },
        el("button", { id: "page-prev", text: "\u2039 previous", disabled: d.offset === 0, on: { click: () => go(d.offset - LIMIT) } }),
        el("span", { id: "page-of", text: ` rows ${fmtCount(d.offset + 1)}\u2013${fmtCount(to)} of ${fmtCount(d.rows)} ` }),
        el("button", { id: "page-next", text: "next \u203a", disabled: to >= d.rows, on: { click: () => go(d.offset + LIMIT) } })));
    }
    parts.push(el("h3", { text: "As tlm-report --table " + name + (paper ? " --paper" : "") + " prints it" +
      (d.rows > shown ? ` (these ${fmtCount(shown)} of its ${fmtCount(d.rows)} rows)` : "") }), el("pre", { id: "table-md", text: d.md }));
    out.replaceChildren(...parts.filter(Boolean));
  }
  return { refresh };
};

/* ------------------------------------------------------------ routing and polling */
function route() {
  const h = location.hash.replace(/^#\/?/, "") || "sweeps";
  const [path, qstr] = h.split("?");
  const parts = path.split("/");
  const params = new URLSearchParams(qstr || "");
  if (current && current.leave) current.leave();
  destroyCharts();
  etags.clear();
  banner("");
  const name = views[parts[0]] ? parts[0] : "sweeps";
  document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("on", a.dataset.view === name || (name === "job" && a.dataset.view === "jobs")));
  current = views[name](params, parts[1] && /^[0-9a-z_]+$/.test(parts[1]) ? parts[1] : undefined);
  current.name = name;
  current.refresh(true);
}

async function poll() {
  if (!document.hidden && current) {
    tlm.polls++;
    await current.refresh(false);
  }
  setTimeout(poll, POLL_MS);
}

window.addEventListener("hashchange", route);
route();
setTimeout(poll, POLL_MS);
