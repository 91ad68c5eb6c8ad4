// views.mjs: every view of tlm-dash in Chromium (playwright-core) on the
// fixed database of dash_mkdb, for tests/dashboard/test_views.sh: what each
// view shows against what results.db holds (EXPECT: JSON the shell wrote
// with sqlite3 and tlm-report), no script or console errors, and a
// screenshot of each compared with the reviewed one in
// tests/dashboard/shots/ (half size, JPEG at QUALITY to keep them small,
// within a tolerance: TOLERANCE of the pixels may differ by more than
// DELTA in a channel).
// Prints one TAP-like line per check; the shell numbers them.
// Environment: as session.mjs, and URL (with the token), MODE (views |
// nouplot), EXPECT, SHOTS (where this run's screenshots and differences
// go), REF (the reviewed screenshots), UPDATE (1: write this run's
// screenshots as the references, after looking at each).
import { existsSync, readFileSync, writeFileSync } from "fs";
import { check, failed, fixed, launch, tokens, waitFor as waitIn } from "./session.mjs";

const TOLERANCE = 0.004; // fraction of the pixels
const DELTA = 48; // of 255, the largest difference in a channel that is not counted
const QUALITY = 0.85; // the JPEG encoder's (Chromium's, the same at every run: an unchanged page encodes the same)

const url = process.env.URL;
const want = JSON.parse(readFileSync(process.env.EXPECT, "utf8"));
const { ctx, page, errors } = await launch({ width: 1280, height: 800 }, ["--font-render-hinting=none"]);
const tool = await ctx.newPage(); // a blank page that decodes, shrinks and compares screenshots
const waitFor = (fn, arg, ms) => waitIn(page, fn, arg, ms);
async function open(hash, ready, ms) {
  await page.goto(url + hash);
  const ok = await waitFor(ready, undefined, ms);
  await page.waitForTimeout(300); // fonts and the last paint
  return ok;
}
const near = (a, b, rel) => a === b || (a !== null && b !== null && Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b)));

/* The page's screenshot, halved, against the reviewed one. */
async function shot(name, mask) {
  await page.mouse.move(0, 0); // nothing hovered (a row's highlight, a chart's cursor)
  await page.waitForTimeout(100);
  const buf = await page.screenshot({ fullPage: true, mask: mask ? [page.locator(mask)] : [], maskColor: "#bdbdbd" });
  const refPath = process.env.REF + "/" + name + ".jpg";
  const ref = existsSync(refPath) ? readFileSync(refPath).toString("base64") : null;
  const r = await tool.evaluate(async ([png, refJpg, delta, quality]) => {
    const load = (b64, type) => new Promise((ok, bad) => { const i = new Image(); i.onload = () => ok(i); i.onerror = bad; i.src = `data:image/${type || "png"};base64,` + b64; });
    const img = await load(png);
    const w = Math.round(img.width / 2), h = Math.round(img.height / 2);
    const canvas = (cw, ch) => { const c = document.createElement("canvas"); c.width = cw; c.height = ch; return c; };
    const c = canvas(w, h), g = c.getContext("2d");
    g.imageSmoothingQuality = "high";
    g.drawImage(img, 0, 0, w, h);
    const out = { jpg: c.toDataURL("image/jpeg", quality).split(",")[1], w, h };
    if (!refJpg) return out;
    const rimg = await load(refJpg, "jpeg");
    out.rw = rimg.width; out.rh = rimg.height;
    if (rimg.width !== w || rimg.height !== h) return out;
    // compare with the reference as the decoder gives it (out.jpg, not the canvas: both went through the encoder)
    const mine = await load(out.jpg, "jpeg");
    const a = canvas(w, h).getContext("2d"), b = canvas(w, h).getContext("2d");
    a.drawImage(mine, 0, 0);
    b.drawImage(rimg, 0, 0);
    const da = a.getImageData(0, 0, w, h).data, db = b.getImageData(0, 0, w, h).data;
    const dc = canvas(w, h), dg = dc.getContext("2d");
    dg.globalAlpha = 0.25;
    dg.drawImage(rimg, 0, 0);
    dg.globalAlpha = 1;
    dg.fillStyle = "#ff0000";
    let bad = 0;
    for (let i = 0; i < da.length; i += 4) {
      const d = Math.max(Math.abs(da[i] - db[i]), Math.abs(da[i + 1] - db[i + 1]), Math.abs(da[i + 2] - db[i + 2]));
      if (d > delta) { bad++; dg.fillRect((i / 4) % w, Math.floor(i / 4 / w), 1, 1); }
    }
    out.bad = bad;
    out.diff = dc.toDataURL("image/png").split(",")[1];
    return out;
  }, [buf.toString("base64"), ref, DELTA, QUALITY]);
  writeFileSync(process.env.SHOTS + "/" + name + ".jpg", Buffer.from(r.jpg, "base64"));
  if (process.env.UPDATE === "1") {
    writeFileSync(refPath, Buffer.from(r.jpg, "base64"));
    check(true, `screenshot ${name}: written as the reference (${r.w}x${r.h}); look at it before committing it`);
    return;
  }
  if (!ref) {
    check(false, `screenshot ${name}: no reviewed screenshot ${refPath} (UPDATE=1 writes this run's: look at it first)`);
    return;
  }
  if (r.bad === undefined) {
    check(false, `screenshot ${name}: ${r.w}x${r.h}, the reviewed one is ${r.rw}x${r.rh} (the page's layout changed)`,
      `this run's: ${process.env.SHOTS}/${name}.jpg`);
    return;
  }
  const frac = r.bad / (r.w * r.h);
  if (frac > TOLERANCE) writeFileSync(process.env.SHOTS + "/" + name + ".diff.png", Buffer.from(r.diff, "base64"));
  check(frac <= TOLERANCE, `screenshot ${name}: ${(100 * frac).toFixed(2)}% of the pixels differ from the reviewed one (at most ${100 * TOLERANCE}%)`,
    `this run's: ${process.env.SHOTS}/${name}.jpg, the differences in red: ${process.env.SHOTS}/${name}.diff.png`);
}

