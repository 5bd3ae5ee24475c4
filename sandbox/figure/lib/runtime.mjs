// Where the runtime's own JavaScript is: the sandbox's Python runtime (runtime/venv, built from
// runtime/requirements.lock) ships plotly.js inside the plotly package and BokehJS inside bokeh's,
// so the page draws a figure with the JavaScript of the very package that wrote it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PROJECT_ROOT = path.resolve(HERE, '..', '..', '..');
export const DEFAULT_VENV = path.join(PROJECT_ROOT, 'runtime', 'venv');
// The JavaScript snippet libraries (runtime/js/package-lock.json, installed by tools/setup.sh).
export const DEFAULT_JS_MODULES = path.join(PROJECT_ROOT, 'runtime', 'js', 'node_modules');

// <venv>/lib/python3.X/site-packages, or null when there is none.
export function sitePackages(venv = DEFAULT_VENV) {
  let names;
  try {
    names = fs.readdirSync(path.join(venv, 'lib'));
  } catch {
    return null;
  }
  const found = names.filter((n) => /^python3\.\d+$/.test(n)).sort()
    .map((n) => path.join(venv, 'lib', n, 'site-packages'))
    .filter((p) => fs.existsSync(p));
  return found.length ? found[found.length - 1] : null;
}

// The plotly.js bundle of the runtime's plotly package.
export function runtimePlotlyJs(venv = DEFAULT_VENV) {
  const site = sitePackages(venv);
  return site ? path.join(site, 'plotly', 'package_data', 'plotly.min.js') : null;
}

// The directory holding the runtime's BokehJS bundles (bokeh.min.js, bokeh-gl.min.js, ...).
export function runtimeBokehDir(venv = DEFAULT_VENV) {
  const site = sitePackages(venv);
  return site ? path.join(site, 'bokeh', 'server', 'static', 'js') : null;
}
