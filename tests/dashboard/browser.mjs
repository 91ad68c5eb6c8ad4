// browser.mjs: drives Debian's Chromium through playwright-core against a
// running tlm-dash, for tests/dashboard/test_browser.sh and test_live.sh.
// Prints one TAP-like line per check ("ok - ..." / "not ok - ..."; the shell
// numbers them).  Environment: as session.mjs, and URL (with the token),
// SHOTS (screenshot folder), MODE (static | live), EXPECT (static: JSON of
// what results.db holds, written by the shell with sqlite3), KEY, DB and
// WORKER_PID (live: the job, results.db and its worker, stopped).
import { execFileSync } from "child_process";
import { readFileSync } from "fs";
import { check, failed, fixed, launch, tokens, waitFor as waitIn } from "./session.mjs";

const url = process.env.URL;
const base = url.slice(0, url.indexOf("/?"));
const { ctx, page, errors } = await launch({ width: 1400, height: 900 });
const shot = (name) => page.screenshot({ path: process.env.SHOTS + "/" + name, fullPage: true });
const waitFor = (fn, arg, ms) => waitIn(page, fn, arg, ms);

async function staticChecks() {
  const want = JSON.parse(readFileSync(process.env.EXPECT, "utf8"));
  // no token: 403, the page says what to do
  let r = await page.goto(base + "/");
  check(r.status() === 403 && (await page.textContent("body")).includes("no valid access token"),
    "without the token: 403 and a message naming the URL to open", r.status());
  r = await page.goto(base + "/?t=0123456789abcdef0123456789abcdef");
  check(r.status() === 403, "a wrong token: 403", r.status());
  errors.length = 0; // the browser logs those two 403s as console errors

  r = await page.goto(url);
  check(r.status() === 200, "the printed URL opens the dashboard", r.status());
  await waitFor(() => document.querySelector("#sweeps table"));
  // a sweep's name is its cell's link (its description under it)
  const sweepRows = await page.$$eval("#sweeps tbody tr", (trs) => trs.map((tr) =>
    Object.fromEntries([...tr.children].map((td) => [td.dataset.col, td.dataset.col === "name" ? td.querySelector("a").textContent : td.textContent]))));
  check(sweepRows.length === want.sweeps.length && want.sweeps.every((s) => {
    const row = sweepRows.find((x) => x.name === s.name);
    return row && +row.jobs === s.jobs && +row.done === s.done && +row.failed === s.failed && +row.pending === s.pending;
  }), "sweeps: each sweep's jobs by status as in results.db", JSON.stringify(sweepRows));
  await shot("sweeps.png");

  // the jobs table equals SELECT ... FROM results
  await page.goto(url + "#/jobs");
  await waitFor((n) => document.querySelectorAll("#jobs-table tbody tr").length === n, want.jobs.length);
  const rows = await page.$$eval("#jobs-table tbody tr", (trs) => trs.map((tr) => Object.assign({ key: tr.dataset.key },
    Object.fromEntries([...tr.children].map((td) => [td.dataset.col, td.textContent])))));
  const bad = [];
  for (const j of want.jobs) {
    const row = rows.find((x) => x.key === j.key);
    const exp = {
      label: j.label, arch: j.arch, scale: j.scale, schedule: j.schedule,
      ratio: j.ratio_start !== null ? j.ratio_start + "\u2192" + j.ratio_end : j.groups ? "[" + j.groups + "]" : "",
      seed: String(j.seed), status: j.status, attempts: String(j.attempts),
      tokens_done: tokens(j.tokens_done) + " / " + tokens(j.tokens_total),
      train_loss: fixed(j.train_loss, 4), val_ppl: fixed(j.val_ppl, 3),
    };
    if (!row) { bad.push("missing " + j.key); continue; }
    for (const [k, v] of Object.entries(exp)) if (row[k] !== v) bad.push(`${j.key.slice(0, 8)} ${k}: page '${row[k]}', results '${v}'`);
  }
  check(rows.length === want.jobs.length && bad.length === 0,
    `jobs table: ${rows.length} rows, each cell as SELECT ... FROM results gives it`, bad.join("\n"));
  // sorting by a column and filtering by a word
  await page.click("#jobs-table th[data-col=seed]");
  await waitFor(() => document.querySelector("#jobs-table th[data-col=seed].asc"));
  await page.click("#jobs-table th[data-col=seed]");
  await waitFor(() => document.querySelector("#jobs-table th[data-col=seed].desc")); // sorted by the server
  const seeds = await page.$$eval("#jobs-table tbody td[data-col=seed]", (tds) => tds.map((t) => +t.textContent));
  check(seeds.length === want.jobs.length && seeds.every((s, i) => i === 0 || seeds[i - 1] >= s),
    "jobs table: a second click on a header sorts descending", seeds.join(","));
  const one = want.jobs[0];
  await page.fill("#filter", "seed=" + one.seed + " " + one.schedule);
  const expect = want.jobs.filter((j) => j.seed === one.seed && j.schedule === one.schedule).map((j) => j.key);
  await waitFor((n) => document.querySelectorAll("#jobs-table tbody tr").length === n, expect.length); // filtered by the server
  const filtered = await page.$$eval("#jobs-table tbody tr", (trs) => trs.map((t) => t.dataset.key));
  check(filtered.length === expect.length && expect.every((k) => filtered.includes(k)),
    `jobs table: filter "seed=${one.seed} ${one.schedule}" keeps the ${expect.length} matching jobs`, filtered.join(","));
  await page.fill("#filter", "");
  await waitFor((n) => document.querySelectorAll("#jobs-table tbody tr").length === n, want.jobs.length);
  await shot("jobs.png");

  // a job: one loss point per step event
  const job = want.jobs[0];
  await page.goto(url + "#/job/" + job.key);
  const drawn = await waitFor(() => window.tlm && window.tlm.charts.loss && document.querySelector("#config"));
  const pts = await page.evaluate(() => {
    const c = window.tlm.charts.loss;
    return c ? { attr: +c.box.dataset.points, data: c.u.data[1].filter((v) => v !== null && v !== undefined).length,
      xs: c.u.data[0].length } : null;
  });
  check(drawn && pts && pts.data === want.steps[job.key] && pts.attr === want.steps[job.key] && want.steps[job.key] === want.step_events,
    `job ${job.key.slice(0, 8)}: the loss chart has ${want.step_events} points, one per step event (steps rows: ${want.steps[job.key]})`,
    JSON.stringify(pts));
  const layers = await page.evaluate(() => window.tlm.charts.dff ? window.tlm.charts.dff.u.data[1] : null);
  check(layers && JSON.stringify(layers) === JSON.stringify(want.widths[job.key]),
    "job: d_ff per layer as jobs.widths has it", JSON.stringify(layers) + " vs " + JSON.stringify(want.widths[job.key]));
  const attempts = await page.$$eval("#job-rest table:first-of-type tbody tr", (trs) => trs.length);
  check(attempts === job.attempts, `job: its ${job.attempts} attempt(s) listed`, attempts);
  const cfg = await page.textContent("#config");
  check(cfg.includes('"d_model": 64'), "job: its config shown", cfg.slice(0, 200));
  await shot("job.png");

  // compare two jobs: pick them in the jobs table
  await page.goto(url + "#/jobs");
  await waitFor((n) => document.querySelectorAll("#jobs-table tbody tr").length === n, want.jobs.length);
  const two = want.jobs.slice(0, 2).map((j) => j.key);
  for (const k of two) await page.check(`#jobs-table tr[data-key="${k}"] input[type=checkbox]`);
  await page.click("#compare");
  await waitFor(() => window.tlm.charts.compare);
  const cmp = await page.evaluate(() => {
    const u = window.tlm.charts.compare.u;
    return { series: u.series.length, counts: u.data.slice(1).map((d) => d.filter((v) => v !== null).length),
      labels: u.series.slice(1).map((s) => s.label) };
  });
  check(cmp.series === 3 && cmp.counts.every((c, i) => c === want.steps[two[i]]),
    "compare: two jobs' loss curves on one chart, every step of each", JSON.stringify(cmp));
  const before = await page.evaluate(() => window.tlm.charts.compare.u.data[1].slice());
  await page.fill("#smooth", "0.9");
  await page.dispatchEvent("#smooth", "input");
  await page.check("#logy");
  const after = await page.evaluate(() => ({ d: window.tlm.charts.compare.u.data[1].slice(),
    distr: window.tlm.charts.compare.u.scales.y.distr }));
  check(after.distr === 3 && after.d.length === before.length && after.d.some((v, i) => v !== null && before[i] !== null && Math.abs(v - before[i]) > 1e-9),
    "compare: smoothing changes the curves, log y makes the axis logarithmic", JSON.stringify({ distr: after.distr }));
  await page.selectOption("#metric", "val_ppl");
  await waitFor(() => window.tlm.compare && window.tlm.compare.title === "validation perplexity"); // asked of the server again
  const val = await page.evaluate(() => window.tlm.charts.compare.u.data.slice(1).map((d) => d.filter((v) => v !== null).length));
  check(val.every((c, i) => c === want.vals[two[i]]), "compare: validation perplexity, one point per evaluation", JSON.stringify(val));
  await page.selectOption("#metric", "loss");
  await waitFor(() => window.tlm.compare.title.startsWith("training loss"));
  await page.fill("#smooth", "0");
  await page.dispatchEvent("#smooth", "input");
  await page.uncheck("#logy");
  await shot("compare.png");

  // the paper's tables: the same text as tlm-report --table
  await page.goto(url + "#/tables/runs");
  await waitFor(() => document.querySelector("#table-md"));
  const md = await page.textContent("#table-md");
  check(md === want.runs_md, "tables: runs as the page shows it is byte for byte tlm-report --table runs",
    md.slice(0, 300));
  const cells = await page.$$eval("table.rpt tbody tr", (trs) => trs.length);
  check(cells === want.jobs.length, "tables: runs has one row per job", cells);
  const toggle = await page.$$eval("#table-out a", (as) => as.map((a) => a.textContent));
  check(toggle.length === 0, "tables: runs has no paper's figures, so no switch for them", toggle.join(","));
  await shot("table.png");
  await page.goto(url + "#/tables/wider_early_vs_late?paper=1");
  await waitFor(() => document.querySelector("#table-md"));
  const md2 = await page.textContent("#table-md");
  check(md2 === want.wider_md && (await page.textContent("#table-out")).includes("without the paper's figures"),
    "tables: wider_early_vs_late --paper as tlm-report prints it, with the switch back", md2.slice(0, 300));
  check(errors.length === 0, "no script errors on any page", errors.join("\n"));
}

