// The canvas capture: a bokeh figure's PNG made from its own canvases inside the page, instead of
// a screenshot of the page. BokehJS paints everything a plot shows (glyphs, axes, title, legend)
// on its canvases at the device scale, so when nothing else on the page paints and every canvas
// lies 1:1 on whole device pixels, the page's pixels are those canvases drawn in paint order over
// the page's white background: the same pixels as the screenshot (tested on every bokeh figure of
// tests/catalogue, both themes, the fixtures, a WebGL plot), without the compositor's copy of the whole
// frame, which is most of a screenshot's time. Anything else that could paint (text or markup in
// the DOM, a background, a border, a shadow, an opacity, a transform, a z-index, a clip that cuts
// a canvas, a canvas not 1:1) makes the page answer why not, and the figure is screenshot instead.
// The check errs towards the screenshot: it never decides what a pixel is, only whether the
// canvases alone make the page's pixels. The plot is drawn hidden for it (drawBokehInPage), so
// that the page makes no frame of the canvases (docs/figure-renderer.md, "The canvas capture").
import { pngSize } from './png.mjs';

// Runs in the page (page.evaluate): self-contained, data in, data out. Returns {url} (a PNG data
// URL of exactly width x height device pixels) or {why} (the first reason the page needs the
// screenshot). Nothing of the figure runs here: it reads the DOM BokehJS built from the figure.
export function canvasCaptureInPage({ dpr, width, height }) {
  const whole = (v) => Math.abs(v - Math.round(v)) < 1e-6;
  const style = (e, pseudo) => getComputedStyle(e, pseudo);
  const WHITE = 'rgb(255, 255, 255)';
  const NONE = (v) => v === 'none' || v === 'normal';
  const transparent = (c) => c === 'transparent' || /^rgba\(.*,\s*0\)$/.test(c);
  const html = document.documentElement, body = document.body;
  // The plot was drawn hidden (drawBokehInPage): shown again for the check, so that the check sees
  // the page the screenshot would, and hidden again once captured, all before the page makes a
  // frame (this runs as one task). A refused page stays shown, for the screenshot.
  const plot = document.getElementById('plot');
  const hidden = plot && plot.style.visibility === 'hidden';
  if (hidden) plot.style.visibility = '';
  if (!whole(innerWidth * dpr) || Math.round(innerWidth * dpr) !== width || Math.round(innerHeight * dpr) !== height) {
    return { why: 'viewport' };
  }
  if (style(html).backgroundColor !== WHITE || style(body).backgroundColor !== WHITE) return { why: 'page background' };
  const canvases = [];
  // Every element a figure's page can hold that paints nothing of its own when its style says so.
  const QUIET = new Set(['DIV', 'SPAN', 'CANVAS']);
  const HIDDEN = new Set(['STYLE', 'SCRIPT', 'LINK', 'META', 'TEMPLATE', 'TITLE']);
  const SIDES = ['Top', 'Right', 'Bottom', 'Left'];
  const is = (...vs) => (v) => vs.includes(v);
  // Computed styles under which an element paints as a plain box and moves nothing inside it.
  const PLAIN = {
    visibility: is('visible'), opacity: is('1'), filter: NONE, backdropFilter: NONE, mixBlendMode: is('normal'),
    transform: (v) => NONE(v) || v === 'matrix(1, 0, 0, 1, 0, 0)', translate: NONE, rotate: NONE, scale: NONE, offsetPath: NONE, clipPath: NONE, clip: is('auto'),
    maskImage: NONE, boxShadow: NONE, zIndex: is('auto'), float: NONE, contain: NONE,
    contentVisibility: is('visible'), perspective: NONE, resize: NONE, columnRuleStyle: NONE,
    display: (v) => !v.includes('list-item'),
  };
  const hasText = (e) => [...e.childNodes, ...(e.shadowRoot ? e.shadowRoot.childNodes : [])]
    .some((n) => n.nodeType === Node.TEXT_NODE && n.data.trim() !== '');
  // Why an element's own style may paint or move what is inside it (null: it does not).
  const loud = (e, s) => {
    const off = Object.entries(PLAIN).find(([k, ok]) => !ok(s[k]));
    if (off) return `${off[0]} ${s[off[0]]}`;
    if (s.outlineStyle !== 'none' && s.outlineWidth !== '0px') return 'an outline';
    if (SIDES.some((k) => s[`border${k}Style`] !== 'none' && s[`border${k}Width`] !== '0px')) return 'a border';
    if (!NONE(s.backgroundImage) || !NONE(s.borderImageSource)) return 'a background';
    for (const p of ['::before', '::after', '::marker']) {
      const ps = style(e, p);
      if (!NONE(ps.content) && ps.display !== 'none') return `${p} content`;
    }
    const [ox, oy] = [s.overflowX, s.overflowY];
    if (ox === 'scroll' || oy === 'scroll') return 'a scroller';
    if ((ox === 'auto' || oy === 'auto') && (e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight)) return 'a scroller';
    if (hasText(e)) return 'text';
    return null;
  };
  let why = null;
  const fail = (w) => { why = why || w; };
  // Visits one element (clips: the rects of the ancestors that clip it).
  const visit = (e, clips) => {
    if (why) return;
    const s = style(e);
    if (s.display === 'none') return;   // neither it nor anything inside it paints
    if (HIDDEN.has(e.tagName)) return fail(`a visible ${e.tagName.toLowerCase()}`);
    if (!QUIET.has(e.tagName)) return fail(`a ${e.tagName.toLowerCase()} element`);
    const w = loud(e, s) || (transparent(s.backgroundColor) ? null : 'a background');
    if (w) return fail(w);
    // A shadow host shows its light children only through slots: a figure's page has none.
    if (e.shadowRoot && e.children.length) return fail('light children of a shadow host');
    const r = e.getBoundingClientRect();
    if (e.tagName === 'CANVAS') {
      if (s.position !== 'absolute' && s.position !== 'relative') return fail('a canvas in the flow');
      if (!SIDES.every((k) => s[`padding${k}`] === '0px') || s.objectFit !== 'fill' || s.objectPosition !== '50% 50%') {
        return fail('a canvas not drawn at its box');
      }
      if (!whole(r.left * dpr) || !whole(r.top * dpr) || Math.abs(r.width * dpr - e.width) > 1e-6
          || Math.abs(r.height * dpr - e.height) > 1e-6) return fail('a canvas not 1:1 on device pixels');
      for (const c of clips) {
        if (r.left < c.left || r.top < c.top || r.right > c.right || r.bottom > c.bottom) return fail('a clipped canvas');
      }
      // A WebGL canvas answers null here (its frame may be gone once presented): screenshot.
      if (e.width && e.height && !e.getContext('2d')) return fail('a canvas that is not 2d');
      if (e.width && e.height) canvases.push({ e, x: Math.round(r.left * dpr), y: Math.round(r.top * dpr) });
    }
    const inner = s.overflowX !== 'visible' || s.overflowY !== 'visible' ? [...clips, r] : clips;
    // Positioned boxes without a z-index paint in tree order, and every canvas is one.
    for (const k of e.shadowRoot ? e.shadowRoot.children : e.children) visit(k, inner);
  };
  for (const e of [html, body]) {
    const s = style(e);
    const w = s.backgroundColor !== WHITE ? 'page background' : loud(e, s);
    if (w) return { why: `page: ${w}` };
  }
  for (const k of body.children) visit(k, []);
  if (why) return { why };
  if (!canvases.length) return { why: 'no canvas' };
  const out = document.createElement('canvas');
  out.width = width;
  out.height = height;
  try {
    const g = out.getContext('2d');
    g.fillStyle = WHITE;
    g.fillRect(0, 0, width, height);
    for (const { e, x, y } of canvases) g.drawImage(e, x, y);
    const url = out.toDataURL('image/png');
    if (hidden) plot.style.visibility = 'hidden';
    return { url };
  } catch (e) {
    return { why: `the canvases cannot be read (${e && e.name})` };
  } finally {
    out.width = 0;
    out.height = 0;
  }
}

