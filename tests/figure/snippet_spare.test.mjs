// node --test tests/figure/snippet_spare.test.mjs
// The spare snippet context (sandbox/figure/lib/snippet_context.mjs) against real Chromium and the
// runtime's libraries: a run of one library preloads its bundle in the spare, and a job on that
// page sees what it sees on a strict page made for it (the document still loading, only its own
// library, the same pixels, errors on its own lines, the same refusals); a job of another library
// never takes it; nothing of a spare is left behind. And MUI X's split: a snippet bundled against
// the vendor script, or whole when it imports what the vendor script lacks, both themed by the
// tokens.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { FigureBrowser } from '../../sandbox/figure/lib/browser.mjs';
import { BROWSER_OPTS, tmpDir, writer, pngOf, listener, settle, drawing, catalogueFiles } from './snippet_support.mjs';

const tmp = tmpDir('plotq-spare-test-');
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const write = writer(tmp);
const ext = (library) => (library === 'muix' ? '.tsx' : '.js');
let outs = 0;
const render = (fb, library, text, opts = {}) => {
  const snippet = typeof text === 'string' && !text.includes('\n') && path.isAbsolute(text) ? text : write(ext(library), text);
  const out = path.join(tmp, `out${++outs}.png`);
  return fb.render({ snippet, out, timeoutMs: 30000, library, theme: 'light', bare: false, ...opts, out })
    .then((r) => ({ ...r, code: 'ok', out }), (e) => ({ code: e.code, detail: e.detail, ...e.extra, out }));
};
// Spaced jobs: the spare (and its preload) is ready when the next job comes.
const spaced = async (fb, library, text, opts) => { await settle(700); return render(fb, library, text, opts); };
// Two jobs of `library`: the spare made after them is preloaded with it (checked, for the jobs
// whose answer cannot say: a refusal has no `context`).
const run = async (fb, library) => {
  for (let i = 0; i < 2; i++) assert.equal((await spaced(fb, library, drawing(library, 'landscape'))).code, 'ok');
  await settle(700);
  const spare = await fb.contexts.spare;
  assert.equal(spare && spare.preloaded && spare.preloaded.library, library, `the spare after a run of ${library}`);
};
const differing = (a, b) => {
  const pa = pngOf(a), pb = pngOf(b);
  assert.deepEqual([pa.width, pa.height], [pb.width, pb.height]);
  let n = 0;
  for (let y = 0; y < pa.height; y += 3) for (let x = 0; x < pa.width; x += 3) {
    if (pa.pixel(x, y).some((v, i) => Math.abs(v - pb.pixel(x, y)[i]) > 8)) n++;
  }
  return n;
};

