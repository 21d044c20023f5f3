import { isUtf8 } from 'node:buffer';

/**
 * Where `bytes` stop being UTF-8: the offset of the first byte that does not start a well-formed
 * sequence (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or undefined when
 * all of it is. The native check answers the common case; the scan runs only to find the offset.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number | undefined {
  if (isUtf8(bytes)) return undefined;
  const cont = (i: number, lo = 0x80, hi = 0xbf) => i < bytes.length && bytes[i]! >= lo && bytes[i]! <= hi;
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    let n: number;
    if (b < 0x80) n = 1;
    else if (b >= 0xc2 && b <= 0xdf) n = cont(i + 1) ? 2 : 0;
    else if (b === 0xe0) n = cont(i + 1, 0xa0) && cont(i + 2) ? 3 : 0;
    else if (b === 0xed) n = cont(i + 1, 0x80, 0x9f) && cont(i + 2) ? 3 : 0;
    else if (b >= 0xe1 && b <= 0xef) n = cont(i + 1) && cont(i + 2) ? 3 : 0;
    else if (b === 0xf0) n = cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else if (b === 0xf4) n = cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else if (b >= 0xf1 && b <= 0xf3) n = cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else n = 0;
    if (n === 0) return i;
    i += n;
  }
  return undefined;
}
