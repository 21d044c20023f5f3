import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goJson } from '../../../src/bundle/gojson.js';
import { bundleToDoc, readBundle } from '../../../src/bundle/read.js';
import { expandImageTemplate } from '../../../src/bundle/render.js';
import { validateBundle } from '../../../src/bundle/validate.js';
import { runs } from '../../support/properties.js';

const full = join(import.meta.dirname, '../../fixtures/bundles/full');

async function renderFull(opts = {}) {
  const read = await readBundle(full);
  if (!read.ok) throw new Error(JSON.stringify(read.errors));
  const doc = bundleToDoc(read.value, opts);
  if (!doc.ok) throw new Error(JSON.stringify(doc.errors));
  return { bundle: read.value, doc: doc.value };
}

describe('bundleToDoc derives properties as opm render does', () => {
  it('gvks from CRDs, API services and properties.yaml; requirements from the CSV and dependencies.yaml; sorted, objects last', async () => {
    const { doc } = await renderFull();
    expect(doc).toMatchObject({
      schema: 'olm.bundle',
      name: 'sprocket.v2.1.0',
      package: 'sprocket',
      image: '',
    });
    const head = doc.properties.filter(
      (p) => p.type !== 'olm.bundle.object' && p.type !== 'olm.csv.metadata',
    );
    expect(head).toEqual([
      {
        type: 'olm.constraint',
        value: {
          failureMessage: 'needs a lubricant',
          any: {
            constraints: [
              { gvk: { group: 'oil.fixtures.bosun.dev', kind: 'Oil', version: 'v1' } },
              { package: { packageName: 'grease', versionRange: '>=0.1.0' } },
            ],
          },
        },
      },
      { type: 'olm.gvk', value: { group: 'extra.fixtures.bosun.dev', kind: 'Extra', version: 'v1' } },
      { type: 'olm.gvk', value: { group: 'fixtures.bosun.dev', kind: 'Sprocket', version: 'v1alpha1' } },
      { type: 'olm.gvk', value: { group: 'fixtures.bosun.dev', kind: 'Sprocket', version: 'v1beta1' } },
      {
        type: 'olm.gvk',
        value: { group: 'metrics.fixtures.bosun.dev', kind: 'SprocketMetric', version: 'v1' },
      },
      {
        type: 'olm.gvk.required',
        value: { group: 'chain.fixtures.bosun.dev', kind: 'Chain', version: 'v1' },
      },
      {
        type: 'olm.gvk.required',
        value: { group: 'custom.metrics.k8s.io', kind: 'MetricValue', version: 'v1beta1' },
      },
      { type: 'olm.gvk.required', value: { group: 'gears.fixtures.bosun.dev', kind: 'Gear', version: 'v1' } },
      { type: 'olm.label', value: { label: 'fixtures' } },
      { type: 'olm.package', value: { packageName: 'sprocket', version: '2.1.0' } },
      { type: 'olm.package.required', value: { packageName: 'chain', versionRange: '>=1.0.0 <2.0.0' } },
    ]);
    expect(doc.properties.slice(head.length).map((p) => p.type)).toEqual([
      'olm.bundle.object',
      'olm.bundle.object',
      'olm.bundle.object',
      'olm.csv.metadata',
    ]);
  });

  it('carries every manifest as base64 of Go-style JSON (sorted keys, <>& escaped)', async () => {
    const { bundle, doc } = await renderFull();
    const decoded = doc.properties
      .filter((p) => p.type === 'olm.bundle.object')
      .map((p) => Buffer.from((p.value as { data: string }).data, 'base64').toString());
    expect(decoded.sort()).toEqual(bundle.manifests.map((m) => goJson(m.object)).sort());
    const cm = decoded.find((d) => d.includes('ConfigMap'))!;
    expect(cm).toBe(
      '{"apiVersion":"v1","data":{"note":"\\u003cb\\u003ebold\\u003c/b\\u003e \\u0026 more"},"kind":"ConfigMap","metadata":{"name":"sprocket-config"}}',
    );
  });

  it('summarises the CSV in olm.csv.metadata', async () => {
    const { doc } = await renderFull();
    const meta = doc.properties.at(-1)!.value as Record<string, unknown>;
    expect(Object.keys(meta)).toEqual([
      'annotations',
      'apiServiceDefinitions',
      'crdDescriptions',
      'description',
      'displayName',
      'installModes',
      'keywords',
      'labels',
      'maturity',
      'provider',
    ]);
    expect(meta).toMatchObject({
      displayName: 'Sprocket',
      labels: { tier: 'fixture' },
      provider: { name: 'Bosun fixtures' },
      maturity: 'stable',
    });
  });

  it('lists related images: declared, then every deployment image, once each, sorted', async () => {
    const { doc } = await renderFull();
    expect(doc.relatedImages).toEqual([
      { name: 'helper', image: 'registry.example/bosun/sprocket-helper:v2' },
      { name: '', image: 'registry.example/bosun/sprocket-init:v2' },
      { name: '', image: 'registry.example/bosun/sprocket:v2.1.0' },
    ]);
  });

  it('leaves the image empty for a directory unless a template names one', async () => {
    const { doc } = await renderFull({
      imageRefTemplate: 'registry.example/bundles/{{.Package}}:v{{ .Version }}',
    });
    expect(doc.image).toBe('registry.example/bundles/sprocket:v2.1.0');
    expect(doc.relatedImages?.map((r) => r.image)).toContain('registry.example/bundles/sprocket:v2.1.0');
  });

  it('expands opm’s image template fields', () => {
    expect(
      expandImageTemplate('r/{{.Package}}/{{.Name}}:{{.Version}}', {
        Package: 'p',
        Name: 'p.v1',
        Version: '1.0.0',
      }),
    ).toBe('r/p/p.v1:1.0.0');
  });
});

