// The pixel size of a screenshot, read from its header.

import { fail } from './errors.js';

function b64bytes(b64, max) {
  const bin = atob(b64.slice(0, Math.ceil(max / 3) * 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// imageSize reads a PNG's or a JPEG's pixel size from its header.
export function imageSize(b64) {
  const b = b64bytes(b64, 65536);
  if (b[0] === 0x89 && b[1] === 0x50) {
    const dv = new DataView(b.buffer);
    return { width: dv.getUint32(16), height: dv.getUint32(20) };
  }
  if (b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) {
        i++;
        continue;
      }
      const marker = b[i + 1];
      const len = (b[i + 2] << 8) | b[i + 3];
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
        return { width: (b[i + 7] << 8) | b[i + 8], height: (b[i + 5] << 8) | b[i + 6] };
      }
      i += 2 + len;
    }
  }
  throw fail('INTERNAL', 'the browser returned an image that does not decode');
}
