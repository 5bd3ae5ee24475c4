// node --test tests/figure/snippet.test.mjs
// JavaScript snippet renders against real Chromium and the runtime's own libraries
// (runtime/js/node_modules): every library in both themes and orientations, errors with their
// class and snippet line, MUI X import refusals, the ready rule, exact sizes whatever the snippet
// does, budgets (an endless loop, a memory balloon, a huge DOM), cancel, the catalogue's JS files
// strict and bare, hostile snippets against a local listener (this process is NOT in a network
// namespace, and that browser runs without its network flags: the page's own rules are all that
// keeps the listener quiet; the bare page, without them, reaches it), and renderer.mjs's protocol.
// Every other way out of the page, each layer alone: hostile.test.mjs.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';

import { FigureBrowser } from '../../sandbox/figure/lib/browser.mjs';
import { FigureError } from '../../sandbox/figure/lib/errors.mjs';
import { parseRequest } from '../../sandbox/figure/lib/protocol.mjs';
import { orientationOf, tokensFor, readSnippet } from '../../sandbox/figure/lib/snippet.mjs';
import { allowedImport } from '../../sandbox/figure/lib/muix_bundle.mjs';
import { isRenderer, treeProcs, TICK_MS } from './proc_tree.mjs';
import {
  ROOT, AS_ROOT, BROWSER_OPTS, tmpDir, writer, pngOf, version, listener, settle, drawing, catalogueFiles, findNamed,
} from './snippet_support.mjs';

const tmp = tmpDir('plotq-snippet-test-');
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const write = writer(tmp);
const LIBS = ['chartjs', 'd3', 'echarts', 'highcharts', 'muix'];
const ext = (library) => (library === 'muix' ? '.tsx' : '.js');
const code = (fn) => {
  try { fn(); } catch (e) { assert.ok(e instanceof FigureError, `not a FigureError: ${e}`); return e.code; }
  return 'no error';
};
let outs = 0;
const outPath = () => path.join(tmp, `out${++outs}.png`);
// Resolves to the answer's fields, or {code, ...extra} for a refusal.
const render = (fb, library, text, opts = {}, hooks = {}) => {
  const snippet = typeof text === 'string' && !text.includes('\n') && path.isAbsolute(text) ? text : write(ext(library), text);
  const out = opts.out || outPath();
  return fb.render({ snippet, out, timeoutMs: 30000, library, theme: 'light', bare: false, ...opts, out }, hooks)
    .then((r) => ({ ...r, code: 'ok', out }), (e) => ({ code: e.code, detail: e.detail, ...e.extra, out }));
};

