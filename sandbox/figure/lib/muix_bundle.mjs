// MUI X snippets: a .tsx module that default-exports a React component. There is no UMD bundle to
// load, so esbuild (the runtime's own, runtime/js/node_modules/esbuild, in this process: it parses
// and bundles, it never runs the snippet) bundles a synthesized entry that mounts the component in
// a MUI ThemeProvider built from the tokens, with React, react-dom and MUI, into one IIFE, as
// anyplot's harness does. What the snippet itself may import is an allow-list (the packages the
// page is meant to provide); anything else (relative or absolute paths, node: builtins, other
// packages) is import_refused before esbuild resolves it, and every file that went into the bundle
// must lie inside the modules dir. One esbuild context is kept and rebuilt per snippet: its
// parsed node_modules are reused, which halves a bundle's time (README: measured).
//
// The split (strict pages): React, react-dom and the MUI modules snippets import most are bundled
// once, at start, into a vendor script that registers their namespaces on one global; a snippet
// that imports only those is bundled alone (the entry, the snippet and one-line shims that read
// the global), in a few milliseconds instead of a full bundle, and its page loads the vendor
// script first (which a preloaded spare has already run: snippet_context.mjs). A snippet that
// imports any other allowed module is bundled whole, as before: a module bundled beside the
// vendor script would bring its own copy of React and MUI's theme context.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FigureError } from './errors.mjs';
import { FONT_FAMILY } from './snippet.mjs';
import { originalLine } from './sourcemap.mjs';

const ALLOWED_PACKAGES = ['react', 'react-dom', '@mui/material', '@mui/system', '@mui/x-charts', '@emotion/react', '@emotion/styled'];
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const SNIPPET_NS = 'plotq-snippet';
const SNIPPET_ID = 'plotq:snippet';
const ENTRY_NAME = 'plotq-muix-entry.tsx';

// A package of the list, or a subpath of one whose segments are plain names (no '.', '..', '\').
export function allowedImport(spec) {
  for (const pkg of ALLOWED_PACKAGES) {
    if (spec === pkg) return true;
    if (spec.startsWith(`${pkg}/`)) return spec.slice(pkg.length + 1).split('/').every((s) => SEGMENT.test(s) && !/^\.+$/.test(s));
  }
  return false;
}

// The entry: the reference's mount, signalling readiness after the fonts and three frames (MUI X
// measures its text with getBBox and lays out again).
const ENTRY = `
import React from "react";
import { createRoot } from "react-dom/client";
import { ThemeProvider, createTheme } from "@mui/material/styles";
import AnyplotChart from ${JSON.stringify(SNIPPET_ID)};

const t = window.ANYPLOT_TOKENS;
const mode = window.ANYPLOT_THEME === "dark" ? "dark" : "light";
const theme = createTheme({
  palette: {
    mode,
    background: { default: t.pageBg, paper: t.elevatedBg },
    text: { primary: t.ink, secondary: t.inkSoft },
    divider: t.grid,
  },
  typography: { fontFamily: ${JSON.stringify(FONT_FAMILY)} },
});
const root = createRoot(document.getElementById("container"));
root.render(React.createElement(ThemeProvider, { theme }, React.createElement(AnyplotChart)));
(async () => {
  try { await (document.fonts ? document.fonts.ready : Promise.resolve()); } catch (e) {}
  requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(() => { window.__anyplotReady = true; })));
})();
`;

// The vendor script's modules (what catalogue snippets import, and the entry and JSX need). Not
// @mui/material's root: it is all of MUI, and few snippets import it.
export const VENDOR_MODULES = Object.freeze([
  'react', 'react/jsx-runtime', 'react-dom/client', '@mui/material/styles', '@mui/material/Box',
  '@mui/material/Typography', '@mui/x-charts', '@mui/x-charts/hooks', '@mui/x-charts/internals',
  ...['ChartContainer', 'LineChart', 'BarChart', 'ScatterChart', 'PieChart', 'Gauge', 'ChartsXAxis', 'ChartsYAxis',
    'ChartsAxis', 'ChartsGrid', 'ChartsLegend', 'ChartsReferenceLine', 'ChartsTooltip', 'ChartsText'].map((m) => `@mui/x-charts/${m}`),
]);
const VENDOR = new Set(VENDOR_MODULES);
const VENDOR_NS = 'plotq-vendor';
const VENDOR_GLOBAL = '__plotqMuix';
// Each namespace is registered as an ES module would be seen from CommonJS (__esModule), so the
// shims' default and named imports are the module's own.
const VENDOR_ENTRY = `${VENDOR_MODULES.map((m, i) => `import * as m${i} from ${JSON.stringify(m)};`).join('\n')}
globalThis.${VENDOR_GLOBAL} = {
${VENDOR_MODULES.map((m, i) => `  ${JSON.stringify(m)}: Object.assign({ __esModule: true }, m${i}),`).join('\n')}
};
`;

