/**
 * Differential properties: generated versions and ranges get the same answers from the kernel as
 * from blang/semver itself (tools/blang-semver, built on first use; skipped without `go`).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareVersions, parseRange, parseTolerant, parseVersion } from '../../../src/olm/version.js';
import { runs } from '../../support/properties.js';
import { Blang, blangTool } from './blang.js';

const tool = blangTool();
if ('skip' in tool) console.warn(tool.skip);

// Pieces chosen around blang's edge cases: leading zeros, numbers past 2^53 and 2^64, identifiers
// that are or contain `x`, empty identifiers.
const num = fc.constantFrom(
  '0',
  '1',
  '2',
  '3',
  '10',
  '01',
  '9007199254740993',
  '18446744073709551615',
  '18446744073709551616',
  'x',
  'X',
  '*',
  '',
);
const ident = fc.constantFrom('alpha', 'beta', 'rc', '0', '1', '2', '11', '01', 'x', 'a-b', 'A', '', 'é');
const versionText = fc
  .tuple(
    fc.array(num, { minLength: 1, maxLength: 4 }),
    fc.option(fc.array(ident, { minLength: 1, maxLength: 3 }), { nil: undefined }),
    fc.option(fc.array(ident, { minLength: 1, maxLength: 2 }), { nil: undefined }),
  )
  .map(
    ([core, pre, build]) =>
      core.join('.') + (pre ? `-${pre.join('.')}` : '') + (build ? `+${build.join('.')}` : ''),
  );
// Mostly well-formed versions, so that range membership is exercised as well as refusal.
const plainVersion = fc
  .tuple(
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 0, max: 3 }),
    fc.option(fc.constantFrom('alpha', 'rc.1', '0', 'beta.2'), { nil: undefined }),
    fc.option(fc.constantFrom('build', '5'), { nil: undefined }),
  )
  .map(([a, b, c, pre, build]) => `${a}.${b}.${c}${pre ? `-${pre}` : ''}${build ? `+${build}` : ''}`);
const anyVersion = fc.oneof({ weight: 3, arbitrary: plainVersion }, { weight: 1, arbitrary: versionText });

const op = fc.constantFrom(
  '',
  '',
  '=',
  '==',
  '!',
  '!=',
  '>',
  '>=',
  '<',
  '<=',
  '^',
  '~',
  '=>',
  'x',
  'v',
  '\t>=',
);
const space = fc.constantFrom('', '', ' ', '  ', '\t');
const wildcardVersion = fc
  .tuple(
    fc.integer({ min: 0, max: 3 }),
    fc.constantFrom('x', '1', '2'),
    fc.constantFrom('', '.x', '.0', '.3', '.x.x'),
  )
  .map(([a, b, c]) => `${a}.${b}${c}`);
const comparator = fc
  .tuple(op, space, fc.oneof(plainVersion, wildcardVersion, versionText))
  .map(([o, s, v]) => `${o}${s}${v}`);
const separator = fc.constantFrom(' ', ' ', '  ', ' || ', '||', ' ||', ' | ', ' , ');
const structuredRange = fc
  .tuple(comparator, fc.array(fc.tuple(separator, comparator), { maxLength: 4 }))
  .map(([first, rest]) => first + rest.map(([s, c]) => s + c).join(''));
// Short strings over the range alphabet find what no structure above thinks of.
const noiseRange = fc
  .array(fc.constantFrom(...'0123456789..x-+ |<>=!^~v'.split('')), { maxLength: 16 })
  .map((cs) => cs.join(''));

describe.skipIf('skip' in tool)('the kernel answers as blang/semver does', () => {
  let blang: Blang;
  beforeAll(() => {
    if ('path' in tool) blang = new Blang(tool.path);
  });
  afterAll(() => blang?.close());

  it('parses the same versions, to the same values', async () => {
    await fc.assert(
      fc.asyncProperty(anyVersion, async (text) => {
        const want = await blang.ask({ op: 'parse', text });
        const got = parseVersion(text);
        expect(got !== undefined, text).toBe(want.ok);
        if (got) expect(got.text).toBe(want.value);
      }),
      runs(500),
    );
  });

  it('orders versions the same way', async () => {
    await fc.assert(
      fc.asyncProperty(plainVersion, plainVersion, async (a, b) => {
        const want = await blang.ask({ op: 'compare', a, b });
        expect(Math.sign(compareVersions(a, b)), `${a} vs ${b}`).toBe(want.cmp);
      }),
      runs(500),
    );
  });

  it('reads tolerant versions the same way', async () => {
    const tolerant = fc.tuple(fc.constantFrom('', 'v', ' ', 'V'), versionText).map(([p, v]) => p + v);
    await fc.assert(
      fc.asyncProperty(tolerant, async (text) => {
        const want = await blang.ask({ op: 'tolerant', text });
        const got = parseTolerant(text);
        expect(got !== undefined, text).toBe(want.ok);
        if (got) expect(got.text).toBe(want.value);
      }),
      runs(300),
    );
  });

  const sameRange = async (text: string, versions: string[]) => {
    const want = await blang.ask({ op: 'range', text, versions });
    const got = parseRange(text);
    if (want.tests?.includes('panic')) {
      // blang accepts an empty alternative (`a || || b`) and panics on it; the kernel refuses it.
      expect(got.ok, text).toBe(false);
      return;
    }
    expect(got.ok, `${JSON.stringify(text)}: ${got.ok ? 'accepted' : got.message}`).toBe(want.ok);
    if (!got.ok) return;
    const tests = versions.map((v) => (parseVersion(v) ? String(got.range.test(v)) : 'invalid'));
    expect(tests, JSON.stringify(text)).toEqual(want.tests);
  };

  it('accepts and refuses the same ranges, and they hold the same versions', async () => {
    await fc.assert(
      fc.asyncProperty(structuredRange, fc.array(anyVersion, { minLength: 1, maxLength: 12 }), sameRange),
      runs(1500),
    );
  });

  it('agrees on arbitrary strings over the range alphabet', async () => {
    await fc.assert(
      fc.asyncProperty(noiseRange, fc.array(plainVersion, { minLength: 1, maxLength: 8 }), sameRange),
      runs(1500),
    );
  });
});