describe('snippet pieces', () => {
  test('the orientation comes only from the directive line', () => {
    assert.equal(orientationOf('//# anyplot-orientation: square\nx'), 'square');
    assert.equal(orientationOf('const a = 1;\n  // anyplot-orientation:   SQUARE\n'), 'square');
    assert.equal(orientationOf('// anyplot-orientation: landscape'), 'landscape');
    assert.equal(orientationOf('const s = "anyplot-orientation: square";'), 'landscape');
    assert.equal(orientationOf('//# anyplot-orientation: squareish'), 'landscape');
  });
  test('tokens: data colours shared, chrome flips with the theme', () => {
    const l = tokensFor('light'), d = tokensFor('dark');
    assert.deepEqual(Object.keys(l), ['theme', 'pageBg', 'elevatedBg', 'ink', 'inkSoft', 'grid', 'palette', 'amber', 'seq', 'div']);
    assert.deepEqual(l.palette, d.palette);
    assert.deepEqual([l.pageBg, d.pageBg, l.ink, d.ink], ['#FAF8F1', '#1A1A17', '#1A1A17', '#F0EFE8']);
    assert.deepEqual(d.div, ['#AE3030', '#1A1A17', '#4467A3']);
  });
  test('request lines: a snippet needs its library and theme; figure and snippet never together', () => {
    const ok = { id: 1, snippet: '/a/plot.js', out: '/a/plot.png', library: 'echarts', theme: 'dark' };
    assert.deepEqual(parseRequest(JSON.stringify(ok)).job,
      { snippet: '/a/plot.js', out: '/a/plot.png', timeoutMs: 30000, library: 'echarts', theme: 'dark', bare: false });
    assert.equal(parseRequest(JSON.stringify({ ...ok, bare: true })).job.bare, true);
    const bad = [{ ...ok, theme: undefined }, { ...ok, theme: 'sepia' }, { ...ok, library: 'plotly' }, { ...ok, library: undefined },
      { ...ok, figure: '/a/f.json' }, { ...ok, bare: 'yes' }, { ...ok, snippet: 'plot.js' }, { ...ok, snippet: '/a/plot.py' },
      { ...ok, extra: 1 }, { id: 1, figure: '/a/f.json', out: '/a/f.png', theme: 'dark' }];
    for (const b of bad) assert.equal(code(() => parseRequest(JSON.stringify(b))), 'request_invalid', JSON.stringify(b));
  });
  test('MUI X import allow-list', () => {
    for (const s of ['react', 'react/jsx-runtime', 'react-dom/client', '@mui/material', '@mui/material/Box', '@mui/x-charts/BarChart',
      '@mui/system', '@emotion/react', '@emotion/styled']) assert.ok(allowedImport(s), s);
    for (const s of ['fs', 'node:fs', './x', '/etc/passwd', 'd3', 'react/../../../etc/passwd', '@mui/x-charts/./BarChart',
      '@mui/x-charts-pro', 'reactx', '@mui/materials', 'react\\..\\x', '']) assert.ok(!allowedImport(s), s);
  });
  test('the snippet file: the figure checks, 1 MiB cap, UTF-8', () => {
    const big = path.join(tmp, 'big.js');
    fs.writeFileSync(big, Buffer.alloc(1024 * 1024 + 1, 0x20));
    fs.symlinkSync(write('.js', 'x'), path.join(tmp, 'link.js'));
    assert.equal(code(() => readSnippet(big)), 'figure_too_large');
    assert.equal(code(() => readSnippet(path.join(tmp, 'link.js'))), 'figure_not_regular');
    assert.equal(code(() => readSnippet(write('.js', ''))), 'figure_empty');
    assert.equal(code(() => readSnippet(write('.js', Buffer.from([0x2f, 0x2f, 0xff])))), 'figure_invalid');
    assert.equal(code(() => readSnippet(path.join(tmp, 'none.js'))), 'figure_missing');
  });
});

