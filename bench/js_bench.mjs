#!/usr/bin/env node
// JavaScript snippet benchmark: the renderer's warm FigureBrowser (started once; every snippet on a
// fresh locked context of its own) against what anyplot's harness does for each file (launch
// Chromium, a new page, the bare page set as content, its ready wait, a screenshot of #container,
// close), per library, over the JS files of tests/catalogue, in the same command.
//
//   node bench/js_bench.mjs [--n=3] [--fresh=1] [--gap-ms=500] [--libraries=chartjs,d3,...]
//
// warm, back to back: N renders of each file with no gap (a sweep); warm, spaced: the same with
// --gap-ms between renders (the spare context is ready, as between users' plots). fresh: --fresh
// runs of each file, one Chromium each; "fresh, reference wait" waits for window.__anyplotReady up
// to 2500 ms whatever the snippet names (the reference's rule), "fresh, our wait" only when the
// snippet names the flag (the renderer's rule), so the ratio against it is the browser's share
// alone. Times are wall ms per file, request to PNG; the tables give medians and ratios.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from '../sandbox/figure/node_modules/playwright-core/index.mjs';
import { FigureBrowser, chromiumArgs, LAUNCHER, DEFAULT_OPTIONS } from '../sandbox/figure/lib/browser.mjs';
import { tokensFor, orientationOf, ORIENTATIONS, FONT_FAMILY, namesReadyFlag, snippetLibraries } from '../sandbox/figure/lib/snippet.mjs';
import { barePageHtml } from '../sandbox/figure/lib/snippet_page.mjs';
import { DEFAULT_JS_MODULES } from '../sandbox/figure/lib/runtime.mjs';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const N = Number(opt.n || 3);
const FRESH = Number(opt.fresh || 1);
const GAP_MS = Number(opt['gap-ms'] ?? 500);
const LIBS = (opt.libraries || 'chartjs,d3,echarts,highcharts,muix').split(',');
const AS_ROOT = process.getuid() === 0;
const IDS = AS_ROOT ? { uid: 65533, gid: 65533 } : {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };

// The catalogue's JS files that render (not the fail-* ones), per library.
function files() {
  const out = Object.fromEntries(LIBS.map((l) => [l, []]));
  const plots = path.join(ROOT, 'tests', 'catalogue', 'plots');
  for (const spec of fs.readdirSync(plots).sort()) {
    const dir = path.join(plots, spec, 'implementations', 'javascript');
    if (spec.startsWith('fail-') || !fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir).sort()) {
      const lib = name.replace(/\.(js|tsx)$/, '');
      if (out[lib]) out[lib].push(path.join(dir, name));
    }
  }
  return out;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pqjb-'));
fs.chmodSync(work, 0o711);

async function warm(byLib) {
  const fb = new FigureBrowser({ ...IDS, plotlyJs: '', bokehDir: '' });
  await fb.start();
  await sleep(3000);   // the muix warm-up bundle and the first spare context
  const res = {};
  for (const gap of [0, GAP_MS]) {
    for (const lib of LIBS) {
      const times = [];
      for (let i = 0; i < N; i++) {
        for (const file of byLib[lib]) {
          const t0 = performance.now();
          await fb.render({ snippet: file, out: path.join(work, 'warm.png'), timeoutMs: 60000, library: lib, theme: 'light', bare: false });
          times.push(performance.now() - t0);
          if (gap) await sleep(gap);
        }
      }
      (res[lib] ||= {})[gap ? 'spaced' : 'b2b'] = median(times);
    }
  }
  await fb.close();
  return res;
}

// The reference's MUI X bundle: a fresh esbuild build of its entry for every file.
async function referenceBundle(esbuild, file) {
  const entry = `import React from "react";
import { createRoot } from "react-dom/client";
import { ThemeProvider, createTheme } from "@mui/material/styles";
import AnyplotChart from ${JSON.stringify(file)};
const t = window.ANYPLOT_TOKENS;
const theme = createTheme({ palette: { mode: window.ANYPLOT_THEME === "dark" ? "dark" : "light",
  background: { default: t.pageBg, paper: t.elevatedBg }, text: { primary: t.ink, secondary: t.inkSoft }, divider: t.grid },
  typography: { fontFamily: ${JSON.stringify(FONT_FAMILY)} } });
createRoot(document.getElementById("container")).render(React.createElement(ThemeProvider, { theme }, React.createElement(AnyplotChart)));
(async () => { try { await document.fonts.ready; } catch (e) {}
  requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(() => { window.__anyplotReady = true; }))); })();`;
  const root = path.dirname(DEFAULT_JS_MODULES);
  const r = await esbuild.build({
    stdin: { contents: entry, resolveDir: root, sourcefile: 'anyplot-react-entry.tsx', loader: 'tsx' },
    bundle: true, write: false, format: 'iife', platform: 'browser', target: 'es2020', jsx: 'automatic', minify: true,
    legalComments: 'none', absWorkingDir: root, nodePaths: [DEFAULT_JS_MODULES], logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
    banner: { js: "globalThis.process=globalThis.process||{env:{NODE_ENV:'production'}};" },
  });
  return r.outputFiles[0].text;
}

