// The sweep's HTML pages (plotq sweep report --html, plotq sweep diff --html; sweep/report_html.hpp)
// in Debian's headless Chromium. Two real bare-mode sweeps of two tests/catalogue files in both
// themes (one under a directory named like markup), the second after one file was broken and
// the other mended; then each page opened from file:// as a person would, checking that every
// thumbnail loads, that the counts and differences shown are the store's (read here with
// sqlite3), that the hostile name is shown as text and that the page's CSP is never violated.
//   node sweep_report.test.mjs PLOTQ CATALOGUE_DIR OUT_DIR
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [plotq, catalogue, outDirArg] = process.argv.slice(2);
if (!plotq || !catalogue) { console.error("usage: node sweep_report.test.mjs PLOTQ CATALOGUE_DIR OUT_DIR"); process.exit(2); }
const outDir = outDirArg || path.join(process.cwd(), "sweep-report-output");
mkdirSync(outDir, { recursive: true });
const chromiumPath = process.env.PLOTQ_TEST_CHROMIUM || "/usr/bin/chromium";
if (!existsSync(chromiumPath)) { console.log(`PLOTQ-SKIP: no Chromium at ${chromiumPath}`); process.exit(0); }
const work = mkdtempSync(path.join(tmpdir(), "plotq-sweep-report-"));
const db = path.join(work, "plotq.db");
const root = path.join(work, "cat");
const HOSTILE = `<img src=x onerror=alert(1)>&"q'`;
const impl = (spec) => path.join("plots", spec, "implementations", "python", "matplotlib.py");
const put = (spec, text) => {
  mkdirSync(path.dirname(path.join(root, impl(spec))), { recursive: true });
  writeFileSync(path.join(root, impl(spec)), text);
};
const source = (spec) => readFileSync(path.join(catalogue, impl(spec)), "utf8");

// The sweeps' own PLOTQ_* settings only: a developer's cannot leak in.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PLOTQ_")));
function cli(args, expect) {
  const r = spawnSync(plotq, ["--db", db, ...args], { env, encoding: "utf8", timeout: 120000 });
  assert.equal(r.status, expect, `plotq ${args.join(" ")} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}
function sql(query) {
  const out = execFileSync("sqlite3", ["-json", db, query], { encoding: "utf8" });
  return out.trim() ? JSON.parse(out) : [];
}
const rowsOf = (label) => sql(`SELECT r.path, r.theme, r.library, r.outcome, r.reason_class FROM sweep_results r
                               JOIN sweeps s ON s.id = r.sweep_id WHERE s.label = '${label}'`);
const cls = (r) => (r.outcome === "render" ? "render" : r.reason_class);

let passed = 0, failed = 0;
async function check(name, fn) {
  try { await fn(); passed++; console.log(`ok   ${name}`); }
  catch (e) { failed++; console.log(`FAIL ${name}\n${e.stack}`); }
}

// Sweep a: fail-attribute fails (AttributeError), the hostile-named copy of bar-basic renders.
// Sweep b: the hostile one broken (ValueError), fail-attribute mended (bar-basic's source).
// Two files in two themes twice: eight Python runs, the least that has changes both ways.
put("fail-attribute", source("fail-attribute"));
put(HOSTILE, source("bar-basic"));
const t0 = Date.now();
cli(["sweep", "run", root, "--mode", "bare", "--label", "a", "--jobs", "2"], 0);
put(HOSTILE, source("bar-basic") + "\nraise ValueError('broken on purpose')\n");
put("fail-attribute", source("bar-basic"));
cli(["sweep", "run", root, "--mode", "bare", "--label", "b", "--jobs", "2"], 0);
console.log(`two sweeps in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
const reportDir = path.join(outDir, "report"), diffDir = path.join(outDir, "diff");
rmSync(reportDir, { recursive: true, force: true });
rmSync(diffDir, { recursive: true, force: true });
cli(["sweep", "report", "a", "--html", reportDir], 0);
cli(["sweep", "diff", "a", "b", "--html", diffDir], 1);  // 1: differences

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
});

// Opens a page from file://, with every CSP violation, dialog and network request outside the
// page's directory recorded.
async function open(dir) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const seen = { csp: [], dialogs: [], foreign: [], errors: [] };
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  page.on("console", (m) => { if (/Content Security Policy/i.test(m.text())) seen.csp.push(m.text()); });
  page.on("dialog", (d) => { seen.dialogs.push(d.message()); d.dismiss(); });
  page.on("pageerror", (e) => seen.errors.push(String(e)));
  const base = pathToFileURL(dir).href + "/";
  page.on("request", (r) => { if (!r.url().startsWith(base)) seen.foreign.push(r.url()); });
  await page.goto(base + "index.html");
  // Lazy thumbnails load as they come into view: bring each there, then wait for all.
  for (const img of await page.locator("img").all()) await img.scrollIntoViewIfNeeded();
  await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: 15000 });
  return { page, seen };
}

