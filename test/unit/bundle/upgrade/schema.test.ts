import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Json, JsonObject } from '../../../../src/bundle/upgrade/json.js';
import { repairSchema, type SchemaRepairOptions } from '../../../../src/bundle/upgrade/schema.js';
import { checkV1Schema } from '../../../../src/bundle/upgrade/structural.js';

const at = 'spec.validation.openAPIV3Schema';
const P = 'x-kubernetes-preserve-unknown-fields';
const strict: SchemaRepairOptions = { preserveUnknownFields: false, statusSubresource: false };
const preserving: SchemaRepairOptions = { preserveUnknownFields: true, statusSubresource: false };

/** The repaired `spec` property of a root schema whose `spec` is `spec`. */
function repairSpec(spec: Json, opts = strict) {
  const r = repairSchema({ type: 'object', properties: { spec } }, at, opts);
  return { spec: (r.schema.properties as JsonObject).spec, notes: r.notes, schema: r.schema };
}

const specAt = `${at}.properties.spec`;

describe('repairSchema: rules, one at a time', () => {
  const cases: {
    name: string;
    spec: Json;
    opts?: SchemaRepairOptions;
    want: Json;
    notes?: { field: string; message: RegExp }[];
  }[] = [
    {
      name: 'keys that are not schema keywords are dropped silently, as the API server ignored them',
      spec: { type: 'object', properies: { a: { type: 'string' } }, name: { type: 'string' } },
      want: { type: 'object' },
    },
    {
      name: 'a field with properties but no type accepts any value, as it did',
      spec: { properties: { a: { type: 'string' } } },
      want: { properties: { a: { type: 'string' } }, [P]: true },
    },
    {
      name: 'a field with nothing but a description accepts any value',
      spec: { description: 'anything' },
      want: { description: 'anything', [P]: true },
    },
    {
      name: 'items, enum of strings and string keywords imply a type',
      spec: {
        type: 'object',
        properties: { list: { items: { type: 'string' } }, mode: { enum: ['a', 'b'] } },
      },
      want: {
        type: 'object',
        properties: {
          list: { items: { type: 'string' }, type: 'array' },
          mode: { enum: ['a', 'b'], type: 'string' },
        },
      },
    },
    {
      name: 'anyOf integer/string becomes x-kubernetes-int-or-string in its one allowed form',
      spec: {
        anyOf: [
          { type: 'integer', description: 'n' },
          { type: 'string', pattern: '^[0-9]+%$' },
        ],
      },
      want: {
        pattern: '^[0-9]+%$',
        anyOf: [{ type: 'integer' }, { type: 'string' }],
        'x-kubernetes-int-or-string': true,
      },
    },
    {
      name: 'oneOf string/integer is int-or-string too',
      spec: { oneOf: [{ type: 'string' }, { type: 'integer', minimum: 0 }] },
      want: {
        minimum: 0,
        anyOf: [{ type: 'integer' }, { type: 'string' }],
        'x-kubernetes-int-or-string': true,
      },
    },
    {
      name: 'the int-or-string flag drops a preserve flag beside it',
      spec: { 'x-kubernetes-int-or-string': true, [P]: true },
      want: { 'x-kubernetes-int-or-string': true },
    },
    {
      name: 'a type all branches agree on moves to the field; the branches keep their other rules',
      spec: {
        oneOf: [
          { type: 'string', minLength: 1 },
          { type: 'string', pattern: '^a' },
        ],
      },
      want: { oneOf: [{ minLength: 1 }, { pattern: '^a' }], type: 'string' },
    },
    {
      name: 'branches of different types cannot be said in v1: any value, noted',
      spec: { oneOf: [{ type: 'string' }, { type: 'object' }] },
      want: { oneOf: [{}, {}], [P]: true },
      notes: [{ field: specAt, message: /one of the types object, string/ }],
    },
    {
      name: 'descriptions in value validations go silently; additionalProperties there is noted',
      spec: {
        type: 'object',
        properties: { a: { type: 'string' } },
        anyOf: [{ description: 'd', required: ['a'], additionalProperties: false }],
      },
      want: { type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ required: ['a'] }] },
      notes: [
        {
          field: `${specAt}.anyOf[0].additionalProperties`,
          message: /not allowed inside a value validation/,
        },
      ],
    },
    {
      name: 'a field a value validation constrains is declared in the structure',
      spec: { type: 'object', oneOf: [{ properties: { b: { type: 'integer', minimum: 1 } } }] },
      want: {
        type: 'object',
        oneOf: [{ properties: { b: { minimum: 1 } } }],
        properties: { b: { type: 'integer' } },
      },
    },
    {
      name: 'uniqueItems: true is forbidden in v1 and noted as lost',
      spec: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      want: { type: 'array', items: { type: 'string' } },
      notes: [{ field: `${specAt}.uniqueItems`, message: /repeated items are accepted/ }],
    },
    {
      name: 'additionalProperties: false beside properties is dropped, noted',
      spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      want: { type: 'object', properties: { a: { type: 'string' } } },
      notes: [{ field: `${specAt}.additionalProperties`, message: /no longer refused/ }],
    },
    {
      name: 'additionalProperties: true beside properties is allowed and kept',
      spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true },
      want: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true },
    },
    {
      name: 'an array without items gets items that accept anything',
      spec: { type: 'array' },
      want: { type: 'array', items: { [P]: true } },
    },
    {
      name: 'items as a list of one schema becomes that schema, noted',
      spec: { type: 'array', items: [{ type: 'string' }] },
      want: { type: 'array', items: { type: 'string' } },
      notes: [{ field: `${specAt}.items`, message: /every item/ }],
    },
    {
      name: 'type names that are not OpenAPI types are read as what they mean',
      spec: { type: 'int32' },
      want: { type: 'integer', format: 'int32' },
      notes: [{ field: `${specAt}.type`, message: /read as integer/ }],
    },
    {
      name: 'a list of types with null is one type and nullable',
      spec: { type: ['string', 'null'] },
      want: { type: 'string', nullable: true },
    },
    {
      name: 'forbidden keywords carrying validation are noted; id goes silently',
      spec: { type: 'object', id: 'x', patternProperties: { '^a': { type: 'string' } } },
      want: { type: 'object' },
      notes: [{ field: `${specAt}.patternProperties`, message: /not supported/ }],
    },
    {
      name: 'a pattern RE2 cannot compile is dropped, noted',
      spec: { type: 'string', pattern: '^(?!kube-).*$' },
      want: { type: 'string' },
      notes: [{ field: `${specAt}.pattern`, message: /lookaround/ }],
    },
    {
      name: 'a numeric exclusiveMaximum (JSON Schema draft 6) becomes maximum with the flag',
      spec: { type: 'integer', exclusiveMaximum: 10 },
      want: { type: 'integer', maximum: 10, exclusiveMaximum: true },
      notes: [{ field: `${specAt}.exclusiveMaximum`, message: /maximum: 10/ }],
    },
    {
      name: 'required written as a boolean cannot be decoded and is dropped, noted',
      spec: { type: 'string', required: true },
      want: { type: 'string' },
      notes: [{ field: `${specAt}.required`, message: /cannot decode/ }],
    },
    {
      name: 'a map list whose key is neither required nor defaulted becomes an atomic list, noted',
      spec: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['port', 'protocol'],
        items: {
          type: 'object',
          required: ['port'],
          properties: { port: { type: 'integer' }, protocol: { type: 'string' } },
        },
      },
      want: {
        type: 'array',
        items: {
          type: 'object',
          required: ['port'],
          properties: { port: { type: 'integer' }, protocol: { type: 'string' } },
        },
      },
      notes: [
        { field: `${specAt}.x-kubernetes-list-type`, message: /protocol is neither required nor defaulted/ },
      ],
    },
    {
      name: 'objects in a set list are made atomic, as v1 requires',
      spec: {
        type: 'array',
        'x-kubernetes-list-type': 'set',
        items: { type: 'object', properties: { a: { type: 'string' } } },
      },
      want: {
        type: 'array',
        'x-kubernetes-list-type': 'set',
        items: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-map-type': 'atomic' },
      },
    },
    {
      name: 'a property whose schema is not a mapping accepts any value, noted',
      spec: { type: 'object', properties: { a: 'string' } },
      want: { type: 'object', properties: { a: { [P]: true } } },
      notes: [{ field: `${specAt}.properties.a`, message: /not a schema/ }],
    },
    {
      name: 'with preserveUnknownFields every object node keeps unknown fields, as v1beta1 did',
      spec: {
        type: 'object',
        properties: { inner: { type: 'object', properties: { a: { type: 'string' } } } },
      },
      opts: preserving,
      want: {
        type: 'object',
        properties: { inner: { type: 'object', properties: { a: { type: 'string' } }, [P]: true } },
        [P]: true,
      },
    },
    {
      name: 'maps (additionalProperties) need no preserve flag: every key is declared',
      spec: { type: 'object', additionalProperties: { type: 'string' } },
      opts: preserving,
      want: { type: 'object', additionalProperties: { type: 'string' } },
    },
    {
      name: 'defaults were refused by v1beta1 with preserveUnknownFields; dropped, noted',
      spec: { type: 'string', default: 'x' },
      opts: preserving,
      want: { type: 'string' },
      notes: [{ field: `${specAt}.default`, message: /never applied/ }],
    },
    {
      name: 'defaults are kept where v1beta1 applied them (preserveUnknownFields: false)',
      spec: { type: 'string', default: 'x' },
      want: { type: 'string', default: 'x' },
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const r = repairSpec(c.spec, c.opts);
      expect(r.spec).toEqual(c.want);
      expect(r.notes.map((n) => n.field)).toEqual((c.notes ?? []).map((n) => n.field));
      (c.notes ?? []).forEach((n, i) => expect(r.notes[i]!.message).toMatch(n.message));
      expect(checkV1Schema(r.schema, at, c.opts ?? strict)).toEqual([]);
    });
  }
});