const PREFIX = 'data:image/png;base64,';

// The page's PNG from its canvases, or null when the page needs a screenshot (why in `miss.why`).
// canvas: fitCanvas's result with a whole CSS size (the page's viewport, at device scale canvas.scale).
export async function captureCanvases(page, canvas, miss = {}) {
  const { target } = canvas;
  const r = await page.evaluate(canvasCaptureInPage, { dpr: canvas.scale, width: target.width, height: target.height });
  if (!r.url || !r.url.startsWith(PREFIX)) {
    miss.why = r.why || 'no PNG';
    return null;
  }
  return Buffer.from(r.url.slice(PREFIX.length), 'base64');
}

// Shows a plot drawn hidden (for the screenshot, or a test's look at the page).
export async function showPlot(page) {
  await page.evaluate(() => { const el = document.getElementById('plot'); if (el) el.style.visibility = ''; });
}

// Why the capture will not be tried, known before the draw (null: it will be). A CSS size that is
// not whole cannot lay canvases 1:1 on device pixels. Map tiles always bring markup of their own
// (the attribution), so the page would refuse; such a plot is drawn shown, as before (drawn hidden
// and then shown, a map's screenshot took seconds longer). Naming TileRenderer anywhere, a title
// included, is enough: the error is only ever towards the screenshot.
export function canvasRefusedAhead(canvas, text) {
  if (!Number.isInteger(canvas.cssWidth) || !Number.isInteger(canvas.cssHeight)) return 'a CSS size not whole';
  if (text.includes('"TileRenderer"')) return 'map tiles';
  return null;
}

// drawBokeh's capture: {png, size} from the canvases when the page allows it and the PNG is
// exactly the canvas's target, else null (the caller screenshots; capture.why says why, if the
// page said). Only for a plot drawn hidden, which canvasRefusedAhead allowed.
export async function canvasShot(page, canvas, failed, capture) {
  let png;
  try {
    png = await captureCanvases(page, canvas, capture);
  } catch (e) {
    throw failed(e, 'the canvas capture');
  }
  const size = png && pngSize(png);
  if (!size || size.width !== canvas.target.width || size.height !== canvas.target.height) return null;
  capture.how = 'canvas';
  return { png, size };
}
