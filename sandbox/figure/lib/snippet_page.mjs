// The two pages a snippet is drawn on. Both have anyplot's page contract: #container at the
// canvas's CSS size, its CSS, and ANYPLOT_THEME / ANYPLOT_TOKENS / ANYPLOT_SIZE set before the
// snippet runs.
//   strict (default): a static file with a Content-Security-Policy that admits scripts only by a
//     nonce fresh for this page; the library bundle and the snippet are files of their own loaded
//     by nonce'd <script src> (the snippet's own file, its text in a block: blockScoped), the
//     globals by a nonce'd inline script that also counts policy violations.
//   bare: the reference harness's page exactly (no policy, everything inline, the snippet in
//     try/catch), the control for sweeps. `snippetLine` maps a page line back to the snippet.
import { policyMeta } from './page.mjs';
import { FONT_FAMILY } from './snippet.mjs';

const attr = (s) => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
// JSON inside an inline script: `<` escaped so no text can close the element.
const scriptJson = (v) => JSON.stringify(v).replace(/</g, '\\u003c');

function pageCss(tokens, css) {
  return `html, body { margin: 0; padding: 0; background: ${tokens.pageBg}; overflow: hidden; }
  *, *::before, *::after { box-sizing: border-box; }
  #container {
    width: ${css.width}px;
    height: ${css.height}px;
    background: ${tokens.pageBg};
    color: ${tokens.ink};
    font-family: ${FONT_FAMILY};
    position: relative;
  }
  #container canvas, #container svg { display: block; }`;
}

function globals(tokens, css) {
  return `window.ANYPLOT_THEME = ${scriptJson(tokens.theme)};
  window.ANYPLOT_TOKENS = ${scriptJson(tokens)};
  window.ANYPLOT_SIZE = { width: ${css.width}, height: ${css.height} };`;
}

// The head both strict pages open with: the policy first (unless a test turned the page's rules
// off: FigureBrowser's pageRules), no referrer.
const strictHead = (nonce, policy) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
${policyMeta(nonce, policy)}<meta name="referrer" content="no-referrer">
<title>plotq snippet</title>`;

// The violation count lives in a closure behind a non-configurable getter, and its listener is
// the first on window (capturing), so the snippet can neither reset nor hide it.
const VIOLATION_COUNTER = `(function () {
    var violations = 0;
    window.addEventListener('securitypolicyviolation', function () { violations++; }, true);
    Object.defineProperty(window, '__plotqCsp', { get: function () { return violations; } });
  })();`;

const scriptTags = (n, urls) => urls.map((u) => `<script nonce="${n}" src="${attr(u)}"></script>`).join('\n');

// scripts: file:// URLs in load order (the library bundle, then the snippet; for muix the one
// esbuild bundle, or the vendor script and the snippet's bundle).
export function strictPageHtml({ nonce, tokens, css, scripts, policy = true }) {
  const n = attr(nonce);
  return `${strictHead(nonce, policy)}
<style>
  ${pageCss(tokens, css)}
</style>
</head>
<body>
<div id="container"></div>
<script nonce="${n}">
  ${globals(tokens, css)}
  ${VIOLATION_COUNTER}
</script>
${scriptTags(n, scripts)}
</body>
</html>
`;
}

// The preloaded page (snippet_context.mjs, a spare made for a run of one library): the same policy
// and contract, but the library is loaded before the job is known. Its parser stops at the job's
// script, whose request the route holds until the job comes; then the job's script (jobScript:
// the page's CSS and globals) and the snippet's own file load in the order the strict page has,
// while the document is still loading, so the snippet sees what it sees on a strict page (load
// events still to come, document.write still parsing). The violation counter comes first here,
// since it does not depend on the job.
export function preloadPageHtml({ nonce, bundleUrl, jobUrl, snippetUrl, policy = true }) {
  const n = attr(nonce);
  return `${strictHead(nonce, policy)}
</head>
<body>
<div id="container"></div>
<script nonce="${n}">
  ${VIOLATION_COUNTER}
</script>
${scriptTags(n, [bundleUrl, jobUrl, snippetUrl])}
</body>
</html>
`;
}

// The job's part of a preloaded page: the strict page's <style> (appended to the head, where the
// strict page has it) and its globals.
export function jobScript({ tokens, css }) {
  return `(function () {
  var s = document.createElement('style');
  s.textContent = ${scriptJson(pageCss(tokens, css))};
  document.head.appendChild(s);
})();
${globals(tokens, css)}
`;
}

// The snippet's own file on a strict page: its text in a block, as the reference's page has it
// (inside its try), so its top-level let, const and class are the block's and may shadow the
// window's own names (`const top = ...` is a SyntaxError in a script's global scope: window.top).
// The snippet's line n is the file's line n + 1.
export function blockScoped(source) {
  return `{\n${source}\n}\n`;
}

const inline = (src) => src.replace(/<\/script/gi, '<\\/script');
export const BARE_BUNDLE_URL = 'plotq-bundle.js';
export const BARE_SNIPPET_URL = 'plotq-snippet.js';

// The bundle and the snippet end with a sourceURL comment (a name for DevTools, nothing else): a
// stack frame then names its script, with lines counted from the script's start. Returns {html,
// bundleLine(l0), snippetLine(l0)}: a frame's 0-based line in that script -> the bundle's 0-based
// line, the snippet's 1-based line (null outside it).
export function barePageHtml({ tokens, css, bundleSource, snippetSource }) {
  const snippetLines = snippetSource.split('\n').length;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>anyplot</title>
<style>
  ${pageCss(tokens, css)}
</style>
</head>
<body>
<div id="container"></div>
<script>
  ${globals(tokens, css)}
  window.__anyplotError = null;
  window.addEventListener("error", (e) => { window.__anyplotError = String(e.error || e.message); });
  window.addEventListener("unhandledrejection", (e) => { window.__anyplotError = String(e.reason); });
</script>
<script>
${inline(bundleSource)}
//# sourceURL=${BARE_BUNDLE_URL}
</script>
<script>
try {
${inline(snippetSource)}
} catch (err) {
  window.__anyplotError = String(err && err.stack ? err.stack : err);
  throw err;
}
//# sourceURL=${BARE_SNIPPET_URL}
</script>
</body>
</html>`;
  return {
    html,
    bundleLine: (l0) => l0 - 1,                 // the script's line 0 is the one after <script>
    snippetLine: (l0) => (l0 - 1 >= 1 && l0 - 1 <= snippetLines ? l0 - 1 : null),
  };
}
