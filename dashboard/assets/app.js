/* app.js: tlm-dash's page.  One view at a time (from the URL's #hash), drawn
 * from the server's JSON; charts are uPlot (served by tlm-dash from the npm
 * install, never from a CDN).  Live: every 2 s the current view asks again;
 * the server answers 304 while results.db is unchanged, so nothing is
 * redrawn, and a redraw replaces what was there (charts get setData, tables
 * are rebuilt), so the page's memory does not grow over hours.
 * Text from the database is only ever set as textContent, never as HTML. */
"use strict";

// ?poll=MS in the page's URL changes the period (tests poll faster); never below 100 ms
const POLL_MS = Math.max(100, +new URLSearchParams(location.search).get("poll") || 2000);
const MAX_ROWS = 1000; // the jobs table draws at most this many rows (filter to narrow)
const STATUSES = ["pending", "running", "done", "failed", "interrupted"];

const $ = (sel, root) => (root || document).querySelector(sel);
const tlm = { charts: {}, polls: 0, redraws: 0 }; // for the tests: the live charts and counters
window.tlm = tlm;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "on") for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
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
  return String(v);
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
function ratioText(j) {
  if (j.ratio_start !== null && j.ratio_start !== undefined) return j.ratio_start + "\u2192" + j.ratio_end;
  return j.groups ? "[" + j.groups + "]" : "";
}
function eta(j) {
  if (j.status !== "running" || !j.tokens_per_s) return null;
  return (j.tokens_total - j.tokens_done) / j.tokens_per_s;
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

/* ------------------------------------------------------------ charts */
const PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2", "#65a30d",
                 "#9333ea", "#ea580c", "#0d9488", "#4f46e5", "#be123c", "#15803d", "#a16207", "#1d4ed8"];

/* A chart in box, or its data replaced when it exists (uPlot's setData:
 * nothing new is allocated per update beyond the arrays themselves). */
function chart(id, box, title, data, series, opts) {
  opts = opts || {};
  const points = data.length > 1 ? data[1].filter((v) => v !== null && v !== undefined).length : 0;
  let c = tlm.charts[id];
  const shape = JSON.stringify([series.map((s) => s.label), opts.logx, opts.logy, opts.bars]);
  if (c && c.shape === shape && c.box === box) {
    c.u.setData(data);
    c.box.dataset.points = points;
    return c;
  }
  if (c) c.u.destroy();
  box.textContent = "";
  box.dataset.points = points;
  if (typeof uPlot === "undefined") {
    box.append(el("div", { class: "empty", text: "charts need uPlot: /vendor/uPlot.iife.min.js did not load (scripts/setup.sh installs it)" }));
    delete tlm.charts[id];
    return null;
  }
  const u = new uPlot({
    title: title,
    width: Math.max(300, box.clientWidth - 12 || 440),
    height: opts.height || 220,
    scales: { x: { time: false, distr: opts.logx ? 3 : 1 }, y: { distr: opts.logy ? 3 : 1 } },
    axes: [{ label: opts.xlabel || "tokens", values: (u, v) => v.map(fmtTokens) }, { label: opts.ylabel || "" }],
    series: [{ label: opts.xlabel || "tokens", value: (u, v) => fmtTokens(v) }].concat(series.map((s, i) => ({
      label: s.label, stroke: s.color || PALETTE[i % PALETTE.length], width: 1.5, spanGaps: true,
      points: { show: opts.bars || undefined, size: opts.bars ? 7 : 4 },
    }))),
    legend: { show: series.length > 1 || opts.legend },
  }, data, box);
  tlm.charts[id] = c = { u: u, shape: shape, box: box };
  return c;
}

function destroyCharts() {
  for (const c of Object.values(tlm.charts)) c.u.destroy();
  tlm.charts = {};
}

/* Exponential moving average (0: none), skipping nulls. */
function smooth(ys, a) {
  if (!a) return ys;
  let m = null;
  return ys.map((y) => {
    if (y === null) return null;
    m = m === null ? y : a * m + (1 - a) * y;
    return m;
  });
}

