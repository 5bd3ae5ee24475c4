#!/usr/bin/env node
// Figure render benchmark: warm renderer (sandbox/figure/renderer.mjs over its line protocol,
// started the way FigureRenderer starts it: as root in new PID + network namespaces, Chromium as
// uid 65533 with its own sandbox), per figure spaced and back to back, with their ratio; then a
// cold one-shot `chromium --headless --screenshot` of the plotly figure, all in the same run.
//
//   node bench/figure_bench.mjs [--renders=20] [--gap-ms=1000] [--cold=5] [--figures=A.json,B.json]
//
// Warm, spaced: one render, then at least --gap-ms and until the renderer is idle again (in plotq
// the plot step runs before every figure render). Warm, back-to-back: no gap, as in a sweep or
// with several users. Times are request -> answer at the client (ms); CPU is the renderer tree's
// user+sys time in that window. Defaults: the plotly 7 scatter and the bokeh 3.9 plot fixtures.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runtimePlotlyJs } from '../sandbox/figure/lib/runtime.mjs';
import { isRenderer, treeProcs, TICK_MS } from '../tests/figure/proc_tree.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');
const RENDERER = path.join(ROOT, 'sandbox', 'figure', 'renderer.mjs');
const PLOTLY = runtimePlotlyJs();
const CHROMIUM = process.env.PLOTQ_CHROMIUM || '/usr/bin/chromium';

const opt = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const RENDERS = Number(opt.renders || 20);
const GAP_MS = Number(opt['gap-ms'] ?? 1000);
const COLD = Number(opt.cold || 5);
const FIXTURES = path.join(ROOT, 'tests', 'figure', 'fixtures');
const FIGURES = opt.figures ? opt.figures.split(',') : [path.join(FIXTURES, 'scatter-light.json'), path.join(FIXTURES, 'bokeh-light.json')];

// CPU time (user + sys, incl. reaped children) of a process tree, in ms: a figure that does not
// depend on how busy the machine is, unlike the wall times.
function treeCpuMs(root) {
  return treeProcs(root).reduce((a, p) => a + p.cpu + p.reaped, 0) * TICK_MS;
}

// The largest resident set among the tree's Chromium page processes, in MiB: what a page that
// draws figure after figure keeps (it must not grow with the figures it has drawn).
function treeMaxPageRssMb(root) {
  let max = 0;
  for (const { pid } of treeProcs(root)) {
    if (!isRenderer(pid)) continue;
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'))[1]);
      max = Math.max(max, kb / 1024);
    } catch { /* gone */ }
  }
  return Math.round(max);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const summary = (xs) => `p50 ${Math.round(pct(xs, 50))} ms, p90 ${Math.round(pct(xs, 90))} ms, min ${Math.round(Math.min(...xs))}, max ${Math.round(Math.max(...xs))} (n=${xs.length})`;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pqfb-'));
fs.chmodSync(work, 0o711);

function startRenderer() {
  const root = process.getuid() === 0;
  const args = [RENDERER, `--tmp-dir=${work}`, ...(root ? ['--uid=65533', '--gid=65533'] : [])];
  // As root: the renderer is PID 1 of a new PID namespace with an empty network namespace.
  const [cmd, argv] = root
    ? ['unshare', ['--net', '--pid', '--fork', '--kill-child', process.execPath, ...args]]
    : [process.execPath, args];
  const child = spawn(cmd, argv, { env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: work, LANG: 'C.UTF-8' }, stdio: ['pipe', 'pipe', 'ignore'] });
  const waiters = [];
  const lines = [];
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    for (let nl; (nl = buf.indexOf('\n')) >= 0;) {
      lines.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
      while (waiters.length && lines.length) waiters.shift()(lines.shift());
    }
  });
  const next = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => waiters.push(r)));
  return { child, next };
}

// Waits until the renderer is idle (its spare pages made): its process tree used under 5 % of a
// core over 250 ms, after at least minMs; gives up waiting after 20 s.
async function settle(r, minMs) {
  await sleep(minMs);
  const until = performance.now() + 20000;
  for (let c = treeCpuMs(r.child.pid); performance.now() < until;) {
    await sleep(250);
    const now = treeCpuMs(r.child.pid);
    if (now - c < 12.5) return;
    c = now;
  }
}

async function warm(r, figure, n, gapMs, label) {
  const times = [], draw = [], shot = [], cpu = [], reused = [];
  for (let i = 0; i < n; i++) {
    if (gapMs) await settle(r, gapMs);
    const out = path.join(work, `warm-${label}-${i}.png`);
    const c0 = treeCpuMs(r.child.pid);
    const t0 = performance.now();
    r.child.stdin.write(`${JSON.stringify({ id: `${label}-${i}`, figure, out, timeout_ms: 60000 })}\n`);
    const a = await r.next();
    const ms = performance.now() - t0;
    cpu.push(treeCpuMs(r.child.pid) - c0);
    if (!a.ok || a.width !== 3200 || a.height !== 1800) throw new Error(`render failed: ${JSON.stringify(a)}`);
    times.push(ms);
    draw.push(a.phases.draw);
    shot.push(a.phases.shot);
    reused.push(a.reused);
    fs.rmSync(out);
  }
  return { times, draw, shot, cpu, reused };
}

