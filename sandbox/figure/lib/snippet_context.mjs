// The locked context a snippet runs in: a fresh browser context and page for every job, never
// reused and closed after it (snippet_teardown.mjs). What the page does is watched from outside
// it: the route (strict only) lets through only the job's own files and counts the rest, popups
// are closed and counted, downloads are denied, service workers blocked; DevTools reports the
// page's exceptions (which the page cannot mute), every navigation it starts, what the browser
// refused on its security log, a crash, and the page's own load event.
//
// Making a context, its page and their DevTools sessions costs a third of a job, so one strict
// context is made ahead while the renderer is idle (ContextSpare): no snippet has run in it when a
// job takes it, so it is as fresh as one made for the job. The job then names its files (allow),
// its canvas and its theme. During a run of one library (its last two jobs) the spare is also
// preloaded: its page has loaded and run that library's bundle (the runtime's own, trusted
// code) and waits, still parsing, at the job's script, whose request the route holds
// (snippet_page.mjs); a job of another library never takes it.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { DEVICE_SCALE, ORIENTATIONS } from './snippet.mjs';
import { newNonce } from './page.mjs';
import { preloadPageHtml } from './snippet_page.mjs';
import { settles, closePage, closeContext } from './snippet_teardown.mjs';
import { addPrelude } from './page_prelude.mjs';

// A held request: the route waits on `decided` (true: let it through, false: abort).
function holdable() {
  let decide;
  const decided = new Promise((resolve) => { decide = resolve; });
  return { decided, decide };
}

// preload: {library, bundle (the library bundle's path)} for a preloaded strict page, or null.
export async function openContext(fb, { strict, preload = null }) {
  // w: what the page did. allowed: the URLs the route lets through (the job fills it).
  const w = { blocked: 0, popups: 0, downloads: 0, nav: null, crashed: false, loaded: false, exceptions: new Map() };
  const allowed = new Set();
  const sessions = new Map();   // page -> its DevTools session (the teardown reuses it)
  const pending = new Set();    // route decisions not yet acknowledged
  let stop;                     // ends the waits on the page: a navigation attempt or a crash
  const stopped = new Promise((resolve) => { stop = resolve; });
  const navigation = (why) => { w.nav = w.nav || why; stop(); };
  let onLoad = () => {};
  // The next load event of the page's main frame (ask before starting the navigation).
  const nextLoad = () => new Promise((resolve) => { onLoad = resolve; });
  let page = null;

  const held = new Map();       // URL -> holdable(): the preloaded page's job files
  const ownFiles = [];          // the preloaded page's document (removed with the context)

  const ctx = await fb.browser.newContext({
    viewport: { ...ORIENTATIONS.landscape },
    deviceScaleFactor: DEVICE_SCALE,      // the exact PNG: CSS size x 2, whatever the snippet does
    serviceWorkers: 'block',
    acceptDownloads: false,
    reducedMotion: 'reduce',              // a forgotten animation flag still draws its last frame
    javaScriptEnabled: true,
    bypassCSP: false,
  });
  // Held requests are decided first (aborted, unless the job let them through), so none is still
  // paused when the context goes.
  const release = (go) => { for (const h of held.values()) h.decide(go); };
  // Closing also ends the job's waits on the page (a job cut off at its deadline then gets to
  // its own end: its files removed, the next spare made).
  const close = () => {
    stop();
    release(false);
    const done = closeContext(ctx, sessions, pending);
    done.then(() => { for (const f of ownFiles) fs.rmSync(f, { force: true }); });
    return done;
  };
  // The page's rules: the route here, the prelude, the policy (snippet_page.mjs). A test may turn
  // them off (FigureBrowser's pageRules) to show the layers beneath holding alone.
  const rules = strict && fb.opts.pageRules;
  try {
    if (rules) {
      await addPrelude(ctx);
      await ctx.route('**/*', (route) => {
        const req = route.request();
        const h = held.get(req.url());
        if (h) {
          // Tracked while it waits: a teardown acknowledges it once it is decided.
          return settles(pending, h.decided.then((go) => (go ? route.continue() : route.abort('blockedbyclient'))));
        }
        if (allowed.has(req.url())) return settles(pending, route.continue());
        w.blocked++;
        let main = false;
        try { main = req.isNavigationRequest() && page !== null && req.frame() === page.mainFrame(); } catch { /* no frame */ }
        if (main) navigation('a navigation away from the page was refused');
        // The page's own navigation away is answered 204: nothing leaves, and Chromium keeps the
        // document instead of committing an error page in a new process (a swap that lets the
        // page's paused requests through). A popup's is aborted: the error page is what makes
        // Playwright report the popup, which is then closed.
        return settles(pending, main ? route.fulfill({ status: 204, body: '' }) : route.abort('blockedbyclient'));
      });
    }
    ctx.on('page', (p) => {
      if (page === null || p === page) return;   // the job's own page (no script has run yet)
      w.popups++;
      closePage(ctx, p, pending);
    });
    page = await ctx.newPage();
    page.on('crash', () => { w.crashed = true; stop(); });
    page.on('download', () => { w.downloads++; });   // denied by the context; counted for the tests
    page.on('framenavigated', (f) => {
      if (w.loaded && f === page.mainFrame()) navigation('the page navigated');
    });
    const cdp = await ctx.newCDPSession(page);
    sessions.set(page, cdp);
    cdp.on('Runtime.exceptionThrown', (e) => {
      if (w.exceptions.size < 64) w.exceptions.set(e.exceptionDetails.exceptionId, e.exceptionDetails);
    });
    cdp.on('Runtime.exceptionRevoked', (e) => { w.exceptions.delete(e.exceptionId); });
    // Chromium itself refuses some top-level navigations (to data: URLs) and says so on the
    // security log, which the page cannot write to.
    cdp.on('Log.entryAdded', (e) => {
      if (e.entry && e.entry.source === 'security' && /^Not allowed to navigate/.test(e.entry.text)) {
        navigation('a navigation was refused by the browser');
      }
    });
    // Every navigation the page starts (a script, a form, a meta refresh, a reload) is requested
    // of the browser first, and DevTools says so before any policy or route refuses it (even
    // about:blank over about:blank, which no navigation event reports). The job's own load is
    // browser-initiated and never appears here.
    let mainFrame = null;
    cdp.on('Page.frameRequestedNavigation', (e) => {
      if (e.frameId === mainFrame && e.disposition === 'currentTab') navigation('the page tried to navigate');
    });
    cdp.on('Page.loadEventFired', () => onLoad());
    await cdp.send('Page.enable');
    mainFrame = (await cdp.send('Page.getFrameTree')).frameTree.frame.id;
    await cdp.send('Runtime.enable');
    await cdp.send('Log.enable');
    let preloaded = null;
    if (preload) {
      const file = (ext) => path.join(fb.pagesDir, `${crypto.randomUUID()}${ext}`);
      const doc = file('.html');
      const bundleUrl = pathToFileURL(preload.bundle).href;
      preloaded = { library: preload.library, bundleUrl, jobFile: file('.js'), snippetFile: file('.js') };
      preloaded.jobUrl = pathToFileURL(preloaded.jobFile).href;
      preloaded.snippetUrl = pathToFileURL(preloaded.snippetFile).href;
      preloaded.pageUrl = pathToFileURL(doc).href;
      held.set(preloaded.jobUrl, holdable());
      held.set(preloaded.snippetUrl, holdable());
      fs.writeFileSync(doc, preloadPageHtml({ nonce: newNonce(), bundleUrl, jobUrl: preloaded.jobUrl, snippetUrl: preloaded.snippetUrl, policy: rules }), { mode: 0o644, flag: 'wx' });
      ownFiles.push(doc);
      for (const u of [preloaded.pageUrl, bundleUrl]) allowed.add(u);
      // Committed is enough: the bundle loads and runs while the spare waits for its job.
      await page.goto(preloaded.pageUrl, { waitUntil: 'commit' });
    }
    return {
      ctx, page, cdp, w, stopped, nextLoad, close, preloaded,
      // The preloaded page goes on parsing: the job's files (written by then) load.
      resume: () => release(true),
      allow: (urls) => { for (const u of urls) allowed.add(u); },
      // The job's canvas and theme (a spare was made before either was known).
      prepare: async (css, theme) => {
        if (css.width !== ORIENTATIONS.landscape.width || css.height !== ORIENTATIONS.landscape.height) await page.setViewportSize(css);
        await page.emulateMedia({ colorScheme: theme, reducedMotion: 'reduce' });
      },
    };
  } catch (e) {
    close();
    throw e;
  }
}

