// A source map lookup (format v3): from a position in esbuild's muix bundle back to the line of the
// snippet it came from, so a runtime error in a MUI X snippet reports the snippet's own line.
// Decoded only when an error needs it.
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < B64.length; i++) VALUE[B64.charCodeAt(i)] = i;

// Decodes one segment's base64 VLQ fields into `out`; returns how many.
function segment(str, start, end, out) {
  let n = 0, value = 0, shift = 0;
  for (let i = start; i < end; i++) {
    const d = VALUE[str.charCodeAt(i)];
    if (d < 0) return -1;
    value += (d & 31) << shift;
    if (d & 32) {
      shift += 5;
    } else {
      out[n++] = value & 1 ? -(value >>> 1) : value >>> 1;
      value = 0;
      shift = 0;
      if (n === 5) break;
    }
  }
  return n;
}

// The 1-based original line of generated position (genLine0, col0) when the mapping segment
// covering it belongs to source index `source`; null otherwise.
export function originalLine(map, source, genLine0, col0) {
  if (!map || typeof map.mappings !== 'string') return null;
  const s = map.mappings;
  const f = [0, 0, 0, 0, 0];
  let srcIdx = 0, srcLine = 0, line = 0, best = null;
  let i = 0;
  while (i <= s.length && line <= genLine0) {
    let col = 0;
    let end = s.indexOf(';', i);
    if (end < 0) end = s.length;
    let j = i;
    while (j < end) {
      let k = s.indexOf(',', j);
      if (k < 0 || k > end) k = end;
      const n = segment(s, j, k, f);
      if (n < 0) return null;
      if (n >= 1) col += f[0];
      if (n >= 4) {
        srcIdx += f[1];
        srcLine += f[2];
        if (line === genLine0 && col <= col0) best = srcIdx === source ? srcLine + 1 : null;
      } else if (n >= 1 && line === genLine0 && col <= col0) {
        best = null;   // a segment that maps to no source
      }
      j = k + 1;
    }
    i = end + 1;
    line++;
  }
  return best;
}
