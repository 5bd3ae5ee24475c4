// Writing the PNG: next to `out` under a fresh name (O_EXCL|O_NOFOLLOW), then renamed into place,
// so there is never a partial file and never a write through a link the plot step planted.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { FigureError } from './errors.mjs';

export function writeOutput(out, buf) {
  const tmp = path.join(path.dirname(out), `.${path.basename(out)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  let fd;
  try {
    const c = fs.constants;
    fd = fs.openSync(tmp, c.O_WRONLY | c.O_CREAT | c.O_EXCL | c.O_NOFOLLOW, 0o644);
  } catch (e) {
    throw new FigureError('output_failed', `cannot create the PNG (${e.code})`);
  }
  try {
    for (let off = 0; off < buf.length;) off += fs.writeSync(fd, buf, off, buf.length - off);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, out);
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw new FigureError('output_failed', `cannot write the PNG (${e.code})`);
  }
}