describe('drawing snippets', () => {
  let fb;
  before(async () => {
    fb = new FigureBrowser({ ...BROWSER_OPTS, maxHeapMb: 512 });
    await fb.start();
  });
  after(() => fb.close());

  test('every library, both themes, both canvases: exact size, drawn, the theme\'s background', async () => {
    for (const library of LIBS) {
      for (const orientation of ['landscape', 'square']) {
        const corners = {};
        for (const theme of ['light', 'dark']) {
          const r = await render(fb, library, drawing(library, orientation), { theme });
          const want = orientation === 'square' ? [2400, 2400] : [3200, 1800];
          assert.equal(r.code, 'ok', `${library} ${orientation} ${theme}: ${r.code} ${r.detail}`);
          assert.deepEqual([r.width, r.height, r.orientation, r.library], [...want, orientation, library]);
          const png = pngOf(r.out);
          assert.deepEqual([png.width, png.height], want);
          const green = png.count((R, G, B) => Math.abs(R - 0x00) < 30 && Math.abs(G - 0x9e) < 30 && Math.abs(B - 0x73) < 30);
          assert.ok(green > 20000, `${library} ${orientation} ${theme}: palette[0] pixels ${green}`);
          corners[theme] = png.pixel(2, 2);
          assert.deepEqual([r.blocked_requests, r.csp_violations, r.popups], [0, 0, 0], `${library}: an honest snippet is refused nothing`);
          assert.equal(r.ready, library === 'muix' || library === 'echarts' ? 'signal' : 'settled');
        }
        const near = (px, hex) => px.every((v, i) => Math.abs(v - parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16)) <= 3);
        assert.ok(near(corners.light, '#FAF8F1') && near(corners.dark, '#1A1A17'), `${library}: corners ${JSON.stringify(corners)}`);
      }
    }
  });

  test('errors: class and the snippet\'s own line, strict and bare', async () => {
    const cases = [
      ['chartjs', ['// 1', 'const t = window.ANYPLOT_TOKENS;', 'const c = document.createElement("canvas");', '// 4', '// 5', '// 6',
        'undefinedThing.foo;'], 'ReferenceError', 7],
      // the bare page is set as content (document.write), as the reference does: Chromium then
      // reports a syntax error as thrown by write(), without its line
      ['d3', ['// 1', 'const a = 1;', 'const b = ;'], 'SyntaxError', 3, null],
      ['echarts', ['// 1', '// 2', 'Promise.reject(new RangeError("nope"));'], 'RangeError', 3],
      // thrown after load, before the screenshot (the snippet names the flag, so the harness waits)
      ['highcharts', ['// names __anyplotReady', 'setTimeout(() => { null.boom; }, 50);', 'setTimeout(() => { window.__anyplotReady = true; }, 400);'],
        'TypeError', 2],
      // a thrown string has no stack of its own: the bare page's try/catch rethrow hides its line
      ['chartjs', ['throw "a string";'], 'Error', 1, null],
      ['muix', ['import { BarChart } from "@mui/x-charts/BarChart";', 'export default function C() {', '  const n: number = ;', '  return null;', '}'],
        'SyntaxError', 3],
      ['muix', ['import { BarChart } from "@mui/x-charts/BarChart";', 'export default function C() {', '  const x: any = null;',
        '  return <BarChart width={100} height={100} series={[{ data: [x.y] }]} />;', '}'], 'TypeError', 4],
    ];
    for (const [library, lines, cls, line, bareLine = line] of cases) {
      for (const bare of [false, true]) {
        const r = await render(fb, library, lines, { bare });
        assert.deepEqual([r.code, r.error_class, r.error_line ?? null], ['snippet_error', cls, bare ? bareLine : line], `${library} bare=${bare}: ${JSON.stringify(r)}`);
        assert.equal(fs.existsSync(r.out), false, 'no screenshot of a failed snippet');
      }
    }
    const noDefault = await render(fb, 'muix', 'export const x = 1;\n');
    assert.deepEqual([noDefault.code, noDefault.error_class], ['snippet_error', 'SyntaxError']);
  });

  test('MUI X imports outside the allow-list are refused by the plugin, with their line', async () => {
    // (an import the snippet never uses is dropped by TypeScript's rules before anything resolves it)
    const cases = [['import fs from "fs"; console.log(fs);', 'fs'], ['import x from "./x"; console.log(x);', './x'],
      ['import "/etc/passwd";', '/etc/passwd'], ['import d3 from "d3"; console.log(d3);', 'd3'],
      ['import p from "react/../../../../etc/passwd"; console.log(p);', 'react/../../../../etc/passwd'],
      ['const m = require("node:child_process");', 'node:child_process']];
    for (const [imp, module] of cases) {
      const before = fb.muix.refusals;
      const r = await render(fb, 'muix', ['// a', 'import Box from "@mui/material/Box";', imp, 'export default function C() { return <Box />; }']);
      assert.deepEqual([r.code, r.module, r.error_line], ['import_refused', module, 3], `${imp}: ${JSON.stringify(r)}`);
      assert.equal(fb.muix.refusals, before + 1, 'refused by the plugin before esbuild resolved it');
    }
  });

  test('the ready rule: signal, settled, deadline; a snippet that draws nothing is blank', async () => {
    const signal = await render(fb, 'd3', [drawing('d3', 'landscape'), 'setTimeout(() => { window.__anyplotReady = true; }, 200);']);
    assert.deepEqual([signal.code, signal.ready], ['ok', 'signal']);
    const t0 = performance.now();
    const deadline = await render(fb, 'd3', [drawing('d3', 'landscape'), '// waits for window.__anyplotReady, never set']);
    assert.deepEqual([deadline.code, deadline.ready], ['ok', 'deadline']);
    assert.ok(performance.now() - t0 >= 2500, 'waited the reference\'s 2500 ms');
    const settled = await render(fb, 'd3', drawing('d3', 'landscape'));
    assert.deepEqual([settled.code, settled.ready], ['ok', 'settled']);
    for (const bare of [false, true]) {
      const blank = await render(fb, 'chartjs', 'const t = window.ANYPLOT_TOKENS;\n', { bare });
      assert.equal(blank.code, 'blank', JSON.stringify(blank));
      assert.equal(fs.existsSync(blank.out), false);
    }
  });

  test('resizing #container or the body, zoom and transforms never change the PNG size', async () => {
    const changes = ['const el = document.getElementById("container"); el.style.width = "3000px"; el.style.height = "2000px";',
      'document.body.style.zoom = "3";', 'document.body.style.width = "5000px"; document.documentElement.style.height = "9000px";',
      'document.body.style.transform = "scale(0.6)"; document.body.style.transformOrigin = "0 0";'];
    for (const [orientation, change] of ['landscape', 'square'].flatMap((o) => changes.map((c) => [o, c]))) {
      const r = await render(fb, 'd3', [drawing('d3', orientation), change]);
      assert.equal(r.code, 'ok', `${change}: ${JSON.stringify(r)}`);
      assert.deepEqual([r.width, r.height], orientation === 'square' ? [2400, 2400] : [3200, 1800]);
      const png = pngOf(r.out);
      assert.deepEqual([png.width, png.height], [r.width, r.height]);
    }
  });

  // CPU ticks (user + sys) of every live Chromium renderer process of this test's browser (a
  // descendant of this process: other tests' Chromiums may run beside it) now: pid -> ticks. A
  // zombie is listed until its parent reaps it, but it was killed and runs nothing: not counted.
  const rendererCpu = () => new Map(treeProcs(process.pid)
    .filter((p) => !['Z', 'X'].includes(p.state) && isRenderer(p.pid)).map((p) => [p.pid, p.cpu]));
  // CPU ms each renderer process used over `ms`: [[pid, used], ...], most first.
  const cpuOver = async (ms) => {
    const a = rendererCpu();
    await settle(ms);
    const b = rendererCpu();
    return [...b].filter(([pid]) => a.has(pid)).map(([pid, t]) => [pid, (t - a.get(pid)) * TICK_MS]).sort((x, y) => y[1] - x[1]);
  };
  // The browser's own DevTools trace (devtools.timeline): every event a renderer records for a
  // frame carries that frame's id and the renderer's pid. start() before the job, then pidsOf(frame)
  // once it is over: the processes the browser reports ran that frame.
  const frameTrace = async () => {
    const cdp = await fb.browser.newBrowserCDPSession();
    const events = [];
    cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
    const complete = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
    await cdp.send('Tracing.start', { traceConfig: { includedCategories: ['devtools.timeline'], excludedCategories: ['*'] }, transferMode: 'ReportEvents' });
    return {
      pidsOf: async (frame) => {
        await cdp.send('Tracing.end');
        await complete;
        await cdp.detach();
        const of = (a) => a && (a.frame || (a.data && a.data.frame) || (a.beginData && a.beginData.frame));
        return [...new Set(events.filter((e) => of(e.args) === frame).map((e) => e.pid))];
      },
    };
  };

  test('an endless loop answers timeout within its budget, its renderer process is gone, the next job draws', async () => {
    // The job's page, as the browser knows it: its target id (the id of its main frame).
    const take = fb.contexts.take;
    let frame = null;
    fb.contexts.take = async (...a) => {
      fb.contexts.take = take;   // this job's only
      const locked = await take.apply(fb.contexts, a);
      frame = locked.cdp.send('Target.getTargetInfo').then((i) => i.targetInfo.targetId);
      return locked;
    };
    const trace = await frameTrace();
    const t0 = performance.now();
    const before = rendererCpu();
    let answered = false;
    const job = render(fb, 'chartjs', 'while (true) {}\n', { timeoutMs: 4000 });
    job.then(() => { answered = true; }, () => { answered = true; });
    // The CPU each renderer used from the job's start until last seen before the answer.
    const used = new Map();
    while (!answered) {
      for (const [pid, t] of rendererCpu()) used.set(pid, (t - (before.get(pid) ?? 0)) * TICK_MS);
      await settle(200);
    }
    const r = await job;
    const ms = performance.now() - t0;
    assert.equal(r.code, 'timeout');
    assert.ok(ms >= 3900 && ms < 4600, `answered after ${Math.round(ms)} ms`);
    // The looping page's renderer: the one process the browser's trace reports for its frame.
    assert.ok(frame, 'the job took a context');
    const pids = await trace.pidsOf(await frame);
    assert.equal(pids.length, 1, `one renderer process ran the job's page: ${JSON.stringify(pids)}`);
    const [looping] = pids;
    assert.ok(used.has(looping), `the page's process ${looping} was a renderer of this browser during the job: ${JSON.stringify([...used])}`);
    assert.ok(used.get(looping) >= 400, `the looping page's renderer burns CPU through the budget: ${JSON.stringify([...used])}`);
    // Killed with its context (which on a loaded host can take longer than a quiet one's second).
    for (let waited = 0; rendererCpu().has(looping) && waited < 15000; waited += 250) await settle(250);
    const left = rendererCpu().has(looping) ? execFileSync('ps', ['-o', 'pid=,stat=,etime=,time=', '-p', String(looping)]).toString() : '';
    assert.equal(left, '', `the looping renderer was killed with its context (used: ${JSON.stringify([...used])})`);
    // The next spare context is being made meanwhile (its renderer starting up spends about half a
    // second of CPU on a loaded host): measured once it is ready, so only a burning page counts.
    if (fb.contexts.spare) await fb.contexts.spare.catch(() => {});
    const after = await cpuOver(1000);
    assert.ok(!after.length || after[0][1] < 500, `no renderer burns a core after the timeout: ${JSON.stringify(after)}`);
    assert.equal((await render(fb, 'echarts', drawing('echarts', 'landscape'))).code, 'ok');
  });

  test('a memory balloon ends as draw_failed or timeout and the renderer lives on', async () => {
    const t0 = performance.now();
    const r = await render(fb, 'd3', 'const keep = []; for (;;) keep.push(new Array(1 << 20).fill(Math.random()));\n', { timeoutMs: 60000 });
    assert.ok(['draw_failed', 'timeout'].includes(r.code), JSON.stringify(r));
    assert.ok(performance.now() - t0 < 61000);
    assert.equal(fb.disconnected, false);
    assert.equal((await render(fb, 'highcharts', drawing('highcharts', 'square'))).code, 'ok');
  });

  test('a 10^6-node DOM answers within its budget and the next job draws', async () => {
    const t0 = performance.now();
    const r = await render(fb, 'd3', ['const el = document.getElementById("container");',
      'for (let i = 0; i < 1e6; i++) { const d = document.createElement("div"); d.textContent = i; el.appendChild(d); }'], { timeoutMs: 15000 });
    assert.ok(['ok', 'timeout'].includes(r.code), JSON.stringify(r));
    assert.ok(performance.now() - t0 < 15700, `${Math.round(performance.now() - t0)} ms`);
    assert.equal((await render(fb, 'chartjs', drawing('chartjs', 'landscape'))).code, 'ok');
  });

  test('cancel stops a snippet at once and the next job draws', async () => {
    const t0 = performance.now();
    const job = render(fb, 'd3', 'while (true) {}\n', { timeoutMs: 30000 });
    await settle(1200);
    assert.equal(fb.cancel(), true);
    const r = await job;
    assert.equal(r.code, 'cancelled');
    assert.ok(performance.now() - t0 < 2500);
    assert.equal((await render(fb, 'muix', drawing('muix', 'landscape'))).code, 'ok');
  });

  test('the catalogue\'s JavaScript files: the same outcome strict and bare', async () => {
    const expected = { 'fail-js-error': { code: 'snippet_error', error_class: 'TypeError', error_line: 11 }, 'fail-js-blank': { code: 'blank' } };
    const files = catalogueFiles();
    assert.ok(files.length >= 22, `${files.length} files`);
    for (const { spec, library, file } of files) {
      for (const bare of [false, true]) {
        const r = await render(fb, library, file, { bare, theme: bare ? 'dark' : 'light' });
        const want = expected[spec] || { code: 'ok' };
        for (const [k, v] of Object.entries(want)) assert.equal(r[k], v, `${spec}/${library} bare=${bare} ${k}: ${JSON.stringify(r)}`);
        if (!expected[spec]) {
          assert.deepEqual([r.width, r.height], spec.endsWith('-square') ? [2400, 2400] : [3200, 1800], `${spec}/${library}`);
          assert.deepEqual([r.blocked_requests, r.csp_violations, r.popups], [0, 0, 0], `${spec}/${library}`);
        }
      }
    }
  });
});

