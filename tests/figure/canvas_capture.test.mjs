// The canvas capture (sandbox/figure/lib/canvas_capture.mjs) against the screenshot it replaces:
// every bokeh file of tests/catalogue in both themes, captured by the runtime's interpreter through
// figurecapture.py as figure mode does, and the bokeh fixtures (4800x2700 at device scale 2/3, a
// square, a column layout) are drawn twice on the same warm renderer, once screenshot (the path
// before the canvas capture, `canvasCapture: false`) and once from the canvases, and the two PNGs
// must hold the same pixels, every one (decoded: the encodings differ, RGB against RGBA). A page
// where more than canvases may paint (markup in a Div, a CSS background, a global style sheet,
// bokeh's toolbar, map tiles) must be screenshot, with the old path's pixels too (the plot is
// drawn hidden first, then shown).
// Real Chromium and the runtime's BokehJS; as root Chromium runs as uid 65533, as in production.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FigureBrowser } from '../../sandbox/figure/lib/browser.mjs';
import { decodePng, isFlat } from '../../sandbox/figure/lib/png.mjs';
import { DEFAULT_VENV } from '../../sandbox/figure/lib/runtime.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..', '..');
const FIXTURES = path.join(HERE, 'fixtures');
const CATALOGUE = path.join(ROOT, 'tests', 'catalogue', 'plots');
const CAPTURE = path.join(ROOT, 'sandbox', 'harness', 'figurecapture.py');
const PYTHON = path.join(DEFAULT_VENV, 'bin', 'python');
const BROWSER_OPTS = process.getuid() === 0 ? { uid: 65533, gid: 65533 } : {};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plotq-canvas-capture-test-'));
fs.chmodSync(tmp, 0o711);   // Chromium's own uid passes through to the renderer's private dir
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// Every catalogue bokeh file, run bare by the runtime's interpreter with figure mode's capture:
// the figure JSON figure mode would hand the renderer. [{name, json}]
function catalogueFigures() {
  const out = [];
  for (const spec of fs.readdirSync(CATALOGUE).sort()) {
    const src = path.join(CATALOGUE, spec, 'implementations', 'python', 'bokeh.py');
    if (!fs.existsSync(src)) continue;
    for (const theme of ['light', 'dark']) {
      const work = fs.mkdtempSync(path.join(tmp, `${spec}-${theme}-`));
      fs.copyFileSync(src, path.join(work, 'plot.py'));
      const json = path.join(work, `plot-${theme}.json`);
      const r = spawnSync(PYTHON, ['-B', CAPTURE, 'plot.py', `plot-${theme}.json`], {
        cwd: work, encoding: 'utf8', timeout: 120000,
        env: { PATH: '/usr/bin:/bin', HOME: work, TMPDIR: work, ANYPLOT_THEME: theme, MPLBACKEND: 'Agg' },
      });
      assert.equal(r.status, 0, `${spec} ${theme}: ${r.stderr}`);
      out.push({ name: `${spec} ${theme}`, json });
    }
  }
  return out;
}