/* ------------------------------------------------------------ tables */
/* A sortable table: cols [{key, title, num, get(row), show(row), link(row)}]. */
function sortable(cols, rows, state, onSort) {
  const thead = el("tr", {}, ...cols.map((c) => {
    const cls = ["sort"];
    if (c.num) cls.push("num");
    if (state.sort === c.key) cls.push(state.dir > 0 ? "asc" : "desc");
    return el("th", { class: cls.join(" "), "data-col": c.key, text: c.title,
      on: { click: () => { state.dir = state.sort === c.key ? -state.dir : 1; state.sort = c.key; onSort(); } } });
  }));
  const get = (c, r) => (c.get ? c.get(r) : r[c.key]);
  const sc = cols.find((c) => c.key === state.sort);
  if (sc) {
    rows = rows.slice().sort((a, b) => {
      const x = get(sc, a), y = get(sc, b);
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * state.dir;
    });
  }
  const body = el("tbody");
  for (const r of rows.slice(0, MAX_ROWS)) {
    const tr = el("tr", { "data-key": r.key });
    for (const c of cols) {
      const v = c.show ? c.show(r) : get(c, r);
      const td = el("td", { class: (c.num ? "num " : "") + (c.cls ? c.cls(r) : ""), "data-col": c.key });
      if (c.node) td.append(c.node(r));
      else if (c.link) td.append(el("a", { href: c.link(r), text: v === null || v === undefined ? "" : String(v) }));
      else td.textContent = v === null || v === undefined ? "" : String(v);
      tr.append(td);
    }
    body.append(tr);
  }
  const t = el("table", { class: "grid" }, el("thead", {}, thead), body);
  return { table: t, shown: Math.min(rows.length, MAX_ROWS), total: rows.length };
}

/* ------------------------------------------------------------ views */
const views = {};
let current = null; // { name, refresh(), leave() }

views.sweeps = function () {
  const view = $("#view");
  view.replaceChildren(el("h2", { text: "Sweeps" }), el("div", { id: "sweeps" }));
  async function refresh(fresh) {
    const d = await api("/api/sweeps", fresh);
    if (!d) return;
    tlm.redraws++;
    const cols = [
      { key: "name", title: "sweep", link: (s) => "#/jobs?sweep=" + encodeURIComponent(s.name) },
      { key: "jobs", title: "jobs", num: true },
    ].concat(STATUSES.map((st) => ({ key: st, title: st, num: true, cls: () => "status-" + st })), [
      { key: "progress", title: "tokens", get: (s) => (s.tokens_total ? s.tokens_done / s.tokens_total : 0),
        node: (s) => el("span", {}, el("span", { class: "bar" }, el("span", { style: null })),
          " " + fmtTokens(s.tokens_done) + " / " + fmtTokens(s.tokens_total)) },
      { key: "flops_done", title: "FLOPs done", num: true, show: (s) => fmtSI(s.flops_done, "FLOP") },
      { key: "flops_total", title: "of", num: true, show: (s) => fmtSI(s.flops_total, "FLOP") },
      { key: "updated_at", title: "updated", show: (s) => fmtTime(s.updated_at) },
      { key: "description", title: "description" },
    ]);
    const state = refresh.state || (refresh.state = { sort: null, dir: 1 });
    const t = sortable(cols, d.sweeps, state, () => refresh(true));
    // the progress bars' widths: a CSSOM property (the page's CSP allows no inline style attributes)
    t.table.querySelectorAll("td[data-col=progress] .bar > span").forEach((b, i) => {
      const s = d.sweeps[i];
      b.style.width = (s.tokens_total ? (100 * s.tokens_done / s.tokens_total) : 0).toFixed(1) + "%";
    });
    $("#sweeps").replaceChildren(d.sweeps.length ? t.table : el("p", { class: "muted", text: "No sweeps in results.db yet: start tlmd with --sweeps FILE." }));
  }
  return { refresh };
};