// The warm-up bundle: imports what catalogue snippets import most.
const WARM_UP = `import { LineChart } from "@mui/x-charts/LineChart";
import { BarChart } from "@mui/x-charts/BarChart";
import { ScatterChart } from "@mui/x-charts/ScatterChart";
import Box from "@mui/material/Box";
export default function W() { return <Box><LineChart width={10} height={10} series={[]} /><BarChart width={10} height={10} series={[]} /><ScatterChart width={10} height={10} series={[]} /></Box>; }
`;

export class MuixBundler {
  constructor(modulesDir) {
    this.modulesDir = path.resolve(modulesDir);
    this.root = path.dirname(this.modulesDir);
    this.esbuild = null;
    this.ctx = null;
    this.current = null;     // the snippet text the next rebuild loads
    this.refused = null;     // {module, line} of the import the last rebuild refused
    this.queue = Promise.resolve();
    this.refusals = 0;       // imports refused so far (tests: the plugin, not esbuild, refused them)
    this.splitCtx = null;    // the context that bundles a snippet against the vendor script
    this.vendorCode = null;  // Promise of the vendor script's text
    this.whole = false;      // the last split build met an import the vendor script lacks
    this.closed = false;
  }

  // split: imports of the entry and the snippet that the vendor script has become shims reading
  // its global; any other allowed import ends the split build (this.whole).
  plugin(split = false) {
    return {
      name: 'plotq-snippet',
      setup: (build) => {
        if (split) {
          build.onResolve({ filter: /.*/ }, (args) => {
            const fromEntry = args.namespace === 'file' && args.importer === path.join(this.root, ENTRY_NAME);
            if (!fromEntry && args.namespace !== SNIPPET_NS) return undefined;
            if (VENDOR.has(args.path)) return { path: args.path, namespace: VENDOR_NS };
            if (args.namespace === SNIPPET_NS && allowedImport(args.path)) {
              this.whole = true;
              return { errors: [{ text: 'not in the vendor script' }] };
            }
            return undefined;
          });
          build.onLoad({ filter: /.*/, namespace: VENDOR_NS }, (args) => ({
            contents: `module.exports = globalThis.${VENDOR_GLOBAL}[${JSON.stringify(args.path)}];`, loader: 'js',
          }));
        }
        build.onResolve({ filter: /^plotq:snippet$/ }, (args) => (args.namespace === SNIPPET_NS
          ? { errors: [{ text: 'the snippet imports itself' }] }
          : { path: 'snippet.tsx', namespace: SNIPPET_NS }));
        // Imports made by the snippet itself: the allow-list. Files inside node_modules import as usual.
        build.onResolve({ filter: /.*/, namespace: SNIPPET_NS }, (args) => {
          if (allowedImport(args.path)) return undefined;
          this.refusals++;
          this.refused = { module: args.path.slice(0, 100) };
          return { errors: [{ text: 'import refused by the page\'s import rule' }] };
        });
        build.onLoad({ filter: /.*/, namespace: SNIPPET_NS }, () => ({ contents: this.current, loader: 'tsx', resolveDir: this.root }));
      },
    };
  }

  options(contents, plugins) {
    return {
      stdin: { contents, resolveDir: this.root, sourcefile: ENTRY_NAME, loader: 'tsx' },
      bundle: true, write: false, format: 'iife', platform: 'browser', target: 'es2020', jsx: 'automatic',
      minify: true, legalComments: 'none', absWorkingDir: this.root, nodePaths: [this.modulesDir],
      outfile: path.join(this.root, 'plotq-muix.js'),     // names the outputs; write:false writes nothing
      sourcemap: 'external', sourcesContent: false, metafile: true, logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
      banner: { js: "globalThis.process=globalThis.process||{env:{NODE_ENV:'production'}};" },
      plugins,
    };
  }

  // After close() nothing starts esbuild again (a warm-up step still under way would, and its
  // service would keep the process alive).
  async loadEsbuild() {
    if (this.closed) throw new Error('the bundler is closed');
    if (!this.esbuild) this.esbuild = await import(pathToFileURL(path.join(this.modulesDir, 'esbuild', 'lib', 'main.js')).href);
    return this.esbuild;
  }

  async context(split = false) {
    if (split ? this.splitCtx : this.ctx) return split ? this.splitCtx : this.ctx;
    const esbuild = await this.loadEsbuild();
    const ctx = await esbuild.context(this.options(ENTRY, [this.plugin(split)]));
    if (this.closed) {
      await ctx.dispose().catch(() => {});
      throw new Error('the bundler is closed');
    }
    if (split) this.splitCtx = ctx; else this.ctx = ctx;
    return ctx;
  }

