// The line protocol: one JSON object per line each way.
//   request:  {"id": <string|number>, "figure": "/abs/plot-light.json", "out": "/abs/plot-light.png",
//              "timeout_ms": <1..600000, default 30000>, "library": <"plotly"|"bokeh", optional>,
//              "progress": <boolean, default false>}
//            without `library` the figure's shape names it (the two share no top-level key); with
//            it, a figure of the other shape is figure_invalid
//   or a JavaScript snippet (exactly one of figure and snippet):
//             {"id", "snippet": "/abs/plot.js" (.js or .tsx), "out", "timeout_ms",
//              "library": <"chartjs"|"d3"|"echarts"|"highcharts"|"muix", required>,
//              "theme": <"light"|"dark", required>, "bare": <boolean, default false>}
//   answer:   {"id", "ok": true, "width", "height", "bytes", "library", "reused", "ms",
//              "blocked_requests", "csp_violations", "phases"}
//          a snippet's: {"id", "ok": true, "width", "height", "bytes", "library", "orientation",
//              "ready": "signal"|"settled"|"deadline", "blocked_requests", "csp_violations", "popups",
//              "ms", "phases"}
//          or {"id", "ok": false, "code": <errors.mjs CODES>, "detail": "...", "ms"}
//             (snippet_error adds "error_class" and, when known, "error_line"; import_refused
//              adds "error_line" and "module")
//   progress: {"id", "drawing": true} once the figure's page begins to draw it, when the request
//              asked for progress (not an answer: the answer follows)
//   cancel:   {"cancel": <id>}  (handled at once, not queued; no answer of its own: the job with
//              that id answers {"id", "ok": false, "code": "cancelled"}, now or when it comes up;
//              an id that already answered is ignored)
//   first line after start: {"ready": true, "protocol": 1, "pid", "chromium", "plotly", "bokeh",
//                            "js": {"chartjs": "4.4.7", ...}, ...}
//                       or {"ready": false, "code": "browser_failed", "detail"}
import path from 'node:path';
import { FigureError } from './errors.mjs';

export const PROTOCOL = 1;
export const MAX_LINE = 64 * 1024;
export const DEFAULT_TIMEOUT_MS = 30000;
export const MAX_TIMEOUT_MS = 600000;
const FIELDS = new Set(['id', 'figure', 'out', 'timeout_ms', 'library', 'progress']);
const SNIPPET_FIELDS = new Set(['id', 'snippet', 'out', 'timeout_ms', 'library', 'theme', 'bare']);
const LIBRARY_NAMES = new Set(['plotly', 'bokeh']);
export const SNIPPET_LIBRARY_NAMES = Object.freeze(['chartjs', 'd3', 'echarts', 'highcharts', 'muix']);

function absPath(v, name) {
  if (typeof v !== 'string' || v.length === 0 || v.length > 4096 || v.includes('\0') || !path.isAbsolute(v)) {
    throw new FigureError('request_invalid', `${name} must be an absolute path`);
  }
  return path.normalize(v);
}

// A cancel line's id, or undefined when the line is not a cancel (then it is parsed as a request).
export function parseCancel(line) {
  if (!line.startsWith('{"cancel"')) return undefined;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (msg === null || typeof msg !== 'object' || Object.keys(msg).length !== 1) return undefined;
  const id = msg.cancel;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
}

// Returns {id, job} or throws FigureError('request_invalid') carrying the id when one was readable.
export function parseRequest(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    throw new FigureError('request_invalid', 'the request is not JSON');
  }
  if (req === null || typeof req !== 'object' || Array.isArray(req)) {
    throw new FigureError('request_invalid', 'the request is not an object');
  }
  const id = typeof req.id === 'string' || (typeof req.id === 'number' && Number.isFinite(req.id)) ? req.id : null;
  try {
    if (id === null) throw new FigureError('request_invalid', 'id must be a string or a number');
    if ('figure' in req && 'snippet' in req) throw new FigureError('request_invalid', 'a request has a figure or a snippet, not both');
    const fields = 'snippet' in req ? SNIPPET_FIELDS : FIELDS;
    for (const k of Object.keys(req)) if (!fields.has(k)) throw new FigureError('request_invalid', `unknown field ${JSON.stringify(k).slice(0, 40)}`);
    const out = absPath(req.out, 'out');
    let timeoutMs = DEFAULT_TIMEOUT_MS;
    if (req.timeout_ms !== undefined) {
      if (typeof req.timeout_ms !== 'number' || !(req.timeout_ms >= 1 && req.timeout_ms <= MAX_TIMEOUT_MS)) {
        throw new FigureError('request_invalid', `timeout_ms must be a number in [1, ${MAX_TIMEOUT_MS}]`);
      }
      timeoutMs = req.timeout_ms;
    }
    if ('snippet' in req) return { id, job: snippetJob(req, out, timeoutMs) };
    const figure = absPath(req.figure, 'figure');
    const job = { figure, out, timeoutMs };
    if (req.library !== undefined) {
      if (!LIBRARY_NAMES.has(req.library)) throw new FigureError('request_invalid', 'library must be "plotly" or "bokeh"');
      job.library = req.library;
    }
    if (req.progress !== undefined && typeof req.progress !== 'boolean') throw new FigureError('request_invalid', 'progress must be a boolean');
    if (req.progress === true) job.progress = true;
    return { id, job };
  } catch (e) {
    e.id = id;
    throw e;
  }
}

function snippetJob(req, out, timeoutMs) {
  const snippet = absPath(req.snippet, 'snippet');
  if (!/\.(js|tsx)$/.test(snippet)) throw new FigureError('request_invalid', 'snippet must be a .js or .tsx file');
  if (!SNIPPET_LIBRARY_NAMES.includes(req.library)) {
    throw new FigureError('request_invalid', `a snippet's library must be one of ${SNIPPET_LIBRARY_NAMES.join(', ')}`);
  }
  if (req.theme !== 'light' && req.theme !== 'dark') throw new FigureError('request_invalid', 'theme must be "light" or "dark"');
  if (req.bare !== undefined && typeof req.bare !== 'boolean') throw new FigureError('request_invalid', 'bare must be a boolean');
  return { snippet, out, timeoutMs, library: req.library, theme: req.theme, bare: req.bare === true };
}

// Splits a byte stream into lines, refusing (and skipping) lines longer than MAX_LINE.
export class LineSplitter {
  constructor(onLine, onOverlong) {
    this.buf = '';
    this.skipping = false;
    this.onLine = onLine;
    this.onOverlong = onOverlong;
  }

  push(chunk) {
    this.buf += chunk;
    for (;;) {
      const nl = this.buf.indexOf('\n');
      if (nl < 0) break;
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (this.skipping) { this.skipping = false; continue; }
      if (line.length > MAX_LINE) { this.onOverlong(); continue; }
      if (line.trim()) this.onLine(line);
    }
    if (this.buf.length > MAX_LINE) {
      this.buf = '';
      if (!this.skipping) this.onOverlong();
      this.skipping = true;
    }
  }
}
