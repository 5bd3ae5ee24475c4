// End-to-end test of the status page in Debian's headless Chromium (driven by playwright-core,
// which never downloads a browser here). Starts a real plotqd on an ephemeral port with a fresh
// SQLite file, opens the page, and does what a newcomer would: a plain message, a data snippet,
// a plot, and a second user waiting behind the first one's render. Screenshots go to OUT_DIR.
//   node page.test.mjs /path/to/plotqd OUT_DIR
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const [plotqdPath, outDirArg] = process.argv.slice(2);
if (!plotqdPath) { console.error("usage: node page.test.mjs PLOTQD OUT_DIR"); process.exit(2); }
const outDir = outDirArg || path.join(process.cwd(), "browser-output");
mkdirSync(outDir, { recursive: true });
const work = mkdtempSync(path.join(tmpdir(), "plotq-browser-"));

function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(plotqdPath, [], {
      env: { ...process.env, PLOTQ_LISTEN: "127.0.0.1:0", PLOTQ_DB: path.join(work, "plotq.db"),
             PLOTQ_RUNS_PER_MINUTE: "60" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let buf = "";
    const timer = setTimeout(() => reject(new Error("plotqd did not report its address")), 30000);
    child.stderr.on("data", (chunk) => {
      buf += chunk.toString();
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
        try {
          const ev = JSON.parse(line);
          if (ev.event === "listening") { clearTimeout(timer); resolve({ child, base: `http://${ev.address}` }); }
        } catch (_) { /* not a log line */ }
      }
    });
    child.on("exit", (code) => reject(new Error(`plotqd exited early (${code})`)));
  });
}

const DATA_SNIPPET = `import numpy as np
import pandas as pd
r = 3.7
x = [0.4]
for _ in range(199):
    x.append(r * x[-1] * (1 - x[-1]))
df = pd.DataFrame({"step": np.arange(200), "x": x})
`;
const PLOT_CODE = `import os
import time
import matplotlib.pyplot as plt
import numpy as np
THEME = os.getenv("ANYPLOT_THEME", "light")
time.sleep(1.5)
t = np.linspace(0, 10, 200)
fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
ax.plot(t, np.sin(t), linewidth=3)
fig.savefig(f"plot-{THEME}.png", dpi=200)
`;

let passed = 0, failed = 0;
async function check(name, fn) {
  try { await fn(); passed++; console.log(`ok - ${name}`); }
  catch (e) { failed++; console.log(`not ok - ${name}\n  ${String(e && e.stack || e).split("\n").join("\n  ")}`); }
}

