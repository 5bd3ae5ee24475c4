// node --test tests/figure/renderer.test.mjs
// The figure renderer module in-process (canvas rule, figure checks, request parsing) and against
// real Chromium: page isolation proven from inside the page, network refusals seen by a local
// listener (this process is NOT in a separate network namespace, so the page's own refusals are
// what keeps the listener quiet), exact sizes, WebGL, timeouts, output writing, and the line
// protocol of renderer.mjs as a subprocess.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { canvasFor, fitCanvas } from '../../sandbox/figure/lib/canvas.mjs';
import { readFigure, nestingDepth } from '../../sandbox/figure/lib/figure_file.mjs';
import { parseRequest } from '../../sandbox/figure/lib/protocol.mjs';
import { FigureBrowser, DEFAULT_OPTIONS } from '../../sandbox/figure/lib/browser.mjs';
import { FigureError } from '../../sandbox/figure/lib/errors.mjs';
import { LIBRARIES } from '../../sandbox/figure/lib/libraries.mjs';
import { newNonce, pageHtml } from '../../sandbox/figure/lib/page.mjs';
import { decodePng } from '../../sandbox/figure/lib/png.mjs';
import { runtimePlotlyJs, runtimeBokehDir, DEFAULT_VENV } from '../../sandbox/figure/lib/runtime.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(HERE, 'fixtures');
const RENDERER = path.join(HERE, '..', '..', 'sandbox', 'figure', 'renderer.mjs');
const AS_ROOT = process.getuid() === 0;
// The runtime's own packages: plotly.js's version is in its bundle's banner, bokeh's is the
// package's (BokehJS is released with it).
const RUNTIME = JSON.parse(fs.readFileSync(path.join(DEFAULT_VENV, 'plotq-runtime.json'), 'utf8'));
const PLOTLY_JS_VERSION = /plotly\.js v(\d+\.\d+\.\d+)/.exec(fs.readFileSync(runtimePlotlyJs(), 'latin1').slice(0, 200))[1];
const BROWSER_OPTS = AS_ROOT ? { uid: 65533, gid: 65533 } : {};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plotq-figure-node-test-'));
fs.chmodSync(tmp, 0o711);   // Chromium's own uid passes through to the renderer's private dir
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const file = (name, content) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, content);
  return p;
};
const code = (fn) => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof FigureError, `not a FigureError: ${e}`);
    return e.code;
  }
  return 'no error';
};

// lib/png.mjs's decoder (8-bit RGB/RGBA, not interlaced: what Chromium writes) for pixel checks.
const pngOf = (p) => decodePng(fs.readFileSync(p));

// A local TCP listener that counts connections (must stay at zero).
async function listener() {
  const l = { connections: 0 };
  l.server = net.createServer((s) => { l.connections++; s.destroy(); });
  await new Promise((r) => l.server.listen(0, '127.0.0.1', r));
  l.url = `http://127.0.0.1:${l.server.address().port}`;
  return l;
}

describe('canvas rule', () => {
  test('no size: 1600x900 CSS at scale 2 -> 3200x1800', () => {
    const c = canvasFor({});
    assert.deepEqual([c.cssWidth, c.cssHeight, c.scale, c.target.width, c.target.height], [1600, 900, 2, 3200, 1800]);
  });
  test('only width keeps it and derives the height at 16:9', () => {
    const c = canvasFor({ width: 1200 });
    assert.deepEqual([c.cssWidth, c.cssHeight, c.target.name], [1200, 675, 'landscape']);
    assert.equal(c.scale, 3200 / 1200);
  });
  test('only height keeps it and derives the width at 16:9', () => {
    const c = canvasFor({ height: 450 });
    assert.deepEqual([c.cssWidth, c.cssHeight, c.scale], [800, 450, 4]);
  });
  test('both: landscape from w/h >= 4/3, else square; the width is kept', () => {
    assert.deepEqual((({ cssWidth, cssHeight, target }) => [cssWidth, cssHeight, target.name])(canvasFor({ width: 1000, height: 700 })), [1000, 562.5, 'landscape']);
    const sq = canvasFor({ width: 1000, height: 1000 });
    assert.deepEqual([sq.cssWidth, sq.cssHeight, sq.scale, sq.target.name], [1000, 1000, 2.4, 'square']);
    assert.equal(canvasFor({ width: 1200, height: 1000 }).target.name, 'square');
    assert.equal(canvasFor({ width: 800, height: 1200 }).target.name, 'square');   // portrait -> square
    assert.equal(canvasFor({ width: 1400, height: 1000 }).target.name, 'landscape');
  });
  test('sizes out of bounds, derived or given, are refused', () => {
    assert.equal(code(() => canvasFor({ width: 100 })), 'figure_size_invalid');
    assert.equal(code(() => canvasFor({ width: '1200' })), 'figure_size_invalid');
    assert.equal(code(() => canvasFor({ width: Infinity })), 'figure_size_invalid');
    assert.equal(code(() => canvasFor({ height: 4000 })), 'figure_size_invalid'); // width 7111 derived
    assert.equal(code(() => canvasFor({ width: 200 })), 'figure_size_invalid');   // height 112.5 derived
  });
});