// the jobs table's cells as the page shows them, against the results view
function expectRow(j) {
  return { label: j.label, arch: j.arch, scale: j.scale, schedule: j.schedule, ratio: j.ratio, seed: String(j.seed), status: j.status,
    attempts: String(j.attempts), tokens_done: tokens(j.tokens_done) + " / " + tokens(j.tokens_total),
    train_loss: fixed(j.train_loss, 4), val_ppl: fixed(j.val_ppl, 3) };
}
async function tableRows() {
  return page.$$eval("#jobs-table tbody tr", (trs) => trs.map((tr) => Object.assign({ key: tr.dataset.key },
    Object.fromEntries([...tr.children].map((td) => [td.dataset.col, td.textContent])))));
}
function sameRows(rows, jobs) {
  const bad = [];
  if (rows.length !== jobs.length) bad.push(`${rows.length} rows, expected ${jobs.length}`);
  jobs.forEach((j, i) => {
    const r = rows[i] || {};
    if (r.key !== j.key) bad.push(`row ${i + 1}: job ${String(r.key).slice(0, 8)}, expected ${j.key.slice(0, 8)} (${j.label} s${j.seed})`);
    for (const [k, v] of Object.entries(expectRow(j))) if (r[k] !== v) bad.push(`row ${i + 1} ${k}: page '${r[k]}', results '${v}'`);
  });
  return bad;
}
// sorted as SQL sorts: NULLs last either way, then creation order
function sortJobs(jobs, key, dir) {
  return jobs.slice().sort((a, b) => {
    const x = a[key], y = b[key];
    if (x === null && y === null) return a.rowid - b.rowid;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : x > y ? 1 : 0) * (dir === "desc" ? -1 : 1) || a.rowid - b.rowid;
  });
}
// TensorBoard's de-biased EMA, written again here from its definition
function debiased(ys, a) {
  const out = [];
  let acc = 0, n = 0;
  for (const y of ys) {
    if (y === null) { out.push(null); continue; }
    n++;
    acc = a * acc + (1 - a) * y;
    out.push(acc / (1 - a ** n));
  }
  return out;
}

async function sweepsView() {
  const ok = await open("#/sweeps", () => document.querySelector("#sweeps table"));
  // a sweep's name is its cell's link (its description under it)
  const rows = await page.$$eval("#sweeps tbody tr", (trs) => trs.map((tr) =>
    Object.fromEntries([...tr.children].map((td) => [td.dataset.col, td.dataset.col === "name" ? td.querySelector("a").textContent : td.textContent]))));
  check(ok && rows.length === want.sweeps.length && want.sweeps.every((s) => {
    const r = rows.find((x) => x.name === s.name);
    return r && ["jobs", "pending", "running", "done", "failed", "interrupted"].every((k) => +r[k] === s[k]);
  }), "sweeps: each sweep's jobs by status as in results.db", JSON.stringify(rows));
  await shot("sweeps");
}

