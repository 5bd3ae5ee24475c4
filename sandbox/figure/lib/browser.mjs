// FigureBrowser: one warm headless Chromium driven by playwright-core, drawing plotly and bokeh
// figures with the installed packages' own JavaScript. Each library has a SlotPool (slots.mjs) of
// pages with its JavaScript loaded, kept ready while idle; a page draws several figures in turn,
// cleared and checked between them (slots.mjs says why that is safe), so back-to-back figures pay
// only for the draw and the screenshot, as spaced ones do. JavaScript snippets are code, not data:
// each gets a fresh context of its own (snippet_draw.mjs) in the same warm browser.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { FigureError } from './errors.mjs';
import { readFigure, DEFAULT_LIMITS } from './figure_file.mjs';
import { canvasFor, fitCanvas } from './canvas.mjs';
import { LIBRARIES, bokehWarmUp } from './libraries.mjs';
import { SlotPool } from './slots.mjs';
import { pngSize } from './png.mjs';
import { runtimePlotlyJs, runtimeBokehDir, DEFAULT_JS_MODULES } from './runtime.mjs';
import { writeOutput } from './output.mjs';
import { snippetLibraries, SNIPPET_MAX_BYTES } from './snippet.mjs';
import { drawSnippet } from './snippet_draw.mjs';
import { MuixBundler } from './muix_bundle.mjs';
import { ContextSpare } from './snippet_context.mjs';
import { canvasShot, canvasRefusedAhead, showPlot } from './canvas_capture.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const LAUNCHER = path.join(HERE, '..', 'chromium-launch.sh');

export const DEFAULT_OPTIONS = Object.freeze({
  chromium: '/usr/bin/chromium',
  plotlyJs: runtimePlotlyJs(),   // the runtime's plotly package's own plotly.js ('' : no plotly)
  bokehDir: runtimeBokehDir(),   // the runtime's bokeh package's BokehJS bundles ('' : no bokeh)
  tmpDir: null,           // private directory for this browser (made and removed here when null)
  uid: null,              // when set (we are root): Chromium runs as uid:gid with its own sandbox
  gid: null,
  chromiumSandbox: true,  // false adds --no-sandbox (only for machines without user namespaces)
  webgl: true,            // false: --disable-webgl, WebGL traces answer no_webgl
  spares: 2,              // pages per library kept ready (one draws while the other is cleared)
  pageReuse: 50,          // figures one page draws before it is replaced by a fresh one
  pageHeapMb: 192,        // a page whose V8 heap still holds more after its figure is cleared is replaced
  fastPng: true,          // zlib's fast level: 3x quicker on dense plots, 1.1-2x the bytes
  canvasCapture: true,    // a bokeh page whose canvases alone make its pixels: PNG from them (canvas_capture.mjs)
  maxHeapMb: 1024,        // V8 old-space cap of each page
  pageTimeoutMs: 30000,   // making a fresh page (launch excluded)
  limits: DEFAULT_LIMITS,
  jsModules: DEFAULT_JS_MODULES,  // the snippet libraries' node_modules ('' : no snippets)
  snippetMaxBytes: SNIPPET_MAX_BYTES,
  snippetSpare: true,     // one strict snippet context made ahead while idle (snippet_context.mjs)
  snippetPreload: true,   // ... with its library loaded during a run of one library (the same)
  // The layers, each switchable for tests only (renderer.mjs has no argument for either, so no
  // setting or request reaches them): tests/figure/hostile.test.mjs runs its attacks with one layer
  // at a time. browserNetworkRules false drops the browser-wide network flags (closed proxy, names
  // never resolve, WebRTC only through the proxy); pageRules false drops the page's own rules (its
  // Content-Security-Policy, the route, the prelude that removes WebRTC: page_prelude.mjs).
  browserNetworkRules: true,
  pageRules: true,
});