describe('figure file checks', () => {
  test('a valid plotly figure is read and parsed', () => {
    const { figure } = readFigure(path.join(FIXTURES, 'scatter-light.json'));
    assert.equal(figure.data.length, 3);
  });
  test('refusals carry their own code', () => {
    const real = path.join(FIXTURES, 'scatter-light.json');
    fs.symlinkSync(real, path.join(tmp, 'link.json'));
    fs.mkdirSync(path.join(tmp, 'dir.json'));
    fs.linkSync(file('original.json', '{"data": []}'), path.join(tmp, 'hardlink.json'));
    const cases = {
      [file('empty.json', '')]: 'figure_empty',
      [file('bad.json', '{"data": [')]: 'figure_invalid',
      [file('latin1.json', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))]: 'figure_invalid',
      [file('array.json', '[]')]: 'figure_invalid',
      [file('nodata.json', '{"layout": {}}')]: 'figure_invalid',
      [file('extra.json', '{"data": [], "onload": "x"}')]: 'figure_invalid',
      [file('trace.json', '{"data": [1]}')]: 'figure_invalid',
      [file('proto.json', '{"data": [], "layout": {"__proto__": {"x": 1}}}')]: 'figure_invalid',
      [file('bk-noroot.json', '{"target_id": null, "root_id": "p1", "doc": {"roots": []}, "version": "3"}')]: 'figure_invalid',
      [file('bk-target.json', '{"target_id": "x", "root_id": "p1", "doc": {"roots": [{"id": "p1"}]}}')]: 'figure_invalid',
      [file('bk-extra.json', '{"root_id": "p1", "doc": {"roots": [{"id": "p1"}]}, "data": []}')]: 'figure_invalid',
      [path.join(tmp, 'link.json')]: 'figure_not_regular',
      [path.join(tmp, 'dir.json')]: 'figure_not_regular',
      [path.join(tmp, 'hardlink.json')]: 'figure_not_regular',
      [path.join(tmp, 'missing.json')]: 'figure_missing',
    };
    for (const [p, want] of Object.entries(cases)) assert.equal(code(() => readFigure(p)), want, path.basename(p));
  });
  test('the library comes from the request or the shape, and a figure of the other shape is refused', () => {
    assert.equal(readFigure(path.join(FIXTURES, 'bokeh-light.json')).lib.name, 'bokeh');
    assert.equal(readFigure(path.join(FIXTURES, 'scatter-light.json')).lib.name, 'plotly');
    assert.equal(code(() => readFigure(path.join(FIXTURES, 'bokeh-light.json'), undefined, 'plotly')), 'figure_invalid');
    assert.equal(code(() => readFigure(path.join(FIXTURES, 'scatter-light.json'), undefined, 'bokeh')), 'figure_invalid');
  });
  test('a FIFO is refused without blocking', () => {
    const fifo = path.join(tmp, 'fifo.json');
    const r = spawn('mkfifo', [fifo]);
    return new Promise((resolve) => r.on('exit', () => {
      assert.equal(code(() => readFigure(fifo)), 'figure_not_regular');
      resolve();
    }));
  });
  test('a 17 MiB file is refused from its size; a deep JSON bomb before it is parsed', () => {
    const huge = path.join(tmp, 'huge.json');
    fs.closeSync(fs.openSync(huge, 'w'));
    fs.truncateSync(huge, 17 * 1024 * 1024);
    assert.equal(code(() => readFigure(huge)), 'figure_too_large');
    const bomb = file('bomb.json', `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
    assert.equal(code(() => readFigure(bomb)), 'figure_too_deep');
    const wide = file('wide.json', `{"data": [${'{},'.repeat(50)}{}], "layout": {"a": [${'0,'.repeat(300)}0]}}`);
    assert.equal(code(() => readFigure(wide, { maxBytes: 1 << 20, maxDepth: 64, maxValues: 100 })), 'figure_too_deep');
  });
  test('brackets inside strings do not count as nesting', () => {
    assert.equal(nestingDepth('{"a": "[[[[{{{{\\"[[[", "b": [[1]]}', 64), 3);
  });
});

describe('request lines', () => {
  test('library is optional and only plotly or bokeh', () => {
    assert.equal(parseRequest('{"id": 1, "figure": "/a.json", "out": "/a.png"}').job.library, undefined);
    assert.equal(parseRequest('{"id": 1, "figure": "/a.json", "out": "/a.png", "library": "bokeh"}').job.library, 'bokeh');
    assert.equal(code(() => parseRequest('{"id": 1, "figure": "/a.json", "out": "/a.png", "library": "altair"}')), 'request_invalid');
  });
  test('a job with absolute paths parses; anything else is request_invalid', () => {
    assert.deepEqual(parseRequest('{"id": 7, "figure": "/a/plot-light.json", "out": "/a/plot-light.png", "timeout_ms": 5000}'),
      { id: 7, job: { figure: '/a/plot-light.json', out: '/a/plot-light.png', timeoutMs: 5000 } });
    for (const bad of ['nope', '[]', '{"figure": "/a", "out": "/b"}', '{"id": 1, "figure": "a.json", "out": "/b"}',
      '{"id": 1, "figure": "/a", "out": "/b", "extra": 1}', '{"id": 1, "figure": "/a", "out": "/b", "timeout_ms": -1}']) {
      assert.equal(code(() => parseRequest(bad)), 'request_invalid', bad);
    }
  });
  test('progress is optional and a boolean', () => {
    assert.equal(parseRequest('{"id": 1, "figure": "/a.json", "out": "/a.png", "progress": true}').job.progress, true);
    assert.equal(parseRequest('{"id": 1, "figure": "/a.json", "out": "/a.png", "progress": false}').job.progress, undefined);
    assert.equal(code(() => parseRequest('{"id": 1, "figure": "/a.json", "out": "/a.png", "progress": 1}')), 'request_invalid');
  });
});

describe('drawing in Chromium', () => {
  let fb, lis;
  before(async () => {
    lis = await listener();
    fb = new FigureBrowser(BROWSER_OPTS);
    await fb.start();
  });
  after(async () => {
    await fb.close();
    lis.server.close();
  });
  const draw = (figure, out, hooks, timeoutMs = 120000) => fb.render({ figure, out, timeoutMs }, hooks);

  test('light and dark scatter: 3200x1800, light and dark paper', async () => {
    for (const [theme, dark] of [['light', false], ['dark', true]]) {
      const out = path.join(tmp, `scatter-${theme}.png`);
      const r = await draw(path.join(FIXTURES, `scatter-${theme}.json`), out);
      assert.deepEqual([r.width, r.height], [3200, 1800]);
      const png = pngOf(out);
      assert.deepEqual([png.width, png.height], [3200, 1800]);
      const [red, green, blue] = png.pixel(8, 8);
      const luminance = (red + green + blue) / 3;
      assert.ok(dark ? luminance < 80 : luminance > 200, `${theme} corner luminance ${luminance}`);
    }
  });

  test('odd sizes still come out exact: width only, 1001 wide, 1000x700', async () => {
    file('w1001.json', JSON.stringify({ data: [{ type: 'bar', x: ['a', 'b'], y: [1, 2] }], layout: { width: 1001 } }));
    file('w1000h700.json', JSON.stringify({ data: [{ type: 'bar', x: ['a', 'b'], y: [1, 2] }], layout: { width: 1000, height: 700 } }));
    for (const [fig, w, h] of [[path.join(FIXTURES, 'width1200.json'), 3200, 1800],
      [path.join(tmp, 'w1001.json'), 3200, 1800], [path.join(tmp, 'w1000h700.json'), 3200, 1800]]) {
      const out = path.join(tmp, `${path.basename(fig)}.png`);
      await draw(fig, out);
      const png = pngOf(out);
      assert.deepEqual([png.width, png.height], [w, h], path.basename(fig));
    }
  });

  test('markup in text fields and annotations never runs; injected markup is stopped by the CSP', async () => {
    const js = `document.title='pwned';window.__pwned=1;fetch('${lis.url}/script')`;
    const fig = file('hostile.json', JSON.stringify({
      data: [{ type: 'scatter', x: [1, 2], y: [1, 2], mode: 'markers+text', name: `<script>${js}</script>`,
        text: [`<img src=x onerror="${js}">`, `<svg onload="${js}">`], hovertext: `<script>${js}</script>` }],
      layout: {
        title: { text: `<script>${js}</script>Title` },
        annotations: [{ x: 1, y: 1, text: `<script>${js}</script><a href="javascript:${js}">link</a><iframe src="${lis.url}/frame"></iframe>` }],
        xaxis: { title: { text: `<img src="${lis.url}/axis" onerror="${js}">` } },
      },
    }));
    let seen;
    const r = await draw(fig, path.join(tmp, 'hostile.png'), {
      inspect: async (page) => {
        seen = await page.evaluate(() => ({
          title: document.title,
          pwned: window.__pwned,
          scripts: document.scripts.length,
          handlers: document.querySelectorAll('[onerror],[onload],[onclick],iframe').length,
          jsLinks: [...document.querySelectorAll('a')].filter((a) => /javascript:/i.test(a.getAttribute('href') || '')).length,
        }));
        // Markup that got past plotly's text rules would still be stopped by the page's policy:
        seen.injected = await page.evaluate(() => new Promise((resolve) => {
          document.body.insertAdjacentHTML('beforeend', '<img src="data:," onerror="window.__pwned=2"><img src=x onerror="window.__pwned=3">');
          const s = document.createElement('script');
          s.textContent = 'window.__pwned = 4';
          document.body.appendChild(s);
          const policy = document.querySelector('meta[http-equiv="Content-Security-Policy"]').content;
          setTimeout(() => resolve({ pwned: window.__pwned, policy, csp: window.__plotqCsp.slice() }), 200);
        }));
        seen.fetched = await page.evaluate((u) => fetch(`${u}/fetch`).then(() => 'fetched', () => 'refused'), lis.url);
      },
    });
    assert.deepEqual([r.width, r.height], [3200, 1800]);
    assert.equal(seen.title, 'plotq figure');
    assert.equal(seen.pwned, undefined);
    assert.equal(seen.scripts, 2, 'only the page\'s two nonce scripts');
    assert.equal(seen.handlers, 0);
    assert.equal(seen.jsLinks, 0);
    assert.equal(seen.injected.pwned, undefined);
    const directives = Object.fromEntries(seen.injected.policy.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
    assert.match(directives['script-src'].join(' '), /^'nonce-[A-Za-z0-9+/=]{24}'$/);   // the nonce, nothing else
    assert.deepEqual(directives['default-src'], ["'none'"]);
    assert.deepEqual(directives['connect-src'], ["'none'"]);
    assert.ok(!seen.injected.policy.includes('unsafe-eval'));
    for (const d of ['script-src-attr', 'script-src-elem', 'img-src']) assert.ok(seen.injected.csp.includes(d), `${d} violation recorded`);
    assert.equal(seen.fetched, 'refused');
    await new Promise((res) => setTimeout(res, 200));   // kept: a late connection's window (absence is checked over time)
    assert.equal(lis.connections, 0);
  });

  test('the page policy refuses eval and new Function even to a nonce script; plotly.js loads without them', async () => {
    const ctx = await fb.browser.newContext();
    try {
      const nonce = newNonce();
      const probe = `<script nonce="${nonce}">window.__probe = [];
        try { eval('1'); __probe.push('eval ran'); } catch (e) { __probe.push(e.name); }
        try { new Function('return 1')(); __probe.push('Function ran'); } catch (e) { __probe.push(e.name); }</script>`;
      const html = path.join(fb.pagesDir, 'probe.html');
      fs.writeFileSync(html, pageHtml(nonce, fb.plotlyUrl).replace('</body>', `${probe}</body>`), { mode: 0o644 });
      const page = await ctx.newPage();
      await page.goto(`file://${html}`);
      assert.deepEqual(await page.evaluate(() => window.__probe), ['EvalError', 'EvalError']);
      assert.equal(await page.evaluate(() => typeof Plotly.newPlot), 'function');
    } finally {
      await ctx.close();
    }
  });

  test('layout.images with an external URL or a file: URL is not fetched', async () => {
    const fig = file('images.json', JSON.stringify({
      data: [{ type: 'scatter', x: [1, 2], y: [1, 2] }],
      layout: { images: [
        { source: `${lis.url}/image.png`, xref: 'paper', yref: 'paper', x: 0, y: 1, sizex: 0.5, sizey: 0.5 },
        { source: 'file:///etc/hostname', xref: 'paper', yref: 'paper', x: 0.5, y: 1, sizex: 0.5, sizey: 0.5 },
      ] },
    }));
    const r = await draw(fig, path.join(tmp, 'images.png'));
    assert.ok(r.csp_violations >= 2, `csp violations ${r.csp_violations}`);
    await new Promise((res) => setTimeout(res, 200));   // kept: a late connection's window (absence is checked over time)
    assert.equal(lis.connections, 0);
  });

  test('WebGL traces draw through SwiftShader (no GPU)', async () => {
    const out = path.join(tmp, 'gl.png');
    await draw(path.join(FIXTURES, 'scattergl.json'), out);
    const red = pngOf(out).count((r, g, b) => r > 220 && g < 40 && b < 40);
    assert.ok(red > 5000, `red marker pixels: ${red}`);
  });

  test('a job over its timeout answers timeout, writes nothing, and the next job draws', async () => {
    const out = path.join(tmp, 'late.png');
    await assert.rejects(draw(path.join(FIXTURES, 'subplot-light.json'), out, {}, 5), (e) => e.code === 'timeout');
    await new Promise((res) => setTimeout(res, 300));   // kept: a late write's window (absence is checked over time)
    assert.equal(fs.existsSync(out), false);
    const r = await draw(path.join(FIXTURES, 'subplot-light.json'), path.join(tmp, 'after-timeout.png'));
    assert.equal(r.width, 3200);
  });

  test('bokeh light and dark: the plot\'s own 4800x2700 at scale 2/3 is exactly 3200x1800, not blank', async () => {
    for (const [theme, dark] of [['light', false], ['dark', true]]) {
      const out = path.join(tmp, `bokeh-${theme}.png`);
      const r = await draw(path.join(FIXTURES, `bokeh-${theme}.json`), out);
      assert.equal(r.library, 'bokeh');
      assert.deepEqual([r.width, r.height], [3200, 1800]);
      const png = pngOf(out);
      assert.deepEqual([png.width, png.height], [3200, 1800]);
      const [red, green, blue] = png.pixel(8, 8);
      const luminance = (red + green + blue) / 3;
      assert.ok(dark ? luminance < 80 : luminance > 200, `${theme} corner luminance ${luminance}`);
      // The green markers and the orange line were drawn (not one flat colour).
      const green_ = png.count((R, G, B) => G > 120 && R < 60 && B > 90 && B < 160);
      const orange = png.count((R, G, B) => R > 180 && G > 60 && G < 120 && B < 40);
      assert.ok(green_ > 10000 && orange > 5000, `${theme}: green ${green_}, orange ${orange}`);
    }
  });

  test('bokeh square plot is 2400x2400; a column layout is measured and fitted to 3200x1800', async () => {
    const sq = await draw(path.join(FIXTURES, 'bokeh-square.json'), path.join(tmp, 'bokeh-square.png'));
    assert.deepEqual([sq.width, sq.height], [2400, 2400]);
    const col = await draw(path.join(FIXTURES, 'bokeh-column.json'), path.join(tmp, 'bokeh-column.png'));
    assert.deepEqual([col.width, col.height], [3200, 1800]);
    assert.ok('measure' in col.phases, 'a layout without a declared size is measured first');
    const png = pngOf(path.join(tmp, 'bokeh-column.png'));
    assert.ok(png.count((R, G, B) => R > 180 && G > 60 && G < 120 && B < 40) > 5000, 'both plots drawn');
  });

  test('bokeh CustomJS and markup handlers never run and reach nothing; the plot still draws', async () => {
    const text = fs.readFileSync(path.join(FIXTURES, 'bokeh-hostile.json'), 'utf8').replaceAll('MARKER', lis.url);
    const fig = file('bokeh-hostile.json', text);
    let seen;
    const r = await draw(fig, path.join(tmp, 'bokeh-hostile.png'), {
      inspect: async (page) => {
        await new Promise((res) => setTimeout(res, 300));   // kept: a handler's window to run, had one been let through
        seen = await page.evaluate(() => ({ pwned: window.__pwned, title: document.title }));
      },
    });
    assert.deepEqual([r.width, r.height], [3200, 1800]);
    assert.equal(seen.pwned, undefined, 'no CustomJS and no handler ran');
    assert.equal(seen.title, 'plotq figure');
    assert.ok(r.csp_violations >= 2, `the policy refused eval and the inline handler (${r.csp_violations})`);
    await new Promise((res) => setTimeout(res, 200));   // kept: a late connection's window (absence is checked over time)
    assert.equal(lis.connections, 0, 'the listener was never reached');
  });

  test('a bokeh map whose tiles are all refused is idle once they failed: no wait to the settle cap, no tile fetched', async () => {
    const text = fs.readFileSync(path.join(FIXTURES, 'bokeh-tiles.json'), 'utf8').replaceAll('MARKER', lis.url);
    const pool = fb.pools.bokeh;
    const slot = await pool.take();
    let r;
    try {
      await slot.page.evaluate(LIBRARIES.bokeh.reset);
      r = await slot.page.evaluate(LIBRARIES.bokeh.draw, { text, settleMs: 10000 });
      await slot.page.evaluate(LIBRARIES.bokeh.reset);
    } finally {
      await pool.give(slot, false);
    }
    // BokehJS marks a tile that failed finished but tells nobody: without the page passing that on,
    // the document is still busy when the settle cap ends the wait.
    assert.equal(r.idle, true, 'the document went idle');
    assert.ok(r.csp >= 1, `the page's policy refused the tiles (${r.csp})`);
    const d = await draw(file('bokeh-tiles.json', text), path.join(tmp, 'bokeh-tiles.png'));
    assert.deepEqual([d.width, d.height], [3200, 1800]);
    await new Promise((res) => setTimeout(res, 200));   // kept: a late connection's window (absence is checked over time)
    assert.equal(lis.connections, 0, 'no tile request reached the listener');
  });

  test('a bokeh PNG, taken at once and without a clip, is the same as one taken two frames later through a clip', async () => {
    const pool = fb.pools.bokeh;
    const slot = await pool.take();
    try {
      for (const name of ['bokeh-light.json', 'bokeh-square.json']) {
        const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
        const figure = JSON.parse(text);
        const now = await fb.drawBokeh(slot, text, figure, {}, () => false);
        // The same figure again on the same page, drawn as before: two frames, then a clipped capture.
        await slot.page.evaluate(LIBRARIES.bokeh.reset);
        const size = LIBRARIES.bokeh.declaredSize(figure);
        const canvas = fitCanvas(size.width, size.height);
        await slot.page.evaluate(LIBRARIES.bokeh.draw, { text, settleMs: 10000, x: canvas.offsetX, y: canvas.offsetY });
        await slot.page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
        const shot = await slot.cdp.send('Page.captureScreenshot', {
          format: 'png', captureBeyondViewport: false,
          clip: { x: 0, y: 0, width: canvas.cssWidth, height: canvas.cssHeight, scale: 1 },
        });
        await slot.page.evaluate(LIBRARIES.bokeh.reset);
        const a = decodePng(now.png), b = decodePng(Buffer.from(shot.data, 'base64'));
        assert.deepEqual([b.width, b.height], [a.width, a.height], `${name}: the clipped capture has the canvas's size`);
        let differ = 0;
        for (let y = 0; y < a.height; y += 5) {
          for (let x = 0; x < a.width; x += 5) {
            if (a.pixel(x, y).join() !== b.pixel(x, y).join()) differ++;
          }
        }
        assert.equal(differ, 0, `${name}: ${differ} sampled pixels differ`);
        assert.ok(a.count((R, G, B) => Math.abs(R - G) > 40 || Math.abs(G - B) > 40) > 5000, `${name}: it drew in colour`);
      }
    } finally {
      await pool.give(slot, false);
    }
  });

  test('clearing a bokeh page frees its canvases\' pixels, even those BokehJS still holds', async () => {
    // BokehJS keeps removed views reachable (the page's DOM node count grows with each figure), so
    // without the clear's shrink every figure's canvases stayed allocated for the page's life.
    const pool = fb.pools.bokeh;
    const slot = await pool.take();
    try {
      const text = fs.readFileSync(path.join(FIXTURES, 'bokeh-square.json'), 'utf8');
      await slot.page.evaluate(LIBRARIES.bokeh.draw, { text, settleMs: 10000 });
      const pixels = () => slot.page.evaluate(() => window.__kept.reduce((n, c) => n + c.width * c.height, 0));
      const kept = await slot.page.evaluate(() => {
        const found = [];
        const walk = (node) => {
          if (node.shadowRoot) walk(node.shadowRoot);
          for (const child of node.children || []) {
            if (child instanceof HTMLCanvasElement) found.push(child);
            walk(child);
          }
        };
        walk(document.getElementById('plot'));
        window.__kept = found;   // a reference from outside BokehJS, as its own leftovers are
        return found.length;
      });
      assert.ok(kept >= 1, 'the plot drew on canvases inside its shadow roots');
      assert.ok(await pixels() >= 2400 * 2400, 'they hold the figure\'s pixels before the clear');
      await slot.page.evaluate(LIBRARIES.bokeh.reset);
      assert.equal(await pixels(), 0, 'every canvas of the figure is empty after the clear');
      assert.equal(await slot.page.evaluate(() => document.getElementById('plot').childNodes.length), 0);
    } finally {
      await pool.give(slot, false);   // this page holds a test's reference: never reused
    }
  });

  test('a page whose built-in prototypes changed is closed instead of reused', async () => {
    const pool = fb.pools.plotly;
    const slot = await pool.take();
    await slot.page.evaluate(() => { Object.defineProperty(Object.prototype, 'plotqPolluted', { value: 1 }); });
    const closed = new Promise((res) => slot.ctx.once('close', res));
    await pool.give(slot, true);
    await closed;
    assert.ok(!pool.ready.includes(slot));
  });

  test('the PNG replaces a planted symlink instead of writing through it; a missing dir is output_failed', async () => {
    const victim = file('victim.txt', 'keep me');
    const out = path.join(tmp, 'planted.png');
    fs.symlinkSync(victim, out);
    await draw(path.join(FIXTURES, 'subplot-dark.json'), out);
    assert.equal(fs.readFileSync(victim, 'utf8'), 'keep me');
    assert.ok(fs.lstatSync(out).isFile());
    await assert.rejects(draw(path.join(FIXTURES, 'subplot-dark.json'), path.join(tmp, 'no-such-dir', 'x.png')),
      (e) => e.code === 'output_failed');
  });
});

