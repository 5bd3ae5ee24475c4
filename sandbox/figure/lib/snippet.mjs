// What a JavaScript snippet render is, apart from the drawing itself (snippet_draw.mjs): which
// libraries there are and which file of the installed package each page loads, the theme tokens a
// snippet reads, the orientation its directive line picks, and reading the snippet file. These are
// anyplot's page contract (its automation/js-render harness), carried over so that a catalogue
// snippet draws here exactly as it does there.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FigureError } from './errors.mjs';
import { readCapped } from './figure_file.mjs';

export const SNIPPET_MAX_BYTES = 1024 * 1024;
export const DEVICE_SCALE = 2;

// name -> the package whose version the ready line reports and the UMD bundle the page loads
// (global: what the bundle defines). muix has no UMD bundle: its snippet is a .tsx module bundled
// by esbuild with React and MUI (muix_bundle.mjs); it is there when all of `needs` are. The table
// is snippet_libraries.json, which the host's FigureRenderer reads too (sandbox/figure_renderer.cpp:
// whether a library can be drawn here), so neither side keeps a copy.
export const SNIPPET_LIBRARIES_FILE = fileURLToPath(new URL('./snippet_libraries.json', import.meta.url));
export const SNIPPET_LIBRARIES = deepFreeze(JSON.parse(fs.readFileSync(SNIPPET_LIBRARIES_FILE, 'utf8')));

function deepFreeze(v) {
  if (v !== null && typeof v === 'object') for (const x of Object.values(v)) deepFreeze(x);
  return Object.freeze(v);
}

// The files a library needs under the modules dir: its bundle, or (muix) its list.
export function libraryFiles(lib) {
  return lib.dist ? [lib.dist] : lib.needs;
}

// The libraries whose files are readable under modulesDir: name -> {version, bundle (absolute path
// or null)}. A library whose files are missing is left out; modulesDir '' or null gives {}.
export function snippetLibraries(modulesDir) {
  const have = {};
  if (!modulesDir) return have;
  for (const [name, lib] of Object.entries(SNIPPET_LIBRARIES)) {
    try {
      for (const f of libraryFiles(lib)) fs.accessSync(path.join(modulesDir, f), fs.constants.R_OK);
      const { version } = JSON.parse(fs.readFileSync(path.join(modulesDir, lib.pkg, 'package.json'), 'utf8'));
      if (typeof version !== 'string') continue;
      have[name] = { name, version, bundle: lib.dist ? path.join(modulesDir, lib.dist) : null };
    } catch {
      // not installed: the library is absent from the ready line and its jobs are library_unavailable
    }
  }
  return have;
}

// The two canvases; the PNG is the CSS size times DEVICE_SCALE: 3200x1800 or 2400x2400.
export const ORIENTATIONS = Object.freeze({
  landscape: Object.freeze({ width: 1600, height: 900 }),
  square: Object.freeze({ width: 1200, height: 1200 }),
});

// Only the snippet's directive line picks the canvas, never what it draws.
const DIRECTIVE = /^\s*\/\/#?\s*anyplot-orientation:\s*(square|landscape)\b/im;
export function orientationOf(source) {
  const m = DIRECTIVE.exec(source);
  return m ? m[1].toLowerCase() : 'landscape';
}

// The theme tokens (anyplot's style guide): data colours are the same in both themes, only the
// chrome flips. Key order is the reference's, so ANYPLOT_TOKENS serialises the same.
const PALETTE = Object.freeze(['#009E73', '#C475FD', '#4467A3', '#BD8233', '#AE3030', '#2ABCCD', '#954477', '#99B314']);
export function tokensFor(theme) {
  const light = theme !== 'dark';
  const pageBg = light ? '#FAF8F1' : '#1A1A17';
  return {
    theme: light ? 'light' : 'dark',
    pageBg,
    elevatedBg: light ? '#FFFDF6' : '#242420',
    ink: light ? '#1A1A17' : '#F0EFE8',
    inkSoft: light ? '#4A4A44' : '#B8B7B0',
    grid: light ? 'rgba(26,26,23,0.15)' : 'rgba(240,239,232,0.15)',
    palette: [...PALETTE],
    amber: '#DDCC77',
    seq: ['#009E73', '#4467A3'],
    div: ['#AE3030', pageBg, '#4467A3'],
  };
}

export const FONT_FAMILY = '-apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, Helvetica, Arial, sans-serif';

// The snippet the host wrote: the figure file's checks (no links, regular, one name, capped at
// 1 MiB, UTF-8), then handed to the page as a script of its own (never parsed or run here).
export function readSnippet(file, maxBytes = SNIPPET_MAX_BYTES) {
  const bytes = readCapped(file, maxBytes, 'snippet');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new FigureError('figure_invalid', 'the snippet is not UTF-8');
  }
}

// Whether the snippet may signal its own readiness: it names the flag somewhere in its source
// (the ready rule, ../README.md). A snippet that never names it cannot set it.
export function namesReadyFlag(source) {
  return source.includes('__anyplotReady');
}
