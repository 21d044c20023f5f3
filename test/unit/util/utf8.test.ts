import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { invalidUtf8Offset } from '../../../src/util/utf8.js';
import { runs } from '../../support/properties.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

describe('invalidUtf8Offset', () => {
  it.each([
    ['ASCII', Buffer.from('café? no: cafe'), undefined],
    ['two-, three- and four-byte characters', Buffer.from('é € 𝄞'), undefined],
    ['a Latin-1 é', Buffer.from([0x63, 0x61, 0x66, 0xe9]), 3],
    ['a lone continuation byte', bytes(0x61, 0x80), 1],
    ['an overlong slash', bytes(0xc0, 0xaf), 0],
    ['an overlong three-byte form', bytes(0x61, 0xe0, 0x80, 0xaf), 1],
    ['a surrogate', bytes(0xed, 0xa0, 0x80), 0],
    ['above U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80), 0],
    ['a sequence cut short at the end', bytes(0x61, 0x62, 0xe2, 0x82), 2],
    ['0xFF', bytes(0xff), 0],
  ])('%s', (_, input, want) => {
    expect(invalidUtf8Offset(input)).toBe(want);
  });

  it("agrees with the platform's strict decoder: valid up to the offset, and not beyond", () => {
    const strict = new TextDecoder('utf-8', { fatal: true });
    const valid = (b: Uint8Array) => {
      try {
        strict.decode(b);
        return true;
      } catch {
        return false;
      }
    };
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (b) => {
        const at = invalidUtf8Offset(b);
        if (at === undefined) {
          expect(valid(b)).toBe(true);
          return;
        }
        expect(valid(b)).toBe(false);
        // Everything before the offset is whole characters.
        expect(valid(b.subarray(0, at))).toBe(true);
      }),
      runs(2000),
    );
  });
});
