import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AnySchema,
  compareCrds,
  compareSchemas,
  type CrdDifference,
  type CrdShape,
} from '../../../src/apis/crds/compare.js';
import { runs } from '../../support/properties.js';

const str = { type: 'string' };

describe('compareSchemas', () => {
  it.each<[string, AnySchema, AnySchema, Omit<CrdDifference, 'version'>[]]>([
    [
      'identical schemas',
      { type: 'object', properties: { a: str } },
      { type: 'object', properties: { a: str } },
      [],
    ],
    [
      'descriptions change nothing',
      { type: 'string', description: 'ours' },
      { type: 'string', description: 'theirs' },
      [],
    ],
    [
      'a field only one side declares is named once, not its subfields',
      { type: 'object', properties: { a: str } },
      { type: 'object', properties: { a: str, b: { type: 'object', properties: { c: str } } } },
      [{ path: '.b', aspect: 'field', ours: undefined, theirs: 'declared' }],
    ],
    [
      'types, at any depth, through list items and map values',
      {
        type: 'object',
        properties: { l: { type: 'array', items: { type: 'object', additionalProperties: str } } },
      },
      {
        type: 'object',
        properties: {
          l: { type: 'array', items: { type: 'object', additionalProperties: { type: 'integer' } } },
        },
      },
      [{ path: '.l[]{}', aspect: 'type', ours: { type: 'string' }, theirs: { type: 'integer' } }],
    ],
    [
      'required fields compare as sets',
      { type: 'object', required: ['b', 'a'], properties: { a: str, b: str } },
      { type: 'object', required: ['a'], properties: { a: str, b: str } },
      [{ path: '', aspect: 'required', ours: ['a', 'b'], theirs: ['a'] }],
    ],
    [
      'enums compare as sets; an enum on one side only is a difference',
      {
        type: 'object',
        properties: { x: { type: 'string', enum: ['B', 'A'] }, y: { type: 'string', enum: ['A'] } },
      },
      { type: 'object', properties: { x: { type: 'string', enum: ['A', 'B'] }, y: str } },
      [{ path: '.y', aspect: 'enum', ours: { enum: ['A'] }, theirs: undefined }],
    ],
    [
      'defaults, preserve-unknown-fields, int-or-string, formats, bounds, patterns',
      {
        type: 'object',
        properties: {
          d: { type: 'string', default: 'TCP' },
          p: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          i: { 'x-kubernetes-int-or-string': true },
          f: { type: 'string', format: 'byte' },
          b: { type: 'integer', maximum: 5 },
          r: { type: 'string', pattern: '^a$' },
        },
      },
      {
        type: 'object',
        properties: {
          d: str,
          p: { type: 'object' },
          i: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          f: str,
          b: { type: 'integer', maximum: 6 },
          r: { type: 'string', pattern: '^b$' },
        },
      },
      [
        { path: '.b', aspect: 'bounds', ours: { maximum: 5 }, theirs: { maximum: 6 } },
        { path: '.d', aspect: 'default', ours: { default: 'TCP' }, theirs: undefined },
        { path: '.f', aspect: 'format', ours: { format: 'byte' }, theirs: undefined },
        {
          path: '.i',
          aspect: 'type',
          ours: undefined,
          theirs: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
        },
        {
          path: '.p',
          aspect: 'preserveUnknownFields',
          ours: { 'x-kubernetes-preserve-unknown-fields': true },
          theirs: undefined,
        },
        { path: '.r', aspect: 'pattern', ours: { pattern: '^a$' }, theirs: { pattern: '^b$' } },
      ],
    ],
    [
      'list and map types, CEL rules',
      {
        type: 'array',
        items: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      },
      {
        type: 'array',
        items: { type: 'object', 'x-kubernetes-validations': [{ rule: 'true' }] },
      },
      [
        { path: '', aspect: 'listType', ours: { 'x-kubernetes-list-map-keys': ['type'] }, theirs: undefined },
        { path: '', aspect: 'listType', ours: { 'x-kubernetes-list-type': 'map' }, theirs: undefined },
        { path: '[]', aspect: 'mapType', ours: { 'x-kubernetes-map-type': 'atomic' }, theirs: undefined },
        {
          path: '[]',
          aspect: 'validations',
          ours: undefined,
          theirs: { 'x-kubernetes-validations': [{ rule: 'true' }] },
        },
      ],
    ],
  ])('%s', (_, ours, theirs, expected) => {
    expect(compareSchemas(ours, theirs)).toEqual(expected);
  });

  // Schemas with a few fields, nested a few levels, with the keywords CRDs use.
  const schema: fc.Arbitrary<AnySchema> = fc.letrec<{ node: AnySchema }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record(
        {
          type: fc.constantFrom('string', 'integer', 'boolean'),
          enum: fc.uniqueArray(fc.constantFrom('A', 'B', 'C'), { minLength: 1 }),
          default: fc.constantFrom('A', 0, false),
          format: fc.constantFrom('byte', 'date-time'),
        },
        { requiredKeys: ['type'] },
      ),
      fc.record(
        {
          type: fc.constant('object'),
          properties: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }),
          required: fc.uniqueArray(fc.constantFrom('a', 'b', 'c')),
          'x-kubernetes-preserve-unknown-fields': fc.constant(true),
        },
        { requiredKeys: ['type', 'properties'] },
      ),
      fc.record({ type: fc.constant('array'), items: tie('node') }),
    ),
  })).node;

  it('a schema does not differ from itself, nor from a copy with its keys reordered', () => {
    const reorder = (s: unknown): unknown =>
      Array.isArray(s)
        ? s.map(reorder)
        : typeof s === 'object' && s !== null
          ? Object.fromEntries(
              Object.entries(s)
                .reverse()
                .map(([k, v]) => [k, reorder(v)]),
            )
          : s;
    fc.assert(
      fc.property(schema, (s) => {
        expect(compareSchemas(s, s)).toEqual([]);
        expect(compareSchemas(s, reorder(s) as AnySchema)).toEqual([]);
      }),
      runs(200),
    );
  });

  it('comparing the other way round finds the same differences, sides swapped', () => {
    fc.assert(
      fc.property(schema, schema, (a, b) => {
        const swap = (d: CrdDifference) => ({ ...d, ours: d.theirs, theirs: d.ours });
        expect(compareSchemas(b, a)).toEqual(compareSchemas(a, b).map(swap));
      }),
      runs(200),
    );
  });
});

