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

// plotqd in development mode (no tokens, loopback only: the page's "user" field names the caller).
// The test's own PLOTQ_* variables are dropped so that a developer's settings cannot leak in.
function startServer(name, extraEnv = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PLOTQ_")));
  Object.assign(env, { PLOTQ_ENVIRONMENT: "development", PLOTQ_LISTEN: "127.0.0.1:0",
                       PLOTQ_DB: path.join(work, name, "plotq.db"), PLOTQ_RUNS_PER_MINUTE: "600" }, extraEnv);
  return new Promise((resolve, reject) => {
    const child = spawn(plotqdPath, [], { env, stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`plotqd ${name} did not report its address`)), 30000);
    child.stderr.on("data", (chunk) => {
      buf += chunk.toString();
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
        let ev = null;
        try { ev = JSON.parse(line); } catch (_) { continue; /* not a log line */ }
        if (ev.event === "listening") {
          clearTimeout(timer);
          if (ev.development !== true) reject(new Error(`plotqd ${name} is not in development mode`));
          else resolve({ child, base: `http://${ev.address}` });
        }
      }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`plotqd ${name} exited early (${code})`)); });
  });
}
const children = [];

// A tab with a fresh session of `user`.
async function openTab(browser, base, user) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const resp = await page.goto(base + "/");
  await page.fill("#user", user);
  await page.click("#new-session");
  await page.waitForFunction(() => document.getElementById("session-id").textContent.startsWith("session "));
  return { page, resp };
}

async function sendData(page, text, code) {
  await page.check("input[name=mode][value=data]");
  await page.fill("#text", text);
  await page.fill("#code", code);
  await page.click("#send");
  return page.locator(".turn").last();
}

async function stepTexts(turn) { return turn.locator(".step").allTextContents(); }

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

