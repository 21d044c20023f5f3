import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type KindSchema,
  pruneObject,
  pruneValue,
  type SchemaNode,
  subschema,
} from '../../../src/install/prune.js';
import { runs } from '../../support/properties.js';

const structural = (schema: SchemaNode | undefined): KindSchema => ({ flavor: 'structural', schema });
const str: SchemaNode = { type: 'string' };
const obj = (properties: Record<string, SchemaNode>, extra: SchemaNode = {}): SchemaNode => ({
  type: 'object',
  properties,
  ...extra,
});

/** A CSV-like CRD schema: owned CRD descriptions declare name, version and kind, not group. */
const csvSchema = obj({
  spec: obj({
    version: str,
    customresourcedefinitions: obj({
      owned: { type: 'array', items: obj({ name: str, version: str, kind: str }) },
    }),
    install: obj({ spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
  }),
});

describe('pruneObject with a CRD structural schema', () => {
  const cases: {
    name: string;
    schema: SchemaNode | undefined;
    input: unknown;
    want: unknown;
    fields: string[];
  }[] = [
    {
      name: 'removes a field the schema does not declare, naming its path',
      schema: csvSchema,
      input: {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        metadata: { name: 'op.v1' },
        spec: {
          MinKubeVersion: '1.16.0',
          version: '1.0.0',
          customresourcedefinitions: {
            owned: [
              { name: 'a.x.io', version: 'v1', kind: 'A' },
              { name: 'b.x.io', version: 'v1', kind: 'B', group: 'x.io' },
            ],
          },
        },
      },
      want: {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        metadata: { name: 'op.v1' },
        spec: {
          version: '1.0.0',
          customresourcedefinitions: {
            owned: [
              { name: 'a.x.io', version: 'v1', kind: 'A' },
              { name: 'b.x.io', version: 'v1', kind: 'B' },
            ],
          },
        },
      },
      fields: ['spec.MinKubeVersion', 'spec.customresourcedefinitions.owned[1].group'],
    },
    {
      name: 'keeps apiVersion, kind and metadata at the root even when the schema declares none of them',
      schema: obj({ spec: obj({ a: str }) }),
      input: {
        apiVersion: 'x.io/v1',
        kind: 'A',
        metadata: { name: 'a', labels: { l: 'v' } },
        spec: { a: 'x' },
      },
      want: {
        apiVersion: 'x.io/v1',
        kind: 'A',
        metadata: { name: 'a', labels: { l: 'v' } },
        spec: { a: 'x' },
      },
      fields: [],
    },
    {
      name: "prunes the root's metadata to ObjectMeta's fields, at every depth",
      schema: obj({}),
      input: {
        apiVersion: 'x.io/v1',
        kind: 'A',
        metadata: {
          name: 'a',
          namspace: 'typo',
          annotations: { 'x.io/any': 'kept' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'u', weight: 3 }],
          managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:a': {} } } }],
        },
      },
      want: {
        apiVersion: 'x.io/v1',
        kind: 'A',
        metadata: {
          name: 'a',
          annotations: { 'x.io/any': 'kept' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'u' }],
          managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:a': {} } } }],
        },
      },
      fields: ['metadata.namspace', 'metadata.ownerReferences[0].weight'],
    },
    {
      name: 'without a schema the root keeps only apiVersion, kind and metadata',
      schema: undefined,
      input: { apiVersion: 'x.io/v1', kind: 'A', metadata: { name: 'a' }, spec: { a: 1 } },
      want: { apiVersion: 'x.io/v1', kind: 'A', metadata: { name: 'a' } },
      fields: ['spec'],
    },
    {
      name: 'additionalProperties declares every key of a map, and prunes inside its values',
      schema: obj({ spec: { type: 'object', additionalProperties: obj({ size: str }) } }),
      input: { spec: { small: { size: 's' }, large: { size: 'l', colour: 'red' } } },
      want: { spec: { small: { size: 's' }, large: { size: 'l' } } },
      fields: ['spec.large.colour'],
    },
    {
      name: 'x-kubernetes-preserve-unknown-fields keeps unknown fields, and still prunes declared ones by their schema',
      schema: obj({
        spec: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { known: obj({ a: str }) },
        },
      }),
      input: { spec: { unknown: { deep: { x: 1 } }, known: { a: 'a', b: 'b' } } },
      want: { spec: { unknown: { deep: { x: 1 } }, known: { a: 'a' } } },
      fields: ['spec.known.b'],
    },
    {
      name: 'x-kubernetes-preserve-unknown-fields deep in the tree keeps everything below it',
      schema: obj({
        spec: obj({
          list: {
            type: 'array',
            items: obj({ config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
          },
        }),
      }),
      input: { spec: { list: [{ config: { any: [{ thing: true }] }, other: 1 }] } },
      want: { spec: { list: [{ config: { any: [{ thing: true }] } }] } },
      fields: ['spec.list[0].other'],
    },
    {
      name: 'preserving unknown fields of an array keeps unknown fields of its items',
      schema: obj({
        spec: {
          type: 'array',
          'x-kubernetes-preserve-unknown-fields': true,
          items: obj({ a: obj({ b: str }) }),
        },
      }),
      input: { spec: [{ a: { b: 'b', c: 'c' }, d: 'd' }] },
      want: { spec: [{ a: { b: 'b' }, d: 'd' }] },
      fields: ['spec[0].a.c'],
    },
    {
      name: 'an embedded resource keeps apiVersion and kind, prunes its metadata to ObjectMeta and the rest by its schema',
      schema: obj({
        spec: obj({
          template: obj(
            { spec: obj({ replicas: { type: 'integer' } }) },
            { 'x-kubernetes-embedded-resource': true },
          ),
        }),
      }),
      input: {
        spec: {
          template: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'd', bogus: true },
            spec: { replicas: 1, paused: false },
            status: {},
          },
        },
      },
      want: {
        spec: {
          template: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'd' },
            spec: { replicas: 1 },
          },
        },
      },
      fields: ['spec.template.metadata.bogus', 'spec.template.spec.paused', 'spec.template.status'],
    },
    {
      name: 'x-kubernetes-int-or-string keeps integers and strings alike',
      schema: obj({ spec: obj({ port: { 'x-kubernetes-int-or-string': true } }) }),
      input: { spec: { port: 8080 }, other: { port: 'http' } },
      want: { spec: { port: 8080 } },
      fields: ['other'],
    },
    {
      name: 'an object without properties (and not preserving) keeps no field',
      schema: obj({ spec: { type: 'object' } }),
      input: { spec: { a: 1, b: { c: 2 } } },
      want: { spec: {} },
      fields: ['spec.a', 'spec.b'],
    },
    {
      name: 'an array without items keeps its elements, without their fields',
      schema: obj({ spec: obj({ list: { type: 'array' } }) }),
      input: { spec: { list: [1, 'two', { three: 3 }] } },
      want: { spec: { list: [1, 'two', {}] } },
      fields: ['spec.list[2].three'],
    },
    {
      name: 'logical junctors declare nothing: allOf, anyOf and oneOf only validate',
      schema: obj({
        spec: {
          type: 'object',
          allOf: [obj({ a: str })],
          anyOf: [obj({ b: str })],
          properties: {},
        } as SchemaNode,
      }),
      input: { spec: { a: 'a', b: 'b' } },
      want: { spec: {} },
      fields: ['spec.a', 'spec.b'],
    },
    {
      name: 'a key named like an Object.prototype member is an ordinary undeclared key',
      schema: obj({ spec: obj({ a: str }) }),
      input: JSON.parse('{"spec":{"a":"a","constructor":1,"__proto__":{"x":1}}}') as unknown,
      want: { spec: { a: 'a' } },
      fields: ['spec.constructor', 'spec.__proto__'],
    },
    {
      name: 'scalars and nulls are kept whatever the schema says of them',
      schema: obj({ spec: obj({ a: obj({ b: str }) }) }),
      input: { spec: { a: null }, n: null },
      want: { spec: { a: null } },
      fields: ['n'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = pruneObject(c.input, structural(c.schema));
      expect(r.value).toEqual(c.want);
      expect(r.fields).toEqual(c.fields);
    });
  }

  it('keeps a map key named __proto__ as a key', () => {
    const schema = obj({ data: { type: 'object', additionalProperties: obj({ a: str }) } });
    const input = JSON.parse('{"data":{"__proto__":{"a":"x","b":"y"}}}') as unknown;
    const r = pruneObject(input, structural(schema));
    expect(JSON.stringify(r.value)).toBe('{"data":{"__proto__":{"a":"x"}}}');
    expect(Object.getPrototypeOf((r.value as { data: object }).data)).toBe(Object.prototype);
    expect(r.fields).toEqual(['data.__proto__.b']);
  });

  it('leaves its input unchanged and returns the same object when there is nothing to prune', () => {
    const input = { spec: { version: '1', MinKubeVersion: '1.16' }, metadata: { name: 'n' } };
    const copy = structuredClone(input);
    const r = pruneObject(input, structural(csvSchema));
    expect(input).toEqual(copy);
    expect(r.value).not.toBe(input);
    expect((r.value as typeof input).metadata).toBe(input.metadata);
    const again = pruneObject(r.value, structural(csvSchema));
    expect(again.value).toBe(r.value);
    expect(again.fields).toEqual([]);
  });

  it('pruneValue prunes a part of an object without resource rules at its root', () => {
    const r = pruneValue({ metadata: { x: 1 }, a: 'a' }, structural(obj({ a: str })));
    expect(r).toEqual({ value: { a: 'a' }, fields: ['metadata'] });
  });
});

