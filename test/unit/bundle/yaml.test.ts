import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonText, parseYamlOne, parseYamlStream, toYaml } from '../../../src/bundle/yaml.js';
import { runs } from '../../support/properties.js';

const values = (text: string): unknown[] => {
  const r = parseYamlStream(text, 'f');
  if (!r.ok) throw new Error(r.problem.message);
  return r.docs.map((d) => d.value);
};

const one = (text: string): unknown => {
  const r = parseYamlOne(text, 'f');
  if (!r.ok) throw new Error(r.problem.message);
  return r.value;
};

describe('the document codec: JSON first', () => {
  it.each([
    ['an object', '{"a": 1}', true],
    ['an array', '[1, 2]', true],
    ['after blanks and line breaks', ' \n\t{"a": 1}', true],
    ['a YAML mapping', 'a: 1', false],
    ['a YAML stream starting with a marker', '---\n{"a": 1}', false],
    ['a comment', '# {"a": 1}', false],
    ['nothing', '  \n', false],
  ])('%s is JSON: %s', (_, text, json) => {
    expect(isJsonText(text)).toBe(json);
  });

  it('reads a JSON document with JSON.parse: a repeated key keeps its last value', () => {
    // js-yaml refuses a repeated key; JSON.parse (and Kubernetes' JSON decoding) keeps the last.
    expect(values('{"a": 1, "a": 2}')).toEqual([{ a: 2 }]);
    expect(parseYamlStream('a: 1\na: 2\n', 'f').ok).toBe(false);
  });

  it('reads JSON documents one after another, each numbered', () => {
    const r = parseYamlStream('{"a": 1}\n{"b": [true, null]}\n', 'f');
    expect(r).toEqual({
      ok: true,
      docs: [
        { index: 0, value: { a: 1 } },
        { index: 1, value: { b: [true, null] } },
      ],
    });
  });

  it('keeps JSON strings that YAML would resolve as strings', () => {
    expect(one('{"v": "1.0", "b": "true", "n": "~", "t": "2020-01-01"}')).toEqual({
      v: '1.0',
      b: 'true',
      n: '~',
      t: '2020-01-01',
    });
  });

  it('refuses JSON-looking content that is not JSON, naming the file and the place, as opm does', () => {
    const r = parseYamlStream('{a: 1}', 'catalog/index.json');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problem.file).toBe('catalog/index.json');
      expect(r.problem.message).toMatch(/^invalid JSON .*line 1, column 1/);
    }
  });

  it('strips a byte order mark before deciding', () => {
    expect(values('\uFEFF{"a": 1}')).toEqual([{ a: 1 }]);
    expect(values('\uFEFFa: 1\n')).toEqual([{ a: 1 }]);
  });
});

describe('the document codec: YAML with js-yaml’s core schema', () => {
  it.each<[string, unknown]>([
    ['true', true],
    ['True', true],
    ['yes', 'yes'],
    ['on', 'on'],
    ['~', null],
    ['null', null],
    ['1', 1],
    ['-7', -7],
    ['1.0', 1],
    ['1e3', 1000],
    ['0x1F', 31],
    ['0o17', 15],
    ['.inf', Infinity],
    ['2020-01-01', '2020-01-01'],
    ['2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z'],
    ['"1.0"', '1.0'],
    ["'true'", 'true'],
    ['v1.2.3', 'v1.2.3'],
    ['<2.0.0 !=1.0.5', '<2.0.0 !=1.0.5'],
  ])('reads the plain value %s as %j', (text, value) => {
    expect(one(`v: ${text}\n`)).toEqual({ v: value });
  });

  it('skips empty documents but counts them', () => {
    const r = parseYamlStream('---\n# only a comment\n---\na: 1\n---\n---\nb: 2\n', 'f');
    expect(r.ok && r.docs.map((d) => d.index)).toEqual([1, 3]);
  });

  it('reports a syntax error with the file, line and column', () => {
    const r = parseYamlStream('a: 1\nb: [\n', 'bundle/manifests/x.yaml');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problem.file).toBe('bundle/manifests/x.yaml');
      expect(r.problem.message).toMatch(/^invalid YAML: line \d+, column \d+: /);
    }
  });

  it('parseYamlOne wants exactly one document', () => {
    expect(parseYamlOne('', 'f')).toEqual({
      ok: false,
      problem: { file: 'f', message: 'the file is empty' },
    });
    expect(parseYamlOne('a: 1\n---\nb: 2\n', 'f')).toEqual({
      ok: false,
      problem: { file: 'f', message: 'expected one YAML document, found 2' },
    });
  });
});

/** Values a YAML or JSON document can hold, with strings that look like other scalars. */
const scalar = fc.oneof(
  fc.string(),
  fc.constantFrom('true', 'null', '~', '1.0', '0x1F', '2020-01-01', '', ' lead', 'a: b', '- x', '#c', '|'),
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
);
const document = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
})).object;

describe('the YAML writer', () => {
  it('writes what the codec reads back unchanged, sorted or not', () => {
    fc.assert(
      fc.property(document, fc.boolean(), (doc, sortKeys) => {
        expect(one(toYaml(doc, { sortKeys }))).toEqual(doc);
      }),
      runs(500),
    );
  });

  it('sorts keys by default and keeps the object’s order when asked', () => {
    expect(toYaml({ b: 1, a: 2 })).toBe('a: 2\nb: 1\n');
    expect(toYaml({ b: 1, a: 2 }, { sortKeys: false })).toBe('b: 1\na: 2\n');
  });

  it('writes an object used twice twice, without anchors', () => {
    const shared = { x: 1 };
    const text = toYaml({ a: shared, b: shared });
    expect(text).not.toMatch(/[&*]/);
    expect(one(text)).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });
});