describe('canvas capture: the same pixels as the screenshot', () => {
  let fb;
  let n = 0;
  before(async () => {
    fb = new FigureBrowser({ ...BROWSER_OPTS, plotlyJs: '', jsModules: '' });
    await fb.start();
  });
  after(async () => { if (fb) await fb.close(); });

  // Draws `json` one way; returns the answer and the decoded PNG.
  const draw = async (json, canvasCapture) => {
    fb.opts.canvasCapture = canvasCapture;
    const out = path.join(tmp, `out-${n++}.png`);
    const r = await fb.render({ figure: json, out, timeoutMs: 60000 });
    const buf = fs.readFileSync(out);
    return { r, buf, png: decodePng(buf) };
  };

  // Both ways; the way taken must be `how` (a RegExp), and every pixel must agree.
  const same = async (name, json, how = /^canvas$/) => {
    const old = await draw(json, false);
    const now = await draw(json, true);
    assert.equal(old.r.capture, 'screenshot', `${name}: the old path`);
    assert.match(now.r.capture, how, `${name}: the way it was captured`);
    assert.deepEqual([now.png.width, now.png.height], [old.png.width, old.png.height], name);
    assert.equal(isFlat(old.buf), false, `${name}: a blank drawing proves nothing`);
    const a = old.png.rgba(), b = now.png.rgba();
    let first = -1, count = 0;
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) {
        if (first < 0) first = i;
        count++;
      }
    }
    const at = (i) => `(${(i >> 2) % old.png.width}, ${Math.floor((i >> 2) / old.png.width)})`;
    assert.equal(count, 0, `${name}: ${count} channel values differ, the first at ${at(first)}`);
    return old.png;
  };

  test('every bokeh file of tests/catalogue, light and dark', async () => {
    const figures = catalogueFigures();
    assert.ok(figures.length >= 6, `catalogue bokeh figures: ${figures.length}`);
    const sizes = new Set();
    for (const { name, json } of figures) {
      const png = await same(name, json);
      sizes.add(`${png.width}x${png.height}`);
    }
    assert.deepEqual([...sizes].sort(), ['2400x2400', '3200x1800']);
  });

  test('the fixtures: 4800x2700 at device scale 2/3 light and dark, a square, a column layout', async () => {
    for (const f of ['bokeh-light', 'bokeh-dark', 'bokeh-square', 'bokeh-column']) {
      await same(f, path.join(FIXTURES, `${f}.json`));
    }
  });

  // Made here by the runtime's bokeh: markup in a Div, a CSS background on the plot, a global
  // style sheet that adds content to the page, bokeh's default toolbar (its icons and logo link),
  // and a WebGL plot (BokehJS copies its WebGL drawing onto a 2d canvas).
  const made = () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'made-'));
    const r = spawnSync(PYTHON, ['-B', '-c', MADE_FIGURES, dir], { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, r.stderr);
    return dir;
  };

  test('a WebGL plot (output_backend webgl)', async () => {
    await same('webgl', path.join(made(), 'webgl.json'));
  });

  test('a page where more than canvases may paint is screenshot, and draws', async () => {
    const dir = made();
    const cases = [
      ...['div', 'styled', 'global-css', 'toolbar'].map((f) => path.join(dir, `${f}.json`)),
      path.join(FIXTURES, 'bokeh-hostile.json'),   // a layout measured to a CSS size that is not whole
    ];
    // Drawn hidden for the capture, refused, shown and screenshot: the old path's pixels.
    for (const f of cases) {
      const png = await same(path.basename(f), f, /^screenshot \(.+\)$/);
      assert.deepEqual([png.width, png.height], [3200, 1800], f);
    }
    // Map tiles bring markup of their own: drawn shown from the start, as before.
    const { r: tiles, png } = await draw(path.join(FIXTURES, 'bokeh-tiles.json'), true);
    assert.equal(tiles.capture, 'screenshot (map tiles)');
    assert.deepEqual([png.width, png.height], [3200, 1800]);
  });
});

const MADE_FIGURES = `
import json, sys
from bokeh.embed import json_item
from bokeh.layouts import column
from bokeh.models import Div, GlobalInlineStyleSheet
from bokeh.plotting import figure

def plot(h=1800):
    p = figure(width=3200, height=h, toolbar_location=None)
    p.scatter([1, 2, 3], [3, 1, 2], size=40)
    return p

out = {"div": json_item(column(Div(text="<b>a note</b>", width=3200, height=100), plot(1700)))}
p = plot()
p.styles = {"background-color": "red"}
out["styled"] = json_item(p)
p = plot()
p.stylesheets = [GlobalInlineStyleSheet(css="body::after { content: 'x'; }")]
out["global-css"] = json_item(p)
p = figure(width=4800, height=2700, title="bokeh's own toolbar")
p.line([1, 2, 3], [3, 1, 2], line_width=8)
out["toolbar"] = json_item(p)
p = figure(width=3200, height=1800, title="webgl", output_backend="webgl", toolbar_location=None)
x = [i / 100 for i in range(2000)]
p.scatter(x, [(v * 7) % 3 for v in x], size=12, alpha=0.5)
p.line(x, [(v * 3) % 2 for v in x], line_width=6)
out["webgl"] = json_item(p)
for k, v in out.items():
    with open(f"{sys.argv[1]}/{k}.json", "w") as f:
        json.dump(v, f)
`;