  // The vendor script's text, built once (our own entry: no snippet in it; every input inside
  // the modules dir, as for a snippet's bundle).
  vendor() {
    if (!this.vendorCode) {
      this.vendorCode = (async () => {
        const esbuild = await this.loadEsbuild();
        const result = await esbuild.build({ ...this.options(VENDOR_ENTRY, []), sourcemap: false });
        this.checkInputs(result);
        return result.outputFiles.find((f) => f.path.endsWith('.js')).text;
      })();
      this.vendorCode.catch(() => {});
    }
    return this.vendorCode;
  }

  checkInputs(result) {
    const outside = Object.keys(result.metafile.inputs).filter((f) => !f.startsWith(`${SNIPPET_NS}:`) && !f.startsWith(`${VENDOR_NS}:`) &&
      f !== ENTRY_NAME && f !== '<stdin>' && !path.resolve(this.root, f).startsWith(`${this.modulesDir}${path.sep}`));
    if (outside.length) throw new FigureError('import_refused', 'the bundle reached a file outside the modules dir', { module: outside[0].slice(0, 100) });
  }

  // One bundle at a time (the context holds one snippet): a bundle abandoned by a timeout still
  // finishes before the next starts. Returns {code, lineOf(genLine0, col0) -> snippet line | null}.
  // split: against the vendor script when the snippet's imports allow it (the answer's `vendor`
  // says so); else, or when false (the bare page), whole.
  bundle(text, { split = false } = {}) {
    const run = this.queue.then(async () => {
      if (split) {
        this.whole = false;
        try {
          return { ...(await this.build(text, true)), vendor: true };
        } catch (e) {
          if (!this.whole) throw e;
        }
      }
      return { ...(await this.build(text, false)), vendor: false };
    });
    this.queue = run.catch(() => {});
    return run;
  }

  // The first bundle parses all of React and MUI; the context keeps them for the next. The
  // vendor script and the split context are made after it.
  async warmUp() {
    await this.bundle(WARM_UP);
    await this.vendor();
    await this.bundle(WARM_UP, { split: true });
  }

  async build(text, split) {
    let ctx;
    try {
      ctx = await this.context(split);
    } catch (e) {
      throw new FigureError('library_unavailable', `esbuild did not start: ${String(e.message || e).split('\n')[0].slice(0, 160)}`);
    }
    this.current = text;
    this.refused = null;
    let result;
    try {
      result = await ctx.rebuild();
    } catch (e) {
      throw this.failure(e);
    } finally {
      this.current = null;
    }
    this.checkInputs(result);
    const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
    const map = result.outputFiles.find((f) => f.path.endsWith('.js.map'));
    const mapJson = map ? JSON.parse(map.text) : null;
    const snippetSource = mapJson ? mapJson.sources.findIndex((s) => s.includes(SNIPPET_NS)) : -1;
    return {
      code: js.text,
      lineOf: (genLine0, col0) => (mapJson && snippetSource >= 0 ? originalLine(mapJson, snippetSource, genLine0, col0) : null),
    };
  }

  // esbuild's errors: a refused import (its line from esbuild's location of the import), a
  // syntax error in the snippet (its line), anything else about the snippet (no default export).
  failure(e) {
    const errors = Array.isArray(e && e.errors) ? e.errors : [];
    const inSnippet = errors.find((m) => m.location && String(m.location.file).includes(SNIPPET_NS)) || null;
    const line = inSnippet && inSnippet.location.line > 0 ? inSnippet.location.line : undefined;
    if (this.refused) {
      return new FigureError('import_refused', `the snippet imports "${this.refused.module}", which the page does not provide`,
        { error_line: line, module: this.refused.module });
    }
    if (inSnippet) {
      const text = String(inSnippet.text).split('\n')[0].slice(0, 200);
      return new FigureError('snippet_error', `SyntaxError: ${text}`, { error_class: 'SyntaxError', error_line: line });
    }
    const first = errors[0];
    if (first && /No matching export|default/.test(first.text)) {
      return new FigureError('snippet_error', 'the snippet has no default export (a React component)', { error_class: 'SyntaxError' });
    }
    // Never quote a message about a file that is not the snippet's (it could be any file's text).
    return new FigureError('draw_failed', `the bundle failed (${errors.length} error${errors.length === 1 ? '' : 's'} outside the snippet)`);
  }

  async close() {
    this.closed = true;
    // What is under way ends first (each step then finds the bundler closed).
    await this.queue;
    if (this.vendorCode) await this.vendorCode.catch(() => {});
    const ctxs = [this.ctx, this.splitCtx];
    this.ctx = null;
    this.splitCtx = null;
    for (const ctx of ctxs) if (ctx) await ctx.dispose().catch(() => {});
    if (this.esbuild) await Promise.resolve(this.esbuild.stop()).catch(() => {});
  }
}
