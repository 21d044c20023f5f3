import { describe, expect, it } from 'vitest';
import type { Json } from '../../../../src/bundle/upgrade/json.js';
import { checkV1Schema } from '../../../../src/bundle/upgrade/structural.js';

const at = 's';
const check = (schema: Json, statusSubresource = false) =>
  checkV1Schema(schema, at, { statusSubresource }).map((v) => `${v.field}: ${v.message}`);
const root = (props: Record<string, Json>, extra: Record<string, Json> = {}): Json => ({
  type: 'object',
  properties: props,
  ...extra,
});

describe('checkV1Schema: what the API server refuses in a v1 CRD schema', () => {
  it('accepts a structural schema', () => {
    expect(
      check(
        root({
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } },
          spec: {
            type: 'object',
            properties: {
              size: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
              ports: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['port'],
                items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' } } },
              },
              labels: { type: 'object', additionalProperties: { type: 'string' } },
              template: {
                type: 'object',
                'x-kubernetes-embedded-resource': true,
                'x-kubernetes-preserve-unknown-fields': true,
              },
            },
            oneOf: [{ required: ['size'] }, { required: ['ports'] }],
          },
        }),
      ),
    ).toEqual([]);
  });

  it.each<[string, Json, boolean, string[]]>([
    ['a field without a type', root({ a: {} }), false, ['s.properties.a.type: must not be empty']],
    [
      'an array without items',
      root({ a: { type: 'array' } }),
      false,
      ['s.properties.a.items: must be a schema for an array'],
    ],
    [
      'a type in a value validation',
      root({ a: { type: 'string', anyOf: [{ type: 'string' }] } }),
      false,
      ['s.properties.a.anyOf[0].type: must be empty to be structural'],
    ],
    [
      'a value validation naming an undeclared field',
      root({ a: { type: 'object', allOf: [{ properties: { b: {} } }] } }),
      false,
      [
        's.properties.a.properties.b: must be declared because s.properties.a.allOf[0].properties.b constrains it',
      ],
    ],
    [
      'uniqueItems',
      root({ a: { type: 'array', items: { type: 'string' }, uniqueItems: true } }),
      false,
      ['s.properties.a.uniqueItems: cannot be true'],
    ],
    [
      'additionalProperties beside properties',
      root({ a: { type: 'object', properties: { b: { type: 'string' } }, additionalProperties: false } }),
      false,
      ['s.properties.a.additionalProperties: and properties are mutually exclusive'],
    ],
    [
      'additionalProperties at the root',
      { type: 'object', additionalProperties: true },
      false,
      ['s.additionalProperties: must not be used at the root'],
    ],
    [
      'metadata restricted beyond name',
      root({ metadata: { type: 'object', properties: { labels: { type: 'object' } } } }),
      false,
      ['s.properties.metadata: must not specify anything other than name and generateName'],
    ],
    [
      'kind that is not a string',
      root({ kind: { type: 'object' } }),
      false,
      ['s.properties.kind.type: must be string'],
    ],
    [
      'nullable at the root',
      { type: 'object', nullable: true },
      false,
      ['s.nullable: cannot be true at the root'],
    ],
    [
      'a forbidden keyword',
      root({ a: { type: 'string', $ref: '#/definitions/x' } }),
      false,
      ['s.properties.a.$ref: is not supported'],
    ],
    [
      'a key that is not a keyword',
      root({ a: { type: 'string', descripton: 'x' } }),
      false,
      ['s.properties.a.descripton: is not a schema keyword'],
    ],
    [
      'a pattern RE2 refuses',
      root({ a: { type: 'string', pattern: '(?!x)' } }),
      false,
      [expect.stringMatching(/^s\.properties\.a\.pattern: lookaround/) as unknown as string],
    ],
    [
      'a map list key that is not required',
      root({
        a: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['k'],
          items: { type: 'object', properties: { k: { type: 'string' } } },
        },
      }),
      false,
      ['s.properties.a.x-kubernetes-list-map-keys: k must be required or have a default'],
    ],
    [
      'objects in a set that are not atomic',
      root({
        a: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object' } },
      }),
      false,
      ['s.properties.a.items.x-kubernetes-map-type: must be atomic as item of a set'],
    ],
    [
      'int-or-string with preserve-unknown-fields',
      root({
        a: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true },
      }),
      false,
      ['s.properties.a.x-kubernetes-preserve-unknown-fields: must be false with int-or-string'],
    ],
    [
      'an embedded resource that is not an object',
      root({ a: { type: 'string', 'x-kubernetes-embedded-resource': true } }),
      false,
      [
        's.properties.a.type: must be object for an embedded resource',
        's.properties.a.properties: must not be empty for an embedded resource that does not preserve unknown fields',
      ],
    ],
    [
      'a keyword the status subresource forbids at the root',
      { type: 'object', minProperties: 1 },
      true,
      ['s.minProperties: is not allowed at the root when the status subresource is enabled'],
    ],
    [
      'a default in top-level metadata',
      root({ metadata: { type: 'object', properties: { name: { type: 'string', default: 'x' } } } }),
      false,
      ['s.properties.metadata.properties.name.default: is not allowed here'],
    ],
  ])('refuses %s', (_, schema, status, expected) => {
    expect(check(schema, status)).toEqual(expected);
  });
});