async function jobsView() {
  let ok = await open("#/jobs", () => document.querySelectorAll("#jobs-table tbody tr").length > 0);
  let rows = await tableRows();
  const bad = sameRows(rows, want.jobs);
  check(ok && bad.length === 0, `jobs: all ${want.jobs.length} jobs, in creation order, each cell as SELECT ... FROM results gives it`, bad.join("\n"));
  check((await page.textContent("#count")) === `${want.jobs.length} jobs`, "jobs: the count says how many", await page.textContent("#count"));
  await shot("jobs");

  // pages of 10, turned by the server
  ok = await open("#/jobs?limit=10", () => document.querySelectorAll("#jobs-table tbody tr").length === 10);
  check(ok && (await page.textContent("#page-of")).trim() === `1\u201310 of ${want.jobs.length}`, "jobs: a page of 10 rows, the pager says which",
    await page.textContent("#page-of"));
  await page.click("#page-next");
  await waitFor(() => document.querySelector("#page-of").textContent.includes("11\u2013"));
  rows = await tableRows();
  check(sameRows(rows, want.jobs.slice(10, 20)).length === 0, "jobs: the next page is rows 11-20", sameRows(rows, want.jobs.slice(10, 20)).join("\n"));
  await page.click("#page-last");
  await waitFor((n) => document.querySelectorAll("#jobs-table tbody tr").length === n, want.jobs.length - 20);
  rows = await tableRows();
  check(sameRows(rows, want.jobs.slice(20)).length === 0, `jobs: the last page holds the last ${want.jobs.length - 20}`, sameRows(rows, want.jobs.slice(20)).join("\n"));

  // sorted by the server: val ppl ascending (NULLs last), then descending
  await page.click("#page-first");
  await waitFor(() => document.querySelector("#page-of").textContent.trim().startsWith("1\u2013"));
  await page.click("#jobs-table th[data-col=val_ppl]");
  const asc = sortJobs(want.jobs, "val_ppl", "asc").slice(0, 10);
  await waitFor((k) => document.querySelector("#jobs-table tbody tr") && document.querySelector("#jobs-table tbody tr").dataset.key === k, asc[0].key);
  rows = await tableRows();
  check(sameRows(rows, asc).length === 0, "jobs: sorted by val ppl on the server, the 10 lowest first", sameRows(rows, asc).join("\n"));
  await page.click("#jobs-table th[data-col=val_ppl]");
  const desc = sortJobs(want.jobs, "val_ppl", "desc").slice(0, 10);
  await waitFor((k) => document.querySelector("#jobs-table tbody tr").dataset.key === k, desc[0].key);
  rows = await tableRows();
  check(sameRows(rows, desc).length === 0 && page.url().includes("sort=val_ppl") && page.url().includes("dir=desc"),
    "jobs: a second click sorts descending (NULLs still last), and the address keeps it", sameRows(rows, desc).join("\n"));

  // filter: words anywhere, col=value exactly; the status menu
  await open("#/jobs", () => document.querySelectorAll("#jobs-table tbody tr").length > 0);
  await page.fill("#filter", "cosine seed=1");
  const cos1 = want.jobs.filter((j) => j.label.includes("cosine") && j.seed === 1);
  await waitFor((n) => document.querySelectorAll("#jobs-table tbody tr").length === n, cos1.length);
  rows = await tableRows();
  check(sameRows(rows, cos1).length === 0 && (await page.textContent("#count")).startsWith(`${cos1.length} of ${want.jobs.length}`),
    `jobs: filter "cosine seed=1" keeps the ${cos1.length} jobs with cosine in them and seed 1`, sameRows(rows, cos1).join("\n"));
  await page.fill("#filter", "");
  await page.selectOption("#status", "failed");
  const failedJobs = want.jobs.filter((j) => j.status === "failed");
  await waitFor((n) => document.querySelectorAll("#jobs-table tbody tr").length === n && document.querySelector("#count").textContent.includes("match"), failedJobs.length);
  rows = await tableRows();
  check(sameRows(rows, failedJobs).length === 0, "jobs: status failed keeps the failed job", sameRows(rows, failedJobs).join("\n"));

  // choose columns: val loss on, ETA off; kept across views (localStorage)
  await open("#/jobs", () => document.querySelectorAll("#jobs-table tbody tr").length > 0);
  await page.click("#columns summary");
  await page.check("#columns input[value=val_loss]");
  await waitFor(() => document.querySelector("#jobs-table th[data-col=val_loss]"));
  await page.uncheck("#columns input[value=eta]");
  await waitFor(() => !document.querySelector("#jobs-table th[data-col=eta]"));
  await open("#/jobs", () => document.querySelectorAll("#jobs-table tbody tr").length > 0);
  const vl = await page.$$eval("#jobs-table tbody td[data-col=val_loss]", (tds) => tds.map((t) => t.textContent));
  const heads = await page.$$eval("#jobs-table th", (ths) => ths.map((t) => t.dataset.col));
  check(heads.includes("val_loss") && !heads.includes("eta") && vl.length === want.jobs.length && vl.every((v, i) => v === fixed(want.jobs[i].val_loss, 4)),
    "jobs: columns chosen (val loss added, ETA removed) stay chosen, and val loss is the results view's", heads.join(",") + " " + vl.join(","));
  await page.evaluate(() => localStorage.removeItem("tlm-dash.columns"));

  // select all that match, then compare them
  await open("#/jobs?limit=10", () => document.querySelectorAll("#jobs-table tbody tr").length === 10);
  await page.check("#pick-page");
  const sel = await page.textContent("#select-all");
  check(sel === `select all ${want.jobs.length} matching` && (await page.textContent("#compare")) === "compare 10 selected",
    "jobs: ticking the page's box selects its 10 rows and offers all that match", sel);
  await page.click("#select-all");
  check((await page.textContent("#compare")) === `compare ${want.jobs.length} selected`, `jobs: select all: ${want.jobs.length} selected`, await page.textContent("#compare"));
  await page.click("#compare");
  const withLoss = want.jobs.filter((j) => want.steps[j.key].length > 0).length;
  ok = await waitFor((n) => window.tlm.compare && window.tlm.compare.lines.length === n, withLoss);
  check(ok, `compare: every job selected, ${withLoss} with a loss curve (${want.jobs.length - withLoss} pending has none)`,
    await page.evaluate(() => window.tlm.compare && window.tlm.compare.lines.length));
}

