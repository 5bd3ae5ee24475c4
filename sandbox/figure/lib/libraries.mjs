// What differs between the two figure libraries: which files of the installed package the page
// loads, what a figure file of that library looks like (the shape check), how its canvas is
// found, how it is drawn inside the page and how the page is cleared for the next figure.
// Everything named *InPage runs inside Chromium (page.evaluate): self-contained, data in, data out.
import path from 'node:path';
import { FigureError } from './errors.mjs';
import { canvasFor } from './canvas.mjs';

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// ---- plotly ------------------------------------------------------------------------------------

const PLOTLY_KEYS = new Set(['data', 'layout', 'config', 'frames']);

export function checkPlotlyShape(fig) {
  if (!isPlainObject(fig)) throw new FigureError('figure_invalid', 'the figure is not a JSON object');
  for (const k of Object.keys(fig)) {
    if (!PLOTLY_KEYS.has(k)) throw new FigureError('figure_invalid', 'unexpected top-level key (allowed: data, layout, config, frames)');
  }
  if (!Array.isArray(fig.data)) throw new FigureError('figure_invalid', 'figure.data is not an array');
  fig.data.forEach((t, i) => {
    if (!isPlainObject(t)) throw new FigureError('figure_invalid', `figure.data[${i}] is not an object`);
    if (t.type !== undefined && typeof t.type !== 'string') throw new FigureError('figure_invalid', `figure.data[${i}].type is not a string`);
  });
  if (fig.layout !== undefined && !isPlainObject(fig.layout)) throw new FigureError('figure_invalid', 'figure.layout is not an object');
  if (fig.config !== undefined && !isPlainObject(fig.config)) throw new FigureError('figure_invalid', 'figure.config is not an object');
  if (fig.frames !== undefined && !Array.isArray(fig.frames)) throw new FigureError('figure_invalid', 'figure.frames is not an array');
}

const STATIC_CONFIG = Object.freeze({
  staticPlot: true, displayModeBar: false, displaylogo: false, responsive: false, showTips: false,
  showLink: false, sendData: false, showEditInChartStudio: false, editable: false, scrollZoom: false,
  doubleClick: false, showAxisDragHandles: false, plotGlPixelRatio: 1,
});

// The figure arrives as a string and is parsed as JSON: data, never code. Its own config is not
// applied (ours is fixed); frames are not drawn.
async function drawPlotlyInPage({ text, width, height, config }) {
  const fig = JSON.parse(text);
  const layout = fig.layout || {};
  layout.width = width;
  layout.height = height;
  layout.autosize = false;
  const el = document.getElementById('plot');
  el.style.width = `${width}px`;
  el.style.height = `${height}px`;
  await Plotly.newPlot(el, fig.data, layout, config);
  if (document.querySelector('.no-webgl')) return { noWebgl: true, csp: window.__plotqCsp.length };
  await document.fonts.ready;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return { noWebgl: false, csp: window.__plotqCsp.length };
}

function resetPlotlyInPage() {
  window.__plotqCsp.splice(0);
  const el = document.getElementById('plot');
  if (el) {
    Plotly.purge(el);
    el.remove();
  }
  const fresh = document.createElement('div');
  fresh.id = 'plot';
  document.body.appendChild(fresh);
}

// ---- bokeh -------------------------------------------------------------------------------------

// bokeh.embed.json_item(obj): {target_id, root_id, doc: {version, title, roots, ...}, version}.
const BOKEH_KEYS = new Set(['target_id', 'root_id', 'doc', 'version']);

export function checkBokehShape(item) {
  if (!isPlainObject(item)) throw new FigureError('figure_invalid', 'the figure is not a JSON object');
  for (const k of Object.keys(item)) {
    if (!BOKEH_KEYS.has(k)) throw new FigureError('figure_invalid', 'unexpected top-level key (allowed: target_id, root_id, doc, version)');
  }
  if (typeof item.root_id !== 'string' || !item.root_id) throw new FigureError('figure_invalid', 'root_id is not a string');
  if (item.target_id !== undefined && item.target_id !== null) throw new FigureError('figure_invalid', 'target_id must be null');
  if (!isPlainObject(item.doc) || !Array.isArray(item.doc.roots)) throw new FigureError('figure_invalid', 'doc.roots is not an array');
  const root = item.doc.roots.find((r) => isPlainObject(r) && r.id === item.root_id);
  if (!root) throw new FigureError('figure_invalid', 'no root with the root_id');
}

// The root's own size when it names both (a plot does; a layout usually does not): then the
// device scale is known before drawing. Otherwise the page measures the drawn layout first.
function bokehDeclaredSize(item) {
  const root = item.doc.roots.find((r) => r.id === item.root_id);
  const a = isPlainObject(root.attributes) ? root.attributes : {};
  return typeof a.width === 'number' && typeof a.height === 'number' ? { width: a.width, height: a.height } : null;
}