// ---- OpenAPI v3 documents of built-in kinds ----

/** A trimmed document as the API server publishes for apps/v1 (the shape, not the whole of it). */
const appsDoc: Record<string, SchemaNode> = {
  'io.k8s.api.apps.v1.Deployment': obj({
    apiVersion: str,
    kind: str,
    metadata: { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }] },
    spec: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec' }] },
  }),
  'io.k8s.api.apps.v1.DeploymentSpec': obj({
    replicas: { type: 'integer' },
    selector: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector' },
    template: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec' }] },
  }),
  'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector': obj({
    matchLabels: { type: 'object', additionalProperties: { type: 'string', default: '' } as SchemaNode },
  }),
  'io.k8s.api.core.v1.PodTemplateSpec': obj({
    metadata: { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }] },
    spec: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' }] },
  }),
  'io.k8s.api.core.v1.PodSpec': obj({
    containers: {
      type: 'array',
      items: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.Container' }] },
    },
    overhead: {
      type: 'object',
      additionalProperties: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity' },
    },
  }),
  'io.k8s.api.core.v1.Container': obj({ name: str, image: str, args: { type: 'array', items: str } }),
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: 'string' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': obj({
    name: str,
    labels: { type: 'object', additionalProperties: str },
    annotations: { type: 'object', additionalProperties: str },
  }),
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { type: 'object' },
  'io.k8s.example.v1.Holder': obj({
    raw: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.runtime.RawExtension' },
    anything: {},
    missing: { $ref: '#/components/schemas/io.k8s.example.v1.NotInTheDocument' },
    loose: { type: 'object', properties: { a: str }, additionalProperties: true },
    open: {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { inner: obj({ a: str }) },
    },
  }),
};
const openapi = (name: string): KindSchema => ({
  flavor: 'openapi',
  schema: { $ref: `#/components/schemas/${name}` },
  components: appsDoc,
});

