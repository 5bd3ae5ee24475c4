// Drawing one JavaScript snippet. The snippet is hostile code (model-written) that runs in the page,
// so unlike a figure (data, drawn on reused pages) it gets a fresh locked context of its own
// (snippet_context.mjs), closed after the job whatever happened. The strict page
// (snippet_page.mjs) admits scripts only by its nonce and the route only the job's files; a
// navigation away, or one the browser refused, ends the job as `navigated`; an exception (DevTools
// reports it with the snippet's own file and line) as snippet_error. The bare page is the
// reference's: no policy and no route, the same checks. The whole job is under one budget
// (browser.mjs aborts it at the deadline by closing the context, which ends even an endless
// loop's renderer).
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { FigureError } from './errors.mjs';
import { isFlat, pngSize } from './png.mjs';
import { newNonce } from './page.mjs';
import { writeOutput } from './output.mjs';
import { ORIENTATIONS, DEVICE_SCALE, orientationOf, tokensFor, readSnippet, namesReadyFlag } from './snippet.mjs';
import { strictPageHtml, barePageHtml, jobScript, blockScoped, BARE_BUNDLE_URL, BARE_SNIPPET_URL } from './snippet_page.mjs';

export const SIGNAL_WAIT_MS = 2500;   // the reference's wait for window.__anyplotReady

function shortMessage(e) {
  const m = String((e && e.message) || e).split('\n')[0];
  return m.length > 200 ? `${m.slice(0, 200)}...` : m;
}

// A DevTools exceptionDetails as snippet_error: the class (the exception's own, or read from its
// message when the script's errors are muted, as a file: script's are; "Error" when neither says),
// the first line of the message, and the first stack frame that lineOf maps into the snippet.
export function snippetError(d, lineOf) {
  const ex = d.exception || null;
  const text = String(d.text || '');
  const rejection = text.includes('(in promise)');
  let message = ex && typeof ex.description === 'string' ? ex.description.split('\n')[0]
    : ex && 'value' in ex ? String(ex.value) : text.replace(/^Uncaught\s*(\(in promise\)\s*)?/, '');
  if (!message || message === 'Uncaught') message = 'the snippet threw';
  let cls = ex && ex.subtype === 'error' && /^[A-Za-z_$][\w$]{0,63}$/.test(ex.className || '') ? ex.className : null;
  if (!cls) {
    const m = /^([A-Za-z_$][\w$]{0,63})(?::|$)/.exec(message);
    cls = m && /(Error|Exception)$/.test(m[1]) ? m[1] : 'Error';
  }
  let line = null;
  for (const f of (d.stackTrace && d.stackTrace.callFrames) || []) {
    line = lineOf(f.url, f.lineNumber, f.columnNumber);
    if (line) break;
  }
  if (!line && typeof d.lineNumber === 'number') line = lineOf(d.url || '', d.lineNumber, d.columnNumber || 0);
  const detail = `${rejection ? 'unhandled rejection: ' : ''}${message}`.slice(0, 200);
  return new FigureError('snippet_error', detail, { error_class: cls, error_line: line || undefined });
}