async function jobView() {
  const j = want.jobs.find((x) => x.key === want.job);
  const ok = await open("#/job/" + want.job, () => window.tlm && window.tlm.charts.loss && window.tlm.charts.rho && document.querySelector("#config"));
  const c = await page.evaluate(() => Object.fromEntries(Object.entries(window.tlm.charts).map(([id, c]) => [id, {
    ylabel: c.u ? c.u.axes[1].label : null, xlabel: c.u ? c.u.axes[0].label : null,
    points: +c.box.dataset.points, splits: c.u ? c.u.axes[0]._splits : null, values: c.u ? c.u.axes[0]._values : null }])));
  check(ok && c.loss.points === want.steps[want.job].length, `job: the loss chart has one point per step (${want.steps[want.job].length})`, JSON.stringify(c.loss));
  const labels = { loss: "loss", ppl: "perplexity", lr: "learning rate", grad: "gradient norm", tps: "tokens/s", dff: "d_ff", rho: "rho" };
  check(Object.entries(labels).every(([id, l]) => c[id] && c[id].ylabel === l), "job: every chart has its y axis labelled",
    JSON.stringify(Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v.ylabel]))));
  const ints = c.dff.splits && c.dff.splits.length > 0 && c.dff.splits.every((v) => Number.isInteger(v)) &&
    c.dff.values.every((v) => /^\d+$/.test(v)) && c.rho.splits.every((v) => Number.isInteger(v));
  check(ints, "job: the layer axes are ticked at whole layers", JSON.stringify({ splits: c.dff.splits, values: c.dff.values }));
  const dff = await page.evaluate(() => window.tlm.charts.dff.u.data[1]);
  check(JSON.stringify(dff) === JSON.stringify(want.widths[want.job]), "job: d_ff per layer as jobs.widths has it", JSON.stringify(dff));
  const attempts = await page.$$eval("#job-rest table:first-of-type tbody tr", (trs) => trs.length);
  check(attempts === j.attempts && (await page.textContent("#config")).includes('"d_model": 128'), "job: its attempts and its config", attempts);
  await shot("job");
}