test('back to back, one page draws figure after figure, holds nothing of the one before, and is replaced after --page-reuse', async () => {
  const fb = new FigureBrowser({ ...BROWSER_OPTS, spares: 1, pageReuse: 3, bokehDir: '' });
  await fb.start();
  try {
    const marker = 'EARLIER-FIGURE-7731';
    const first = file('earlier.json', JSON.stringify({ data: [{ type: 'bar', x: ['a'], y: [1], name: marker }], layout: { title: { text: marker } } }));
    const reused = [];
    reused.push((await fb.render({ figure: first, out: path.join(tmp, 'earlier.png'), timeoutMs: 60000 })).reused);
    let html;
    const later = await fb.render({ figure: path.join(FIXTURES, 'subplot-light.json'), out: path.join(tmp, 'later.png'), timeoutMs: 60000 }, {
      inspect: async (page) => { html = await page.evaluate(() => document.documentElement.outerHTML); },
    });
    reused.push(later.reused);
    assert.ok(html.includes('Two panels'), 'the later figure is on the page');
    assert.ok(!html.includes(marker), 'nothing of the earlier figure is');
    // The inspected page was closed; a new one draws three figures, then is replaced.
    for (let i = 0; i < 4; i++) {
      reused.push((await fb.render({ figure: path.join(FIXTURES, 'scatter-light.json'), out: path.join(tmp, `reuse${i}.png`), timeoutMs: 60000 })).reused);
    }
    assert.deepEqual(reused, [false, true, false, true, true, false]);
    assert.equal(fb.pools.bokeh, undefined, 'no bokeh pages without BokehJS');
  } finally {
    await fb.close();
  }
});