describe("the CSV's olm.properties annotation, read as opm reads it", () => {
  /** The full fixture with `annotation` as the CSV's `olm.properties`. */
  async function annotated(annotation: string) {
    const read = await readBundle(full);
    if (!read.ok) throw new Error(JSON.stringify(read.errors));
    const csv = read.value.manifests.find((m) => m.object.kind === 'ClusterServiceVersion')!.object;
    const metadata = csv.metadata as { annotations?: Record<string, string> };
    metadata.annotations = { ...metadata.annotations, 'olm.properties': annotation };
    return read.value;
  }
  const heads = (bundle: Awaited<ReturnType<typeof annotated>>) => {
    const doc = bundleToDoc(bundle);
    if (!doc.ok) throw new Error(JSON.stringify(doc.errors));
    return doc.value.properties.filter(
      (p) => p.type !== 'olm.bundle.object' && p.type !== 'olm.csv.metadata',
    );
  };
  const constraint = { failureMessage: 'x', gvk: { group: 'g', kind: 'K', version: 'v1' } };

  it("adds the annotation's properties: other types as they are, an olm.gvk as provided", async () => {
    const { doc } = await renderFull();
    const plain = doc.properties.filter(
      (p) => p.type !== 'olm.bundle.object' && p.type !== 'olm.csv.metadata',
    );
    const bundle = await annotated(
      JSON.stringify([
        { type: 'olm.maxOpenShiftVersion', value: '4.8' },
        { type: 'olm.constraint', value: constraint },
        { type: 'olm.gvk', value: { group: 'annotated.bosun.dev', kind: 'Note', version: 'v1' } },
      ]),
    );
    const props = heads(bundle);
    expect(props).toEqual(expect.arrayContaining([...plain]));
    expect(props.filter((p) => !plain.some((q) => JSON.stringify(q) === JSON.stringify(p)))).toEqual([
      { type: 'olm.constraint', value: constraint },
      { type: 'olm.gvk', value: { group: 'annotated.bosun.dev', kind: 'Note', version: 'v1' } },
      { type: 'olm.maxOpenShiftVersion', value: '4.8' },
    ]);
    expect(validateBundle(bundle).errors).toEqual([]);
  });

  it('an olm.package there replaces the one derived (opm reads it last)', async () => {
    const bundle = await annotated(
      JSON.stringify([{ type: 'olm.package', value: { packageName: 'sprocket', version: '9.9.9' } }]),
    );
    expect(heads(bundle).filter((p) => p.type === 'olm.package')).toEqual([
      { type: 'olm.package', value: { packageName: 'sprocket', version: '9.9.9' } },
    ]);
  });

  it('an annotation that is not a JSON list of properties is left out, and validation says so', async () => {
    const { doc } = await renderFull();
    for (const text of ['[{"type":', '{"type":"olm.label","value":{"label":"x"}}']) {
      const bundle = await annotated(text);
      expect(heads(bundle)).toEqual(
        doc.properties.filter((p) => p.type !== 'olm.bundle.object' && p.type !== 'olm.csv.metadata'),
      );
      expect(validateBundle(bundle).warnings).toContainEqual(
        expect.objectContaining({ field: 'metadata.annotations.olm.properties' }),
      );
    }
  });

  it('validation checks the values of the types it knows', () => {
    return annotated(JSON.stringify([{ type: 'olm.constraint', value: { none: {} } }])).then((bundle) => {
      expect(validateBundle(bundle).errors).toContainEqual(
        expect.objectContaining({ field: 'metadata.annotations.olm.properties[0].value.none' }),
      );
    });
  });
});