describe('pruneObject with an OpenAPI v3 document', () => {
  it('follows $ref, also wrapped in allOf, down to the field that is not declared', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', labels: { a: 'b' }, extra: 1 },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'x' } },
        template: {
          metadata: { labels: { app: 'x' } },
          spec: {
            containers: [{ name: 'm', image: 'i', args: ['--v'], resoures: { limits: {} } }],
            overhead: { cpu: '1' },
          },
        },
        strategy2: 'x',
      },
    };
    const r = pruneObject(deployment, openapi('io.k8s.api.apps.v1.Deployment'));
    expect(r.fields).toEqual([
      'metadata.extra',
      'spec.template.spec.containers[0].resoures',
      'spec.strategy2',
    ]);
    expect(r.value.spec.template.spec.containers[0]).toEqual({ name: 'm', image: 'i', args: ['--v'] });
    expect(r.value.metadata).toEqual({ name: 'd', labels: { a: 'b' } });
  });

  it('keeps what a free-form object, an empty schema, an unknown $ref, additionalProperties: true or preserve-unknown-fields allow', () => {
    const holder = {
      apiVersion: 'example.io/v1',
      kind: 'Holder',
      metadata: { name: 'h' },
      raw: { apiVersion: 'v1', kind: 'Pod', spec: { any: 1 } },
      anything: { a: [{ b: 1 }] },
      missing: { c: 2 },
      loose: { a: 'a', b: { c: 1 } },
      open: { whatever: { x: 1 }, inner: { a: 'a', deep: { kept: true } } },
    };
    const r = pruneObject(holder, openapi('io.k8s.example.v1.Holder'));
    // Preserving unknown fields carries over to the inlined schemas below (server-side apply's rule).
    expect(r.fields).toEqual([]);
    expect(r.value).toBe(holder);
  });

  it("without a declared metadata the root's metadata is pruned to ObjectMeta", () => {
    const schema: KindSchema = { flavor: 'openapi', schema: obj({ spec: str }), components: {} };
    const r = pruneObject(
      { apiVersion: 'v1', kind: 'K', metadata: { name: 'n', nam: 'typo' }, spec: 's' },
      schema,
    );
    expect(r.fields).toEqual(['metadata.nam']);
  });

  it('a type mismatch is left for the API server to report', () => {
    const r = pruneObject(
      { spec: { replicas: { many: true }, template: 'x' } },
      openapi('io.k8s.api.apps.v1.Deployment'),
    );
    expect(r.fields).toEqual([]);
  });

  it("subschema finds a field's schema through references, for pruning a part alone", () => {
    const spec = subschema(openapi('io.k8s.api.apps.v1.Deployment'), ['spec']);
    expect(spec).toBeDefined();
    const r = pruneValue({ replicas: 1, selectr: {} }, spec as KindSchema);
    expect(r).toEqual({ value: { replicas: 1 }, fields: ['selectr'] });
    expect(subschema(openapi('io.k8s.api.apps.v1.Deployment'), ['spec', 'nope'])).toBeUndefined();
    expect(subschema(structural(csvSchema), ['spec', 'install', 'spec'])?.schema).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });
});

