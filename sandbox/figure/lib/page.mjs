// The figure page: a static document whose Content-Security-Policy admits scripts only by a nonce
// fresh for each page (the library's bundles and a one-line violation counter). Figure text never becomes
// markup or code here: it reaches the page later as a string argument and is JSON.parse'd.
import crypto from 'node:crypto';

const attr = (s) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function newNonce() {
  return crypto.randomBytes(18).toString('base64');
}

export function contentSecurityPolicy(nonce) {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,   // no 'unsafe-inline', no 'unsafe-eval': neither plotly.js nor BokehJS needs them
    "style-src 'unsafe-inline'",     // plotly and bokeh write <style> elements and style attributes
    'img-src data: blob:',           // layout.images with data URIs; never a URL that fetches
    "font-src 'none'",
    "connect-src 'none'",
    "media-src 'none'",
    "object-src 'none'",
    "frame-src 'none'",
    "worker-src 'none'",
    "manifest-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

// The policy as the page's first element. `on` false (FigureBrowser's pageRules, tests only) leaves
// it out, so that the layers beneath the page are tested without it.
export function policyMeta(nonce, on = true) {
  return on ? `<meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(nonce))}">\n` : '';
}

// scriptUrls: file:// URLs of the installed package's own bundles (plotly.js, or BokehJS and its
// gl/widgets/tables bundles), read by Chromium from disk so that megabytes of JavaScript do not
// cross the DevTools pipe for every page. A single URL may be given as a string.
export function pageHtml(nonce, scriptUrls, policy = true) {
  const urls = Array.isArray(scriptUrls) ? scriptUrls : [scriptUrls];
  const scripts = urls.map((u) => `<script nonce="${attr(nonce)}" src="${attr(u)}"></script>`).join('\n');
  return `<!doctype html>
<html><head><meta charset="utf-8">
${policyMeta(nonce, policy)}<meta name="referrer" content="no-referrer">
<title>plotq figure</title>
<style>html,body{margin:0;padding:0;overflow:hidden;background:#fff}#plot{position:absolute;left:0;top:0}</style>
<script nonce="${attr(nonce)}">window.__plotqCsp=[];document.addEventListener('securitypolicyviolation',function(e){window.__plotqCsp.push(e.effectiveDirective)});</script>
${scripts}
</head><body><div id="plot"></div></body></html>
`;
}