async function imagesLoaded(page) {
  return page.evaluate(() => [...document.images].map((i) => ({ src: i.getAttribute("src"), w: i.naturalWidth })));
}

function clean(seen, page) {
  return page.evaluate(() => window.__csp).then((violations) => {
    assert.deepEqual(violations, [], "securitypolicyviolation events");
    assert.deepEqual(seen.csp, [], "CSP console messages");
    assert.deepEqual(seen.dialogs, [], "a dialog opened: markup from a file name ran");
    assert.deepEqual(seen.errors, []);
    assert.deepEqual(seen.foreign, [], "requests outside the page's directory");
  });
}

try {
  await check("report: every render's thumbnail loads, counts are the store's, the hostile name is text", async () => {
    const { page, seen } = await open(reportDir);
    const rows = rowsOf("a");
    assert.equal(rows.length, 4);  // 2 files x 2 themes
    const renders = rows.filter((r) => r.outcome === "render");
    const imgs = await imagesLoaded(page);
    assert.equal(imgs.length, renders.length, JSON.stringify(imgs));
    for (const i of imgs) assert.ok(i.w > 0, `${i.src} did not load`);
    // A thumbnail, not the 3200 px PNG.
    for (const i of imgs) assert.ok(i.w <= 320, `${i.src} is ${i.w} px wide`);

    // Counts per library and outcome class, as the store has them.
    const want = {};
    for (const r of rows) {
      const k = `${r.library}|${cls(r)}`;
      want[k] = (want[k] || 0) + 1;
    }
    const cells = await page.$$eval("td[data-library][data-class]", (tds) =>
      tds.map((td) => [td.dataset.library, td.dataset.class, Number(td.textContent)]));
    const shown = {};
    for (const [lib, c, n] of cells) if (c !== "files" && n > 0) shown[`${lib}|${c}`] = n;
    assert.deepEqual(shown, want);
    const files = new Set(rows.map((r) => r.path)).size;
    assert.equal(Number(await page.locator('td[data-total="files"]').textContent()), files);
    assert.equal(Number(await page.locator('td[data-total="render"]').textContent()), renders.length);

    // The hostile directory name: one card, its name shown as text, no element made of it.
    const card = page.locator("article.file").filter({ hasText: HOSTILE });
    assert.equal(await card.count(), 1);
    assert.equal(await card.getAttribute("data-path"), impl(HOSTILE));
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    // The failing file's class is shown under its theme.
    const failing = page.locator(`article.file[data-path="${impl("fail-attribute")}"] figure.fail`);
    assert.equal(await failing.count(), 2);
    assert.match(await failing.first().textContent(), /AttributeError/);
    await clean(seen, page);
    await page.screenshot({ path: path.join(outDir, "report.png"), fullPage: true });
  });

  await check("diff: the changed files side by side, as the store has them, images load", async () => {
    const { page, seen } = await open(diffDir);
    const a = new Map(rowsOf("a").map((r) => [`${r.path}|${r.theme}`, r]));
    const b = new Map(rowsOf("b").map((r) => [`${r.path}|${r.theme}`, r]));
    const want = [];
    for (const k of new Set([...a.keys(), ...b.keys()])) {
      const ra = a.get(k), rb = b.get(k);
      if (ra && rb && ra.outcome === rb.outcome && ra.reason_class === rb.reason_class) continue;
      want.push({ key: k, ra, rb });
    }
    assert.equal(want.length, 4);  // both files, two themes each
    const sections = await page.$$eval("section.diff", (ss) => ss.map((s) => ({
      key: `${s.dataset.path}|${s.dataset.theme}`,
      a: { img: s.querySelector("figure.a img")?.naturalWidth ?? null, text: s.querySelector("figure.a").textContent },
      b: { img: s.querySelector("figure.b img")?.naturalWidth ?? null, text: s.querySelector("figure.b").textContent },
    })));
    assert.deepEqual(sections.map((s) => s.key).sort(), want.map((w) => w.key).sort());
    assert.equal(await page.locator("#count").textContent(), String(want.length));
    for (const w of want) {
      const s = sections.find((x) => x.key === w.key);
      for (const [side, r] of [["a", w.ra], ["b", w.rb]]) {
        if (r.outcome === "render") assert.ok(s[side].img > 0, `${w.key} ${side}: the image did not load`);
        else {
          assert.equal(s[side].img, null, `${w.key} ${side}: an image for a failure`);
          assert.ok(s[side].text.includes(r.reason_class), `${w.key} ${side}: ${s[side].text}`);
        }
      }
    }
    const imgs = await imagesLoaded(page);
    assert.equal(imgs.length, want.filter((w) => w.ra.outcome === "render").length +
                              want.filter((w) => w.rb.outcome === "render").length);
    await clean(seen, page);
    await page.screenshot({ path: path.join(outDir, "diff.png"), fullPage: true });
  });
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
