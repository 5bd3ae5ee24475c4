#!/usr/bin/env node
// plotq figure renderer: a warm headless Chromium that turns plotly figure JSON and bokeh json_item
// files, and JavaScript snippets (chart.js, d3, echarts, highcharts, MUI X), into PNGs of exactly
// 3200x1800 or 2400x2400. Speaks line-delimited JSON on stdin/stdout (lib/protocol.mjs);
// nothing else is ever written to stdout. Jobs run one at a time (lib/slots.mjs: which page draws them).
// Exits 0 when stdin closes, 70 when the browser dies, 1 when it cannot start.
import { FigureBrowser, DEFAULT_OPTIONS } from './lib/browser.mjs';
import { DEFAULT_LIMITS } from './lib/figure_file.mjs';
import { FigureError } from './lib/errors.mjs';
import { PROTOCOL, parseRequest, parseCancel, LineSplitter } from './lib/protocol.mjs';

const USAGE = `usage: renderer.mjs [--chromium=PATH] [--plotly=PATH|--no-plotly] [--bokeh=DIR|--no-bokeh]
       [--js-modules=DIR|--no-js] [--tmp-dir=DIR] [--uid=N --gid=N] [--no-chromium-sandbox] [--no-webgl] [--no-canvas-capture]
       [--spares=N] [--page-reuse=N] [--page-heap-mb=N] [--max-bytes=N] [--max-depth=N] [--max-heap-mb=N]
  --plotly and --bokeh default to the runtime venv's own plotly.js and BokehJS, --js-modules to
  runtime/js/node_modules (the snippet libraries).`;

function parseArgs(argv) {
  const o = { ...DEFAULT_OPTIONS, limits: { ...DEFAULT_LIMITS } };
  const int = (v, name) => {
    if (!/^[0-9]+$/.test(v)) throw new Error(`${name} wants a non-negative integer`);
    return Number(v);
  };
  for (const a of argv) {
    const [k, v] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, null];
    switch (k) {
      case '--chromium': o.chromium = v; break;
      case '--plotly': o.plotlyJs = v; break;
      case '--no-plotly': o.plotlyJs = ''; break;
      case '--bokeh': o.bokehDir = v; break;
      case '--no-bokeh': o.bokehDir = ''; break;
      case '--js-modules': o.jsModules = v; break;
      case '--no-js': o.jsModules = ''; break;
      case '--page-reuse': o.pageReuse = Math.max(1, int(v, k)); break;
      case '--page-heap-mb': o.pageHeapMb = int(v, k); break;
      case '--tmp-dir': o.tmpDir = v; break;
      case '--uid': o.uid = int(v, k); break;
      case '--gid': o.gid = int(v, k); break;
      case '--no-chromium-sandbox': o.chromiumSandbox = false; break;
      case '--no-webgl': o.webgl = false; break;
      case '--no-canvas-capture': o.canvasCapture = false; break;
      case '--spares': o.spares = int(v, k); break;
      case '--max-bytes': o.limits.maxBytes = int(v, k); break;
      case '--max-depth': o.limits.maxDepth = int(v, k); break;
      case '--max-heap-mb': o.maxHeapMb = int(v, k); break;
      default: throw new Error(`unknown argument ${a}\n${USAGE}`);
    }
  }
  if (o.uid !== null && o.gid === null) o.gid = o.uid;
  return o;
}

function send(obj) {
  process.stdout.write(`${JSON.stringify(obj)}\n`);   // pipes are synchronous on Linux
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
  const fb = new FigureBrowser(opts);
  let info;
  try {
    info = await fb.start();
  } catch (e) {
    send({ ready: false, code: 'browser_failed', detail: String(e.message || e).split('\n')[0].slice(0, 300) });
    await fb.close();
    process.exit(1);
  }
  let closing = false;
  const shutdown = async (code) => {
    if (closing) return;
    closing = true;
    await fb.close();
    process.exit(code);
  };
  fb.onDisconnect = () => { if (!closing) { process.stderr.write('figure renderer: the browser went away\n'); queue = queue.then(() => shutdown(70)); } };
  send({
    ready: true, protocol: PROTOCOL, pid: process.pid, chromium: info.chromium, plotly: info.plotly, bokeh: info.bokeh,
    js: info.js, chromium_uid: opts.uid, chromium_sandbox: opts.chromiumSandbox, webgl: opts.webgl,
  });

  // One job at a time, in arrival order. A cancel is handled as soon as its line is read: the
  // running job's page is closed at once; a job still queued answers `cancelled` when it comes up.
  let queue = Promise.resolve();
  let current = null;               // id of the job being rendered
  const cancelled = new Set();      // ids cancelled before they came up (bounded: ids are echoed once)
  const cancel = (id) => {
    if (current !== null && current === id && fb.cancel()) return;
    cancelled.add(id);
    if (cancelled.size > 64) cancelled.delete(cancelled.values().next().value);
  };
  const handle = async (line) => {
    const t0 = performance.now();
    const ms = () => Math.round(performance.now() - t0);
    let id = null;
    try {
      const req = parseRequest(line);
      id = req.id;
      if (cancelled.delete(id)) throw new FigureError('cancelled', 'the job was cancelled');
      current = id;
      const hooks = req.job.progress ? { drawing: () => send({ id, drawing: true }) } : {};
      const r = await fb.render(req.job, hooks).finally(() => { current = null; });
      send({ id, ok: true, ...r, ms: ms() });
    } catch (e) {
      if (e instanceof FigureError) {
        send({ id: e.id !== undefined ? e.id : id, ok: false, code: e.code, detail: e.detail, ...e.extra, ms: ms() });
      } else {
        send({ id, ok: false, code: 'browser_failed', detail: String(e.message || e).split('\n')[0].slice(0, 300), ms: ms() });
      }
    }
  };
  const splitter = new LineSplitter(
    (line) => {
      const cancelId = parseCancel(line);
      if (cancelId !== undefined) cancel(cancelId);
      else queue = queue.then(() => handle(line));
    },
    () => { queue = queue.then(() => send({ id: null, ok: false, code: 'request_invalid', detail: 'request line too long' })); },
  );
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => splitter.push(chunk));
  process.stdin.on('end', () => { queue = queue.then(() => shutdown(0)); });
  process.on('SIGTERM', () => { queue = queue.then(() => shutdown(0)); });
}

main();
