// The browser side of tests/figure/hostile.test.mjs, a process of its own so that the test can
// start it in an empty network namespace while its listeners stay in the host's. argv[2]: JSON
// {layers: {pageRules, browserNetworkRules}, snippets: [port, ...], figures: [url, ...]} (one
// per attack, in hostile_attacks.mjs's order). Prints one JSON line per attack: the job's answer
// and the attack's marker read from the page; then {done: true}.
import fs from 'node:fs';
import path from 'node:path';
import { FigureBrowser } from '../../sandbox/figure/lib/browser.mjs';
import { SNIPPET_ATTACKS, FIGURE_ATTACKS, attackSnippet, figureMarker } from './hostile_attacks.mjs';
import { AS_ROOT, HERE, tmpDir, writer, drawing } from './snippet_support.mjs';

const { layers, snippets, figures } = JSON.parse(process.argv[2]);
const tmp = tmpDir('plotq-hostile-');
const write = writer(tmp);
const fb = new FigureBrowser({ ...(AS_ROOT ? { uid: 65533, gid: 65533 } : {}), ...layers });
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const answer = (r) => ({ code: 'ok', csp: r.csp_violations, blocked: r.blocked_requests, popups: r.popups });
const refusal = (e) => ({ code: e.code, detail: e.detail });
try {
  await fb.start();
  for (const [i, attack] of SNIPPET_ATTACKS.entries()) {
    let marker = null, threw;
    const r = await fb.render({ snippet: write('.js', attackSnippet(attack, drawing('d3', 'landscape'), snippets[i])), out: path.join(tmp, `s${i}.png`),
      timeoutMs: 30000, library: 'd3', theme: 'light', bare: false },
    { inspect: async (page) => { [marker, threw] = await page.evaluate(() => [window.__plotqAttempt, window.__plotqThrew]); } }).then(answer, refusal);
    say({ name: attack.name, ...r, marker, threw });
  }
  for (const [i, attack] of FIGURE_ATTACKS.entries()) {
    const url = figures[i];
    const text = attack.fixture ? fs.readFileSync(path.join(HERE, 'fixtures', attack.fixture), 'utf8').replaceAll('MARKER', url) : attack.figure(url);
    let marker = null;
    const r = await fb.render({ figure: write('.json', text), out: path.join(tmp, `f${i}.png`), timeoutMs: 60000, library: attack.library },
      { inspect: async (page) => { await new Promise((res) => setTimeout(res, 300)); marker = await page.evaluate(figureMarker, url); } }).then(answer, refusal);
    say({ name: attack.name, ...r, marker });
  }
  say({ done: true });
} finally {
  await fb.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
