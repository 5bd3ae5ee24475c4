// Ending a snippet's page without letting anything out. The route's decisions reach Chromium
// through DevTools, and a request still paused when its DevTools session detaches is let through
// (seen: a refused navigation, and script loads a snippet kept making, reached a local listener
// while their context closed). So before a page or its context is closed, the page's scripts are
// switched off (no new request can start), its navigation and loads are stopped (browser side,
// which works on a page busy in a loop too), and every route decision already made is
// acknowledged; each step is capped, so a hung page still goes.
const STEP_MS = 1000;

const within = (promise) => Promise.race([Promise.resolve(promise).catch(() => {}), new Promise((r) => setTimeout(r, STEP_MS))]);

// Tracks a route decision (abort / continue) until Chromium has it.
export function settles(pending, promise) {
  const p = promise.catch(() => {});
  pending.add(p);
  p.finally(() => pending.delete(p));
  return p;
}

async function stop(cdp) {
  await within(cdp.send('Emulation.setScriptExecutionDisabled', { value: true }));
  await within(cdp.send('Page.stopLoading'));
}

// cdp: the page's own DevTools session when there is one (else a new one is attached).
export async function stopPage(ctx, page, cdp = null) {
  await within((async () => stop(cdp || await ctx.newCDPSession(page)))());
}

const acknowledged = (pending) => within(Promise.all([...pending]));

export async function closePage(ctx, page, pending) {
  await stopPage(ctx, page);
  await acknowledged(pending);
  await page.close().catch(() => {});
}

// sessions: Map page -> its DevTools session. Idempotent: the abort and the job's end may both ask.
export function closeContext(ctx, sessions, pending) {
  if (!ctx.plotqClosing) {
    ctx.plotqClosing = (async () => {
      await Promise.all(ctx.pages().map((p) => stopPage(ctx, p, sessions.get(p))));
      await acknowledged(pending);
      await ctx.close().catch(() => {});
    })();
  }
  return ctx.plotqClosing;
}
