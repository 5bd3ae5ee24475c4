// Writes the JavaScript runtime's identity (runtime/README.md) as JSON on stdout: run by
// tools/setup.sh after `npm ci` in runtime/js.
//
//   {"id": "<first 12 hex of package-lock.json's sha256>", "lock_sha256": "...", "node": "20.x",
//    "packages": {"chart.js": "4.4.7", "@mui/x-charts": "7.29.1", ...}}
//
// Every direct dependency of package.json must be installed at its pinned version (npm ci checked
// each file against the lock's integrity hash); anything else fails the setup (exit 1), so a
// manifest that exists names exactly what the snippet pages load.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const lock = fs.readFileSync(path.join(here, 'package-lock.json'));
const pins = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8')).dependencies;
const packages = {};
const wrong = [];
for (const [name, want] of Object.entries(pins).sort(([a], [b]) => (a < b ? -1 : 1))) {
  let have = null;
  try {
    have = JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    // missing: reported below
  }
  if (have !== want) wrong.push(`${name}@${want} (installed: ${have})`);
  packages[name] = want;
}
if (wrong.length) {
  process.stderr.write(`runtime/js: node_modules does not hold the lock: ${wrong.join(', ')}\n`);
  process.exit(1);
}
const digest = crypto.createHash('sha256').update(lock).digest('hex');
process.stdout.write(`${JSON.stringify({ id: digest.slice(0, 12), lock_sha256: digest, node: process.versions.node, packages }, null, 1)}\n`);
