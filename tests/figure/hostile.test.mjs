// node --test tests/figure/hostile.test.mjs, with PLOTQ_FIGURE_TEST_LAYER = page | browser | netns
// Every hostile snippet and figure of hostile_attacks.mjs against listeners of its own (TCP and UDP
// on 127.0.0.1 and ::1, in this process, in the host's network namespace), with ONE layer of the
// renderer's containment on and the others off, so that each layer is shown to hold alone:
//   page:    the page's own rules (policy, route, the prelude removing WebRTC); no browser network
//            flags, no namespace (what PLOTQ_FIGURE_NETNS=false leaves, minus the browser's flags)
//   browser: Chromium's network flags (closed proxy, no name resolution, WebRTC only through the
//            proxy); no page rules, no namespace
//   netns:   the renderer's empty network namespace (as plotqd makes it, here `unshare --net`);
//            no page rules, no browser flags
//   none:    no layer: the control, in which every attack marked `reaches` must get out (so the
//            listeners, UDP and ::1 included, do hear what comes)
// The browser runs in hostile_child.mjs (so that only it is in the namespace). Each attack must
// show that it ran (its marker: the page's record of the attack line, the job's `navigated`, or
// the policy's count) and its listener must have seen nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import dgram from 'node:dgram';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { SNIPPET_ATTACKS, FIGURE_ATTACKS } from './hostile_attacks.mjs';
import { HERE, AS_ROOT, settle } from './snippet_support.mjs';

const LAYER = process.env.PLOTQ_FIGURE_TEST_LAYER || 'page';
const LAYERS = {
  page: { pageRules: true, browserNetworkRules: false },
  browser: { pageRules: false, browserNetworkRules: true },
  netns: { pageRules: false, browserNetworkRules: false },
  none: { pageRules: false, browserNetworkRules: false },   // the control: see `reaches` below
};
assert.ok(LAYERS[LAYER], `PLOTQ_FIGURE_TEST_LAYER=${LAYER}: page, browser or netns`);

// TCP and UDP, 127.0.0.1 and ::1, all on one port; every packet or connection is kept.
async function listeners() {
  for (;;) {
    const l = { hits: [], sockets: [] };
    const hit = (what) => (d) => l.hits.push(`${what}${d && d.length ? ` ${d.toString('latin1').split('\r\n')[0].slice(0, 80)}` : ''}`);
    try {
      const tcp = async (host, port) => {
        const s = net.createServer((c) => { const h = hit(`tcp ${host}`); let seen = false;
          c.once('data', (d) => { seen = true; h(d); }); setTimeout(() => { if (!seen) h(); c.destroy(); }, 100); });
        l.sockets.push(s);
        await new Promise((res, rej) => { s.once('error', rej); s.listen(port, host, res); });
        return s.address().port;
      };
      const udp = async (type, host, port) => {
        const s = dgram.createSocket(type === 'udp6' ? { type, ipv6Only: true } : { type });
        s.on('message', hit(`udp ${host}`));
        l.sockets.push(s);
        await new Promise((res, rej) => { s.once('error', rej); s.bind(port, host, res); });
      };
      l.port = await tcp('127.0.0.1', 0);
      await tcp('::1', l.port);
      await udp('udp4', '127.0.0.1', l.port);
      await udp('udp6', '::1', l.port);
      l.url = `http://127.0.0.1:${l.port}`;
      return l;
    } catch {
      close(l);   // the port was taken on one of the four: another
    }
  }
}
const close = (l) => { for (const s of l.sockets) try { s.close(); } catch { /* not open */ } };

const results = new Map();
let snippetListeners = [], figureListeners = [], skip = null, childErr = '';

