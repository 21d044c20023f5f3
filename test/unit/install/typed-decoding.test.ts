import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { crdKindSchema, type KindSchema } from '../../../src/install/prune.js';
import { decodeAsTyped } from '../../../src/install/typed-decoding.js';

const schema: KindSchema = {
  flavor: 'structural',
  schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['owned'],
        properties: {
          owned: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'count', 'enabled', 'ref', 'labels', 'list', 'port'],
              properties: {
                name: { type: 'string' },
                count: { type: 'integer' },
                enabled: { type: 'boolean' },
                ref: {
                  type: 'object',
                  required: ['kind'],
                  properties: { kind: { type: 'string' }, optional: { type: 'string' } },
                },
                labels: { type: 'object', additionalProperties: { type: 'string' } },
                list: { type: 'array', items: { type: 'string' } },
                port: { 'x-kubernetes-int-or-string': true },
              },
            },
          },
        },
      },
    },
  },
};

describe('a manifest as a typed decoding leaves it', () => {
  it('fills strings, numbers, booleans and structs, and leaves out maps, slices and int-or-string', () => {
    const input = { spec: { owned: [{ name: 'x' }, {}] } };
    const { value, filled } = decodeAsTyped(input, schema);
    expect(value.spec.owned[0]).toEqual({ name: 'x', count: 0, enabled: false, ref: { kind: '' } });
    expect(value.spec.owned[1]).toEqual({ name: '', count: 0, enabled: false, ref: { kind: '' } });
    expect(filled).toEqual([
      'spec.owned[0].count',
      'spec.owned[0].enabled',
      'spec.owned[0].ref',
      'spec.owned[1].name',
      'spec.owned[1].count',
      'spec.owned[1].enabled',
      'spec.owned[1].ref',
    ]);
  });

  it('leaves a complete value as it is (the same object) and never changes its input', () => {
    const complete = {
      spec: {
        owned: [{ name: 'a', count: 1, enabled: true, ref: { kind: 'K' }, labels: {}, list: [], port: 1 }],
      },
    };
    const before = JSON.stringify(complete);
    expect(decodeAsTyped(complete, schema)).toEqual({ value: complete, filled: [], nulls: [] });
    const partial = { spec: { owned: [{}] } };
    decodeAsTyped(partial, schema);
    expect(JSON.stringify(complete)).toBe(before);
    expect(partial).toEqual({ spec: { owned: [{}] } });
  });

  it('drops nulls of struct fields, gives map entries their zero value, and keeps nullable nulls', () => {
    const nullable: KindSchema = {
      flavor: 'structural',
      schema: {
        type: 'object',
        properties: {
          args: { type: 'array', items: { type: 'string' } },
          secret: { type: 'object', properties: { name: { type: 'string' } } },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          maybe: { type: 'string', nullable: true },
          name: { type: 'string' },
        },
        required: ['name'],
      },
    };
    const { value, nulls, filled } = decodeAsTyped(
      { args: null, secret: null, labels: { a: null, b: 'x' }, maybe: null, name: null },
      nullable,
    );
    expect(value).toEqual({ labels: { a: '', b: 'x' }, maybe: null, name: '' });
    expect(nulls).toEqual(['args', 'secret', 'labels.a', 'name']);
    expect(filled).toEqual(['name']);
  });

  it('does not add a required field whose parent is missing (a missing slice stays missing)', () => {
    expect(decodeAsTyped({ spec: {} }, schema).value).toEqual({ spec: {} });
  });

  it('does nothing without a structural schema', () => {
    const v = { a: 1 };
    expect(decodeAsTyped(v, undefined).value).toBe(v);
    expect(decodeAsTyped(v, { flavor: 'openapi', schema: {}, components: {} }).value).toBe(v);
  });

  it("fills what Bosun's CSV CRD requires of an owned CRD's resources, as OLM's types write it", () => {
    const crd = parse(
      readFileSync(
        join(import.meta.dirname, '../../../deploy/crds/clusterserviceversions.operators.coreos.com.yaml'),
        'utf8',
      ),
    ) as unknown;
    const csvSchema = crdKindSchema(crd, 'v1alpha1');
    const csv = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: { name: 'x' },
      spec: {
        customresourcedefinitions: {
          owned: [
            { name: 'as.x.io', version: 'v1', kind: 'A', resources: [{ kind: 'Deployment', version: 'v1' }] },
          ],
        },
      },
    };
    const { value, filled } = decodeAsTyped(csv, csvSchema);
    expect(filled).toContain('spec.customresourcedefinitions.owned[0].resources[0].name');
    expect(value.spec.customresourcedefinitions.owned[0]?.resources[0]).toEqual({
      kind: 'Deployment',
      version: 'v1',
      name: '',
    });
  });
});
