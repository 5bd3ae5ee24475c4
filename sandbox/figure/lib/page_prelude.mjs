// The page prelude: run by the browser in every document of a locked context (each frame and
// popup, the initial about:blank of an iframe included) before any of the document's own scripts.
// It removes the APIs that open connections the page's Content-Security-Policy does not govern:
// WebRTC (RTCPeerConnection and the rest of its family: ICE, STUN and TURN over UDP and TCP, to
// any host and port the page names) and WebTransport. The browser's own WebRTC switches
// (browser.mjs) are the independent layer beneath it, the network namespace the one beneath that.
//
// A removed constructor cannot come back: interface objects are reached only through the global
// (deleted here) or through an instance of them (none is ever made), and a fresh global (an
// iframe's, a popup's) runs this prelude too (tested).
export const REMOVED_API = /^(webkit)?RTC[A-Za-z]*$|^WebTransport[A-Za-z]*$/;

export const PRELUDE = `(() => {
  const removed = ${REMOVED_API};
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (removed.test(name)) delete globalThis[name];
  }
})();`;

// Adds the prelude to a context (before its first page).
export function addPrelude(ctx) {
  return ctx.addInitScript({ content: PRELUDE });
}