/* The live run's pace is the test's: tlm-worker (WORKER_PID) arrives
 * stopped (SIGSTOP, by test_live.sh after its first step) and runs only
 * until results.db holds more steps, then stops again while the page is
 * waited for to draw exactly the steps in results.db.  So the page sees
 * the curve grow however loaded the machine is (a free-running worker can
 * finish its 160 steps between two of a slow page's polls). */
const worker = +process.env.WORKER_PID;
const signal = (sig) => {
  try {
    process.kill(worker, sig);
    return true;
  } catch (e) {
    return false; // it has exited
  }
};
const dbPoints = () =>
  /^[0-9a-f]{64}$/.test(process.env.KEY) &&
  +execFileSync("sqlite3", ["-batch", process.env.DB, "select count(loss) from steps where job = '" + process.env.KEY + "'"],
    { encoding: "utf8" }).trim();
const pagePoints = () => page.evaluate(() => +(window.tlm.charts.loss ? window.tlm.charts.loss.box.dataset.points : 0));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* the page's loss chart showing every step results.db holds, once the
 * stopped worker's last events are in; the count, or null after 30 s */
async function drawnAll() {
  for (const t0 = Date.now(); Date.now() - t0 < 30000; await sleep(100)) {
    const n = dbPoints();
    if ((await pagePoints()) === n) return n;
  }
  return null;
}