// ---- properties ----

interface Sample {
  /** A value that conforms to the schema, with undeclared fields added. */
  dirty: unknown;
  /** The same value without them. */
  clean: unknown;
  /** The paths of the added fields. */
  extra: string[];
}

const propertyNames = fc.constantFrom('a', 'b', 'c', 'd');
/** Names no generated schema declares. */
const extraNames = fc.uniqueArray(fc.constantFrom('x', 'y', 'zz', 'constructor', 'toString'), {
  maxLength: 2,
});
const scalar = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean());

/** Structural schemas: objects, maps, arrays, scalars, int-or-string, preserving and embedded nodes. */
function schemaArb(openapiCompatible: boolean): fc.Arbitrary<SchemaNode> {
  const { node } = fc.letrec<{ node: SchemaNode }>((tie) => {
    const props = fc.dictionary(propertyNames, tie('node'), {
      minKeys: openapiCompatible ? 1 : 0,
      maxKeys: 3,
    });
    const kinds: fc.Arbitrary<SchemaNode>[] = [
      fc.constantFrom<SchemaNode>(
        { type: 'string' },
        { type: 'integer' },
        { 'x-kubernetes-int-or-string': true },
      ),
      props.map((properties) => ({ type: 'object', properties })),
      tie('node').map((ap) => ({ type: 'object', additionalProperties: ap })),
      tie('node').map((items) => ({ type: 'array', items })),
    ];
    if (!openapiCompatible) {
      kinds.push(
        props.map((properties) => ({
          type: 'object',
          properties,
          'x-kubernetes-preserve-unknown-fields': true,
        })),
        props.map((properties) => ({ type: 'object', properties, 'x-kubernetes-embedded-resource': true })),
      );
    }
    return { node: fc.oneof({ maxDepth: 4, depthSize: 'small' }, ...kinds) as fc.Arbitrary<SchemaNode> };
  });
  return node;
}

const join = (k: string, p: string) => (p === '' ? k : p.startsWith('[') ? `${k}${p}` : `${k}.${p}`);

/** A value of `s`, with undeclared fields added where `s` does not declare them. */
function sampleArb(s: SchemaNode): fc.Arbitrary<Sample> {
  if (s.type === 'array') {
    return fc.array(sampleArb(s.items as SchemaNode), { maxLength: 3 }).map((xs) => ({
      dirty: xs.map((x) => x.dirty),
      clean: xs.map((x) => x.clean),
      extra: xs.flatMap((x, i) => x.extra.map((p) => join(`[${i}]`, p))),
    }));
  }
  if (s.additionalProperties !== undefined) {
    return fc
      .dictionary(fc.constantFrom('k1', 'k2', 'k.3'), sampleArb(s.additionalProperties as SchemaNode), {
        maxKeys: 2,
      })
      .map((m) => ({
        dirty: Object.fromEntries(Object.entries(m).map(([k, x]) => [k, x.dirty])),
        clean: Object.fromEntries(Object.entries(m).map(([k, x]) => [k, x.clean])),
        extra: Object.entries(m).flatMap(([k, x]) => x.extra.map((p) => join(k, p))),
      }));
  }
  if (s.type !== 'object') return scalar.map((v) => ({ dirty: v, clean: v, extra: [] }));

  const props = Object.entries(s.properties ?? {});
  const declared = fc.record(
    Object.fromEntries(props.map(([k, p]) => [k, sampleArb(p)])) as Record<string, fc.Arbitrary<Sample>>,
    { requiredKeys: [] },
  );
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const unknown = fc.dictionary(fc.constantFrom('x', 'y'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 });
  const meta = fc.record(
    { name: fc.constant('n'), labels: fc.constant({ l: 'v' }) },
    { requiredKeys: ['name'] },
  );
  return fc
    .record({
      declared,
      names: extraNames,
      extraValues: fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 2, maxLength: 2 }),
      unknown,
      meta,
      metaExtra: fc.boolean(),
    })
    .map(({ declared, names, extraValues, unknown, meta, metaExtra }) => {
      const dirty: Record<string, unknown> = {};
      const clean: Record<string, unknown> = {};
      const extra: string[] = [];
      for (const [k, x] of Object.entries(declared) as [string, Sample][]) {
        dirty[k] = x.dirty;
        clean[k] = x.clean;
        extra.push(...x.extra.map((p) => join(k, p)));
      }
      if (embedded) {
        Object.assign(dirty, {
          apiVersion: 'v1',
          kind: 'K',
          metadata: metaExtra ? { ...meta, bogus: 1 } : meta,
        });
        Object.assign(clean, { apiVersion: 'v1', kind: 'K', metadata: meta });
        if (metaExtra) extra.push('metadata.bogus');
      }
      if (preserve) {
        Object.assign(dirty, unknown);
        Object.assign(clean, unknown);
      } else {
        names.forEach((n, i) => {
          Object.defineProperty(dirty, n, {
            value: extraValues[i],
            enumerable: true,
            writable: true,
            configurable: true,
          });
          extra.push(n);
        });
      }
      return { dirty, clean, extra };
    });
}

