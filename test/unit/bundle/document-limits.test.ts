/**
 * The codec (bundle/yaml.ts) holds every document to DocumentLimits: each class of hostile input
 * is refused quickly with a problem naming the file, in several shapes, never by running out of
 * time, memory or stack. What real documents use (small aliases, the corpus's nesting) still reads.
 */
import { describe, expect, it } from 'vitest';
import { DocumentLimits } from '../../../src/bundle/document-limits.js';
import { parseYamlStream } from '../../../src/bundle/yaml.js';

/** Parses, and fails the test if that takes longer than a refusal should. */
function parse(text: string) {
  const t0 = performance.now();
  const r = parseYamlStream(text, 'hostile.yaml');
  expect(performance.now() - t0).toBeLessThan(5_000);
  return r;
}

function refused(text: string, message: RegExp): void {
  const r = parse(text);
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.problem.file).toBe('hostile.yaml');
    expect(r.problem.message).toMatch(message);
  }
}

/** Billion laughs: `levels` anchors, each a list of `width` aliases of the one before. */
function laughs(levels: number, width: number, style: 'flow' | 'block' | 'map'): string {
  const lines = [style === 'map' ? 'l0: &l0 {a: lol, b: lol}' : 'l0: &l0 [lol, lol, lol]'];
  for (let i = 1; i < levels; i++) {
    const refs = Array.from({ length: width }, (_, k) =>
      style === 'map' ? `k${k}: *l${i - 1}` : `*l${i - 1}`,
    );
    if (style === 'flow') lines.push(`l${i}: &l${i} [${refs.join(', ')}]`);
    else if (style === 'map') lines.push(`l${i}: &l${i} {${refs.join(', ')}}`);
    else lines.push(`l${i}: &l${i}\n${refs.map((r) => `  - ${r}`).join('\n')}`);
  }
  return `${lines.join('\n')}\n`;
}

const aliasBomb = /aliases expand to more than 100000 nodes/;

describe('alias bombs', () => {
  it.each([
    ['flow lists, 10 levels of 10', laughs(10, 10, 'flow')],
    ['block lists, 10 levels of 10', laughs(10, 10, 'block')],
    ['flow maps, 10 levels of 10', laughs(10, 10, 'map')],
    ['wide: 3 levels of 1000', laughs(3, 1000, 'flow')],
    ['deep: 40 levels of 2', laughs(40, 2, 'flow')],
    ['in the second document of a stream', `a: 1\n---\n${laughs(9, 10, 'flow')}`],
    [
      'an anchored mapping used as a key value everywhere',
      `base: &b {${Array.from({ length: 400 }, (_, i) => `k${i}: v`).join(', ')}}\nlist: [${Array(400).fill('*b').join(', ')}]\n`,
    ],
  ])('are refused: %s', (_name, text) => refused(text, aliasBomb));

  it.each([
    ['a list containing itself', 'a: &a [*a]\n'],
    ['a map containing itself', 'a: &a\n  self: *a\n'],
    ['a cycle through two anchors', 'a: &a\n  - &b\n    - *a\n'],
    ['a cycle deep inside', 'a: &a {x: {y: {z: [1, 2, *a]}}}\n'],
  ])('that refer to a node containing them are refused: %s', (_name, text) =>
    refused(text, /refers to a node that contains it \(a cycle\)/),
  );

  it('that expand past the depth limit are refused', () => {
    // Each anchor nests 30 levels, and each refers to the one before: 4 x 30 levels once expanded.
    const nest = (inner: string) => `${'['.repeat(30)}${inner}${']'.repeat(30)}`;
    const text = `a: &a ${nest('1')}\nb: &b ${nest('*a')}\nc: &c ${nest('*b')}\nd: ${nest('*c')}\n`;
    refused(text, /with its aliases expanded, nests more than 100 levels/);
  });

  it('leave small aliases read, each expanded into a copy of its own', () => {
    const r = parse('base: &b {image: x, env: [a, b]}\none: *b\ntwo: *b\n');
    if (!r.ok) throw new Error(r.problem.message);
    const doc = r.docs[0]!.value as Record<string, { env: string[] }>;
    expect(doc.one).toEqual({ image: 'x', env: ['a', 'b'] });
    expect(doc.one).not.toBe(doc.two);
    expect(doc.one!.env).not.toBe(doc.base!.env);
  });
});

describe('deep nesting', () => {
  const n = 100_000;
  it.each([
    ['JSON lists', `${'['.repeat(n)}${']'.repeat(n)}`],
    ['JSON objects', `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`],
    ['JSON lists and objects', `${'{"a":['.repeat(n / 2)}1${']}'.repeat(n / 2)}`],
    ['an unterminated JSON document', '['.repeat(n)],
    ['the second document of a JSON stream', `{"a":1}\n{"b":${'['.repeat(n)}${']'.repeat(n)}}`],
  ])('is refused before JSON.parse: %s', (_name, text) => refused(text, /nests more than 100 levels deep/));

  it.each([
    ['YAML flow lists', `a: ${'['.repeat(n)}${']'.repeat(n)}\n`],
    ['YAML flow maps', `a: ${'{b: '.repeat(n)}1${'}'.repeat(n)}\n`],
    ['YAML block maps', `${Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')} 1\n`],
    ['YAML block lists', `${Array.from({ length: 2000 }, (_, i) => `${'  '.repeat(i)}-`).join('\n')} 1\n`],
  ])('is refused: %s', (_name, text) => refused(text, /maxDepth \(100\)|nests more than 100 levels/));

  it('as deep as the corpus nests (39 levels) is read, in JSON and YAML', () => {
    const deep = (d: number): unknown => (d === 1 ? 'x' : { a: deep(d - 1) });
    for (const text of [JSON.stringify(deep(60)), `a: ${JSON.stringify(deep(59))}\n`]) {
      const r = parse(text);
      expect(r.ok, r.ok ? '' : r.problem.message).toBe(true);
    }
  });
});

describe('documents larger than one may be', () => {
  const over = DocumentLimits.maxDocumentChars + 1024;
  it.each([
    ['one JSON string', () => `{"a":"${'x'.repeat(over)}"}`],
    ['the second document of a JSON stream', () => `{"a":1}\n{"a":"${'x'.repeat(over)}"}`],
    ['an unterminated JSON document', () => `{"a":"${'x'.repeat(over)}`],
    ['one YAML scalar', () => `a: ${'x'.repeat(over)}\n`],
    ['the second document of a YAML stream', () => `a: 1\n---\nb: ${'x'.repeat(over)}\n`],
    ['NUL bytes', () => '\0'.repeat(over)],
    ['blank lines', () => '\n'.repeat(over)],
    ['a comment', () => `# ${'x'.repeat(over)}\n`],
  ])('are refused unparsed: %s', (_name, text) =>
    refused(text(), /past the limit of 16\.0 MiB for one document/),
  );

  it('pass when split into documents within the limit', () => {
    const half = 'x'.repeat(DocumentLimits.maxDocumentChars / 2);
    for (const text of [
      `a: ${half}\n---\nb: ${half}\n---\nc: ${half}\n`,
      `{"a":"${half}"}{"b":"${half}"}{"c":"${half}"}`,
    ]) {
      const r = parse(text);
      expect(r.ok, r.ok ? '' : r.problem.message).toBe(true);
      if (r.ok) expect(r.docs).toHaveLength(3);
    }
  });
});
