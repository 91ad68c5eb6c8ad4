// session.mjs: what browser.mjs and views.mjs share: TAP-like checks, a
// headless Chromium (Debian's, driven by playwright-core) with a page that
// collects script and console errors, waiting for the page, and the
// numbers as the dashboard prints them (so that rows compare as a user
// reads them).  Environment: NODE_MODULES (where playwright-core is),
// CHROMIUM, PROFILE (a fresh --user-data-dir).
import { createRequire } from "module";

const require = createRequire(process.env.NODE_MODULES + "/");
const { chromium } = require("playwright-core");

let failures = 0;
export function check(cond, what, detail) {
  console.log((cond ? "ok - " : "not ok - ") + what);
  if (!cond) {
    failures++;
    if (detail !== undefined) console.log("# " + String(detail).split("\n").join("\n# "));
  }
}
export const failed = () => failures;

/* Chromium and its first page; errors collects the page's script errors and
 * console errors (but a 403's /favicon.ico: the token checks' doing). */
export async function launch(viewport, args) {
  const ctx = await chromium.launchPersistentContext(process.env.PROFILE, {
    executablePath: process.env.CHROMIUM,
    headless: true,
    viewport,
    deviceScaleFactor: 1,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"].concat(args || []),
  });
  const page = ctx.pages()[0] || (await ctx.newPage());
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && !(m.location().url || "").endsWith("/favicon.ico")) errors.push(m.text() + " " + (m.location().url || ""));
  });
  return { ctx, page, errors };
}

/* true once fn(arg) holds in the page, false after ms (15 s). */
export async function waitFor(page, fn, arg, ms) {
  try {
    await page.waitForFunction(fn, arg, { timeout: ms || 15000, polling: 100 });
    return true;
  } catch (e) {
    return false;
  }
}

export const tokens = (v) => {
  for (const [s, p] of [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "K"]]) if (v >= s) return +(v / s).toFixed(2) + p;
  return String(+v.toFixed(2));
};
export const fixed = (v, d) => (v === null || v === undefined ? "" : Number(v).toFixed(d));
