// FigureBrowser: one warm headless Chromium driven by playwright-core, drawing one figure per fresh
// browser context. While idle it keeps spare contexts whose page has plotly.js loaded (a fresh
// page costs ~1.2 s, mostly plotly's own start-up), so a job pays only for draw + screenshot.
// No context ever serves two jobs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { FigureError } from './errors.mjs';
import { readFigure, DEFAULT_LIMITS } from './figure_file.mjs';
import { canvasFor, DEFAULT_CSS } from './canvas.mjs';
import { newNonce, pageHtml } from './page.mjs';
import { pngSize } from './png.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const LAUNCHER = path.join(HERE, '..', 'chromium-launch.sh');

export const DEFAULT_OPTIONS = Object.freeze({
  chromium: '/usr/bin/chromium',
  plotlyJs: '/usr/share/python3-plotly/plotly.js',
  tmpDir: null,           // private directory for this browser (made and removed here when null)
  uid: null,              // when set (we are root): Chromium runs as uid:gid with its own sandbox
  gid: null,
  chromiumSandbox: true,  // false adds --no-sandbox (only for machines without user namespaces)
  webgl: true,            // false: --disable-webgl, WebGL traces answer no_webgl
  spares: 2,              // fresh pages with plotly loaded kept while idle (light + dark of one job)
  fastPng: true,          // zlib's fast level: 3x quicker on dense plots, 1.1-2x the bytes
  maxHeapMb: 1024,        // V8 old-space cap of each page
  pageTimeoutMs: 30000,   // making a fresh page (launch excluded)
  limits: DEFAULT_LIMITS,
});

// Flags that work as root on Debian 12 (platform facts) plus network belt-and-braces: every
// request is aborted by the route before it leaves, the proxy is a closed port, names never resolve.
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
    '--proxy-server=127.0.0.1:9',
    '--proxy-bypass-list=<-loopback>',
    '--host-resolver-rules=MAP * ~NOTFOUND',
    '--deny-permission-prompts',
    `--js-flags=--max-old-space-size=${opts.maxHeapMb}`,
  ];
  if (!opts.webgl) args.push('--disable-webgl', '--disable-3d-apis');
  return args;
}

const WARM_UP_FIGURE = JSON.stringify({ data: [{ type: 'scatter', x: [0, 1, 2], y: [1, 0, 2] }], layout: { title: { text: 'warm-up' } } });

const STATIC_CONFIG = Object.freeze({
  staticPlot: true, displayModeBar: false, displaylogo: false, responsive: false, showTips: false,
  showLink: false, sendData: false, showEditInChartStudio: false, editable: false, scrollZoom: false,
  doubleClick: false, showAxisDragHandles: false, plotGlPixelRatio: 1,
});

// Runs inside the page. The figure arrives as a string and is parsed as JSON: data, never code.
// The figure's own config is not applied (ours is fixed); frames are not drawn.
async function drawInPage({ text, width, height, config }) {
  const fig = JSON.parse(text);
  const layout = fig.layout || {};
  layout.width = width;
  layout.height = height;
  layout.autosize = false;
  const el = document.getElementById('plot');
  el.style.width = `${width}px`;
  el.style.height = `${height}px`;
  await Plotly.newPlot(el, fig.data, layout, config);
  if (document.querySelector('.no-webgl')) return { noWebgl: true, csp: window.__plotqCsp.slice() };
  await document.fonts.ready;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return { noWebgl: false, csp: window.__plotqCsp.slice() };
}

function shortMessage(e) {
  const m = String((e && e.message) || e).split('\n')[0];
  return m.length > 200 ? `${m.slice(0, 200)}...` : m;
}