async function compareView() {
  const keys = want.compare;
  let ok = await open("#/compare?keys=" + keys.join(","), () => window.tlm && window.tlm.compare && window.tlm.compare.lines.length === 6);
  let cmp = await page.evaluate(() => ({ title: window.tlm.compare.title, ylabel: window.tlm.compare.ylabel,
    dom: (document.querySelector("#chart-compare .u-title") || {}).textContent, counts: window.tlm.compare.lines.map((l) => l.ys.filter((v) => v !== null).length) }));
  check(ok && cmp.title === "training loss" && cmp.dom === "training loss" && cmp.ylabel === "loss" && cmp.counts.every((n, i) => n === want.steps[keys[i]].length),
    "compare: six runs' training loss, titled so, every step of each", JSON.stringify(cmp));
  await page.selectOption("#metric", "val_ppl");
  ok = await waitFor(() => window.tlm.compare.title === "validation perplexity");
  cmp = await page.evaluate(() => ({ title: window.tlm.compare.title, dom: document.querySelector("#chart-compare .u-title").textContent,
    ylabel: window.tlm.charts.compare.u.axes[1].label, counts: window.tlm.compare.lines.map((l) => l.ys.filter((v) => v !== null).length) }));
  check(ok && cmp.dom === "validation perplexity" && cmp.ylabel === "perplexity" && cmp.counts.every((n, i) => n === want.vals[keys[i]].length),
    "compare: switched to validation perplexity, the chart is retitled and its y axis relabelled", JSON.stringify(cmp));
  await page.selectOption("#metric", "loss");
  await waitFor(() => window.tlm.compare.title === "training loss");

  // de-biased smoothing, against the definition computed here from results.db's losses
  await page.fill("#smooth", "0.9");
  await page.dispatchEvent("#smooth", "input");
  await waitFor(() => window.tlm.compare.title.includes("0.90"));
  cmp = await page.evaluate(() => window.tlm.compare.lines.map((l) => l.ys));
  const bad = [];
  keys.forEach((k, i) => {
    const exp = debiased(want.steps[k], 0.9);
    exp.forEach((v, t) => { if (!near(cmp[i][t], v, 1e-5)) bad.push(`${k.slice(0, 6)} step ${t + 1}: ${cmp[i][t]} vs ${v}`); });
  });
  const first = keys.every((k, i) => near(cmp[i][0], want.steps[k][0], 1e-6));
  const last = keys.map((k, i) => { const ys = want.steps[k].slice(-10); return cmp[i][cmp[i].length - 1] - ys.reduce((a, b) => a + b, 0) / ys.length; });
  check(bad.length === 0 && first, "compare: smoothing 0.9 is the de-biased EMA (sum of a^(n-k)(1-a)y_k over 1 - a^n), its first point the first loss",
    bad.slice(0, 5).join("\n"));
  check(last.every((d) => Math.abs(d) < 0.1), "compare: ...so the last smoothed loss is near the last losses (their mean over 10 steps), not pulled up by the first",
    last.map((d) => d.toFixed(3)).join(", "));
  await page.check("#raw");
  ok = await waitFor(() => window.tlm.compare.series.filter((s) => s.endsWith("(raw)")).length === 6);
  const raw = await page.evaluate(() => window.tlm.compare.lines.map((l) => l.raw));
  check(ok && keys.every((k, i) => raw[i].every((v, t) => near(v, want.steps[k][t], 1e-6))), "compare: raw shows each run's unsmoothed losses behind its line");

  // log x stops where the data stop
  await page.check("#logx");
  await page.check("#logy");
  ok = await waitFor(() => window.tlm.charts.compare.u.scales.x.distr === 3 && window.tlm.charts.compare.u.scales.y.distr === 3);
  const sx = await page.evaluate(() => ({ min: window.tlm.charts.compare.u.scales.x.min, max: window.tlm.charts.compare.u.scales.x.max }));
  const xmax = want.steps_tokens[want.steps_tokens.length - 1], xmin = want.steps_tokens[0];
  check(ok && near(sx.max, xmax, 1e-9) && near(sx.min, xmin, 1e-9), `compare: log x from ${xmin} to ${xmax} tokens, where the data start and stop`, JSON.stringify(sx));
  await page.uncheck("#logx");
  await page.uncheck("#logy");
  await page.fill("#smooth", "0.6");
  await page.dispatchEvent("#smooth", "input");
  await waitFor(() => window.tlm.compare.title.includes("0.60") && window.tlm.charts.compare.u.scales.x.distr === 1);
  await shot("compare");

  // group by schedule and ratio: seeds fold into a mean and a band
  await page.uncheck("#raw");
  await page.check("#group-schedule");
  await page.check("#group-ratio");
  ok = await waitFor(() => window.tlm.compare.lines.length === 2);
  const groups = await page.evaluate(() => window.tlm.compare.lines.map((l) => ({ name: l.name, runs: l.runs, ys: l.ys, lo: l.lo, hi: l.hi })));
  const gbad = [];
  for (const g of groups) {
    const sm = g.runs.map((k) => debiased(want.steps[k], 0.6));
    g.ys.forEach((v, t) => {
      const col = sm.map((s) => s[t]);
      const mean = col.reduce((a, b) => a + b, 0) / col.length;
      if (!near(v, mean, 1e-5) || !near(g.lo[t], Math.min(...col), 1e-5) || !near(g.hi[t], Math.max(...col), 1e-5)) gbad.push(`${g.name} ${t}`);
    });
  }
  const names = groups.map((g) => g.name + ":" + g.runs.length).join(", ");
  check(ok && names === "cosine \u00b7 1.5\u21920.5:3, uniform \u00b7 none:3" && gbad.length === 0,
    "compare: grouped by schedule and ratio, 2 groups of 3 seeds, each the mean of its smoothed runs with a min-max band", names + " " + gbad.slice(0, 5).join(" "));
  await page.click("#compare-lines tbody tr:first-child summary");
  const links = await page.$$eval("#compare-lines tbody tr:first-child details li a", (as) => as.map((a) => a.getAttribute("href").slice(6)));
  check(links.length === 3 && links.every((k) => groups[0].runs.includes(k)), "compare: a group's runs listed on demand, each a link to its job", links.join(","));
  await page.selectOption("#band", "std");
  await waitFor(() => window.tlm.compare.title.includes("std"));
  const std = await page.evaluate(() => { const l = window.tlm.compare.lines[0]; return { ys: l.ys, lo: l.lo, runs: l.runs }; });
  const sd = (xs) => { const m = xs.reduce((a, b) => a + b, 0) / xs.length; return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1)); };
  const t5 = std.runs.map((k) => debiased(want.steps[k], 0.6)[5]);
  check(near(std.ys[5] - std.lo[5], sd(t5), 1e-4), "compare: the band can be mean \u00b1 1 sample std instead", `${std.ys[5] - std.lo[5]} vs ${sd(t5)}`);
  await page.selectOption("#band", "minmax");
  await page.check("#runs");
  ok = await waitFor(() => window.tlm.compare.series.length === 2 * (2 + 3 + 1));
  check(ok, "compare: the runs of each group drawn thin behind its mean on demand", await page.evaluate(() => window.tlm.compare.series.join("|")));
  // the state is in the address: a reload shows the same
  await page.reload();
  ok = await waitFor(() => window.tlm.compare && window.tlm.compare.lines.length === 2);
  const state = await page.evaluate(() => ({ g: document.querySelector("#group-schedule").checked && document.querySelector("#group-ratio").checked,
    runs: document.querySelector("#runs").checked, smooth: document.querySelector("#smooth").value }));
  check(ok && state.g && state.runs && state.smooth === "0.6", "compare: a reload (or a bookmark) keeps the grouping, the runs and the smoothing", JSON.stringify(state));
  await shot("compare-grouped");
}