const { base } = await startServer("main");
// Debian's Chromium with the flags that work as root (docs: shared platform facts); playwright
// gives it a fresh profile dir and never downloads a browser of its own.
const browser = await chromium.launch({
  executablePath: process.env.PLOTQ_TEST_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
});
try {
  const ctxA = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctxA.newPage();
  const cspViolations = [];
  page.on("console", (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
  const resp = await page.goto(base + "/");

  await check("the page is served with a strict Content-Security-Policy", async () => {
    const csp = resp.headers()["content-security-policy"] || "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    // The page itself runs under it: its script loaded (the slot line is filled in) without a violation.
    await page.waitForFunction(() => document.getElementById("slot-text").textContent !== "…");
    assert.equal(await page.locator("#slot-text").textContent(), "free");
    assert.deepEqual(cspViolations, []);
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
    assert.deepEqual(await stepTexts(turn), ["ready", "done"]);
    await page.screenshot({ path: path.join(outDir, "1-message.png"), fullPage: true });
  });

  // The stream of this turn is cut after its first event (as a dropped connection would): the page
  // must come back through GET .../events with Last-Event-ID and show the rest exactly once.
  await check("a dropped stream resumes with Last-Event-ID and misses nothing", async () => {
    let cut = false;
    const resumed = [];
    await page.route("**/v1/sessions/*/messages", async (route) => {
      const real = await route.fetch();  // the whole stream (it closes after done)
      const text = await real.text();
      const first = text.indexOf("\n\n", text.indexOf("event: ready"));
      cut = true;
      await route.fulfill({ status: 200, headers: real.headers(), body: text.slice(0, first + 2) });
    });
    page.on("request", (r) => { if (r.url().includes("/events")) resumed.push(r.headers()["last-event-id"]); });
    await page.fill("#text", "are you still there?");
    await page.click("#send");
    const turn = page.locator(".turn").last();
    await turn.locator(".step.done").waitFor({ timeout: 15000 });
    await page.unroute("**/v1/sessions/*/messages");
    assert.ok(cut);
    assert.deepEqual(resumed, ["1"]);  // ready was event 1
    assert.equal(await turn.locator(".reply").count(), 1);
    assert.deepEqual(await stepTexts(turn), ["ready", "done"]);
  });

  await check("a data snippet becomes dataset version 1 with its code and a table", async () => {
    const turn = await sendData(page, "logistic map, r = 3.7", DATA_SNIPPET);
    await turn.locator(".step.done").waitFor({ timeout: 30000 });
    assert.deepEqual(await stepTexts(turn), ["ready", "running", "done"]);  // the pipeline's steps
    const head = await turn.locator(".version .head").textContent();
    assert.match(head, /version 1/);
    assert.match(head, /200 rows × 2 columns/);
    assert.equal(await turn.locator("table.preview tr").count(), 21);  // header + 20 preview rows
    assert.deepEqual(await turn.locator("table.preview th").allTextContents(), ["step", "x"]);
    assert.ok((await turn.locator(".reply").textContent()).length > 0);  // the server's message
    const summary = page.locator("#versions details summary").first();
    await summary.waitFor({ timeout: 10000 });
    assert.equal(await summary.textContent(), "code that made this data");
    assert.equal(await page.locator("#versions details").first().getAttribute("open"), null); // collapsed
    await summary.click();
    assert.match(await page.locator("#versions details pre").first().textContent(), /r \* x\[-1\]/);
    await page.screenshot({ path: path.join(outDir, "2-data.png"), fullPage: true });
  });

  await check("a refused snippet is explained in words, and stores nothing", async () => {
    const turn = await sendData(page, "read a file", "df = open('/etc/passwd').read()\n");
    await turn.locator(".step.done").waitFor({ timeout: 30000 });
    const problem = (await turn.locator(".problem").allTextContents()).join(" ");
    assert.match(problem, /[a-z]+ [a-z]+ /i);  // a sentence, not only a code
    assert.doesNotMatch(problem, /^Refused: [a-z_]+$/);
    assert.equal(await turn.locator(".version").count(), 0);
    assert.equal(await page.locator("#versions > li").count(), 1);  // still only version 1
    await page.screenshot({ path: path.join(outDir, "3-refused.png"), fullPage: true });
  });

  // A second user in a second tab waits behind alice's render and sees its queue position.
  const { page: pageB } = await openTab(browser, base, "bob");

  await check("a plot renders to an image while a second user sees 'queued'", async () => {
    await page.check("input[name=mode][value=plot]");
    await page.fill("#text", "a sine wave");
    await page.fill("#code", PLOT_CODE);
    await page.click("#send");
    await page.locator(".turn").last().locator(".step", { hasText: /running|rendering/ }).waitFor({ timeout: 20000 });

    const turnB = await sendData(pageB, "random walk",
      "import numpy as np\nimport pandas as pd\nrng = np.random.default_rng(1)\ndf = pd.DataFrame({'step': np.arange(100), 'pos': rng.standard_normal(100).cumsum()})\n");
    await turnB.locator(".step", { hasText: /queued: 1 of 1/ }).waitFor({ timeout: 10000 });
    // The slot line at the top says the same: busy, one waiting.
    await pageB.waitForFunction(() => /^busy \(1 running\), 1 waiting$/.test(document.getElementById("slot-text").textContent),
                                null, { timeout: 5000 });
    await pageB.screenshot({ path: path.join(outDir, "4-queued.png"), fullPage: true });

    const turnA = page.locator(".turn").last();
    await turnA.locator(".step.done").waitFor({ timeout: 60000 });
    const img = turnA.locator(".plots img").first();
    await img.waitFor({ timeout: 10000 });
    await page.waitForFunction(() => { const i = document.querySelector(".turn:last-child .plots img"); return i && i.complete && i.naturalWidth > 0; });
    const size = await img.evaluate((i) => [i.naturalWidth, i.naturalHeight]);
    assert.deepEqual(size, [3200, 1800]);
    assert.deepEqual(await stepTexts(turnA), ["ready", "rendering", "done"]);
    assert.match(await turnA.locator(".plots figcaption").first().textContent(), /light: 3200×1800/);
    await page.screenshot({ path: path.join(outDir, "5-plot.png"), fullPage: true });

    await turnB.locator(".step.done").waitFor({ timeout: 60000 });
    assert.deepEqual(await stepTexts(turnB), ["ready", "queued: 1 of 1", "running", "done"]);
    assert.match(await turnB.locator(".version .head").textContent(), /100 rows × 2 columns/);
    await pageB.screenshot({ path: path.join(outDir, "6-second-user.png"), fullPage: true });
  });

  await check("the data panel lists each version with its rows and columns, code collapsed", async () => {
    const turn = await sendData(page, "three cities",
      "import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'], 'temp': [4.5, 19.0, 27.3], 'rain_mm': [60, 1, 3]})\n");
    await turn.locator(".step.done").waitFor({ timeout: 30000 });
    await page.waitForFunction(() => document.querySelectorAll("#versions > li").length === 2);
    const heads = await page.locator("#versions > li .version .head").allTextContents();
    assert.match(heads[0], /version 2.*3 rows × 3 columns/);  // newest first
    assert.match(heads[1], /version 1.*200 rows × 2 columns/);
    const latest = page.locator("#versions > li").first();
    assert.deepEqual(await latest.locator("table.preview th").allTextContents(), ["city", "temp", "rain_mm"]);
    assert.deepEqual(await latest.locator("table.preview tr").nth(1).locator("td").allTextContents(), ["Oslo", "4.5", "60"]);
    for (const d of await page.locator("#versions details").all()) assert.equal(await d.getAttribute("open"), null);
    await page.locator("#versions details summary").first().click();
    assert.match(await page.locator("#versions details pre").first().textContent(), /'Oslo', 'Lima', 'Pune'/);
    await page.screenshot({ path: path.join(outDir, "7-versions.png"), fullPage: true });
  });

  await check("a pasted table becomes the next version - a formula paste is refused in words", async () => {
    await page.fill("#paste", "y = sin(x) * 2\n");
    await page.click("#paste-send");
    await page.waitForFunction(() => document.getElementById("paste-note").textContent.length > 0);
    assert.match(await page.locator("#paste-note").textContent(), /looks like a formula, not a table/);
    assert.equal(await page.locator("#versions > li").count(), 2);  // nothing stored
    await page.fill("#paste", "month,sales\nJan,12\nFeb,15\nMar,9\n");
    await page.click("#paste-send");
    await page.waitForFunction(() => document.querySelectorAll("#versions > li").length === 3);
    assert.match(await page.locator("#paste-note").textContent(), /Added version 3: 3 rows × 2 columns/);
    assert.match(await page.locator("#versions > li .version .head").first().textContent(), /version 3.*3 rows × 2 columns/);
    assert.equal(await page.locator("#versions > li").first().locator("details").count(), 0);  // no code: a paste
  });

  await check("server content is shown as text, never as HTML", async () => {
    await page.check("input[name=mode][value=message]");
    await page.fill("#text", "<img src=x onerror=\"document.title='pwned'\"> <b>bold?</b>");
    await page.click("#send");
    const turn = page.locator(".turn").last();
    await turn.locator(".step.done").waitFor({ timeout: 10000 });
    assert.equal(await turn.locator(".you img, .you b, .reply img").count(), 0);
    assert.notEqual(await page.title(), "pwned");
    assert.match(await turn.locator(".you").textContent(), /<img src=x/);  // shown, as text
  });

  // Capacity, as a person reads it: a second plotqd at the default rate (1 slot start per 60 s) with
  // a max wait of 60 s, so its queue holds floor(1 x 60 / 60) = 1 waiting turn. The first user's
  // run starts, the second waits (its position shown), the third is refused at once.
  await check("a full queue is explained in words", async () => {
    const small = await startServer("capacity", { PLOTQ_RUNS_PER_MINUTE: "1", PLOTQ_QUEUE_MAX_WAIT_S: "60" });
    const tabs = [];
    for (const u of ["ann", "ben", "cat"]) tabs.push((await openTab(browser, small.base, u)).page);
    const snippet = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})\n";
    const t1 = await sendData(tabs[0], "first", snippet);
    await t1.locator(".step", { hasText: /running|done/ }).waitFor({ timeout: 60000 });
    const t2 = await sendData(tabs[1], "second", snippet);
    await t2.locator(".step", { hasText: /queued: 1 of 1/ }).waitFor({ timeout: 10000 });
    const t3 = await sendData(tabs[2], "third", snippet);
    await t3.locator(".step.done").waitFor({ timeout: 10000 });
    assert.match(await t3.locator(".problem").textContent(), /The render queue is full or the wait ran out/);
    assert.equal(await t3.locator(".version").count(), 0);
    await tabs[2].screenshot({ path: path.join(outDir, "8-capacity.png"), fullPage: true });
    small.child.kill("SIGTERM");
  });

  // The drain, as a person sees it: plotqd is told to stop (SIGTERM) while a plot runs. The stream
  // ends with `closing` and the page says so; the render finishes within the grace and is stored;
  // the page keeps trying (503 while draining, refused while down) and, once plotqd is back on the
  // same file and port, resumes with Last-Event-ID and shows the rest of the turn exactly once.
  await check("a restart mid-turn is ridden out: closing - then the rest of the turn from the restarted server", async () => {
    const first = await startServer("drain", { PLOTQ_SHUTDOWN_GRACE_S: "60" });
    const { page: tab } = await openTab(browser, first.base, "dana");
    await tab.check("input[name=mode][value=plot]");
    await tab.fill("#text", "draw through a restart");
    await tab.fill("#code", PLOT_CODE);
    await tab.click("#send");
    const turn = tab.locator(".turn").last();
    await turn.locator(".step", { hasText: /running|rendering/ }).waitFor({ timeout: 60000 });
    const exited = new Promise((r) => first.child.on("exit", r));
    first.child.kill("SIGTERM");
    await tab.waitForFunction(() => /server is restarting/.test(document.getElementById("form-note").textContent),
                              null, { timeout: 10000 });
    assert.equal(await turn.locator(".step.done").count(), 0);  // not ended by the close
    assert.equal(await exited, 0);  // the drain ended once the render was stored
    await startServer("drain", { PLOTQ_LISTEN: new URL(first.base).host });
    await turn.locator(".step.done").waitFor({ timeout: 60000 });
    assert.equal(await turn.locator(".problem").count(), 0);  // not abandoned: drawn within the grace
    assert.equal(await turn.locator(".plots").count(), 1);  // the plot, once
    assert.equal(await turn.locator(".plots img").count(), 1);
    assert.equal(await tab.locator("#form-note").textContent(), "");
    await tab.screenshot({ path: path.join(outDir, "9-drain.png"), fullPage: true });
  });
} finally {
  await browser.close();
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