const schemaAndSample = (openapiCompatible: boolean) =>
  schemaArb(openapiCompatible).chain((schema) => sampleArb(schema).map((sample) => ({ schema, sample })));

/** The same schema as an OpenAPI document would spell it: each object a component, referenced. */
function asDocument(root: SchemaNode): KindSchema {
  const components: Record<string, SchemaNode> = {};
  let n = 0;
  const visit = (s: SchemaNode): SchemaNode => {
    if (s.type === 'array') return { ...s, items: visit(s.items as SchemaNode) };
    if (typeof s.additionalProperties === 'object')
      return { ...s, additionalProperties: visit(s.additionalProperties) };
    if (s.type !== 'object') return s;
    const name = `io.example.T${n++}`;
    components[name] = {
      ...s,
      properties: Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, p]) => [k, visit(p)])),
    };
    const ref = `#/components/schemas/${name}`;
    return n % 2 === 0 ? { $ref: ref } : ({ allOf: [{ $ref: ref }], default: {} } as SchemaNode);
  };
  return { flavor: 'openapi', schema: visit(root), components };
}

const sorted = (xs: string[]) => [...xs].sort();

describe('pruning properties', () => {
  it('removes exactly the undeclared fields: nothing declared goes, nothing undeclared stays', () => {
    fc.assert(
      fc.property(schemaAndSample(false), ({ schema, sample }) => {
        const r = pruneValue(sample.dirty, structural(schema));
        expect(r.value).toEqual(sample.clean);
        expect(sorted(r.fields)).toEqual(sorted(sample.extra));
      }),
      runs(300),
    );
  });

  it('a conforming value is returned as it is', () => {
    fc.assert(
      fc.property(schemaAndSample(false), ({ schema, sample }) => {
        const r = pruneValue(sample.clean, structural(schema));
        expect(r.fields).toEqual([]);
        expect(r.value).toBe(sample.clean);
      }),
      runs(200),
    );
  });

  it('is idempotent, on any JSON under any generated schema', () => {
    fc.assert(
      fc.property(schemaArb(false), fc.jsonValue({ maxDepth: 4 }), (schema, value) => {
        for (const s of [structural(schema), asDocument(schema)]) {
          const once = pruneValue(value, s);
          const twice = pruneValue(once.value, s);
          expect(twice.fields).toEqual([]);
          expect(twice.value).toBe(once.value);
        }
      }),
      runs(300),
    );
  });

  it('reads an OpenAPI document of the same shape as the structural schema it spells', () => {
    fc.assert(
      fc.property(schemaAndSample(true), ({ schema, sample }) => {
        const r = pruneValue(sample.dirty, asDocument(schema));
        expect(r.value).toEqual(sample.clean);
        expect(sorted(r.fields)).toEqual(sorted(sample.extra));
      }),
      runs(200),
    );
  });

  it('never modifies its input', () => {
    fc.assert(
      fc.property(schemaAndSample(false), ({ schema, sample }) => {
        const before = structuredClone(sample.dirty);
        pruneObject(sample.dirty, structural(schema));
        expect(sample.dirty).toEqual(before);
      }),
      runs(100),
    );
  });
});
