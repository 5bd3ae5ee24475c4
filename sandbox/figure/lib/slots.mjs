// SlotPool: the pages of one library, each in a browser context of its own, with the library
// loaded and ready to draw. A fresh page costs a second or more of CPU (plotly.js or BokehJS
// starting up), far more than a draw, so a page draws several figures in turn: after a figure
// that succeeded its plot is cleared in the page (the library's own purge, the element replaced)
// and the page is checked to be as it was after its built-in warm-up figure (same elements,
// scripts, title and the same own properties on the built-in prototypes); only then does it
// serve the next figure.
// A page that failed, timed out, was cancelled, was inspected by a test, crashed, or failed the
// check is closed with its context, and so is every page after `reuse` figures, and every page
// whose V8 heap, with its figure cleared, still holds more than `heapMb` (what a library keeps
// between figures, caches and leaks, is bounded by memory as well as by count).
//
// Why reuse is safe here: a figure is data, never code. The page admits scripts only by its
// nonce (no inline script, no handlers, no eval), the libraries draw text as text, and so nothing
// a figure holds can run, read what a later figure draws, or leave code behind; what persists is
// the library's own state, which the check and the reuse cap bound.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { newNonce, pageHtml } from './page.mjs';
import { addPrelude } from './page_prelude.mjs';
import { DEFAULT_CSS } from './canvas.mjs';

// Runs in the page: what a clean page looks like (compared before each reuse).
function pageStateInPage() {
  const own = (o) => Object.getOwnPropertyNames(o).sort().join(',');
  const plot = document.getElementById('plot');
  return JSON.stringify({
    objectProto: own(Object.prototype), arrayProto: own(Array.prototype),
    functionProto: own(Function.prototype), stringProto: own(String.prototype),
    body: document.body.children.length, plot: plot ? plot.childNodes.length : -1,
    scripts: document.scripts.length, title: document.title, head: document.head.children.length,
  });
}

export class SlotPool {
  // fb: the FigureBrowser (browser, pagesDir, opts); lib: a libraries.mjs entry.
  constructor(fb, lib, size, reuse, heapMb = 0) {
    this.fb = fb;
    this.lib = lib;
    this.size = Math.max(1, size);
    this.reuse = Math.max(1, reuse);
    this.heapBytes = heapMb > 0 ? heapMb * 1024 * 1024 : 0;   // 0: no bound
    this.scriptUrls = lib.scripts(fb.opts).map((p) => pathToFileURL(p).href);
    this.ready = [];      // slots ready to draw, oldest first
    this.waiters = [];    // takers waiting for a slot: {resolve, reject}
    this.busy = 0;        // slots drawing or being cleared
    this.making = false;  // one slot is being made (they are made one at a time)
    this.closed = false;
    this.made = 0;        // slots made so far (diagnostics)
    this.reused = 0;      // figures drawn on a page that had drawn before
    this.heavy = 0;       // pages replaced for their heap
  }

  // A fresh context whose page has the library loaded. Throws when the page cannot be made.
  async newSlot() {
    const nonce = newNonce();
    const file = path.join(this.fb.pagesDir, `${crypto.randomUUID()}.html`);
    fs.writeFileSync(file, pageHtml(nonce, this.scriptUrls, this.fb.opts.pageRules), { mode: 0o644, flag: 'wx' });
    const pageUrl = pathToFileURL(file).href;
    const ctx = await this.fb.browser.newContext({
      viewport: { ...DEFAULT_CSS },
      deviceScaleFactor: 1,      // the device scale comes from the screenshot (plotly) or CDP (bokeh)
      serviceWorkers: 'block',
      acceptDownloads: false,
      bypassCSP: false,
      javaScriptEnabled: true,
    });
    const slot = { ctx, page: null, cdp: null, lib: this.lib, blocked: 0, crashed: false, version: null,
      uses: 0, clean: null, viewport: { ...DEFAULT_CSS } };
    const allowed = new Set([pageUrl, ...this.scriptUrls]);
    try {
      if (this.fb.opts.pageRules) {
        await addPrelude(ctx);
        await ctx.route('**/*', (route) => {
          if (allowed.has(route.request().url())) return route.continue();
          slot.blocked++;
          return route.abort('blockedbyclient');
        });
      }
      slot.page = await ctx.newPage();
      slot.page.on('crash', () => { slot.crashed = true; });
      await slot.page.goto(pageUrl, { waitUntil: 'load', timeout: this.fb.opts.pageTimeoutMs });
      slot.version = await slot.page.evaluate(this.lib.versionInPage);
      if (!slot.version) throw new Error(`${this.lib.name}'s JavaScript did not load`);
      slot.cdp = await ctx.newCDPSession(slot.page);
      // A built-in figure first: it pays the page's one-off costs of a first draw, and what a
      // library adds to a page for good on its first draw (plotly's global style sheet) is part
      // of the clean state every later figure is checked against.
      if (this.fb.warmSlot) await this.fb.warmSlot(slot);
      await slot.page.evaluate(this.lib.reset);
      slot.clean = await slot.page.evaluate(pageStateInPage);
      this.made++;
      return slot;
    } catch (e) {
      await ctx.close().catch(() => {});
      throw e;
    } finally {
      fs.rmSync(file, { force: true });
    }
  }

  // The next ready slot; waits for one being made or cleared when none is ready.
  take() {
    const slot = this.ready.shift();
    if (slot) {
      this.busy++;
      this.refill();
      return Promise.resolve(slot);
    }
    const p = new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.refill();
    return p;
  }

  // A slot becomes ready: to the first waiter, else into the pool.
  offer(slot) {
    if (this.closed) return void slot.ctx.close().catch(() => {});
    const w = this.waiters.shift();
    if (w) {
      this.busy++;
      w.resolve(slot);
    } else {
      this.ready.push(slot);
    }
  }

  // Gives a slot back after its figure: cleared and checked for reuse when `reusable`, else closed.
  async give(slot, reusable) {
    let keep = reusable && !slot.crashed && !this.closed && slot.uses + 1 < this.reuse;
    slot.uses++;
    if (keep) {
      try {
        await slot.page.evaluate(this.lib.reset);
        keep = (await slot.page.evaluate(pageStateInPage)) === slot.clean && !slot.crashed;
        if (keep && this.heapBytes > 0) {
          const { usedSize } = await slot.cdp.send('Runtime.getHeapUsage');
          if (usedSize > this.heapBytes) {
            keep = false;
            this.heavy++;
          }
        }
      } catch {
        keep = false;
      }
    }
    this.busy--;
    if (keep) {
      this.reused++;
      this.offer(slot);
    } else {
      await slot.ctx.close().catch(() => {});
    }
    this.refill();
  }

  // Tops the pool up to `size` slots, one at a time.
  refill() {
    // A busy slot comes back (or is closed, and then this runs again) within a clear's time,
    // far sooner than a new page is made: a waiter waits for it rather than for a new page.
    const total = this.ready.length + this.busy;
    if (this.making || this.closed || this.fb.disconnected || total >= this.size) return;
    this.making = true;
    this.newSlot().then((slot) => {
      this.making = false;
      this.offer(slot);
      this.refill();
    }, (e) => {
      this.making = false;
      // Nothing loops on a failing start: the waiters hear it, the next take() tries again.
      for (const w of this.waiters.splice(0)) w.reject(e);
    });
  }

  async close() {
    this.closed = true;
    const err = new Error('the renderer is closing');
    for (const w of this.waiters.splice(0)) w.reject(err);
    const slots = this.ready.splice(0);
    await Promise.all(slots.map((s) => s.ctx.close().catch(() => {})));
  }
}
