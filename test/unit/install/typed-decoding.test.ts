import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { crdKindSchema, type KindSchema } from '../../../src/install/prune.js';
import { fillRequiredZeroValues } from '../../../src/install/zero-values.js';

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

describe('zero values of required fields, as a typed decoding writes them', () => {
  it('fills strings, numbers, booleans and structs, and leaves out maps, slices and int-or-string', () => {
    const input = { spec: { owned: [{ name: 'x' }, {}] } };
    const { value, fields } = fillRequiredZeroValues(input, schema);
    expect(value.spec.owned[0]).toEqual({ name: 'x', count: 0, enabled: false, ref: { kind: '' } });
    expect(value.spec.owned[1]).toEqual({ name: '', count: 0, enabled: false, ref: { kind: '' } });
    expect(fields).toEqual([
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
    expect(fillRequiredZeroValues(complete, schema)).toEqual({ value: complete, fields: [] });
    const partial = { spec: { owned: [{}] } };
    fillRequiredZeroValues(partial, schema);
    expect(JSON.stringify(complete)).toBe(before);
    expect(partial).toEqual({ spec: { owned: [{}] } });
  });

  it('does not add a required field whose parent is missing (a missing slice stays missing)', () => {
    expect(fillRequiredZeroValues({ spec: {} }, schema).value).toEqual({ spec: {} });
  });

  it('does nothing without a structural schema', () => {
    const v = { a: 1 };
    expect(fillRequiredZeroValues(v, undefined).value).toBe(v);
    expect(fillRequiredZeroValues(v, { flavor: 'openapi', schema: {}, components: {} }).value).toBe(v);
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
    const { value, fields } = fillRequiredZeroValues(csv, csvSchema);
    expect(fields).toContain('spec.customresourcedefinitions.owned[0].resources[0].name');
    expect(value.spec.customresourcedefinitions.owned[0]?.resources[0]).toEqual({
      kind: 'Deployment',
      version: 'v1',
      name: '',
    });
  });
});