// One strict context made ahead. take() hands it over (or makes one: none is ready, it failed, or
// it was preloaded with another library); refill() makes the next while the renderer is idle.
export class ContextSpare {
  constructor(fb) {
    this.fb = fb;
    this.spare = null;    // Promise of an openContext() result
    this.closed = false;
    this.recent = [undefined, undefined];   // the libraries of the last two strict jobs taken
  }

  async take(strict, library) {
    if (!strict || !this.fb.opts.snippetSpare) return Object.assign(await openContext(this.fb, { strict }), { origin: 'new' });
    this.recent = [this.recent[1], library];
    const s = this.spare;
    this.spare = null;
    const c = s ? await s.catch(() => null) : null;
    if (c && (!c.preloaded || c.preloaded.library === library)) return Object.assign(c, { origin: c.preloaded ? 'preloaded' : 'spare' });
    if (c) c.close();
    return Object.assign(await openContext(this.fb, { strict: true }), { origin: 'new' });
  }

  // A run of one library (its last two jobs) preloads it; any other history, a plain context.
  // Read when the spare is made, so it follows the newest job's library even when that job took
  // its context before the previous job's refill came.
  want() {
    if (!this.fb.opts.pageRules) return null;   // a preloaded page waits on requests the route holds
    const [a, b] = this.recent;
    const bundle = a === b && b ? this.fb.preloadBundle(b) : null;
    return bundle ? { library: b, bundle } : null;
  }

  refill() {
    if (this.spare || this.closed || this.fb.disconnected || !this.fb.opts.snippetSpare) return;
    const s = openContext(this.fb, { strict: true, preload: this.fb.opts.snippetPreload ? this.want() : null });
    s.catch(() => { if (this.spare === s) this.spare = null; });
    this.spare = s;
  }

  async close() {
    this.closed = true;
    const s = this.spare;
    this.spare = null;
    if (s) await s.then((c) => c.close(), () => {});
  }
}