test('a page whose heap, cleared, still holds more than --page-heap-mb is replaced; below it, reused', async () => {
  // The bound is checked after the clear: a clean page's own heap (the library loaded, one figure
  // drawn and cleared) is far under the default, so the default replaces only a page that kept
  // something; a bound under it replaces every page.
  const heap = {};
  for (const [name, pageHeapMb] of [['tight', 1], ['default', DEFAULT_OPTIONS.pageHeapMb]]) {
    const fb = new FigureBrowser({ ...BROWSER_OPTS, spares: 1, pageHeapMb });
    await fb.start();
    try {
      const reused = [];
      for (let i = 0; i < 3; i++) {
        for (const fig of ['scatter-light.json', 'bokeh-light.json']) {
          reused.push((await fb.render({ figure: path.join(FIXTURES, fig), out: path.join(tmp, `heap-${name}-${i}.png`), timeoutMs: 60000 })).reused);
        }
      }
      const slot = await fb.pools.bokeh.take();
      heap[name] = { reused, heavy: fb.pools.plotly.heavy + fb.pools.bokeh.heavy,
        usedMb: (await slot.cdp.send('Runtime.getHeapUsage')).usedSize / 2 ** 20 };
      await fb.pools.bokeh.give(slot, true);
    } finally {
      await fb.close();
    }
  }
  assert.deepEqual(heap.tight.reused, [false, false, false, false, false, false]);
  assert.equal(heap.tight.heavy, 6);
  assert.deepEqual(heap.default.reused, [false, false, true, true, true, true]);
  assert.equal(heap.default.heavy, 0);
  assert.ok(heap.default.usedMb < DEFAULT_OPTIONS.pageHeapMb / 4, `a clean bokeh page's heap: ${heap.default.usedMb.toFixed(1)} MiB`);
});