// hidden: the plot is drawn under visibility: hidden, for the canvas capture (canvas_capture.mjs):
// BokehJS paints its canvases the same, and the page makes no frame of them, which costs as much
// as the paint itself; the capture, or the screenshot after it, shows the plot again.
async function drawBokehInPage({ text, settleMs, x = 0, y = 0, hidden = false }) {
  const item = JSON.parse(text);
  const el = document.getElementById('plot');
  el.style.left = `${x}px`;
  el.style.top = `${y}px`;
  el.style.visibility = hidden ? 'hidden' : '';
  window.__plotqViews = await Bokeh.embed.embed_item(item, el);
  const doc = Bokeh.documents[Bokeh.documents.length - 1];
  const until = performance.now() + settleMs;
  // BokehJS marks a map tile that failed to load finished but never tells its plot (a loaded one
  // makes a repaint, which does), so a map whose tiles the page refuses (every one: no network)
  // would keep its document busy until the cap. The page passes the news on.
  const tiles = [...window.__plotqViews.query((v) => v.model.type === 'TileRenderer')];
  while (doc && !doc.is_idle && performance.now() < until) {
    for (const v of tiles) if (v.has_finished()) v.notify_finished();
    await new Promise((r) => setTimeout(r, 5));
  }
  await document.fonts.ready;
  // No wait for frames: BokehJS has painted its canvases once the document is idle, and the
  // screenshot makes the page draw a fresh frame before it copies it (a test compares the PNG
  // with one taken after two animation frames).
  const box = (el.firstElementChild || el).getBoundingClientRect();
  return { idle: !doc || doc.is_idle, width: box.width, height: box.height, csp: window.__plotqCsp.length };
}

// BokehJS's removed views stay reachable from listeners it never removes (the page's DOM node and
// listener counts grow with every figure), and with them their canvases: each figure's
// full-canvas backing stores would stay allocated for the page's life. So every canvas under the
// plot (inside its views' shadow roots too) is shrunk to nothing first, which frees its pixels
// whatever still points at the element.
function resetBokehInPage() {
  const shrink = (node) => {
    if (node.shadowRoot) shrink(node.shadowRoot);
    for (const child of node.children || []) {
      if (child instanceof HTMLCanvasElement) {
        child.width = 0;
        child.height = 0;
      }
      shrink(child);
    }
  };
  const plot = document.getElementById('plot');
  if (plot) shrink(plot);
  window.__plotqCsp.splice(0);
  if (window.__plotqViews && typeof window.__plotqViews.clear === 'function') window.__plotqViews.clear();
  window.__plotqViews = null;
  Bokeh.documents.splice(0, Bokeh.documents.length);
  const el = document.getElementById('plot');
  if (el) el.remove();
  const fresh = document.createElement('div');
  fresh.id = 'plot';
  document.body.appendChild(fresh);
}

// A bokeh document's warm-up: one small plot, made in the page's own version so BokehJS accepts it.
export function bokehWarmUp(version) {
  const id = (n) => `w${n}`;
  const obj = (n, name, attributes = {}) => ({ type: 'object', name, id: id(n), attributes });
  const plot = obj(1, 'Figure', {
    width: 320, height: 180,
    x_range: obj(2, 'DataRange1d'), y_range: obj(3, 'DataRange1d'),
    x_scale: obj(4, 'LinearScale'), y_scale: obj(5, 'LinearScale'),
    renderers: [obj(6, 'GlyphRenderer', {
      data_source: obj(7, 'ColumnDataSource', { data: { type: 'map', entries: [['x', [0, 1, 2]], ['y', [1, 0, 2]]] } }),
      glyph: obj(8, 'Line', { x: { type: 'field', field: 'x' }, y: { type: 'field', field: 'y' } }),
    })],
  });
  return JSON.stringify({ target_id: null, root_id: id(1), doc: { version, title: 'warm-up', roots: [plot] }, version });
}

// ---- the table ---------------------------------------------------------------------------------

const BOKEH_BUNDLES = ['bokeh.min.js', 'bokeh-gl.min.js', 'bokeh-widgets.min.js', 'bokeh-tables.min.js'];

export const LIBRARIES = Object.freeze({
  plotly: {
    name: 'plotly',
    scripts: (opts) => [opts.plotlyJs],
    versionInPage: () => (typeof Plotly === 'object' ? Plotly.version : null),
    check: checkPlotlyShape,
    draw: drawPlotlyInPage,
    reset: resetPlotlyInPage,
    staticConfig: STATIC_CONFIG,
    warmUp: JSON.stringify({ data: [{ type: 'scatter', x: [0, 1, 2], y: [1, 0, 2] }], layout: { title: { text: 'warm-up' } } }),
  },
  bokeh: {
    name: 'bokeh',
    scripts: (opts) => BOKEH_BUNDLES.map((f) => path.join(opts.bokehDir, f)),
    versionInPage: () => (typeof Bokeh === 'object' ? Bokeh.version : null),
    check: checkBokehShape,
    declaredSize: bokehDeclaredSize,
    draw: drawBokehInPage,
    reset: resetBokehInPage,
    warmUp: null,   // bokehWarmUp(version), made from the page's own version at start (browser.mjs)
  },
});

// The library a request names, or the one the figure's shape says (the two shapes share no key).
export function libraryFor(figure, requested) {
  const looksBokeh = isPlainObject(figure) && 'doc' in figure && 'root_id' in figure;
  const name = requested || (looksBokeh ? 'bokeh' : 'plotly');
  const lib = LIBRARIES[name];
  if (!lib) throw new FigureError('request_invalid', 'library must be plotly or bokeh');
  lib.check(figure);
  return lib;
}

// The canvas of a plotly figure comes from its layout; a bokeh figure's from its measured size.
export function plotlyCanvas(figure) {
  return canvasFor(figure.layout);
}