function cold(figure, n) {
  const fig = fs.readFileSync(figure, 'utf8');
  // The figure as data (JSON element, '<' escaped), drawn by an inline script: the one-shot path.
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0}</style>
<script src="${pathToFileURL(PLOTLY).href}"></script></head><body><div id="plot"></div>
<script type="application/json" id="fig">${fig.replace(/</g, '\\u003c')}</script>
<script>const f = JSON.parse(document.getElementById('fig').textContent); const l = f.layout || {};
l.width = 1600; l.height = 900; Plotly.newPlot('plot', f.data, l, {staticPlot: true});</script></body></html>`;
  const page = path.join(work, 'cold.html');
  fs.writeFileSync(page, html);
  const times = [], cpu = [];
  for (let i = 0; i < n; i++) {
    const out = path.join(work, `cold-${i}.png`);
    const u0 = childCpuMs();
    const profile = fs.mkdtempSync(path.join(work, 'cold-profile-'));
    const t0 = performance.now();
    const r = spawnSync(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', `--user-data-dir=${profile}`,
      '--hide-scrollbars', '--window-size=1600,900', '--force-device-scale-factor=2', '--virtual-time-budget=5000',
      `--screenshot=${out}`, pathToFileURL(page).href], { stdio: 'ignore', timeout: 60000 });
    times.push(performance.now() - t0);
    cpu.push(childCpuMs() - u0);
    const png = fs.readFileSync(out);
    if (r.status !== 0 || png.readUInt32BE(16) !== 3200 || png.readUInt32BE(20) !== 1800) throw new Error(`cold render failed (${r.status})`);
    fs.rmSync(profile, { recursive: true, force: true });
  }
  return { times, cpu };
}

// CPU time of this process's reaped children (the cold Chromium runs), in ms.
function childCpuMs() {
  const f = fs.readFileSync('/proc/self/stat', 'latin1');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(x[13]) + Number(x[14])) * TICK_MS;
}

try {
  console.log(`figure bench: ${FIGURES.map((f) => path.relative(ROOT, f)).join(', ')}, ${os.cpus().length} cpus, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  const t0 = performance.now();
  const r = startRenderer();
  const ready = await r.next();
  if (!ready.ready) throw new Error(`renderer did not start: ${JSON.stringify(ready)}`);
  console.log(`renderer ready in ${Math.round(performance.now() - t0)} ms (chromium ${ready.chromium}, plotly.js ${ready.plotly}, bokeh ${ready.bokeh}, chromium uid ${ready.chromium_uid})`);
  const verdicts = [];
  for (const figure of FIGURES) {
    const name = path.basename(figure);
    await settle(r, GAP_MS);
    const spaced = await warm(r, figure, RENDERS, GAP_MS, 'spaced');
    console.log(`${name} warm, spaced (idle): ${summary(spaced.times)}; in-page draw p50 ${pct(spaced.draw, 50)} ms, screenshot p50 ${pct(spaced.shot, 50)} ms; CPU per render p50 ${Math.round(pct(spaced.cpu, 50))} ms`);
    await settle(r, GAP_MS);
    const b2b = await warm(r, figure, RENDERS, 0, 'b2b');
    const reusedShare = b2b.reused.filter(Boolean).length;
    const pageRss = treeMaxPageRssMb(r.child.pid);
    console.log(`${name} warm, back-to-back:    ${summary(b2b.times)}; in-page draw p50 ${pct(b2b.draw, 50)} ms, screenshot p50 ${pct(b2b.shot, 50)} ms; CPU per render p50 ${Math.round(pct(b2b.cpu, 50))} ms; ${reusedShare}/${RENDERS} on a reused page; largest page process ${pageRss} MiB after them`);
    console.log(`${name} ratio back-to-back p50 / spaced p50: ${(pct(b2b.times, 50) / pct(spaced.times, 50)).toFixed(2)}`);
    verdicts.push(`${name}: spaced p50 ${Math.round(pct(spaced.times, 50))} ms, back-to-back p50 ${Math.round(pct(b2b.times, 50))} ms (target <= 300 ms: ${pct(spaced.times, 50) <= 300 && pct(b2b.times, 50) <= 300 ? 'met' : 'NOT met'})`);
  }
  r.child.stdin.end();
  await new Promise((res) => r.child.on('exit', res));
  const plotlyFigure = FIGURES.find((f) => !path.basename(f).startsWith('bokeh'));
  if (COLD > 0 && plotlyFigure) {
    const { times: coldTimes, cpu: coldCpu } = cold(plotlyFigure, COLD);
    console.log(`cold one-shot chromium --screenshot (${path.basename(plotlyFigure)}): ${summary(coldTimes)}; CPU per render p50 ${Math.round(pct(coldCpu, 50))} ms`);
  }
  for (const v of verdicts) console.log(v);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