// fb: the FigureBrowser (browser, pagesDir, js libraries, muix bundler, contexts, options). st:
// {cancelled, close, deadline} shared with the abort (browser.mjs). Returns the answer's fields.
export async function drawSnippet(fb, job, st, hooks = {}) {
  const phases = {};
  let t = performance.now();
  const lap = (name) => { const now = performance.now(); phases[name] = Math.round(now - t); t = now; };
  const left = () => Math.max(1, Math.floor(st.deadline - performance.now()));
  const lib = fb.js[job.library];
  if (!lib) throw new FigureError('library_unavailable', `this renderer has no ${job.library} JavaScript`);
  const source = readSnippet(job.snippet, fb.opts.snippetMaxBytes);
  const orientation = orientationOf(source);
  const css = ORIENTATIONS[orientation];
  const target = { width: css.width * DEVICE_SCALE, height: css.height * DEVICE_SCALE };
  const tokens = tokensFor(job.theme);
  lap('read');
  // A strict MUI X page loads the vendor script, then the snippet bundled against it (when its
  // imports allow: muix_bundle.mjs); the bare page, the whole bundle, as the reference.
  const vendorFile = job.library === 'muix' && !job.bare ? await fb.muixVendor().catch(() => null) : null;
  const bundled = job.library === 'muix' ? await fb.muix.bundle(source, { split: Boolean(vendorFile) }) : null;
  if (bundled) lap('bundle');
  const key = bundled && !bundled.vendor ? 'muix-whole' : job.library;   // the spare's library key
  if (st.cancelled) throw new FigureError('timeout', 'cancelled');

  const files = [];   // the job's files in the pages dir, removed at its end
  const writeJobFile = (f, text) => {
    fs.writeFileSync(f, text, { mode: 0o644, flag: 'wx' });
    files.push(f);
  };
  const writePageFile = (ext, text) => {
    const f = path.join(fb.pagesDir, `${crypto.randomUUID()}${ext}`);
    writeJobFile(f, text);
    return pathToFileURL(f).href;
  };
  try {
    const locked = await fb.contexts.take(!job.bare, key);
    st.close = locked.close;
    if (st.cancelled) throw new FigureError('timeout', 'cancelled');
    const { page, cdp, w, stopped, preloaded } = locked;
    let pageUrl = null, html = null, lineOf, scripts = [];
    if (preloaded) {
      // The page has its library already; the job's script and the snippet are the files its
      // route holds (snippet_context.mjs).
      writeJobFile(preloaded.jobFile, jobScript({ tokens, css }));
      writeJobFile(preloaded.snippetFile, bundled ? bundled.code : blockScoped(source));
      pageUrl = preloaded.pageUrl;
      scripts = [preloaded.bundleUrl, preloaded.snippetUrl];
    } else if (!job.bare) {
      const own = writePageFile('.js', bundled ? bundled.code : blockScoped(source));
      scripts = bundled && !bundled.vendor ? [own] : [pathToFileURL(bundled ? vendorFile : lib.bundle).href, own];
      pageUrl = writePageFile('.html', strictPageHtml({ nonce: newNonce(), tokens, css, scripts, policy: fb.opts.pageRules }));
    }
    if (!job.bare) {
      // The snippet's own script is the last: its line, or for MUI X the source map's.
      const own = scripts[scripts.length - 1];
      const lines = source.split('\n').length;
      lineOf = bundled ? (url, l, c) => (url === own ? bundled.lineOf(l, c) : null)
        : (url, l) => (url === own && l >= 1 && l <= lines ? l : null);   // blockScoped's first line is its own
    } else {
      const bare = barePageHtml({ tokens, css, bundleSource: bundled ? bundled.code : fb.bundleSource(job.library), snippetSource: bundled ? '' : source });
      html = bare.html;
      lineOf = bundled ? (url, l, c) => (url === BARE_BUNDLE_URL ? bundled.lineOf(bare.bundleLine(l), c) : null)
        : (url, l) => (url === BARE_SNIPPET_URL ? bare.snippetLine(l) : null);
    }

    if (!preloaded) locked.allow(pageUrl ? [pageUrl, ...scripts] : []);
    try {
      await locked.prepare(css, job.theme);
    } catch (e) {
      throw new FigureError('draw_failed', `the page could not be set up: ${shortMessage(e)}`);
    }
    const ownUrl = pageUrl || page.url();
    lap('page');

    const fail = (e, what) => {
      if (st.cancelled) return new FigureError('timeout', 'cancelled');
      if (fb.disconnected) return new FigureError('browser_failed', 'the browser went away');
      if (w.crashed) return new FigureError('draw_failed', `the page crashed while ${what}`);
      if (e instanceof FigureError) return e;
      if (w.nav || page.url() !== ownUrl) return new FigureError('navigated', w.nav || 'the page is no longer its own document');
      if (e && e.name === 'TimeoutError') return new FigureError('timeout', `${what} did not finish within the job's timeout`);
      return new FigureError('draw_failed', `${what} failed: ${shortMessage(e)}`);
    };
    const check = async () => {
      if (w.crashed) throw new FigureError('draw_failed', 'the page crashed');
      if (w.nav || page.url() !== ownUrl) {
        throw new FigureError('navigated', w.nav || 'the page is no longer its own document');
      }
      if (w.exceptions.size) throw snippetError(w.exceptions.values().next().value, lineOf);
    };

    // Loaded = the page's own load event, seen by DevTools, or a navigation attempt (which stops
    // the page's loading: no load event follows, and Playwright's own wait for 'load' would hang).
    try {
      const loadFired = locked.nextLoad();
      if (preloaded) locked.resume();
      else if (pageUrl) await page.goto(pageUrl, { waitUntil: 'commit', timeout: left() });
      else await page.setContent(html, { waitUntil: 'commit', timeout: left() });
      await Promise.race([loadFired, stopped]);
    } catch (e) {
      throw fail(e, 'loading the page');
    }
    w.loaded = true;
    lap('load');
    await check();   // a top-level throw or syntax error: no screenshot

    // Every wait on the page also ends when it navigates or crashes: Playwright's own waits then
    // stay pending (a frame showing an error page never gets its context back).
    const guard = (promise) => Promise.race([promise, stopped.then(() => { throw new FigureError('draw_failed', 'stopped'); })]);
    // The ready rule (../README.md): the snippet's own signal when it can give one, else settle.
    const settle = () => guard(page.evaluate(async () => {
      await (document.fonts ? document.fonts.ready : Promise.resolve());
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    }));
    let ready = 'settled', csp = 0;
    try {
      if (job.library === 'muix' || namesReadyFlag(source)) {
        try {
          await guard(page.waitForFunction(() => window.__anyplotReady === true, null,
            { timeout: Math.min(SIGNAL_WAIT_MS, left()), polling: 'raf' }));
          ready = 'signal';
        } catch (e) {
          if (!e || e.name !== 'TimeoutError') throw e;
          await check();
          ready = 'deadline';
          await settle();
        }
      } else {
        await settle();
      }
      if (!job.bare) csp = await guard(page.evaluate(() => window.__plotqCsp));
    } catch (e) {
      await check();   // navigated, crashed or threw: that, not how the wait ended
      throw fail(e, 'waiting for the draw');
    }
    lap('ready');
    await check();   // an error after load (a callback, a rejection) before the screenshot

    let png;
    try {
      const shot = await guard(cdp.send('Page.captureScreenshot', {
        format: 'png',
        clip: { x: 0, y: 0, width: css.width, height: css.height, scale: DEVICE_SCALE },
        captureBeyondViewport: false,
        optimizeForSpeed: fb.opts.fastPng,
      }));
      png = Buffer.from(shot.data, 'base64');
    } catch (e) {
      await check();
      throw fail(e, 'the screenshot');
    }
    lap('shot');
    await check();
    const size = pngSize(png);
    if (!size || size.width !== target.width || size.height !== target.height) {
      throw new FigureError('size_mismatch', `screenshot is ${size ? `${size.width}x${size.height}` : 'not a PNG'}, want ${target.width}x${target.height}`);
    }
    if (isFlat(png)) throw new FigureError('blank', 'the screenshot is one flat colour: the snippet drew nothing');
    lap('check');
    if (hooks.inspect) await hooks.inspect(page, w);
    if (st.cancelled) throw new FigureError('timeout', 'cancelled');
    writeOutput(job.out, png);
    lap('write');
    return {
      width: size.width, height: size.height, bytes: png.length, library: job.library, orientation, ready,
      blocked_requests: w.blocked, csp_violations: Number.isInteger(csp) ? csp : 0, popups: w.popups, context: locked.origin,
      ...(bundled ? { bundle: bundled.vendor ? 'vendor' : 'whole' } : {}), phases,
    };
  } finally {
    // Never reused: the context goes after the answer is out (setImmediate runs after the caller's
    // write), and the next job's is made meanwhile.
    setImmediate(() => {
      if (st.close) st.close();
      fb.contexts.refill();
    });
    for (const f of files) fs.rmSync(f, { force: true });
  }
}
