// Reads and checks the figure JSON that sandboxed plot code wrote. The file is untrusted: it is
// opened without following links and without blocking (a FIFO must not hang us), must be a regular
// file, not empty, at most maxBytes, UTF-8, nested at most maxDepth deep, JSON, and a figure's shape.
// The text is then handed to the page as data only (JSON.parse there), never as code.
import fs from 'node:fs';
import { FigureError } from './errors.mjs';
import { libraryFor } from './libraries.mjs';

export const DEFAULT_LIMITS = Object.freeze({
  maxBytes: 16 * 1024 * 1024, // the reference's figure JSON cap
  maxDepth: 64,               // plotly figures nest ~10 deep; a bomb nests thousands
  maxValues: 4_000_000,       // arrays/objects/scalars counted by the walk
});

// `noun` names the file in the details ("figure", "snippet"); the codes are the same for both.
export function readCapped(path, maxBytes, noun = 'figure') {
  let fd;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') throw new FigureError('figure_missing', `no ${noun} file`);
    if (e.code === 'ELOOP') throw new FigureError('figure_not_regular', `the ${noun} path is a symbolic link`);
    if (e.code === 'ENXIO') throw new FigureError('figure_not_regular', `the ${noun} path is a socket or FIFO`);
    throw new FigureError('figure_not_regular', `cannot open the ${noun} (${e.code})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new FigureError('figure_not_regular', `the ${noun} path is not a regular file`);
    // A file the plot wrote has one name; a hard link could name a file the plot may not read.
    if (st.nlink !== 1) throw new FigureError('figure_not_regular', `the ${noun} file has other hard links`);
    if (st.size === 0) throw new FigureError('figure_empty', `the ${noun} file is empty`);
    if (st.size > maxBytes) throw new FigureError('figure_too_large', `${noun} is ${st.size} bytes, cap ${maxBytes}`);
    // Read at most maxBytes + 1 whatever fstat said: the file may still be growing.
    const buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      const got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n === buf.length) break;
    }
    if (n > maxBytes) throw new FigureError('figure_too_large', `${noun} is over the cap of ${maxBytes} bytes`);
    if (n === 0) throw new FigureError('figure_empty', `the ${noun} file is empty`);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

// Depth of [ and { outside strings, scanned before JSON.parse so a bomb costs one linear pass.
export function nestingDepth(text, maxDepth) {
  let depth = 0, deepest = 0, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;            // backslash: skip the escaped char
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > maxDepth) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}

// Walks the parsed value without recursion: counts values and refuses "__proto__" keys, which no
// figure has and which would be a prototype-pollution lever inside the libraries' merges.
function walk(root, maxValues) {
  const stack = [root];
  let count = 0;
  while (stack.length) {
    const v = stack.pop();
    if (++count > maxValues) throw new FigureError('figure_too_deep', `figure has more than ${maxValues} values`);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (v[i] !== null && typeof v[i] === 'object') stack.push(v[i]); else count++;
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (k === '__proto__') throw new FigureError('figure_invalid', 'figure has a "__proto__" key');
        const x = v[k];
        if (x !== null && typeof x === 'object') stack.push(x); else count++;
      }
    }
  }
}

// Returns {text, figure, lib}: the checked JSON text (handed to the page), its parsed value and its
// library (libraries.mjs: the one requested, else the one its shape names), whose shape it has.
export function readFigure(path, limits = DEFAULT_LIMITS, library = undefined) {
  const bytes = readCapped(path, limits.maxBytes);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new FigureError('figure_invalid', 'the figure is not UTF-8');
  }
  const depth = nestingDepth(text, limits.maxDepth);
  if (depth > limits.maxDepth) throw new FigureError('figure_too_deep', `figure nests deeper than ${limits.maxDepth}`);
  let figure;
  try {
    figure = JSON.parse(text);
  } catch {
    throw new FigureError('figure_invalid', 'the figure is not valid JSON');
  }
  walk(figure, limits.maxValues);
  return { text, figure, lib: libraryFor(figure, library) };
}
