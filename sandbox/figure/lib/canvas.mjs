// The canvas rule: the figure keeps its own CSS width; the device scale makes the PNG exactly
// 3200x1800 (landscape) or 2400x2400 (square), so type sizes keep their proportions.
//   neither width nor height -> 1600 x 900 CSS at scale 2 (landscape)
//   only width w             -> w x w*9/16 (landscape), scale 3200/w
//   only height h            -> h*16/9 x h (landscape), scale 3200/(h*16/9)
//   both w and h             -> landscape when w/h >= 4/3 (the geometric midpoint of 16:9 and 1:1),
//                               else square; the width is kept and the height becomes w*9/16 or w
// Every derived side must lie in [MIN_CSS, MAX_CSS]; the screenshot uses a fractional clip scale, so
// a fractional CSS height (1000 x 562.5) still gives exactly 3200 x 1800 device pixels.
import { FigureError } from './errors.mjs';

export const LANDSCAPE = Object.freeze({ name: 'landscape', width: 3200, height: 1800 });
export const SQUARE = Object.freeze({ name: 'square', width: 2400, height: 2400 });
export const DEFAULT_CSS = Object.freeze({ width: 1600, height: 900 });
export const MIN_CSS = 160;   // scale 20 at most
export const MAX_CSS = 6400;  // scale 0.5 at least
const SQUARE_BELOW = 4 / 3;

function side(layout, key) {
  const v = layout[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new FigureError('figure_size_invalid', `layout.${key} is not a finite number`);
  }
  if (v < MIN_CSS || v > MAX_CSS) {
    throw new FigureError('figure_size_invalid', `layout.${key} ${v} outside [${MIN_CSS}, ${MAX_CSS}]`);
  }
  return v;
}

function bounded(name, v) {
  if (!(v >= MIN_CSS && v <= MAX_CSS)) {
    throw new FigureError('figure_size_invalid', `derived ${name} ${Math.round(v)} outside [${MIN_CSS}, ${MAX_CSS}]`);
  }
  return v;
}

// layout: the figure's layout object (or undefined). Returns {cssWidth, cssHeight, scale, target}.
export function canvasFor(layout) {
  const l = layout && typeof layout === 'object' ? layout : {};
  const w = side(l, 'width');
  const h = side(l, 'height');
  let cssWidth, cssHeight, target = LANDSCAPE;
  if (w === null && h === null) {
    ({ width: cssWidth, height: cssHeight } = DEFAULT_CSS);
  } else if (h === null) {
    cssWidth = w;
    cssHeight = bounded('height', (w * 9) / 16);
  } else if (w === null) {
    cssHeight = h;
    cssWidth = bounded('width', (h * 16) / 9);
  } else {
    target = w / h >= SQUARE_BELOW ? LANDSCAPE : SQUARE;
    cssWidth = w;
    cssHeight = bounded('height', target === LANDSCAPE ? (w * 9) / 16 : w);
  }
  return { cssWidth, cssHeight, scale: target.width / cssWidth, target };
}

// A bokeh figure cannot be laid out again at another height, so its measured size w x h is fitted
// into the canvas instead: the same shape choice (landscape when w/h >= 4/3, else square), the
// largest device scale at which it fits, centred; the rest is the page's background. A plot saved
// at 16:9 or 1:1 (what the catalogue does) fills the canvas exactly, as a plotly figure does.
export function fitCanvas(w, h) {
  for (const [name, v] of [['width', w], ['height', h]]) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < MIN_CSS || v > MAX_CSS) {
      throw new FigureError('figure_size_invalid', `${name} ${Math.round(v)} outside [${MIN_CSS}, ${MAX_CSS}]`);
    }
  }
  const target = w / h >= SQUARE_BELOW ? LANDSCAPE : SQUARE;
  const scale = Math.min(target.width / w, target.height / h);
  const cssWidth = target.width / scale, cssHeight = target.height / scale;
  return { cssWidth, cssHeight, scale, target, offsetX: (cssWidth - w) / 2, offsetY: (cssHeight - h) / 2 };
}