async function parallelView() {
  const ok = await open("#/parallel?sweep=taper", () => window.tlm && window.tlm.parallel && document.querySelectorAll("svg.pc path").length > 0);
  const p = await page.evaluate(() => ({ axes: window.tlm.parallel.axes, lines: document.querySelectorAll("svg.pc .pc-lines path").length }));
  check(ok && p.lines === want.parallel.length && p.axes.join(",") === "schedule,ratio,seed,val ppl",
    `parallel: one line per done job of the sweep (${want.parallel.length}), on the axes that vary and val ppl`, JSON.stringify(p));
  // brush the upper part of the val ppl axis: the jobs whose perplexity lies there stay
  const grip = await page.$("svg.pc g[data-axis=val_ppl] .pc-grip");
  const b = await grip.boundingBox();
  const y0 = b.y + 4, y1 = b.y + b.height * 0.5;
  await page.mouse.move(b.x + b.width / 2, y0);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, (y0 + y1) / 2, { steps: 4 });
  await page.mouse.move(b.x + b.width / 2, y1, { steps: 4 });
  await page.mouse.up();
  const kept = await page.evaluate(() => window.tlm.parallel.kept);
  const svgBox = await (await page.$("svg.pc")).boundingBox();
  const sc = await page.evaluate(() => window.tlm.parallel.scale);
  const pyOf = (v) => sc.bottom - (v - sc.lo) / (sc.hi - sc.lo) * (sc.bottom - sc.top);
  const exp = want.parallel.filter((v) => { const y = pyOf(v) + svgBox.y; return y >= y0 && y <= y1; }).length;
  const dim = await page.$$eval("svg.pc .pc-lines path.dim", (ps) => ps.length);
  check(kept === exp && dim === want.parallel.length - exp && exp > 0 && exp < want.parallel.length,
    `parallel: brushing the upper half of val ppl keeps the ${exp} jobs whose perplexity is there, greys the rest`, JSON.stringify({ kept, exp, dim }));
  check((await page.textContent("#parallel-picked")).startsWith(`${exp} of ${want.parallel.length} runs`), "parallel: it says how many pass, and offers to compare them",
    await page.textContent("#parallel-picked"));
  await shot("parallel");
  await page.click("#parallel-compare");
  const n = await waitFor((e) => window.tlm.compare && window.tlm.compare.lines.length === e, exp);
  check(n, "parallel: \"compare them\" opens them in the compare view");
}