const JOB_COLS = [
  { key: "label", title: "label", link: (j) => "#/job/" + j.key },
  { key: "arch", title: "arch" },
  { key: "scale", title: "scale" },
  { key: "schedule", title: "schedule" },
  { key: "ratio", title: "ratio", get: (j) => ratioText(j) },
  { key: "seed", title: "seed", num: true },
  { key: "status", title: "status", cls: (j) => "status-" + j.status },
  { key: "attempts", title: "attempts", num: true },
  { key: "tokens_done", title: "tokens", num: true, show: (j) => fmtTokens(j.tokens_done) + " / " + fmtTokens(j.tokens_total) },
  { key: "train_loss", title: "last loss", num: true, show: (j) => fmtNum(j.train_loss, 4) },
  { key: "val_ppl", title: "val ppl", num: true, show: (j) => fmtNum(j.val_ppl, 3) },
  { key: "tokens_per_s", title: "tokens/s", num: true, show: (j) => (j.tokens_per_s === null ? "" : Math.round(j.tokens_per_s)) },
  { key: "eta", title: "ETA", num: true, get: (j) => eta(j), show: (j) => fmtDuration(eta(j)) },
];

function jobMatches(j, words) {
  if (!words.length) return true;
  const hay = [j.label, j.arch, j.scale, j.schedule, ratioText(j), "seed=" + j.seed, j.status, j.sweep, j.key.slice(0, 12)]
    .join(" ").toLowerCase();
  return words.every((w) => hay.includes(w));
}