describe('repairSchema: the root', () => {
  it('is an object without nullable or additionalProperties, and its metadata restricts only name', () => {
    const r = repairSchema(
      {
        nullable: true,
        additionalProperties: false,
        properties: {
          apiVersion: { type: 'object' },
          kind: {},
          metadata: {
            description: 'm',
            required: ['labels'],
            properties: { name: { type: 'string', maxLength: 63 }, labels: { type: 'object' } },
          },
        },
      },
      at,
      strict,
    );
    expect(r.schema).toEqual({
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } },
      },
    });
    expect(r.notes.map((n) => n.field)).toEqual([
      `${at}.properties.apiVersion.type`,
      `${at}.properties.metadata`,
      `${at}.additionalProperties`,
      `${at}.nullable`,
    ]);
    expect(r.notes[1]!.message).toMatch(/required, properties.labels dropped/);
  });

  it('with a status subresource, keeps only the keywords v1 allows at the root', () => {
    const r = repairSchema(
      { type: 'object', minProperties: 1, description: 'd', properties: { spec: { type: 'object' } } },
      at,
      { preserveUnknownFields: false, statusSubresource: true },
    );
    expect(r.schema).toEqual({ type: 'object', description: 'd', properties: { spec: { type: 'object' } } });
    expect(r.notes).toEqual([
      { field: `${at}.minProperties`, message: expect.stringMatching(/status subresource/) },
    ]);
  });

  it('that is not a mapping is replaced by one that accepts any object', () => {
    const r = repairSchema('object', at, strict);
    expect(r.schema).toEqual({ type: 'object', [P]: true });
    expect(r.notes).toHaveLength(1);
  });
});