// Writes the PNG next to `out` under a fresh name (O_EXCL|O_NOFOLLOW) and renames it into place:
// never a partial file, never through a link the plot step planted.
export function writeOutput(out, buf) {
  const tmp = path.join(path.dirname(out), `.${path.basename(out)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  let fd;
  try {
    const c = fs.constants;
    fd = fs.openSync(tmp, c.O_WRONLY | c.O_CREAT | c.O_EXCL | c.O_NOFOLLOW, 0o644);
  } catch (e) {
    throw new FigureError('output_failed', `cannot create the PNG (${e.code})`);
  }
  try {
    for (let off = 0; off < buf.length;) off += fs.writeSync(fd, buf, off, buf.length - off);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, out);
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw new FigureError('output_failed', `cannot write the PNG (${e.code})`);
  }
}

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
  timer = setTimeout(() => abort(new FigureError('timeout', `the figure did not render within ${ms} ms`)), ms);
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
    this.spares = [];         // Promise<Slot>s of fresh pages, oldest first
    this.filling = false;     // one spare is being made (they are made one at a time)
    this.closed = false;
    this.ownsTmp = false;
    this.disconnected = false;
    this.onDisconnect = () => {};
    this.cancelCurrent = null;  // set while a render runs: closes its page, answers `cancelled`
    this.plotlyUrl = pathToFileURL(this.opts.plotlyJs).href;
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

  async start() {
    const o = this.opts;
    fs.accessSync(o.plotlyJs, fs.constants.R_OK);
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
    // Warm-up: the first draw and screenshot of a browser's life pay one-off costs (~0.5 s).
    // Pay them here on a built-in figure, in a page that is then thrown away; the first spare page
    // is made at the same time (two cores).
    const first = this.newSlot();
    const second = o.spares > 0 ? this.newSlot() : null;
    if (second) second.catch(() => {});
    let info;
    const slot = await first;
    try {
      info = { chromium: this.browser.version(), plotly: slot.plotlyVersion };
      await this.draw(slot, WARM_UP_FIGURE, canvasFor(undefined), {}, () => false);
    } finally {
      await this.retire(slot);
    }
    if (second) {
      this.spares.push(second);
      await second;
    }
    this.refill();
    return info;
  }

  async newSlot() {
    const nonce = newNonce();
    const file = path.join(this.pagesDir, `${crypto.randomUUID()}.html`);
    fs.writeFileSync(file, pageHtml(nonce, this.plotlyUrl), { mode: 0o644, flag: 'wx' });
    const pageUrl = pathToFileURL(file).href;
    const ctx = await this.browser.newContext({
      viewport: { ...DEFAULT_CSS },
      deviceScaleFactor: 1,      // the device scale comes from the screenshot's clip scale
      serviceWorkers: 'block',
      acceptDownloads: false,
      bypassCSP: false,
      javaScriptEnabled: true,
    });
    const slot = { ctx, page: null, cdp: null, blocked: 0, crashed: false, plotlyVersion: null };
    try {
      await ctx.route('**/*', (route) => {
        const url = route.request().url();
        if (url === pageUrl || url === this.plotlyUrl) return route.continue();
        slot.blocked++;
        return route.abort('blockedbyclient');
      });
      slot.page = await ctx.newPage();
      slot.page.on('crash', () => { slot.crashed = true; });
      await slot.page.goto(pageUrl, { waitUntil: 'load', timeout: this.opts.pageTimeoutMs });
      slot.plotlyVersion = await slot.page.evaluate(() => (typeof Plotly === 'object' ? Plotly.version : null));
      if (!slot.plotlyVersion) throw new Error('plotly.js did not load');
      slot.cdp = await ctx.newCDPSession(slot.page);
      return slot;
    } catch (e) {
      await ctx.close().catch(() => {});
      throw e;
    } finally {
      fs.rmSync(file, { force: true });
    }
  }

  async takeSlot() {
    const pending = this.spares.shift();
    try {
      return await (pending || this.newSlot());
    } catch (e) {
      // A spare that failed (e.g. it was made just before a crash) gets one fresh try.
      if (pending && !this.disconnected) {
        try { return await this.newSlot(); } catch (e2) { e = e2; }
      }
      throw new FigureError('browser_failed', `no page: ${shortMessage(e)}`);
    }
  }

  // Tops the spares up, one page at a time (each costs ~1 s of CPU, mostly plotly.js starting).
  refill() {
    if (this.filling || this.disconnected || this.closed || this.spares.length >= this.opts.spares) return;
    this.filling = true;
    const p = this.newSlot();
    this.spares.push(p);
    p.catch(() => {}).finally(() => {
      this.filling = false;
      this.refill();
    });
  }

  async retire(slot) {
    await slot.ctx.close().catch(() => {});
  }

  // job: {figure, out, timeoutMs}; hooks.inspect(page) runs after the screenshot (tests only).
  // Returns {width, height, bytes, blocked_requests, csp_violations, phases}; throws FigureError.
  async render(job, hooks = {}) {
    let cancelled = false;
    let slot = null;
    const work = (async () => {
      try {
        const phases = {};
        let t = performance.now();
        const lap = (name) => { const now = performance.now(); phases[name] = Math.round(now - t); t = now; };
        const { text, figure } = readFigure(job.figure, this.opts.limits);
        const canvas = canvasFor(figure.layout);
        lap('read');
        slot = await this.takeSlot();
        lap('page');
        if (cancelled) throw new FigureError('timeout', 'cancelled');
        const d = await this.draw(slot, text, canvas, hooks, () => cancelled, lap);
        if (cancelled) throw new FigureError('timeout', 'cancelled');
        writeOutput(job.out, d.png);
        lap('write');
        return {
          width: d.width, height: d.height, bytes: d.png.length,
          blocked_requests: slot.blocked, csp_violations: d.cspViolations, phases,
        };
      } finally {
        // Clean up after the answer is out (setImmediate runs after the caller's write).
        const s = slot;
        setImmediate(() => (s ? this.retire(s) : Promise.resolve()).finally(() => this.refill()));
      }
    })();
    work.catch(() => {});
    return abortable(work, job.timeoutMs, () => {
      cancelled = true;
      if (slot) slot.ctx.close().catch(() => {});   // stops a draw that is still running
    }, (abort) => { this.cancelCurrent = abort; });
  }

  // Abandons the render in progress (its page is closed; it answers `cancelled`). False when none runs.
  cancel() {
    if (!this.cancelCurrent) return false;
    this.cancelCurrent();
    return true;
  }

  // Draws figure text on the slot's page and screenshots it at the exact target size.
  async draw(slot, text, canvas, hooks, isCancelled, lap = () => {}) {
    const { cssWidth, cssHeight, scale, target } = canvas;
    const failed = (e, what) => {
      if (isCancelled()) return new FigureError('timeout', 'cancelled');
      if (this.disconnected) return new FigureError('browser_failed', 'the browser went away');
      if (slot.crashed) return new FigureError('draw_failed', `the page crashed while ${what}`);
      return new FigureError('draw_failed', `${what} failed: ${shortMessage(e)}`);
    };
    let r;
    try {
      const viewport = { width: Math.ceil(cssWidth), height: Math.ceil(cssHeight) };
      if (viewport.width !== DEFAULT_CSS.width || viewport.height !== DEFAULT_CSS.height) await slot.page.setViewportSize(viewport);
      r = await slot.page.evaluate(drawInPage, { text, width: cssWidth, height: cssHeight, config: STATIC_CONFIG });
    } catch (e) {
      throw failed(e, 'drawing');
    }
    lap('draw');
    if (r.noWebgl) throw new FigureError('no_webgl', 'a WebGL trace could not draw (plotly showed "WebGL is not supported")');
    let png;
    try {
      const shot = await slot.cdp.send('Page.captureScreenshot', {
        format: 'png',
        clip: { x: 0, y: 0, width: cssWidth, height: cssHeight, scale },
        captureBeyondViewport: false,
        optimizeForSpeed: this.opts.fastPng,
      });
      png = Buffer.from(shot.data, 'base64');
    } catch (e) {
      throw failed(e, 'the screenshot');
    }
    lap('shot');
    const size = pngSize(png);
    if (!size || size.width !== target.width || size.height !== target.height) {
      throw new FigureError('size_mismatch', `screenshot is ${size ? `${size.width}x${size.height}` : 'not a PNG'}, want ${target.width}x${target.height}`);
    }
    if (hooks.inspect) await hooks.inspect(slot.page);
    return { png, width: size.width, height: size.height, cspViolations: r.csp.length };
  }

  async close() {
    this.closed = true;
    const spares = this.spares;
    this.spares = [];
    await Promise.all(spares.map((p) => p.then((s) => this.retire(s), () => {})));
    if (this.browser) await this.browser.close().catch(() => {});
    if (this.ownsTmp && this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    if (this.savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = this.savedTmpdir;
  }
}