describe('the preloaded spare', () => {
  let fb;
  before(async () => {
    fb = new FigureBrowser({ ...BROWSER_OPTS, maxHeapMb: 512 });
    await fb.start();
  });
  after(() => fb.close());

  test('a run of one library preloads it; the page is its own library\'s only, the same pixels as a new page', async () => {
    const libs = ['chartjs', 'd3', 'echarts', 'highcharts'];
    const globals = { chartjs: 'Chart', d3: 'd3', echarts: 'echarts', highcharts: 'Highcharts' };
    for (const library of libs) {
      await run(fb, library);
      const others = libs.filter((l) => l !== library).map((l) => globals[l]);
      const check = `for (const g of ${JSON.stringify(others)}) if (typeof window[g] !== "undefined") throw new Error("another library: " + g);`;
      const text = [drawing(library, 'square'), check];
      const pre = await spaced(fb, library, text, { theme: 'dark' });
      assert.equal(pre.code, 'ok', `${library}: ${JSON.stringify(pre)}`);
      assert.deepEqual([pre.context, pre.width, pre.height, pre.blocked_requests, pre.csp_violations], ['preloaded', 2400, 2400, 0, 0], library);
      // the same snippet on a page made for it (preloading off for this job)
      fb.opts.snippetPreload = false;
      await settle(700);   // the spare being made now is plain
      const plain = await render(fb, library, text, { theme: 'dark' });
      fb.opts.snippetPreload = true;
      assert.equal(plain.code, 'ok');
      assert.notEqual(plain.context, 'preloaded');
      assert.ok(differing(pre.out, plain.out) < 200, `${library}: preloaded and plain pages drew the same`);
    }
  });

  test('a job of another library never takes the preloaded page', async () => {
    await run(fb, 'd3');
    await settle(700);
    const r = await render(fb, 'chartjs', [drawing('chartjs', 'landscape'), 'if (typeof d3 !== "undefined") throw new Error("d3 is here");']);
    assert.equal(r.code, 'ok', JSON.stringify(r));
    assert.equal(r.context, 'new');
    // alternating libraries: never preloaded (nor refused)
    for (const library of ['d3', 'chartjs', 'd3', 'highcharts']) {
      const a = await spaced(fb, library, drawing(library, 'landscape'));
      assert.deepEqual([a.code, a.context], ['ok', 'spare'], library);
    }
  });

  test('the snippet runs while the document loads, as on a strict page made for it', async () => {
    await run(fb, 'd3');
    const r = await spaced(fb, 'd3', [
      'if (document.readyState !== "loading") throw new Error("readyState " + document.readyState);',
      'if (typeof window.ANYPLOT_TOKENS !== "object" || window.ANYPLOT_SIZE.width !== 1600) throw new Error("no contract");',
      'const c = document.getElementById("container").getBoundingClientRect();',
      'if (c.width !== 1600 || c.height !== 900) throw new Error("container " + c.width + "x" + c.height);',
      'let dcl = false;',
      'document.addEventListener("DOMContentLoaded", () => { dcl = true; });',
      'window.addEventListener("load", () => {',
      '  if (!dcl) throw new Error("load before DOMContentLoaded");',
      `  ${drawing('d3', 'landscape').split('\n').slice(2).join('\n  ')}`,
      '  window.__anyplotReady = true;',
      '});',
    ]);
    assert.deepEqual([r.code, r.context, r.ready], ['ok', 'preloaded', 'signal'], JSON.stringify(r));
  });

  test('errors on a preloaded page: the class and the snippet\'s own line', async () => {
    await run(fb, 'chartjs');
    const r = await spaced(fb, 'chartjs', ['// 1', 'const t = window.ANYPLOT_TOKENS;', '// 3', 'undefinedThing.foo;']);
    assert.deepEqual([r.code, r.error_class, r.error_line], ['snippet_error', 'ReferenceError', 4]);
    await run(fb, 'chartjs');
    const s = await spaced(fb, 'chartjs', ['// 1', 'const a = ;']);
    assert.deepEqual([s.code, s.error_class, s.error_line], ['snippet_error', 'SyntaxError', 2]);
  });

  test('an endless loop on a preloaded page is a timeout, and the next job draws on a preloaded page', async () => {
    await run(fb, 'echarts');
    const loop = await spaced(fb, 'echarts', ['while (true) {}'], { timeoutMs: 1500 });
    assert.equal(loop.code, 'timeout');
    await run(fb, 'echarts');
    const next = await spaced(fb, 'echarts', drawing('echarts', 'landscape'));
    assert.deepEqual([next.code, next.context], ['ok', 'preloaded']);
  });

  test('top-level names that shadow the window\'s own (const top) draw, strict as bare; lines stay the snippet\'s', async () => {
    // anyplot's ternary-basic echarts file declares `const top`: a SyntaxError in a script's
    // global scope (window.top), fine inside the reference page's try block.
    const text = [drawing('echarts', 'landscape'), 'const top = 1, parent = 2;', 'let name = "x";', 'class Image {}'];
    for (const opts of [{ bare: true }, {}]) {
      const r = await spaced(fb, 'echarts', text, opts);
      assert.equal(r.code, 'ok', `${JSON.stringify(opts)}: ${JSON.stringify(r)}`);
    }
    await run(fb, 'echarts');
    const pre = await spaced(fb, 'echarts', text);
    assert.deepEqual([pre.code, pre.context], ['ok', 'preloaded']);
    const bad = await spaced(fb, 'echarts', ['const top = 1;', '// 2', 'top.nothing.here;']);
    assert.deepEqual([bad.code, bad.error_class, bad.error_line], ['snippet_error', 'TypeError', 3]);
  });

  test('no page file of a spare or a job is left behind', async () => {
    await run(fb, 'highcharts');
    await spaced(fb, 'd3', drawing('d3', 'landscape'));   // the preloaded spare discarded
    await settle(1500);
    const left = fs.readdirSync(fb.pagesDir).filter((f) => f !== 'muix-vendor.js');
    // the one spare made after the last job: its document only
    assert.ok(left.length <= 1 && left.every((f) => f.endsWith('.html')), JSON.stringify(left));
  });
});