describe('compareCrds', () => {
  const crd = (over: Partial<CrdShape['spec']> = {}): CrdShape => ({
    spec: {
      group: 'operators.coreos.com',
      scope: 'Namespaced',
      names: {
        kind: 'Widget',
        listKind: 'WidgetList',
        plural: 'widgets',
        singular: 'widget',
        shortNames: ['w'],
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object' } },
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
        },
      ],
      ...over,
    },
  });
  const v1 = crd().spec.versions[0]!;

  it('finds nothing between a CRD and itself', () => {
    expect(compareCrds(crd(), crd())).toEqual([]);
  });

  it.each<[string, CrdShape, CrdDifference[]]>([
    [
      'short names (as a set), categories and scope',
      crd({
        scope: 'Cluster',
        names: { ...crd().spec.names, shortNames: ['x', 'w'], categories: ['olm'] },
      }),
      [
        { path: 'scope', aspect: 'scope', ours: 'Cluster', theirs: 'Namespaced' },
        { path: 'names.shortNames', aspect: 'names', ours: ['w', 'x'], theirs: ['w'] },
        { path: 'names.categories', aspect: 'names', ours: ['olm'], theirs: undefined },
      ],
    ],
    [
      'a version only one side serves, and served/storage flags',
      crd({
        versions: [
          { ...v1, storage: false },
          { ...v1, name: 'v1alpha1' },
        ],
      }),
      [
        {
          version: 'v1',
          path: 'v1',
          aspect: 'version',
          ours: { served: true, storage: false },
          theirs: { served: true, storage: true },
        },
        {
          version: 'v1alpha1',
          path: 'v1alpha1',
          aspect: 'version',
          ours: { served: true, storage: true },
          theirs: undefined,
        },
      ],
    ],
    [
      'printer columns (not their descriptions) and subresources',
      crd({
        versions: [
          {
            ...v1,
            subresources: {},
            additionalPrinterColumns: [
              { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'How old' },
              { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            ],
          },
        ],
      }),
      [
        {
          version: 'v1',
          path: 'additionalPrinterColumns',
          aspect: 'printerColumns',
          ours: [
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
          ],
          theirs: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
        },
        { version: 'v1', path: 'subresources', aspect: 'subresources', ours: {}, theirs: { status: {} } },
      ],
    ],
    [
      'schema differences carry their version',
      crd({ versions: [{ ...v1, schema: { openAPIV3Schema: { type: 'object', required: ['spec'] } } }] }),
      [{ version: 'v1', path: '', aspect: 'required', ours: ['spec'], theirs: [] }],
    ],
  ])('%s', (_, ours, expected) => {
    expect(compareCrds(ours, crd())).toEqual(expected);
  });
});