const { child, base } = await startServer();
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-quic"],
});
try {
  const ctxA = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctxA.newPage();
  const resp = await page.goto(base + "/");

  await check("the page is served with a strict Content-Security-Policy", async () => {
    const csp = resp.headers()["content-security-policy"] || "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
  });

  await page.fill("#user", "alice");
  await page.click("#new-session");
  await check("a session opens", async () => {
    await page.waitForFunction(() => document.getElementById("session-id").textContent.startsWith("session "));
  });

  await check("a plain message is answered at once: ready -> message -> done", async () => {
    await page.fill("#text", "hello, what can you plot?");
    await page.click("#send");
    const turn = page.locator(".turn").last();
    await turn.locator(".step.done").waitFor({ timeout: 10000 });
    const reply = await turn.locator(".reply").textContent();
    assert.ok(reply && reply.length > 0);
    await page.screenshot({ path: path.join(outDir, "1-message.png"), fullPage: true });
  });

  await check("a data snippet becomes dataset version 1 with its code and a table", async () => {
    await page.check("input[name=mode][value=data]");
    await page.fill("#text", "logistic map, r = 3.7");
    await page.fill("#code", DATA_SNIPPET);
    await page.click("#send");
    const turn = page.locator(".turn").last();
    await turn.locator(".step.done").waitFor({ timeout: 30000 });
    const head = await turn.locator(".version .head").textContent();
    assert.match(head, /version 1/);
    assert.match(head, /200 rows × 2 columns/);
    assert.equal(await turn.locator("table.preview tr").count(), 21);  // header + 20 preview rows
    const summary = page.locator("#versions details summary").first();
    await summary.waitFor({ timeout: 10000 });
    assert.equal(await summary.textContent(), "code that made this data");
    assert.equal(await page.locator("#versions details").first().getAttribute("open"), null); // collapsed
    await summary.click();
    assert.match(await page.locator("#versions details pre").first().textContent(), /r \* x\[-1\]/);
    await page.screenshot({ path: path.join(outDir, "2-data.png"), fullPage: true });
  });

  await check("a refused snippet is explained in words, and stores nothing", async () => {
    await page.fill("#text", "read a file");
    await page.fill("#code", "df = open('/etc/passwd').read()\n");
    await page.click("#send");
    const turn = page.locator(".turn").last();
    await turn.locator(".step.done").waitFor({ timeout: 30000 });
    assert.ok(await turn.locator(".problem").count() >= 1);
    assert.equal(await turn.locator(".version").count(), 0);
    await page.screenshot({ path: path.join(outDir, "3-refused.png"), fullPage: true });
  });

  // A second user in a second tab waits behind alice's render and sees its queue position.
  const ctxB = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const pageB = await ctxB.newPage();
  await pageB.goto(base + "/");
  await pageB.fill("#user", "bob");
  await pageB.click("#new-session");
  await pageB.waitForFunction(() => document.getElementById("session-id").textContent.startsWith("session "));

  await check("a plot renders to an image while a second user sees 'queued'", async () => {
    await page.check("input[name=mode][value=plot]");
    await page.fill("#text", "a sine wave");
    await page.fill("#code", PLOT_CODE);
    await page.click("#send");
    await page.locator(".turn").last().locator(".step", { hasText: /running|rendering/ }).waitFor({ timeout: 20000 });

    await pageB.check("input[name=mode][value=data]");
    await pageB.fill("#text", "random walk");
    await pageB.fill("#code", "import numpy as np\nimport pandas as pd\nrng = np.random.default_rng(1)\ndf = pd.DataFrame({'step': np.arange(100), 'pos': rng.standard_normal(100).cumsum()})\n");
    await pageB.click("#send");
    const turnB = pageB.locator(".turn").last();
    await turnB.locator(".step", { hasText: /queued: 1 of 1/ }).waitFor({ timeout: 10000 });
    await pageB.screenshot({ path: path.join(outDir, "4-queued.png"), fullPage: true });

    const turnA = page.locator(".turn").last();
    await turnA.locator(".step.done").waitFor({ timeout: 60000 });
    const img = turnA.locator(".plots img").first();
    await img.waitFor({ timeout: 10000 });
    await page.waitForFunction(() => { const i = document.querySelector(".turn:last-child .plots img"); return i && i.complete && i.naturalWidth > 0; });
    const size = await img.evaluate((i) => [i.naturalWidth, i.naturalHeight]);
    assert.deepEqual(size, [3200, 1800]);
    await page.screenshot({ path: path.join(outDir, "5-plot.png"), fullPage: true });

    await turnB.locator(".step.done").waitFor({ timeout: 60000 });
    assert.match(await turnB.locator(".version .head").textContent(), /100 rows × 2 columns/);
    await pageB.screenshot({ path: path.join(outDir, "6-second-user.png"), fullPage: true });
  });

  await check("server content is shown as text, never as HTML", async () => {
    await page.check("input[name=mode][value=message]");
    await page.fill("#text", "<img src=x onerror=\"document.title='pwned'\"> <b>bold?</b>");
    await page.click("#send");
    const turn = page.locator(".turn").last();
    await turn.locator(".step.done").waitFor({ timeout: 10000 });
    assert.equal(await turn.locator(".you img, .you b, .reply img").count(), 0);
    assert.notEqual(await page.title(), "pwned");
  });
} finally {
  await browser.close();
  child.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
