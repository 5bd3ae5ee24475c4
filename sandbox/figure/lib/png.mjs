// PNG reading: the size from the IHDR chunk (every screenshot's size check), and a minimal decoder
// (8-bit RGB/RGBA, not interlaced: what Chromium writes) for the blank check of snippet renders and
// the tests' pixel checks.
import zlib from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function pngSize(buf) {
  if (buf.length < 24 || !buf.subarray(0, 8).equals(SIGNATURE) || buf.toString('latin1', 12, 16) !== 'IHDR') {
    return null;
  }
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

function chunks(buf) {
  if (!pngSize(buf)) throw new Error('not a PNG');
  let off = 8, width, height, channels;
  const idat = [];
  while (off + 8 <= buf.length) {
    const len = buf.readUInt32BE(off), type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      channels = { 2: 3, 6: 4 }[data[9]];
      if (data[8] !== 8 || !channels || data[12] !== 0) throw new Error(`unsupported PNG (depth ${data[8]}, colour type ${data[9]}, interlace ${data[12]})`);
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    off += 12 + len;
  }
  return { width, height, channels, idat: Buffer.concat(idat) };
}

// Undoes the row filters of `raw` (as many whole rows as it holds) into `px`, from row `from`;
// onRow(y) may return true to stop early. Returns the number of rows done.
function unfilter(raw, px, width, channels, from, onRow) {
  const stride = width * channels;
  const rows = Math.min(Math.floor(raw.length / (stride + 1)), px.length / stride);
  for (let y = from; y < rows; y++) {
    const f = raw[y * (stride + 1)], row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const o = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[o + x - channels] : 0;
      const b = y > 0 ? px[o - stride + x] : 0;
      let v = row[x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) {
        const c = x >= channels && y > 0 ? px[o - stride + x - channels] : 0;
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[o + x] = v & 0xff;
    }
    if (onRow && onRow(y)) return y + 1;
  }
  return rows;
}

// The whole image: {width, height, channels, pixel(x, y) -> [r, g, b], count(pred(r, g, b))}.
export function decodePng(buf) {
  const { width, height, channels, idat } = chunks(buf);
  const raw = zlib.inflateSync(idat);
  const stride = width * channels, px = Buffer.alloc(height * stride);
  unfilter(raw, px, width, channels, 0, null);
  return {
    width, height, channels,
    pixel: (x, y) => Array.from(px.subarray(y * stride + x * channels, y * stride + x * channels + 3)),
    count(pred) {
      let n = 0;
      for (let i = 0; i < px.length; i += channels) if (pred(px[i], px[i + 1], px[i + 2])) n++;
      return n;
    },
    // Every pixel as RGBA, alpha 255 where the PNG has none: what two encodings of the same
    // picture share (a screenshot is RGB, a canvas's own PNG RGBA).
    rgba() {
      if (channels === 4) return px;
      const out = Buffer.alloc(width * height * 4, 255);
      for (let i = 0, o = 0; i < px.length; i += 3, o += 4) {
        out[o] = px[i];
        out[o + 1] = px[i + 1];
        out[o + 2] = px[i + 2];
      }
      return out;
    },
  };
}

// True when every pixel of the PNG has the same colour (alpha included). Most drawings differ
// within their first rows, so the start of the image is inflated first (a partial inflate) and
// the whole only when that part is flat.
export function isFlat(buf) {
  const { width, height, channels, idat } = chunks(buf);
  const stride = width * channels, px = Buffer.alloc(height * stride);
  const differs = (y) => {
    const o = y * stride;
    for (let i = o; i < o + stride; i++) if (px[i] !== px[i % channels]) return true;
    return false;
  };
  let found = false;
  const scan = (raw, from) => unfilter(raw, px, width, channels, from, (y) => (found = differs(y)));
  let done = 0;
  if (idat.length > 65536) {
    const head = zlib.inflateSync(idat.subarray(0, 65536), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    done = scan(head, 0);
    if (found) return false;
  }
  scan(zlib.inflateSync(idat), done);
  return !found;
}
