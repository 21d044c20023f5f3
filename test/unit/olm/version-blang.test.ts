/**
 * Differential properties: generated versions and ranges get the same answers from the kernel as
 * from blang/semver itself (tools/blang-semver, built on first use; skipped without `go`).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareVersions, parseRange, parseTolerant, parseVersion } from '../../../src/olm/version.js';
import { runs } from '../../support/properties.js';
import { Blang, blangTool } from './blang.js';
import { anyVersion, noiseRange, plainVersion, structuredRange, versionText } from './generators.js';

const tool = await blangTool();
if (!tool.ok) console.warn(`the kernel against blang/semver skipped: ${tool.why}`);

describe.skipIf(!tool.ok)('the kernel answers as blang/semver does', () => {
  let blang: Blang;
  beforeAll(() => {
    if (tool.ok) blang = new Blang(tool.path);
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
