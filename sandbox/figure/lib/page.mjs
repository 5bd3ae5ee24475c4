// The figure page: a static document whose Content-Security-Policy admits scripts only by a nonce
// fresh for each page (plotly.js and a one-line violation counter). Figure text never becomes
// markup or code here: it reaches the page later as a string argument and is JSON.parse'd.
import crypto from 'node:crypto';

export function newNonce() {
  return crypto.randomBytes(18).toString('base64');
}

export function contentSecurityPolicy(nonce) {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,   // no 'unsafe-inline', no 'unsafe-eval': plotly 2.6.3 needs neither
    "style-src 'unsafe-inline'",     // plotly writes <style> elements and style attributes
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

// plotlyUrl: file:// URL of the installed package's plotly.js (read by Chromium from disk, so the
// 8.6 MB bundle does not cross the DevTools pipe for every page).
export function pageHtml(nonce, plotlyUrl) {
  const attr = (s) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<!doctype html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(nonce))}">
<meta name="referrer" content="no-referrer">
<title>plotq figure</title>
<style>html,body{margin:0;padding:0;overflow:hidden;background:#fff}#plot{position:absolute;left:0;top:0}</style>
<script nonce="${attr(nonce)}">window.__plotqCsp=[];document.addEventListener('securitypolicyviolation',function(e){window.__plotqCsp.push(e.effectiveDirective)});</script>
<script nonce="${attr(nonce)}" src="${attr(plotlyUrl)}"></script>
</head><body><div id="plot"></div></body></html>
`;
}
