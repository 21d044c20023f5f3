import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBase64Alphabet } from '../../../src/util/base64.js';
import { runs } from '../../support/properties.js';

const ANCHORED = /^[A-Za-z0-9+/]*={0,2}$/;

describe('isBase64Alphabet', () => {
  it.each([
    ['', true],
    ['QUJD', true],
    ['QUI=', true],
    ['QQ==', true],
    ['Q===', false],
    ['Q=Q=', false],
    ['=Q', false],
    ['QU J', false],
    ['QUJ\n', false],
    ['QU-_', false],
    ['é', false],
  ])('%j → %s', (s, expected) => {
    expect(isBase64Alphabet(s)).toBe(expected);
  });

  it('accepts exactly what the anchored expression matches', () => {
    const char = fc.constantFrom('A', 'z', '0', '+', '/', '=', ' ', '\n', '-', '_', 'é');
    fc.assert(
      fc.property(fc.array(char, { maxLength: 12 }), (chars) => {
        const s = chars.join('');
        expect(isBase64Alphabet(s)).toBe(ANCHORED.test(s));
      }),
      runs(2000),
    );
  });
});