// a Markdown table row's cells as the page shows them (the markers gone)
const mdRows = (md) => md.split("\n").filter((l) => l.startsWith("|") && !/^\|(-+:?\|)+$/.test(l)).map((l) => {
  const cells = [];
  let cell = "";
  for (let i = 1; i < l.length; i++) {
    if (l[i] === "\\" && l[i + 1] === "|") { cell += "|"; i++; } else if (l[i] === "|") { cells.push(cell.trim()); cell = ""; } else cell += l[i];
  }
  return cells.map((c) => (/^_.*_$/.test(c) && c.length > 1 ? c.slice(1, -1) : c.split("**").join("")));
});

async function tablesView() {
  // the figures of a sweep without rho: a placeholder that says why, never a broken image
  // each figure is drawn by PLplot one at a time on the server: seconds each on a loaded machine.
  // Ready when every box has its answer and every image put in one has finished decoding (an
  // <img> of a data: URL loads after it is inserted: `complete` says it has, loaded or broken);
  // the checks below then say which
  let ok = await open("#/tables?sweep=arch", () => {
    const boxes = [...document.querySelectorAll(".figure-box")];
    return boxes.length > 0 && boxes.every((b) => b.dataset.state && [...b.querySelectorAll("img")].every((i) => i.complete));
  }, 90000);
  const figs = await page.$$eval(".figure-box", (bs) => bs.map((b) => ({ name: b.dataset.figure, state: b.dataset.state,
    text: b.textContent, img: b.querySelector("img") ? b.querySelector("img").complete && b.querySelector("img").naturalWidth > 0 : null })));
  const rho = figs.find((f) => f.name === "rho");
  check(ok && rho && rho.state === "empty" && /^No rho figure: .+/.test(rho.text) && !rho.text.includes("undefined"),
    "tables: a figure without data is a placeholder saying why (" + (rho ? rho.text : "") + ")", JSON.stringify(figs));
  check(figs.filter((f) => f.state === "drawn").every((f) => f.img === true) && figs.some((f) => f.state === "drawn"),
    "tables: every other figure is an image that loaded", JSON.stringify(figs));
  const broken = await page.$$eval("img", (is) => is.filter((i) => !(i.complete && i.naturalWidth > 0)).length);
  check(broken === 0, "tables: no broken image on the page", broken);
  await shot("tables", "img.figure");

  // the same Δ as tlm-report: every cell's text is tlm-report's Markdown
  for (const [name, md] of [["wider_early_vs_late", want.md.wider], ["schedule_ratio?paper=1", want.md.ratio_paper]]) {
    ok = await open("#/tables/" + name, () => document.querySelector("#table-md"));
    const page_rows = await page.$$eval("table.rpt tr", (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    const want_rows = mdRows(md);
    const diff = [];
    want_rows.forEach((r, i) => { if (JSON.stringify(r) !== JSON.stringify(page_rows[i])) diff.push(`row ${i}: page ${JSON.stringify(page_rows[i])}, tlm-report ${JSON.stringify(r)}`); });
    check(ok && page_rows.length === want_rows.length && diff.length === 0 && (await page.textContent("#table-md")) === md,
      `tables: ${name}: every cell as tlm-report --table prints it (Δ with its 95% interval, n and \u2020)`, diff.slice(0, 5).join("\n"));
  }
  const deltas = await page.$$eval("table.rpt td[data-col$=delta]", (tds) => tds.map((t) => t.textContent));
  check(deltas.some((t) => /^[+-]\d+\.\d+ \[[+-]\d+\.\d+, [+-]\d+\.\d+\] \(n=3\) \u2020$/.test(t)), "tables: a Δ whose interval excludes 0 carries it and its \u2020",
    deltas.join(" | "));
  const roles = await page.$$eval("table.rpt tbody tr", (trs) => trs.map((tr) => [tr.dataset.source, tr.children[0].textContent]));
  const paperRows = roles.filter(([s]) => s === "paper"), ourRows = roles.filter(([s]) => s === "ours");
  check(paperRows.length > 0 && paperRows.every(([, t]) => t === "paper") && ourRows.every(([, t]) => t !== "paper" && /->|uniform/.test(t)),
    "tables: with ?paper=1 the paper's rows say paper, ours their ratio", JSON.stringify(roles.slice(0, 6)));
  ok = await open("#/tables/wider_early_vs_late?paper=1", () => document.querySelector("#table-md"));
  await shot("table");

  // the runs table: sorted by the server
  ok = await open("#/tables/runs", () => document.querySelector("#table-md"));
  await page.click("table.rpt th[data-col=last_loss]");
  await waitFor(() => location.hash.includes("sort=last_loss"));
  await waitFor(() => document.querySelector("#table-md") && document.querySelector("th.asc"));
  const order = await page.$$eval("table.rpt tbody td[data-col=job]", (tds) => tds.map((t) => t.textContent));
  const byLoss = sortJobs(want.jobs, "train_loss", "asc").map((j) => j.key.slice(0, 12));
  check(JSON.stringify(order) === JSON.stringify(byLoss), "tables: runs sorted by last loss on the server (empty last)", order.join(","));
}

async function noUplot() {
  const html = await (await page.goto(url)).text();
  check(!html.includes("/vendor/"), "without uPlot: the page does not ask for it (no failed load)");
  let ok = await open("#/job/" + want.job, () => document.querySelector("#config") && document.querySelectorAll(".nochart").length === 7);
  const lines = await page.$$eval(".chart .nochart", (ds) => ds.map((d) => d.textContent));
  check(ok && lines.length === 7 && lines.every((t) => t.includes("chart not drawn")), "without uPlot: the job page has a line where each of its 7 charts would be", lines[0]);
  const tables = await page.$$eval("#job-rest table", (ts) => ts.length);
  check(tables >= 4 && (await page.textContent("#config")).includes('"d_model": 128'), "without uPlot: ...and its attempts, evaluations, environment and config", tables);
  await shot("job-nouplot");
  ok = await open("#/compare?keys=" + want.compare.join(","), () => document.querySelectorAll("#compare-lines tbody tr").length === 6);
  check(ok && (await page.$$eval(".nochart", (d) => d.length)) === 1, "without uPlot: compare lists its runs with their last values, a line for the chart");
  ok = await open("#/parallel?sweep=taper", () => document.querySelectorAll("svg.pc .pc-lines path").length > 0);
  check(ok, "without uPlot: the parallel coordinates (plain SVG) are drawn");
  ok = await open("#/jobs", () => document.querySelectorAll("#jobs-table tbody tr").length > 0);
  check(ok, "without uPlot: the jobs table");
}

try {
  if (process.env.MODE === "nouplot") {
    await noUplot();
  } else {
    await sweepsView();
    await jobsView();
    await jobView();
    await compareView();
    await parallelView();
    await tablesView();
  }
} catch (e) {
  check(false, "the browser session ran to the end", e.stack);
}
check(errors.length === 0, `${process.env.MODE}: no script or console errors on any page`, errors.join("\n"));
await ctx.close();
process.exit(failed() ? 1 : 0);