describe('hostile snippets on a preloaded page', () => {
  let fb, lis;
  before(async () => {
    lis = await listener();
    fb = new FigureBrowser({ ...BROWSER_OPTS, browserNetworkRules: false });
    await fb.start();
  });
  after(async () => { await fb.close(); lis.server.close(); });

  test('the page\'s rules hold: policy, route, navigation; the listener stays quiet', async () => {
    const L = lis.url;
    const attacks = [
      ['fetch', `fetch("${L}/f").catch(() => {});`, 'csp'],
      ['script with the stolen nonce', `const s = document.createElement("script"); s.nonce = document.currentScript.nonce; s.src = "${L}/n.js"; document.body.appendChild(s);`, 'route'],
      ['a job file\'s URL again', 'const s = document.createElement("script"); s.nonce = document.currentScript.nonce; s.src = document.currentScript.src + "?again"; document.body.appendChild(s);', 'route'],
      ['location', `location = "${L}/nav";`, 'navigated'],
    ];
    for (const [what, attack, how] of attacks) {
      await run(fb, 'd3');
      const r = await spaced(fb, 'd3', [drawing('d3', 'landscape'), `{ ${attack} }`, 'setTimeout(() => { window.__anyplotReady = true; }, 500);']);
      if (how === 'navigated') assert.equal(r.code, 'navigated', what);
      else {
        assert.deepEqual([r.code, r.context], ['ok', 'preloaded'], `${what}: ${JSON.stringify(r)}`);
        if (how === 'csp') assert.ok(r.csp_violations >= 1, what);
        if (how === 'route') assert.ok(r.blocked_requests >= 1, what);
      }
      await settle(300);
      assert.equal(lis.connections, 0, `${what}: ${JSON.stringify(lis.lines)}`);
    }
  });
});

describe('MUI X: the vendor script and the split bundle', () => {
  let fb;
  before(async () => {
    fb = new FigureBrowser({ ...BROWSER_OPTS, maxHeapMb: 512 });
    await fb.start();
  });
  after(() => fb.close());

  const themed = (imports, body) => ['//# anyplot-orientation: landscape', ...imports,
    'const t = window.ANYPLOT_TOKENS;', 'export default function C() {', '  const { width, height } = window.ANYPLOT_SIZE;',
    `  return <Box sx={{ width, height, bgcolor: "background.default", color: "text.primary" }}>${body}</Box>;`, '}'];

  test('a snippet of the vendor script\'s modules is bundled against it; another import, whole; both themed', async () => {
    const chart = '<BarChart width={1500} height={800} skipAnimation colors={[t.palette[0]]} xAxis={[{ scaleType: "band", data: ["a", "b"] }]} series={[{ data: [2, 1] }]} />';
    const split = themed(['import Box from "@mui/material/Box";', 'import { BarChart } from "@mui/x-charts/BarChart";'], chart);
    const whole = themed(['import Box from "@mui/material/Box";', 'import Button from "@mui/material/Button";', 'import { BarChart } from "@mui/x-charts/BarChart";'],
      `<Button variant="contained">b</Button>${chart}`);
    for (const [text, bundle] of [[split, 'vendor'], [whole, 'whole'], [split, 'vendor']]) {
      const r = await spaced(fb, 'muix', text, { theme: 'dark' });
      assert.deepEqual([r.code, r.bundle, r.width, r.height], ['ok', bundle, 3200, 1800], JSON.stringify(r));
      const png = pngOf(r.out);
      const near = (px, hex) => px.every((v, i) => Math.abs(v - parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16)) <= 3);
      assert.ok(near(png.pixel(3100, 1700), '#1A1A17'), `${bundle}: the theme's dark background (${png.pixel(3100, 1700)})`);
      const green = png.count((R, G, B) => Math.abs(R - 0x00) < 30 && Math.abs(G - 0x9e) < 30 && Math.abs(B - 0x73) < 30);
      assert.ok(green > 20000, `${bundle}: palette[0] pixels ${green}`);
    }
  });

  test('a run of MUI X snippets preloads the vendor script', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await spaced(fb, 'muix', drawing('muix', 'square'));
      assert.deepEqual([r.code, r.bundle], ['ok', 'vendor']);
      if (i === 2) assert.equal(r.context, 'preloaded');
    }
  });

  test('errors through the split bundle keep the snippet\'s line; refusals stay refusals', async () => {
    const thrown = await spaced(fb, 'muix', ['import { BarChart } from "@mui/x-charts/BarChart";', 'export default function C() {', '  // 3',
      '  throw new RangeError("no chart");', '}']);
    assert.deepEqual([thrown.code, thrown.error_class, thrown.error_line, thrown.bundle], ['snippet_error', 'RangeError', 4, undefined]);
    const refused = await spaced(fb, 'muix', ['import fs from "node:fs";', 'console.log(fs);', 'export default function C() { return null; }']);
    assert.deepEqual([refused.code, refused.module], ['import_refused', 'node:fs']);
  });

  test('every MUI X file of tests/catalogue draws on the split bundle, as whole', async () => {
    for (const { spec, library, file } of catalogueFiles().filter((f) => f.library === 'muix')) {
      const r = await spaced(fb, library, file);
      const bare = await render(fb, library, file, { bare: true });
      assert.equal(r.code, bare.code, `${spec}: strict ${JSON.stringify(r)} bare ${JSON.stringify(bare)}`);
      if (r.code === 'ok') assert.equal(r.bundle, 'vendor', spec);
    }
  });
});