describe('goJson writes what Go’s encoding/json writes', () => {
  it.each([
    [
      { b: 1, a: { d: '<&>', c: [1, 'x', null, true] } },
      '{"a":{"c":[1,"x",null,true],"d":"\\u003c\\u0026\\u003e"},"b":1}',
    ],
    [{ z: '\u2028', y: 1.5, x: 1e21 }, '{"x":1e+21,"y":1.5,"z":"\\u2028"}'],
    [[], '[]'],
    ['plain', '"plain"'],
  ])('%j', (value, json) => {
    expect(goJson(value)).toBe(json);
  });

  it('keeps a key named __proto__ as a key', () => {
    expect(goJson(JSON.parse('{"b":{"__proto__":1,"a":2}}'))).toBe('{"b":{"__proto__":1,"a":2}}');
  });

  it('sorts integer-like keys as text, as Go does (JavaScript enumerates them numerically)', () => {
    const data = { x: 'c', '9': 'a', '10': 'b', '1a': 'e', '1': 'd' };
    expect(goJson({ kind: 'ConfigMap', data })).toBe(
      '{"data":{"1":"d","10":"b","1a":"e","9":"a","x":"c"},"kind":"ConfigMap"}',
    );
  });

  it('leaves the value it is given unchanged', () => {
    const value = { b: [{ d: 1, c: 2 }], a: { '2': 1, '10': 2 } };
    const before = JSON.stringify(value);
    goJson(value);
    expect(JSON.stringify(value)).toBe(before);
    expect(Object.keys(value)).toEqual(['b', 'a']);
  });

  /** Go's text for a JSON value, written member by member: the reference goJson must match. */
  function reference(v: unknown): string {
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    if (Array.isArray(v)) return `[${v.map(reference).join(',')}]`;
    const entries = Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${reference(x)}`).join(',')}}`;
  }
  const goEscapes = (s: string) =>
    s.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

  it('writes any JSON value as the member-by-member reference does, and reads back to it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const json = goJson(value);
        expect(json).toBe(goEscapes(reference(value)));
        expect(JSON.parse(json)).toStrictEqual(JSON.parse(JSON.stringify(value)));
      }),
      runs(300),
    );
  });
});