// Flags that work as root on Debian 12 (platform facts) plus network belt-and-braces: every
// request is aborted by the route before it leaves, the proxy is a closed port, names never resolve.
// WebRTC opens its own sockets (ICE: STUN and TURN over UDP and TCP, host candidates), which
// neither the page's policy nor the route sees: `disable_non_proxied_udp` keeps it off UDP and
// sends its TCP through the proxy, the closed port (measured with a listener on 127.0.0.1 and ::1:
// with the proxy alone its UDP still arrived; with this flag alone and no proxy, its TURN-TCP did).
export function chromiumArgs(opts) {
  const args = [
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    '--no-pings',
    '--deny-permission-prompts',
    `--js-flags=--max-old-space-size=${opts.maxHeapMb}`,
  ];
  if (opts.browserNetworkRules !== false) {
    args.push('--proxy-server=127.0.0.1:9', '--proxy-bypass-list=<-loopback>', '--host-resolver-rules=MAP * ~NOTFOUND',
      '--webrtc-ip-handling-policy=disable_non_proxied_udp');
  }
  if (!opts.webgl) args.push('--disable-webgl', '--disable-3d-apis');
  return args;
}

function shortMessage(e) {
  const m = String((e && e.message) || e).split('\n')[0];
  return m.length > 200 ? `${m.slice(0, 200)}...` : m;
}

export { writeOutput };

// Races `promise` against its timeout and a cancel: either one runs onAbort (which closes the page,
// stopping a draw still running) and rejects with its own code. register(abort | null) exposes the
// cancel while the race runs.
function abortable(promise, ms, onAbort, register) {
  let timer;
  let rejectAborted;
  const aborted = new Promise((_, reject) => { rejectAborted = reject; });
  const abort = (err) => {
    clearTimeout(timer);
    onAbort();
    rejectAborted(err);
  };
  timer = setTimeout(() => abort(new FigureError('timeout', `the job did not finish within ${ms} ms`)), ms);
  register(() => abort(new FigureError('cancelled', 'the job was cancelled')));
  return Promise.race([promise, aborted]).finally(() => {
    clearTimeout(timer);
    register(null);
  });
}

export class FigureBrowser {
  constructor(options = {}) {
    this.opts = { ...DEFAULT_OPTIONS, ...options };
    this.browser = null;
    this.pools = {};          // library name -> SlotPool (only for the libraries whose JS is here)
    this.versions = {};       // library name -> its version, read in a page
    this.closed = false;
    this.ownsTmp = false;
    this.disconnected = false;
    this.onDisconnect = () => {};
    this.cancelCurrent = null;  // set while a render runs: closes its page, answers `cancelled`
    this.plotlyUrl = this.opts.plotlyJs ? pathToFileURL(this.opts.plotlyJs).href : null;
    this.js = {};             // snippet library name -> {name, version, bundle} (snippet.mjs)
    this.muix = null;         // MuixBundler when MUI X is installed
    this.bundles = new Map(); // library -> its bundle's text (the bare page inlines it)
    this.contexts = new ContextSpare(this);
    this.muixVendorWrite = null;  // Promise of the MUI X vendor script's file
    this.muixVendorFile = null;   // ... its path, once written
    this.savedTmpdir = process.env.TMPDIR;
  }