before(async () => {
  if (LAYER === 'netns') {
    if (!AS_ROOT) { skip = 'a network namespace needs root'; return; }
    try { execFileSync('unshare', ['--net', 'true']); } catch (e) { skip = `unshare --net fails here: ${e.message.split('\n')[0]}`; return; }
  }
  snippetListeners = await Promise.all(SNIPPET_ATTACKS.map(() => listeners()));
  figureListeners = await Promise.all(FIGURE_ATTACKS.map(() => listeners()));
  const arg = JSON.stringify({ layers: LAYERS[LAYER], snippets: snippetListeners.map((l) => l.port), figures: figureListeners.map((l) => l.url) });
  const child = path.join(HERE, 'hostile_child.mjs');
  const cmd = LAYER === 'netns' ? ['unshare', ['--net', '--', process.execPath, child, arg]] : [process.execPath, [child, arg]];
  const p = spawn(cmd[0], cmd[1], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { childErr = (childErr + d).slice(-4000); });
  const code = await new Promise((res) => p.on('exit', res));
  for (const line of out.split('\n').filter(Boolean)) {
    const r = JSON.parse(line);
    if (!r.done) results.set(r.name, r);
  }
  assert.equal(code, 0, `the browser side failed:\n${childErr}`);
  await settle(500);   // a late packet still counts
});
after(() => { for (const l of [...snippetListeners, ...figureListeners]) close(l); });

for (const [i, attack] of SNIPPET_ATTACKS.entries()) {
  test(`${LAYER} alone: ${attack.name}`, (t) => {
    if (skip) return t.skip(skip);
    const r = results.get(attack.name);
    assert.ok(r, `no answer for it:\n${childErr}`);
    const seen = JSON.stringify(r);
    t.diagnostic(`answer: ${seen}`);
    if (attack.nav) {
      assert.equal(r.code, 'navigated', `the navigation was attempted: ${seen}`);
    } else if (LAYER === 'page' && attack.page === 'popup') {
      assert.deepEqual([r.code, r.popups, r.marker], ['ok', 1, 'called'], seen);
    } else {
      assert.equal(r.code, 'ok', seen);
      // the attack line ran: with the page's prelude a removed API throws there; otherwise it is called
      if (LAYER === 'page' && attack.pageThrows) assert.equal(r.marker, `threw ${attack.pageThrows}`, `refused at the line: ${seen}`);
      else if (LAYER === 'page' && attack.page === 'removed') assert.match(r.marker, /^threw (TypeError|ReferenceError)$/, `the API is gone: ${seen}`);
      else assert.equal(r.marker, 'called', `the attack ran: ${seen}`);
    }
    if (LAYER === 'page' && attack.page === 'csp') assert.ok(r.csp >= 1, `refused by the policy: ${seen}`);
    if (LAYER === 'page' && attack.page === 'route') assert.ok(r.blocked >= 1, `refused by the route: ${seen}`);
    if (LAYER !== 'page') assert.ok(!r.csp && !r.blocked, `no page rules in this run: ${seen}`);
    if (LAYER === 'none') {
      // The control: with no layer at all the attacks that are a way out on this Chromium get out.
      if (attack.reaches) assert.ok(snippetListeners[i].hits.length >= 1, `without any layer it gets out: ${seen}`);
      t.diagnostic(`reached: ${JSON.stringify([...new Set(snippetListeners[i].hits)])}`);
    } else {
      assert.deepEqual(snippetListeners[i].hits, [], `the listener on port ${snippetListeners[i].port} was reached`);
    }
  });
}

for (const [i, attack] of FIGURE_ATTACKS.entries()) {
  test(`${LAYER} alone: figure: ${attack.name}`, (t) => {
    if (skip) return t.skip(skip);
    const r = results.get(attack.name);
    assert.ok(r, `no answer for it:\n${childErr}`);
    const seen = JSON.stringify(r);
    assert.equal(r.code, 'ok', seen);
    if (LAYER === 'page') assert.ok(r.csp >= 1 && !r.marker.pwned, `refused by the policy, nothing ran: ${seen}`);
    else assert.ok(r.marker.pwned || r.marker.loads >= 1, `without the page's rules the figure's code or loads ran: ${seen}`);
    if (LAYER === 'none') {
      assert.ok(figureListeners[i].hits.length >= 1, 'without any layer it gets out');
    } else {
      assert.deepEqual(figureListeners[i].hits, [], 'the listener was reached');
    }
  });
}