describe('hostile snippets', () => {
  let fb, lis;
  const marker = 'plotq-download-7d1f';
  before(async () => {
    lis = await listener();
    fb = new FigureBrowser({ ...BROWSER_OPTS, browserNetworkRules: false });
    await fb.start();
  });
  after(async () => { await fb.close(); lis.server.close(); });
  const quiet = async (what) => { await settle(300); assert.equal(lis.connections, 0, `${what}: the listener was reached: ${JSON.stringify(lis.lines)}`); };
  const L = () => lis.url;

  test('requests still in flight when a job ends, times out or navigates never get out', async () => {
    // script loads with the stolen nonce pass the policy and are refused only by the route
    const storm = [`const nonce = document.currentScript.nonce; let i = 0;`,
      `setInterval(() => { const s = document.createElement("script"); s.nonce = nonce; s.src = "${L()}/tick" + i++; document.body.appendChild(s); }, 2);`];
    const ended = await render(fb, 'd3', [drawing('d3', 'landscape'), ...storm, 'setTimeout(() => { window.__anyplotReady = true; }, 400);']);
    assert.equal(ended.code, 'ok');
    assert.ok(ended.blocked_requests >= 20, `${ended.blocked_requests} refused`);
    const late = await render(fb, 'd3', [drawing('d3', 'landscape'), ...storm, '// never sets __anyplotReady'], { timeoutMs: 1500 });
    assert.equal(late.code, 'timeout');
    for (let k = 0; k < 3; k++) {
      const nav = await render(fb, 'd3', [drawing('d3', 'landscape'), ...storm, `setTimeout(() => { location = "${L()}/away${k}"; }, 100);`]);
      assert.equal(nav.code, 'navigated');
    }
    await settle(1500);
    await quiet('in flight');
  });

  test('the bare page has none of those rules: the same fetch reaches the listener', async () => {
    const r = await render(fb, 'd3', [drawing('d3', 'landscape'), `fetch("${L()}/bare").catch(() => {});`,
      'setTimeout(() => { window.__anyplotReady = true; }, 500);'], { bare: true });
    assert.equal(r.code, 'ok');
    await settle(300);
    assert.ok(lis.connections >= 1, 'the attack really runs: without the page\'s rules it connects');
    lis.connections = 0;
  });

  test('eval, new Function and an inline script without the nonce do not run; file: reads are refused', async () => {
    const red = path.join(tmp, 'red.png');   // a real 1x1 PNG: the file: read the snippet tries
    fs.writeFileSync(red, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64'), { mode: 0o644 });
    let seen;
    const r = await render(fb, 'd3', [drawing('d3', 'landscape'),
      'window.__out = {};',
      'try { eval("1"); __out.eval = "ran"; } catch (e) { __out.eval = e.name; }',
      'try { new Function("return 1")(); __out.fn = "ran"; } catch (e) { __out.fn = e.name; }',
      'const s = document.createElement("script"); s.textContent = "window.__out.inline = \'ran\'"; document.body.appendChild(s);',
      'fetch("file:///etc/hostname").then(() => { __out.file = "read"; }, () => { __out.file = "refused"; });',
      `const i = new Image(); i.onload = () => { __out.img = "loaded"; }; i.onerror = () => { __out.img = "refused"; }; i.src = "file://${red}";`,
      'setTimeout(() => { window.__anyplotReady = true; }, 500);'], {}, { inspect: async (page) => { seen = await page.evaluate(() => window.__out); } });
    assert.equal(r.code, 'ok', JSON.stringify(r));
    assert.deepEqual(seen, { eval: 'EvalError', fn: 'EvalError', file: 'refused', img: 'refused' });
    assert.ok(r.csp_violations >= 5, `${r.csp_violations} violations`);
    // The control: the same image on a file: page of the same browser without the rules loads.
    const ctx = await fb.browser.newContext();
    try {
      const page = await ctx.newPage();
      const html = path.join(fb.pagesDir, 'control.html');
      fs.writeFileSync(html, `<img id="i" src="file://${red}">`, { mode: 0o644 });
      await page.goto(`file://${html}`);
      assert.ok(await page.evaluate(() => document.getElementById('i').naturalWidth) > 0, 'without the rules a file: page reads the file');
    } finally {
      await ctx.close();
    }
  });

  test('top-level navigations to data: and about:blank answer navigated', async () => {
    for (const bare of [false, true]) {
      for (const target of ['data:text/html,<h1>x</h1>', 'about:blank']) {
        const r = await render(fb, 'd3', [drawing('d3', 'landscape'), `location = ${JSON.stringify(target)};`,
          'setTimeout(() => { window.__anyplotReady = true; }, 500);'], { bare });
        assert.equal(r.code, 'navigated', `${target} bare=${bare}: ${JSON.stringify(r)}`);
      }
    }
    await quiet('navigations');
  });

  test('a download is denied: nothing is written anywhere watched', async () => {
    let w;
    const r = await render(fb, 'd3', [drawing('d3', 'landscape'),
      `const a = document.createElement("a"); a.download = "${marker}.txt";`,
      'a.href = URL.createObjectURL(new Blob(["downloaded"], { type: "text/plain" })); document.body.appendChild(a); a.click();',
      'setTimeout(() => { window.__anyplotReady = true; }, 800);'], {}, { inspect: async (page, seen) => { await settle(300); w = seen; } });
    assert.equal(r.code, 'ok', JSON.stringify(r));
    assert.ok(w.downloads >= 1, 'the browser saw the download start (the attack ran)');
    for (const dir of [fb.dir, tmp, '/tmp', path.join(process.env.HOME || '/root', 'Downloads')]) {
      assert.deepEqual(findNamed(dir, marker), [], `nothing named ${marker} under ${dir}`);
    }
  });
});

test('renderer.mjs --no-plotly --no-bokeh: the ready line names the JS libraries; snippet lines answer', async (t) => {
  const home = tmpDir('pqs-');
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  const args = [path.join(ROOT, 'sandbox', 'figure', 'renderer.mjs'), '--no-plotly', '--no-bokeh', ...(AS_ROOT ? ['--uid=65533', '--gid=65533'] : [])];
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, TMPDIR: home }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '', buf = '', waiting = null;
  const lines = [];
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdout.on('data', (d) => {
    buf += d;
    for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) lines.push(JSON.parse(buf.slice(0, nl)));
    if (waiting) waiting();
  });
  const next = async () => {
    while (!lines.length) await new Promise((r) => { waiting = r; });
    return lines.shift();
  };
  const ready = await next();
  assert.equal(ready.ready, true, `${JSON.stringify(ready)}\n${stderr.slice(-2000)}`);
  assert.deepEqual([ready.plotly, ready.bokeh], [null, null]);
  assert.deepEqual(ready.js, { chartjs: version('chart.js'), d3: version('d3'), echarts: version('echarts'), highcharts: version('highcharts'), muix: version('@mui/x-charts') });
  assert.equal(ready.js.echarts, '6.1.0');
  const send = (o) => child.stdin.write(`${JSON.stringify(o)}\n`);
  const out = path.join(tmp, 'proto.png');
  send({ id: 's1', snippet: write('.js', drawing('echarts', 'square')), out, library: 'echarts', theme: 'dark', timeout_ms: 30000 });
  const ok = await next();
  assert.deepEqual([ok.id, ok.ok, ok.width, ok.height, ok.library, ok.orientation, ok.ready], ['s1', true, 2400, 2400, 'echarts', 'square', 'signal']);
  for (const k of ['bytes', 'blocked_requests', 'csp_violations', 'popups', 'ms', 'phases']) assert.ok(k in ok, k);
  assert.deepEqual([pngOf(out).width, pngOf(out).height], [2400, 2400]);
  send({ id: 's2', snippet: write('.js', '// 1\nnope();\n'), out: path.join(tmp, 'p2.png'), library: 'chartjs', theme: 'light' });
  const err = await next();
  assert.deepEqual([err.id, err.ok, err.code, err.error_class, err.error_line], ['s2', false, 'snippet_error', 'ReferenceError', 2]);
  send({ id: 's3', snippet: '/x.js', out: '/x.png', library: 'chartjs' });
  send({ id: 's4', snippet: '/x.js', out: '/x.png', library: 'vega', theme: 'light' });
  send({ id: 's5', snippet: '/x.js', figure: '/x.json', out: '/x.png', library: 'd3', theme: 'light' });
  for (const id of ['s3', 's4', 's5']) assert.deepEqual(Object.values((({ id: i, ok: o, code: c }) => ({ i, o, c }))(await next())), [id, false, 'request_invalid']);
  send({ id: 's6', figure: path.join(ROOT, 'tests', 'figure', 'fixtures', 'scatter-light.json'), out: '/x.png' });
  assert.equal((await next()).code, 'library_unavailable');
  child.stdin.end();
  assert.equal(await new Promise((r) => child.on('exit', r)), 0);
  assert.deepEqual(fs.readdirSync(home), [], 'private dir removed');
});