  prepareDirs() {
    const o = this.opts;
    if (o.tmpDir) {
      const st = fs.lstatSync(o.tmpDir);
      if (!st.isDirectory() || st.uid !== process.getuid() || (st.mode & 0o022)) {
        throw new Error('tmp dir must be a directory of ours, not writable by others');
      }
      this.dir = o.tmpDir;
    } else {
      this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plotq-figure-'));
      this.ownsTmp = true;
    }
    fs.chmodSync(this.dir, 0o711);   // Chromium's uid may pass through, not list
    if (o.uid !== null) {
      // Chromium (another uid) must be able to reach its profile and home inside this dir.
      for (let d = path.dirname(path.resolve(this.dir)); ; d = path.dirname(d)) {
        if (!(fs.statSync(d).mode & 0o001)) throw new Error(`${d} is not searchable by uid ${o.uid} (mode o+x needed)`);
        if (d === path.dirname(d)) break;
      }
    }
    this.pagesDir = path.join(this.dir, 'pages');
    this.home = path.join(this.dir, 'home');
    // Chromium puts a Unix socket at <TMPDIR>/org.chromium.Chromium.XXXXXX/SingletonSocket and a
    // socket path has at most 107 bytes.
    if (this.home.length > 60) throw new Error(`private dir ${this.dir} is too long a path for Chromium's socket`);
    fs.mkdirSync(this.pagesDir, { mode: 0o711 });
    fs.mkdirSync(this.home, { mode: 0o700 });
    if (o.uid !== null) fs.chownSync(this.home, o.uid, o.gid);
    // Playwright makes Chromium's --user-data-dir in os.tmpdir(): keep it inside our private dir.
    process.env.TMPDIR = this.dir;
  }

  // The libraries this renderer draws: those whose JavaScript is readable (and, in this.js, the
  // snippet libraries that are installed). Nothing at all to draw is an error.
  libraries() {
    const o = this.opts;
    const have = [];
    if (o.plotlyJs) {
      fs.accessSync(o.plotlyJs, fs.constants.R_OK);
      have.push(LIBRARIES.plotly);
    }
    if (o.bokehDir) {
      for (const p of LIBRARIES.bokeh.scripts(o)) fs.accessSync(p, fs.constants.R_OK);
      have.push(LIBRARIES.bokeh);
    }
    this.js = snippetLibraries(o.jsModules);
    if (!have.length && !Object.keys(this.js).length) throw new Error('nothing to draw: no plotly.js, no BokehJS and no snippet library');
    return have;
  }