/* the worker let run until results.db holds more than n steps (30 s at most), then stopped */
async function advance(n) {
  signal("SIGCONT");
  for (const t0 = Date.now(); Date.now() - t0 < 30000 && dbPoints() <= n; ) await sleep(20);
  signal("SIGSTOP");
}

async function liveChecks() {
  const key = process.env.KEY;
  await page.goto(url + "&poll=200#/job/" + key);
  await waitFor(() => window.tlm && window.tlm.charts.loss);
  await page.evaluate(() => { window.__same_document = 1; });
  const cdp = await ctx.newCDPSession(page);
  const heap = async () => {
    await cdp.send("HeapProfiler.collectGarbage");
    const m = (await cdp.send("Performance.getMetrics")).metrics;
    const get = (n) => (m.find((x) => x.name === n) || {}).value;
    return { heap: (await cdp.send("Runtime.getHeapUsage")).usedSize, nodes: get("Nodes") };
  };
  await cdp.send("Performance.enable");
  const seen = [];
  let first = null;
  try {
    for (let round = 0; round < 3; round++) {
      const n = await drawnAll();
      if (n === null) break;
      seen.push(n);
      if (round < 2) await advance(n);
    }
    if (seen.length >= 3) first = await heap();
  } finally {
    signal("SIGCONT"); // the rest of the run at its own pace
  }
  let status = "";
  const t0 = Date.now();
  while (Date.now() - t0 < 90000) {
    status = await page.evaluate(() =>
      (document.querySelector("#job-head .status-done, #job-head .status-running, #job-head .status-failed") || {}).textContent);
    if (status === "done") break;
    await page.waitForTimeout(150);
  }
  const grew = seen.length >= 3 && seen.every((v, i) => i === 0 || v > seen[i - 1]);
  check(grew, `live: the loss chart grew while tlmd trained, without a reload (${seen.length} sizes seen, ${seen.join(", ")} points, each all of results.db's steps then)`);
  check(status === "done", "live: the job's status turned to done on the page", status);
  const same = await page.evaluate(() => window.__same_document === 1);
  check(same, "live: the same document throughout (no page reload)");
  // hours of polling, shortened: many more answers (304 now that tlmd is idle, redraws before)
  const polls0 = await page.evaluate(() => window.tlm.polls);
  const t1 = Date.now();
  await waitFor((p) => window.tlm.polls >= p, polls0 + 30, 60000);
  const polls1 = await page.evaluate(() => window.tlm.polls);
  const last = await heap();
  check(polls1 - polls0 >= 30, `live: the page kept polling (${polls1 - polls0} polls in ${((Date.now() - t1) / 1000).toFixed(1)} s)`);
  check(first && last.heap - first.heap < 2 * 1024 * 1024 && last.nodes <= first.nodes * 1.2 + 200,
    `live: memory bounded: JS heap ${first && (first.heap / 1048576).toFixed(1)} -> ${(last.heap / 1048576).toFixed(1)} MB, ` +
    `DOM nodes ${first && first.nodes} -> ${last.nodes}`);
  await shot("live-job.png");
  // the jobs table follows too
  await page.goto(url + "&poll=200#/jobs");
  await waitFor(() => document.querySelector("#jobs-table"));
  const st = await page.$eval(`#jobs-table tr[data-key="${key}"] td[data-col=status]`, (td) => td.textContent);
  check(st === "done", "live: the jobs table shows it done", st);
  check(errors.length === 0, "live: no script errors", errors.join("\n"));
}

try {
  if (process.env.MODE === "live") await liveChecks();
  else await staticChecks();
} catch (e) {
  check(false, "the browser session ran to the end", e.stack);
}
await ctx.close();
process.exit(failed() ? 1 : 0);
