/**
 * The kernel's versions and ranges against a table of blang/semver's own answers. The inputs are
 * in blang-table/requests.jsonl; the answers in blang-table/answers.jsonl were recorded from the
 * library itself, and are re-recorded with:
 *
 *   (cd tools/blang-semver && go run . < ../../test/unit/olm/blang-table/requests.jsonl \
 *     > ../../test/unit/olm/blang-table/answers.jsonl)
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  parseRange,
  parseTolerant,
  parseVersion,
  versionCore,
} from '../../../src/olm/version.js';
import type { BlangAnswer, BlangRequest } from './blang.js';

const lines = (file: string) =>
  readFileSync(resolve(import.meta.dirname, 'blang-table', file), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
const requests = lines('requests.jsonl').map((l) => JSON.parse(l) as BlangRequest);
const answers = lines('answers.jsonl').map((l) => JSON.parse(l) as BlangAnswer);
const table = requests.map((req, i) => ({ req, want: answers[i]! }));
const of = (op: BlangRequest['op']) => table.filter((t) => t.req.op === op);

describe('the recorded table', () => {
  it('has one answer per request and covers each kind of question', () => {
    expect(answers).toHaveLength(requests.length);
    for (const op of ['range', 'parse', 'compare', 'tolerant'] as const)
      expect(of(op).length).toBeGreaterThan(5);
    // The cases the issue names are in it, with blang's answers.
    const byText = new Map(of('range').map((t) => [t.req.text, t.want]));
    expect(byText.get('^1.2.0')?.ok).toBe(false);
    expect(byText.get('>=1.0.0 !=1.0.5')?.ok).toBe(true);
  });
});

describe('ranges read as blang/semver ParseRange reads them', () => {
  it.each(of('range').map((t) => [t.req.text!, t] as const))('%j', (text, { req, want }) => {
    const got = parseRange(text);
    const panics = want.tests?.includes('panic') ?? false;
    if (panics) {
      // blang accepts an empty alternative and then panics when a version reaches it; the kernel
      // refuses such a range (see parseRange).
      expect(got.ok).toBe(false);
      return;
    }
    expect(got.ok, got.ok ? 'accepted' : got.message).toBe(want.ok);
    if (!got.ok) return;
    const tests = req.versions!.map((v) => (parseVersion(v) ? String(got.range.test(v)) : 'invalid'));
    expect(tests).toEqual(want.tests);
  });

  it('says where a refused range goes wrong', () => {
    const r = parseRange('^1.2.0');
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.message).toBe(
        '"^1.2.0": "^" is not a comparison (use =, !=, >, >=, <, <= or none for =) in range "^1.2.0"',
      );
  });
});

describe('versions parsed as blang/semver Parse parses them', () => {
  it.each(of('parse').map((t) => [t.req.text!, t.want] as const))('%j', (text, want) => {
    const v = parseVersion(text);
    expect(v !== undefined).toBe(want.ok);
    if (v) expect(v.text).toBe(want.value);
  });
});

describe('versions ordered as blang/semver Compare orders them', () => {
  it.each(of('compare').map((t) => [t.req.a!, t.req.b!, t.want.cmp] as const))(
    '%s vs %s → %d',
    (a, b, want) => {
      expect(Math.sign(compareVersions(a, b))).toBe(want);
      expect(Math.sign(compareVersions(b, a))).toBe(want === 0 ? 0 : -want!);
    },
  );
});

describe('tolerant versions read as blang/semver ParseTolerant reads them', () => {
  it.each(of('tolerant').map((t) => [t.req.text!, t.want] as const))('%j', (text, want) => {
    const v = parseTolerant(text);
    expect(v !== undefined).toBe(want.ok);
    if (v) expect(v.text).toBe(want.value);
  });
});

describe('versionCore', () => {
  it.each([
    ['1.2.3', '1.2.3'],
    ['1.2.3-rc.1+build.5', '1.2.3-rc.1'],
    ['1.2.3+build', '1.2.3'],
    ['18446744073709551615.0.0-1', '18446744073709551615.0.0-1'],
  ])('%s → %s', (text, core) => {
    expect(versionCore(parseVersion(text)!)).toBe(core);
  });
});