  async start() {
    const o = this.opts;
    const libs = this.libraries();
    this.prepareDirs();
    const env = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: this.home,
      TMPDIR: this.home,
      XDG_CONFIG_HOME: path.join(this.home, '.config'),
      XDG_CACHE_HOME: path.join(this.home, '.cache'),
      LANG: 'C.UTF-8',
      PLOTQ_FIGURE_CHROMIUM: o.chromium,
      PLOTQ_FIGURE_UID: o.uid === null ? '' : String(o.uid),
      PLOTQ_FIGURE_GID: o.gid === null ? '' : String(o.gid),
    };
    this.browser = await chromium.launch({
      executablePath: LAUNCHER,
      headless: true,
      chromiumSandbox: o.chromiumSandbox,
      args: chromiumArgs(o),
      env,
      timeout: 30000,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    this.browser.on('disconnected', () => {
      this.disconnected = true;
      this.onDisconnect();
    });
    // Each pool fills one page at a time (every page draws a built-in figure first: warmSlot);
    // the first page of each is waited for.
    for (const lib of libs) this.pools[lib.name] = new SlotPool(this, lib, o.spares, o.pageReuse, o.pageHeapMb);
    await Promise.all(Object.values(this.pools).map((pool) => pool.take().then((s) => {
      this.versions[pool.lib.name] = s.version;
      pool.busy--;
      pool.offer(s);
    })));
    for (const pool of Object.values(this.pools)) pool.refill();
    if (this.js.muix) {
      // The first bundle parses all of React and MUI: done now, in the background.
      this.muix = new MuixBundler(o.jsModules);
      this.muix.warmUp().then(() => this.muixVendor())
        .catch((e) => { if (!this.closed) process.stderr.write(`figure renderer: muix warm-up failed: ${shortMessage(e)}\n`); });
    }
    if (Object.keys(this.js).length) this.contexts.refill();
    const js = Object.fromEntries(Object.values(this.js).map((l) => [l.name, l.version]));
    return { chromium: this.browser.version(), plotly: this.versions.plotly || null, bokeh: this.versions.bokeh || null, js };
  }

  // Draws the library's built-in figure on a new page and screenshots it (thrown away): the first
  // draw and screenshot of a page pay one-off costs. A failure is only logged: the first real
  // figure pays instead.
  async warmSlot(slot) {
    try {
      const lib = slot.lib;
      const text = lib.warmUp || bokehWarmUp(slot.version);
      if (lib.name === 'plotly') await this.drawPlotly(slot, text, canvasFor(undefined), {}, () => false);
      else await this.drawBokeh(slot, text, JSON.parse(text), {}, () => false);
    } catch (e) {
      if (!this.closed) process.stderr.write(`figure renderer: ${slot.lib.name} warm-up failed: ${shortMessage(e)}\n`);
    }
  }

  // job: {figure, out, timeoutMs, library?}; hooks.drawing() runs when the page begins the draw;
  // hooks.inspect(page) runs after the screenshot (tests only; an inspected page is never reused).
  // Returns {width, height, bytes, library, blocked_requests, csp_violations, reused, phases};
  // throws FigureError.
  async render(job, hooks = {}) {
    if (job.snippet) return this.renderSnippet(job, hooks);
    let cancelled = false;
    let slot = null;
    let pool = null;
    let ok = false;
    const work = (async () => {
      try {
        const phases = {};
        let t = performance.now();
        const lap = (name) => { const now = performance.now(); phases[name] = Math.round(now - t); t = now; };
        const { text, figure, lib } = readFigure(job.figure, this.opts.limits, job.library);
        pool = this.pools[lib.name];
        if (!pool) throw new FigureError('library_unavailable', `this renderer has no ${lib.name} JavaScript`);
        const canvas = lib.name === 'plotly' ? canvasFor(figure.layout) : null;
        lap('read');
        try {
          slot = await pool.take();
        } catch (e) {
          throw new FigureError('browser_failed', `no page: ${shortMessage(e)}`);
        }
        const reused = slot.uses > 0;
        lap('page');
        if (cancelled) throw new FigureError('timeout', 'cancelled');
        if (hooks.drawing) hooks.drawing();
        const d = lib.name === 'plotly'
          ? await this.drawPlotly(slot, text, canvas, hooks, () => cancelled, lap)
          : await this.drawBokeh(slot, text, figure, hooks, () => cancelled, lap);
        if (cancelled) throw new FigureError('timeout', 'cancelled');
        writeOutput(job.out, d.png);
        lap('write');
        ok = !hooks.inspect;
        return {
          width: d.width, height: d.height, bytes: d.png.length, library: lib.name,
          blocked_requests: slot.blocked, csp_violations: d.cspViolations, reused, phases,
          ...(d.capture ? { capture: d.capture } : {}),
        };
      } finally {
        // Clear or close the page after the answer is out (setImmediate runs after the caller's write).
        const s = slot, p = pool, reusable = ok && !cancelled;
        if (s && p) setImmediate(() => p.give(s, reusable));
      }
    })();
    work.catch(() => {});
    return abortable(work, job.timeoutMs, () => {
      cancelled = true;
      if (slot) slot.ctx.close().catch(() => {});   // stops a draw that is still running
    }, (abort) => { this.cancelCurrent = abort; });
  }

  // job: {snippet, out, timeoutMs, library, theme, bare}. One budget for all of it: at the deadline
  // (or a cancel) the job's context is closed, which stops its page whatever it is doing.
  renderSnippet(job, hooks = {}) {
    const st = { cancelled: false, close: null, deadline: performance.now() + job.timeoutMs };
    const work = drawSnippet(this, job, st, hooks);
    work.catch(() => {});
    return abortable(work, job.timeoutMs, () => {
      st.cancelled = true;
      if (st.close) st.close();   // stops the page (even in a loop) and closes its context
    }, (abort) => { this.cancelCurrent = abort; });
  }

  // The MUI X vendor script (muix_bundle.mjs) as a file the pages load, written once.
  muixVendor() {
    if (!this.muixVendorWrite) {
      this.muixVendorWrite = this.muix.vendor().then((code) => {
        if (this.closed) throw new Error('the renderer is closing');
        const f = path.join(this.pagesDir, 'muix-vendor.js');
        fs.writeFileSync(f, code, { mode: 0o644, flag: 'wx' });
        this.muixVendorFile = f;
        return f;
      });
    }
    return this.muixVendorWrite;
  }

  // The script a strict page of this library loads before the snippet's own, when a spare can
  // load it ahead (snippet_context.mjs): a UMD bundle, MUI X's vendor script once written.
  // Library keys: a MUI X snippet bundled whole is 'muix-whole', which has none.
  preloadBundle(library) {
    if (library === 'muix') return this.muixVendorFile || null;
    return (this.js[library] && this.js[library].bundle) || null;
  }

  // The text of a snippet library's bundle (the bare page inlines it), read once.
  bundleSource(name) {
    if (!this.bundles.has(name)) this.bundles.set(name, fs.readFileSync(this.js[name].bundle, 'utf8'));
    return this.bundles.get(name);
  }

  // Abandons the render in progress (its page is closed; it answers `cancelled`). False when none runs.
  cancel() {
    if (!this.cancelCurrent) return false;
    this.cancelCurrent();
    return true;
  }

  failure(slot, isCancelled) {
    return (e, what) => {
      if (isCancelled()) return new FigureError('timeout', 'cancelled');
      if (this.disconnected) return new FigureError('browser_failed', 'the browser went away');
      if (slot.crashed) return new FigureError('draw_failed', `the page crashed while ${what}`);
      return new FigureError('draw_failed', `${what} failed: ${shortMessage(e)}`);
    };
  }

  // Screenshots the page's top-left cssWidth x cssHeight at `clipScale` and checks the PNG size.
  // `whole`: the viewport is that area at the device scale (bokeh's pages, whose CSS size is whole),
  // so the page is copied as it is, without a clip: a clip makes Chromium lay the view out anew
  // for the capture. Should the copy come out off the canvas, the clipped capture is taken instead.
  async shoot(slot, canvas, clipScale, failed, lap, whole = false) {
    const { target } = canvas;
    const capture = async (clip) => {
      try {
        const shot = await slot.cdp.send('Page.captureScreenshot', {
          format: 'png',
          ...(clip ? { clip: { x: 0, y: 0, width: canvas.cssWidth, height: canvas.cssHeight, scale: clipScale } } : {}),
          captureBeyondViewport: false,
          optimizeForSpeed: this.opts.fastPng,
        });
        return Buffer.from(shot.data, 'base64');
      } catch (e) {
        throw failed(e, 'the screenshot');
      }
    };
    const exact = (png) => {
      const s = pngSize(png);
      return s && s.width === target.width && s.height === target.height ? s : null;
    };
    const wholeViewport = whole && Number.isInteger(canvas.cssWidth) && Number.isInteger(canvas.cssHeight);
    let png = await capture(!wholeViewport);
    let size = exact(png);
    if (!size && wholeViewport) {
      png = await capture(true);
      size = exact(png);
    }
    lap('shot');
    if (!size) {
      size = pngSize(png);
      throw new FigureError('size_mismatch', `screenshot is ${size ? `${size.width}x${size.height}` : 'not a PNG'}, want ${target.width}x${target.height}`);
    }
    return { png, size };
  }

  // plotly draws vectors: the page stays at device scale 1 and the screenshot re-rasterises at the
  // clip's (fractional) scale, so any CSS size gives exactly the target's pixels.
  async drawPlotly(slot, text, canvas, hooks, isCancelled, lap = () => {}) {
    const { cssWidth, cssHeight, scale } = canvas;
    const failed = this.failure(slot, isCancelled);
    let r;
    try {
      const viewport = { width: Math.ceil(cssWidth), height: Math.ceil(cssHeight) };
      if (viewport.width !== slot.viewport.width || viewport.height !== slot.viewport.height) {
        await slot.page.setViewportSize(viewport);
        slot.viewport = viewport;
      }
      r = await slot.page.evaluate(LIBRARIES.plotly.draw, { text, width: cssWidth, height: cssHeight, config: LIBRARIES.plotly.staticConfig });
    } catch (e) {
      throw failed(e, 'drawing');
    }
    lap('draw');
    if (r.noWebgl) throw new FigureError('no_webgl', 'a WebGL trace could not draw (plotly showed "WebGL is not supported")');
    const { png, size } = await this.shoot(slot, canvas, scale, failed, lap);
    if (hooks.inspect) await hooks.inspect(slot.page);
    return { png, width: size.width, height: size.height, cspViolations: r.csp };
  }

  // bokeh draws its plots on canvases at the device pixel ratio, so the page itself runs at the
  // device scale (CDP metrics override) and the screenshot is taken at clip scale 1. The scale
  // comes from the root's declared size, or (a layout) from a first draw that measures it.
  async drawBokeh(slot, text, figure, hooks, isCancelled, lap = () => {}) {
    const failed = this.failure(slot, isCancelled);
    const settleMs = 10000;
    // Only when it changes: a new override lays the page out again.
    const metrics = async (width, height, deviceScaleFactor) => {
      const m = { width: Math.ceil(width), height: Math.ceil(height), deviceScaleFactor, mobile: false };
      if (slot.metrics && JSON.stringify(slot.metrics) === JSON.stringify(m)) return;
      await slot.cdp.send('Emulation.setDeviceMetricsOverride', m);
      slot.metrics = m;
    };
    let size = LIBRARIES.bokeh.declaredSize(figure);
    let r, canvas, hidden = false;
    const draw = async (args) => {
      try {
        return await slot.page.evaluate(LIBRARIES.bokeh.draw, { text, settleMs, ...args });
      } catch (e) {
        throw failed(e, 'drawing');
      }
    };
    if (!size) {
      await metrics(MAX_MEASURE, MAX_MEASURE, 1).catch((e) => { throw failed(e, 'drawing'); });
      r = await draw({});
      size = { width: r.width, height: r.height };
      await slot.page.evaluate(LIBRARIES.bokeh.reset).catch((e) => { throw failed(e, 'drawing'); });
      lap('measure');
    }
    canvas = fitCanvas(size.width, size.height);
    await metrics(canvas.cssWidth, canvas.cssHeight, canvas.scale).catch((e) => { throw failed(e, 'drawing'); });
    // Drawn hidden when the canvas capture may take it (canvas_capture.mjs says when).
    const capture = { how: 'screenshot', why: this.opts.canvasCapture ? canvasRefusedAhead(canvas, text) : null };
    hidden = this.opts.canvasCapture && !capture.why;
    r = await draw({ x: canvas.offsetX, y: canvas.offsetY, hidden });
    lap('draw');
    let shot = hidden ? await canvasShot(slot.page, canvas, failed, capture) : null;
    if (shot) lap('shot');
    // Refused (or shown for a test's look): the plot is shown, and the screenshot draws its frame.
    if (hidden && (!shot || hooks.inspect)) await showPlot(slot.page).catch((e) => { throw failed(e, 'drawing'); });
    if (!shot) shot = await this.shoot(slot, canvas, 1, failed, lap, true);
    if (hooks.inspect) await hooks.inspect(slot.page);
    return { png: shot.png, width: shot.size.width, height: shot.size.height, cspViolations: r.csp,
      capture: capture.why ? `${capture.how} (${capture.why})` : capture.how };
  }

  async close() {
    this.closed = true;
    await Promise.all(Object.values(this.pools).map((p) => p.close()));
    if (this.muix) await this.muix.close();
    await this.contexts.close();
    if (this.browser) await this.browser.close().catch(() => {});
    if (this.ownsTmp && this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    if (this.savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = this.savedTmpdir;
  }
}

// A layout of unknown size is measured in a viewport this large (the canvas rule's largest side).
const MAX_MEASURE = 6400;