// One file the reference's way: a Chromium of its own (the renderer's binary, launcher and flags).
async function freshOnce(esbuild, lib, file, referenceWait) {
  const t0 = performance.now();
  const source = fs.readFileSync(file, 'utf8');
  const css = ORIENTATIONS[orientationOf(source)];
  const tokens = tokensFor('light');
  const bundleSource = lib === 'muix' ? await referenceBundle(esbuild, file) : fs.readFileSync(snippetLibraries(DEFAULT_JS_MODULES)[lib].bundle, 'utf8');
  const { html } = barePageHtml({ tokens, css, bundleSource, snippetSource: lib === 'muix' ? '' : source });
  const home = fs.mkdtempSync(path.join(work, 'h'));
  fs.chmodSync(home, 0o755);
  if (AS_ROOT) fs.chownSync(home, 65533, 65533);
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = work;
  const browser = await chromium.launch({
    executablePath: LAUNCHER, headless: true, args: chromiumArgs(DEFAULT_OPTIONS),
    env: { PATH: '/usr/bin:/bin', HOME: home, PLOTQ_FIGURE_CHROMIUM: DEFAULT_OPTIONS.chromium, PLOTQ_FIGURE_UID: AS_ROOT ? '65533' : '', PLOTQ_FIGURE_GID: AS_ROOT ? '65533' : '' },
  });
  process.env.TMPDIR = saved;
  try {
    const page = await browser.newPage({ viewport: { width: css.width, height: css.height }, deviceScaleFactor: 2 });
    await page.emulateMedia({ reducedMotion: 'reduce', colorScheme: 'light' });
    let error = null;
    page.on('pageerror', (e) => { error = e; });
    await page.setContent(html, { waitUntil: 'load' });
    const settle = () => page.evaluate(async () => {
      await document.fonts.ready;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    });
    if (referenceWait || lib === 'muix' || namesReadyFlag(source)) {
      try {
        await page.waitForFunction(() => window.__anyplotReady === true, null, { timeout: 2500 });
      } catch {
        await settle();
      }
    } else {
      await settle();
    }
    if (error || await page.evaluate(() => window.__anyplotError)) throw new Error(`${file}: the snippet threw`);
    await page.locator('#container').screenshot({ path: path.join(work, 'fresh.png') });
  } finally {
    await browser.close();
  }
  return performance.now() - t0;
}

async function fresh(byLib) {
  const esbuild = await import(pathToFileURL(path.join(DEFAULT_JS_MODULES, 'esbuild', 'lib', 'main.js')).href);
  const res = {};
  for (const referenceWait of [true, false]) {
    for (const lib of LIBS) {
      const times = [];
      for (let i = 0; i < FRESH; i++) for (const file of byLib[lib]) times.push(await freshOnce(esbuild, lib, file, referenceWait));
      (res[lib] ||= {})[referenceWait ? 'ref' : 'ours'] = median(times);
    }
  }
  await esbuild.stop();
  return res;
}

const byLib = files();
const load0 = os.loadavg()[0];
const w = await warm(byLib);
const f = await fresh(byLib);
fs.rmSync(work, { recursive: true, force: true });
const r = (x) => Math.round(x);
const ratio = (a, b) => (a / b).toFixed(2);
console.log(`JavaScript snippets, medians per file, ms (warm n=${N} per file, fresh ${FRESH} per file; load avg ${load0.toFixed(1)} -> ${os.loadavg()[0].toFixed(1)})`);
console.log('| library | files | warm back to back | warm spaced | fresh, reference wait | fresh, our wait | b2b / fresh ref | b2b / fresh ours | spaced / fresh ref |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const lib of LIBS) {
  const a = w[lib], b = f[lib];
  console.log(`| ${lib} | ${byLib[lib].length} | ${r(a.b2b)} | ${r(a.spaced)} | ${r(b.ref)} | ${r(b.ours)} | ${ratio(a.b2b, b.ref)} | ${ratio(a.b2b, b.ours)} | ${ratio(a.spaced, b.ref)} |`);
}