/** Schema-like trees: keywords (right and wrong shapes), misspelt keys and nesting. */
const schemaTree: fc.Arbitrary<Json> = fc.letrec<{ node: Json }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Json>(null, 'string', 3, true),
    fc.dictionary(
      fc.constantFrom(
        'type',
        'properties',
        'items',
        'additionalProperties',
        'anyOf',
        'oneOf',
        'allOf',
        'not',
        'required',
        'enum',
        'pattern',
        'nullable',
        'uniqueItems',
        'description',
        'default',
        'metadata',
        'apiVersion',
        'x-kubernetes-int-or-string',
        'x-kubernetes-preserve-unknown-fields',
        'x-kubernetes-embedded-resource',
        'x-kubernetes-list-type',
        'x-kubernetes-list-map-keys',
        'x-kubernetes-map-type',
        'properies',
      ),
      fc.oneof(
        fc.constantFrom<Json>(
          'object',
          'array',
          'string',
          'integer',
          'null',
          'map',
          'set',
          'atomic',
          true,
          false,
          1,
        ),
        fc.constantFrom<Json>(['a'], ['integer', 'string'], [], '^(?=a)', '[a-z]+'),
        tie('node'),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'metadata', 'kind', 'spec'), tie('node'), { maxKeys: 3 }),
      ),
      { maxKeys: 5 },
    ),
  ),
})).node;

describe('repairSchema: properties', () => {
  const options = fc.record({ preserveUnknownFields: fc.boolean(), statusSubresource: fc.boolean() });

  it('a repaired schema breaks no v1 rule the checker knows, whatever the input', () => {
    fc.assert(
      fc.property(schemaTree, options, (tree, opts) => {
        const r = repairSchema(tree, at, opts);
        expect(checkV1Schema(r.schema, at, opts)).toEqual([]);
      }),
    );
  });

  it('repairing is idempotent: a repaired schema is left as it is, without notes', () => {
    fc.assert(
      fc.property(schemaTree, options, (tree, opts) => {
        const once = repairSchema(tree, at, opts);
        const twice = repairSchema(once.schema, at, opts);
        expect(twice.schema).toEqual(once.schema);
        expect(twice.notes).toEqual([]);
      }),
    );
  });

  it('never changes its input', () => {
    fc.assert(
      fc.property(schemaTree, options, (tree, opts) => {
        const copy = structuredClone(tree);
        repairSchema(tree, at, opts);
        expect(tree).toEqual(copy);
      }),
    );
  });
});
