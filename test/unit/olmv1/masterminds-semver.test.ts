import { describe, expect, it } from 'vitest';
import {
  checkMm,
  MAX_RANGE_LENGTH,
  parseMmConstraints,
  parseMmVersion,
} from '../../../src/olmv1/masterminds-semver.js';

/** [range, versions it admits, versions it refuses], each checked against Masterminds v3.3.1 itself. */
const TABLE: [string, string[], string[]][] = [
  ['1.2.3', ['1.2.3', '1.2.3+build'], ['1.2.4', '1.2.3-rc.1']],
  ['=1.2.3', ['1.2.3'], ['1.2.2']],
  ['v1.2.3', ['1.2.3'], ['1.2.4']],
  ['^1.2.3', ['1.2.3', '1.9.0'], ['2.0.0', '1.2.2', '1.3.0-beta']],
  ['^1', ['1.0.0', '1.9.9'], ['2.0.0', '0.9.9']],
  ['^0.2.3', ['0.2.3', '0.2.9'], ['0.3.0', '0.2.2']],
  ['^0.0.3', ['0.0.3'], ['0.0.4']],
  ['^0', ['0.0.1', '0.9.0'], ['1.0.0']],
  ['~1.2.3', ['1.2.3', '1.2.9'], ['1.3.0']],
  ['~1', ['1.0.0', '1.9.0'], ['2.0.0']],
  ['~>1.2', ['1.2.0', '1.2.7'], ['1.3.0']],
  // A partial version is a wildcard: ~0 is >=0.0.0 <1.0.0.
  ['~0', ['0.0.0', '0.9.9'], ['1.0.0']],
  ['1.x', ['1.0.0', '1.9.9'], ['2.0.0', '0.9.9']],
  ['1.2.*', ['1.2.0', '1.2.9'], ['1.3.0']],
  ['*', ['0.0.1', '3.0.0'], ['1.0.0-alpha']],
  ['>1.1', ['1.2.0', '2.0.0'], ['1.1.5', '1.1.0']],
  ['>1', ['2.0.0'], ['1.9.0']],
  ['<=1.x', ['1.9.9', '0.1.0'], ['2.0.0']],
  ['<=1.1', ['1.1.9', '1.0.0'], ['1.2.0']],
  ['!=1.x', ['2.0.0', '0.1.0'], ['1.0.0', '1.5.0']],
  ['!=1.1.0', ['1.1.1'], ['1.1.0']],
  ['>=1.0.0 <2.0.0', ['1.0.0', '1.9.9'], ['2.0.0', '0.9.0']],
  ['>=1.0.0, <2.0.0', ['1.5.0'], ['2.1.0']],
  // `<= 1.2` reads 1.2 as 1.2.x.
  ['1.0 - 1.2', ['1.0.0', '1.2.9'], ['1.3.0', '0.9.0']],
  ['<1.2 || >=2', ['1.1.0', '2.0.0'], ['1.2.0', '1.9.0']],
  ['>=1.0.0-0', ['1.0.0-alpha', '1.0.0', '2.0.0'], ['0.9.0']],
  // Every constraint of an AND must name a prerelease for a prerelease to pass it.
  ['>=1.1.0-alpha.1 <1.2.0', ['1.1.0'], ['1.1.0-alpha.2', '1.1.0-alpha.0']],
  ['>=1.1.0-alpha.1 <1.2.0-0', ['1.1.0-alpha.2', '1.1.0'], ['1.1.0-alpha.0', '1.2.0-alpha.1']],
  ['^1.1.0-rc.1', ['1.1.0-rc.1', '1.1.0', '1.2.0-beta'], ['1.1.0-beta']],
];

describe('Masterminds semver constraints, as v1 reads spec.source.catalog.version', () => {
  it.for(TABLE)('%s admits %j and refuses %j', ([range, yes, no]) => {
    const r = parseMmConstraints(range);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    for (const v of yes) expect(checkMm(r.value, parseMmVersion(v)!), `${v} in ${range}`).toBe(true);
    for (const v of no) expect(checkMm(r.value, parseMmVersion(v)!), `${v} in ${range}`).toBe(false);
  });

  it.for([
    ['>>1', 'improper constraint: >>1'],
    ['1.0.0 ||', 'improper constraint: '],
    ['|| 1.0.0', 'improper constraint: '],
    ['abc', 'improper constraint: abc'],
    ['1.2.3.4', 'improper constraint: 1.2.3.4'],
    ['1.0.0,', 'improper constraint: 1.0.0,'],
    ['^1 ~', 'improper constraint: ^1 ~'],
    ['1.0 -2.0', 'improper constraint: 1.0 -2.0'],
    // Past the constraint grammar, refused by the version parser.
    ['01.2', 'constraint Parser Error'],
    ['1|2', 'constraint Parser Error'],
    ['1.2.3-01', 'constraint Parser Error'],
  ] as const)('refuses %j with Masterminds’ message', ([range, message]) => {
    expect(parseMmConstraints(range)).toEqual({ ok: false, message });
  });

  it('reads the worst ranges of its length limit quickly (no backtracking blow-up)', () => {
    // Masterminds' validating expression, run by a backtracking engine, takes exponential time on
    // ranges like these (runs of spaces between items that never end well); Go's engine and
    // Bosun's scan take linear time, and the hyphen-range expression quadratic at worst.
    const n = MAX_RANGE_LENGTH;
    const hostile = [
      `1${' '.repeat(n - 2)}!`,
      `${'1 '.repeat(n / 2 - 1)}!`,
      `${'>=1.0.0, '.repeat(n / 9 - 1)},`,
      `${' \t'.repeat(n / 2 - 8)}1.0.0 -`,
      `${'1'.repeat(n - 6)} - 1 x`,
      `${'1 - '.repeat(n / 4 - 1)}x`,
      `${'1.'.repeat(n / 2 - 1)}x`,
      `${' , '.repeat(n / 3)}`,
    ];
    for (const h of hostile) {
      expect(h.length).toBeLessThanOrEqual(n);
      const started = performance.now();
      expect(parseMmConstraints(h).ok).toBe(false);
      expect(performance.now() - started, JSON.stringify(h.slice(0, 20))).toBeLessThan(200);
    }
  });

  it('refuses a range past its length limit without reading it', () => {
    expect(parseMmConstraints(`1${' '.repeat(MAX_RANGE_LENGTH)}`)).toEqual({
      ok: false,
      message: 'longer than 1024 characters (spec.source.catalog.version allows 64)',
    });
  });
});

describe('Masterminds versions', () => {
  it('reads partial versions and a v prefix, refuses leading zeros and 65-bit numbers', () => {
    expect(parseMmVersion('1.2')).toMatchObject({ major: 1n, minor: 2n, patch: 0n });
    expect(parseMmVersion('v2')).toMatchObject({ major: 2n, minor: 0n, patch: 0n });
    expect(parseMmVersion('01.0.0')).toBeUndefined();
    expect(parseMmVersion('18446744073709551616.0.0')).toBeUndefined();
    expect(parseMmVersion('18446744073709551615.0.0')).toMatchObject({ major: 18446744073709551615n });
  });
});