views.jobs = function (params) {
  const view = $("#view");
  const sweep = params.get("sweep") || "";
  const state = { sort: null, dir: 1, filter: params.get("q") || "", status: params.get("status") || "", picked: new Set() };
  let last = null;
  const filter = el("input", { type: "search", id: "filter", placeholder: "filter: words of label, arch, scale, schedule, status...", value: state.filter });
  const status = el("select", { id: "status" }, el("option", { value: "", text: "any status" }),
    ...STATUSES.map((s) => el("option", { value: s, text: s, selected: s === state.status })));
  const count = el("span", { class: "muted", id: "count" });
  const compare = el("button", { id: "compare", text: "compare selected", disabled: true,
    on: { click: () => { location.hash = "#/compare?keys=" + [...state.picked].join(","); } } });
  filter.addEventListener("input", () => { state.filter = filter.value; draw(); });
  status.addEventListener("change", () => { state.status = status.value; draw(); });
  view.replaceChildren(el("h2", { text: sweep ? "Jobs of sweep " + sweep : "Jobs" }),
    el("div", { class: "tools" }, filter, status, compare, count), el("div", { id: "jobs" }));
  function draw() {
    if (!last) return;
    const words = state.filter.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = last.jobs.filter((j) => (!state.status || j.status === state.status) && jobMatches(j, words));
    const pick = { key: "pick", title: "", node: (j) => el("input", { type: "checkbox", checked: state.picked.has(j.key),
      on: { change: (ev) => { ev.target.checked ? state.picked.add(j.key) : state.picked.delete(j.key);
        compare.disabled = state.picked.size < 1; } } }) };
    const t = sortable([pick].concat(JOB_COLS), rows, state, draw);
    t.table.id = "jobs-table";
    $("#jobs").replaceChildren(t.table);
    count.textContent = t.shown < t.total ? `showing ${t.shown} of ${t.total} (filter to narrow)` :
      `${t.total} of ${last.jobs.length} jobs`;
  }
  async function refresh(fresh) {
    const d = await api("/api/jobs" + (sweep ? "?sweep=" + encodeURIComponent(sweep) : ""), fresh);
    if (!d) return;
    tlm.redraws++;
    // rows arrive as arrays beside one list of column names (half the bytes of objects)
    last = { jobs: d.rows.map((r) => Object.fromEntries(d.columns.map((c, i) => [c, r[i]]))) };
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

views.job = function (params, key) {
  const view = $("#view");
  const head = el("div", { id: "job-head" });
  const charts = el("div", { class: "charts" });
  const boxes = {};
  for (const [id, title] of [["loss", "training and validation loss"], ["ppl", "validation perplexity"], ["lr", "learning rate"],
    ["grad", "gradient norm (before clipping)"], ["tps", "tokens/s"], ["dff", "d_ff per layer"], ["rho", "rho per layer"]]) {
    boxes[id] = el("div", { class: "plot", id: "chart-" + id });
    charts.append(el("div", { class: "chart" }, el("div", { class: "title", text: title }), boxes[id]));
  }
  const rest = el("div", { id: "job-rest" });
  view.replaceChildren(head, charts, rest);
  async function refresh(fresh) {
    const [j, s] = await Promise.all([api("/api/job?key=" + key, fresh), api("/api/series?key=" + key, fresh)]);
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
        ` · ${fmtTokens(job.tokens_done)} of ${fmtTokens(job.tokens_total)} tokens · attempts ${job.attempts}` +
        (job.reason ? ` · last failure: ${job.reason}` : "") + ` · key ${job.key.slice(0, 12)}`),
      el("p", {}, el("a", { href: "#/compare?keys=" + key, text: "compare with others" })));
    const st = series.steps, v = series.val;
    chart("loss", boxes.loss, "", joinXY([[st.tokens, st.loss], [v.tokens, v.val_loss]]),
      [{ label: "train loss" }, { label: "val loss" }], { legend: true });
    chart("ppl", boxes.ppl, "", cols(v, "tokens", "val_ppl"), [{ label: "val ppl" }]);
    chart("lr", boxes.lr, "", cols(st, "tokens", "lr"), [{ label: "lr" }]);
    chart("grad", boxes.grad, "", cols(st, "tokens", "grad_norm"), [{ label: "grad norm" }]);
    chart("tps", boxes.tps, "", cols(st, "tokens", "tokens_per_s"), [{ label: "tokens/s" }]);
    const layers = (refresh.detail || {}).layers || [];
    const widths = job.widths ? JSON.parse(job.widths) : layers.filter((l) => l.name === "d_ff").map((l) => l.value);
    chart("dff", boxes.dff, "", [widths.map((w, i) => i), widths], [{ label: "d_ff" }], { xlabel: "layer", bars: true, legend: true });
    const rhoNames = [...new Set(layers.filter((l) => l.name.startsWith("rho")).map((l) => l.name))];
    if (rhoNames.length) {
      const n = Math.max(...layers.filter((l) => l.name.startsWith("rho")).map((l) => l.layer)) + 1;
      const xs = [...Array(n).keys()];
      const data = [xs].concat(rhoNames.map((nm) => xs.map((i) => {
        const l = layers.find((x) => x.name === nm && x.layer === i);
        return l ? l.value : null;
      })));
      chart("rho", boxes.rho, "", data, rhoNames.map((nm) => ({ label: nm })), { xlabel: "layer", bars: true, legend: true });
    } else {
      boxes.rho.replaceChildren(el("div", { class: "empty", text: "not measured for this job (model.probe, docs/engine.md)" }));
    }
    if (j) {
      const d = j;
      rest.replaceChildren(
        el("h3", { text: "Attempts" }),
        sortable([
          { key: "n", title: "#", num: true }, { key: "host", title: "node" }, { key: "device", title: "device" },
          { key: "started_at", title: "started", show: (a) => fmtTime(a.started_at) },
          { key: "ended_at", title: "ended", show: (a) => fmtTime(a.ended_at) },
          { key: "reason", title: "reason" }, { key: "message", title: "message" },
          { key: "step", title: "last step", num: true }, { key: "resumed_from_step", title: "resumed from", num: true },
          { key: "exit_code", title: "exit", num: true },
        ], d.attempts, { sort: null, dir: 1 }, () => {}).table,
        el("h3", { text: "Latest evaluations" }),
        sortable([{ key: "suite", title: "suite" }, { key: "task", title: "task" }, { key: "metric", title: "metric" },
          { key: "value", title: "value", num: true, show: (e) => (e.nonfinite || fmtNum(e.value, 4)) },
          { key: "step", title: "step", num: true }, { key: "n", title: "n", num: true }], d.evals, { sort: null, dir: 1 }, () => {}).table,
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

/* Several (x, y) series on one x axis (uPlot.join aligns them; gaps are null). */
function joinXY(pairs) {
  const tables = pairs.filter((p) => p[0].length).map((p) => [p[0], p[1]]);
  if (!tables.length) return [[], ...pairs.map(() => [])];
  if (tables.length < pairs.length) { // keep one series per pair, empty where a pair has no points
    const j = uPlot.join(tables);
    let k = 1;
    return [j[0]].concat(pairs.map((p) => (p[0].length ? j[k++] : j[0].map(() => null))));
  }
  return uPlot.join(tables);
}

const METRICS = {
  loss: ["steps", "loss", "training loss"], val_loss: ["val", "val_loss", "validation loss"],
  val_ppl: ["val", "val_ppl", "validation perplexity"], lr: ["steps", "lr", "learning rate"],
  grad_norm: ["steps", "grad_norm", "gradient norm"], tokens_per_s: ["steps", "tokens_per_s", "tokens/s"],
};

views.compare = function (params) {
  const view = $("#view");
  const keys = (params.get("keys") || "").split(",").filter(Boolean).slice(0, 16);
  if (!keys.length) {
    view.replaceChildren(el("h2", { text: "Compare" }),
      el("p", { class: "muted", text: "Tick jobs in the Jobs view and press \u201ccompare selected\u201d (up to 16)." }));
    return { refresh() {} };
  }
  const st = { metric: params.get("metric") || "loss", smooth: +(params.get("smooth") || 0), logx: params.get("logx") === "1", logy: params.get("logy") === "1" };
  const metric = el("select", { id: "metric" }, ...Object.entries(METRICS).map(([k, m]) => el("option", { value: k, text: m[2], selected: k === st.metric })));
  const sm = el("input", { type: "range", id: "smooth", min: 0, max: 0.99, step: 0.01, value: st.smooth });
  const smv = el("span", { class: "muted", text: st.smooth.toFixed(2) });
  const logx = el("input", { type: "checkbox", id: "logx", checked: st.logx });
  const logy = el("input", { type: "checkbox", id: "logy", checked: st.logy });
  const box = el("div", { class: "plot", id: "chart-compare" });
  let last = null;
  const redraw = () => {
    st.metric = metric.value; st.smooth = +sm.value; st.logx = logx.checked; st.logy = logy.checked;
    smv.textContent = st.smooth.toFixed(2);
    draw();
  };
  for (const c of [metric, sm, logx, logy]) c.addEventListener("input", redraw);
  view.replaceChildren(el("h2", { text: "Compare " + keys.length + " jobs" }),
    el("div", { class: "tools" }, el("label", {}, "metric ", metric), el("label", {}, "smoothing ", sm, " ", smv),
      el("label", {}, logx, " log x"), el("label", {}, logy, " log y")),
    el("div", { class: "chart" }, box));
  function draw() {
    if (!last) return;
    const [part, col] = METRICS[st.metric];
    const pairs = keys.map((k) => {
      const s = last.series[k][part];
      const xs = [], ys = [];
      const sy = smooth(s[col], st.smooth);
      for (let i = 0; i < s.tokens.length; i++) {
        if (st.logx && !(s.tokens[i] > 0)) continue; // log axes show positive values only
        xs.push(s.tokens[i]);
        ys.push(st.logy && !(sy[i] > 0) ? null : sy[i]);
      }
      return [xs, ys];
    });
    const labels = keys.map((k) => {
      const m = last.series[k].meta[0];
      return m.label + " s" + m.seed + " " + k.slice(0, 6);
    });
    chart("compare", box, METRICS[st.metric][2], joinXY(pairs), labels.map((l) => ({ label: l })),
      { logx: st.logx, logy: st.logy, height: 420, legend: true });
  }
  async function refresh(fresh) {
    const d = await api("/api/series?" + keys.map((k) => "key=" + k).join("&"), fresh);
    if (!d) return;
    tlm.redraws++;
    last = d;
    draw();
  }
  return { refresh };
};

function cellText(c, col) {
  if (c === null || c === undefined) return "-"; // an empty cell, as tlm-report's Markdown shows it
  if (typeof c === "string") return c;
  if (c.value === null) return c.missing || "";
  const sign = col.signed && c.value > 0 ? "+" : "";
  let t = sign + c.value.toFixed(col.decimals);
  if (c.std !== undefined && c.std !== null) t += " \u00b1 " + c.std.toFixed(col.decimals);
  if (c.n !== undefined && c.n > 1) t += " (n=" + c.n + ")";
  if (c.note) t += " [" + c.note + "]";
  return t;
}

views.tables = function (params, name) {
  const view = $("#view");
  const paper = params.get("paper") === "1";
  const sweep = params.get("sweep") || "";
  const q = (n, extra) => "name=" + encodeURIComponent(n) + (sweep ? "&sweep=" + encodeURIComponent(sweep) : "") + (extra || "");
  const out = el("div", { id: "table-out" });
  view.replaceChildren(el("h2", { text: name ? "Table: " + name : "The paper's tables and figures" }), out);
  async function refresh(fresh) {
    if (!name) {
      const d = await api("/api/tables", fresh);
      if (!d) return;
      out.replaceChildren(el("p", { class: "muted", text: "The same tables as tlm-report --table NAME (the same code), with the paper's figures beside ours where it has them." }),
        el("ul", {}, ...d.tables.map((t) => el("li", {}, el("a", { href: "#/tables/" + t.name + (t.paper ? "?paper=1" : ""), text: t.name }), " \u2014 " + t.what))),
        el("h3", { text: "Figures" }),
        ...d.figures.map((f) => el("div", {}, el("h3", { text: f.name + " \u2014 " + f.what }),
          el("img", { class: "figure", alt: f.name, src: "/api/figure?" + q(f.name) + "&v=" + Date.now() }))));
      return;
    }
    const [d, md, list] = await Promise.all([api("/api/table?" + q(name, paper ? "&paper=1" : ""), fresh),
      api("/api/table?" + q(name, (paper ? "&paper=1" : "") + "&format=md"), fresh), refresh.list || api("/api/tables", true)]);
    if (d === undefined || md === undefined || (d === null && md === null)) return;
    tlm.redraws++;
    const t = d || refresh.t;
    refresh.t = t;
    if (list) refresh.list = list;
    const def = ((refresh.list || {}).tables || []).find((x) => x.name === name);
    const parts = [el("p", {}, el("strong", { text: t.title })), def && def.paper ? el("p", {},
      el("a", { href: "#/tables/" + name + (paper ? "" : "?paper=1"), text: paper ? "without the paper's figures" : "with the paper's figures" })) : null];
    for (const n of t.notes) parts.push(el("p", { class: "muted", text: n }));
    for (const p of t.panels) {
      parts.push(el("h3", { text: p.title }));
      const head = el("tr", {}, ...p.columns.map((c) => el("th", { text: c.title, class: c.kind === "text" ? "" : "num" })));
      const body = el("tbody", {}, ...p.rows.map((r) => el("tr", { class: r.source === "ours" ? "" : "paper" },
        ...p.columns.map((c) => el("td", { class: (c.kind === "text" ? "" : "num") + (r.cells[c.key] && r.cells[c.key].best ? " best" : ""), text: cellText(r.cells[c.key], c) })))));
      parts.push(el("table", { class: "rpt" }, el("thead", {}, head), body));
      for (const n of p.notes) parts.push(el("p", { class: "muted", text: n }));
    }
    if (md !== null) refresh.md = md;
    parts.push(el("h3", { text: "As tlm-report --table " + name + (paper ? " --paper" : "") + " prints it" }), el("pre", { id: "table-md", text: refresh.md }));
    out.replaceChildren(...parts.filter(Boolean));
  }
  return { refresh };
};

/* ------------------------------------------------------------ routing and polling */
function route() {
  const h = location.hash.replace(/^#\/?/, "") || "sweeps";
  const [path, qs] = h.split("?");
  const parts = path.split("/");
  const params = new URLSearchParams(qs || "");
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