test('without WebGL a WebGL trace answers no_webgl instead of drawing plotly\'s notice', async () => {
  const fb = new FigureBrowser({ ...BROWSER_OPTS, webgl: false, spares: 0 });
  await fb.start();
  try {
    const out = path.join(tmp, 'nogl.png');
    await assert.rejects(fb.render({ figure: path.join(FIXTURES, 'scattergl.json'), out, timeoutMs: 30000 }), (e) => e.code === 'no_webgl');
    assert.equal(fs.existsSync(out), false);
  } finally {
    await fb.close();
  }
});

test('renderer.mjs speaks the line protocol and cleans up its private dir on EOF', async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'pqf-'));   // short: Chromium's socket path limit
  fs.chmodSync(home, 0o711);
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  const args = [RENDERER, ...(AS_ROOT ? ['--uid=65533', '--gid=65533'] : [])];
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, TMPDIR: home }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const lines = [];
  let waiting = null;
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
      if (waiting) waiting();
    }
  });
  const next = async () => {
    while (!lines.length) await new Promise((r) => { waiting = r; });
    return lines.shift();
  };
  const ready = await next();
  assert.equal(ready.ready, true, `${JSON.stringify(ready)}\n${stderr.slice(-2000)}`);
  assert.equal(ready.plotly, PLOTLY_JS_VERSION);
  assert.equal(ready.bokeh, RUNTIME.packages.bokeh);
  child.stdin.write('this is not json\n');
  const bad = await next();
  assert.deepEqual([bad.id, bad.ok, bad.code], [null, false, 'request_invalid']);
  const out = path.join(tmp, 'proto.png');
  child.stdin.write(`${JSON.stringify({ id: 'j1', figure: path.join(FIXTURES, 'scatter-dark.json'), out, timeout_ms: 30000, progress: true })}\n`);
  assert.deepEqual(await next(), { id: 'j1', drawing: true });   // asked for: the page began the draw
  const ans = await next();
  assert.equal(ans.id, 'j1');
  assert.equal(ans.ok, true);
  assert.deepEqual([ans.width, ans.height], [3200, 1800]);
  assert.deepEqual([pngOf(out).width, pngOf(out).height], [3200, 1800]);
  child.stdin.end();
  const exitCode = await new Promise((r) => child.on('exit', r));
  assert.equal(exitCode, 0);
  assert.deepEqual(fs.readdirSync(home), [], 'private dir removed');
});
