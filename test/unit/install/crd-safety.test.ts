import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseYamlOne } from '../../../src/bundle/yaml.js';
import { CRDCheck, type CRDShape, crdUpgradeFindings } from '../../../src/install/crd-safety.js';
import { runs } from '../../support/properties.js';

/** A CRD as an operator ships it: two versions, v1 stored, a schema with each kind of bound. */
const BASE = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10, default: 3}
              mode: {type: string, enum: [fast, safe]}
              name: {type: string, maxLength: 63, pattern: '^[a-z]+$'}
              note: {type: string, nullable: true, description: a note}
              tags: {type: array, maxItems: 5, items: {type: string, minLength: 1}}
              labels: {type: object, additionalProperties: {type: string}}
              config: {type: object, x-kubernetes-preserve-unknown-fields: true}
status:
  storedVersions: [v1beta1, v1]
`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- CRDs changed field by field, in place
type Crd = any;

const base = (): Crd => {
  const parsed = parseYamlOne(BASE, 'base');
  if (!parsed.ok) throw new Error(parsed.problem.message);
  return parsed.value;
};
/** The v1 spec schema of a CRD, to change. */
const spec = (crd: Crd): Crd => crd.spec.versions[1].schema.openAPIV3Schema.properties.spec;

function changed(change: (crd: Crd) => void) {
  const next = base();
  change(next);
  return crdUpgradeFindings(base(), next);
}

describe('CRD upgrade safety: each check', () => {
  it.each([
    [CRDCheck.ScopeChanged, undefined, (c: Crd): void => void (c.spec.scope = 'Cluster')],
    [CRDCheck.StoredVersionDropped, undefined, (c: Crd): void => void c.spec.versions.splice(0, 1)],
    [CRDCheck.ServedVersionRemoved, undefined, (c: Crd): void => void (c.spec.versions[0].served = false)],
    [CRDCheck.FieldRemoved, '.spec.mode', (c: Crd): void => void delete spec(c).properties.mode],
    [CRDCheck.FieldMadeRequired, '.spec.mode', (c: Crd): void => void spec(c).required.push('mode')],
    [CRDCheck.TypeChanged, '.spec.size', (c: Crd): void => void (spec(c).properties.size.type = 'string')],
    [CRDCheck.EnumRestricted, '.spec.mode', (c: Crd): void => void (spec(c).properties.mode.enum = ['fast'])],
    [CRDCheck.EnumRestricted, '.spec.name', (c: Crd): void => void (spec(c).properties.name.enum = ['a'])],
    [CRDCheck.DefaultChanged, '.spec.size', (c: Crd): void => void (spec(c).properties.size.default = 4)],
    [
      CRDCheck.DefaultChanged,
      '.spec.mode',
      (c: Crd): void => void (spec(c).properties.mode.default = 'fast'),
    ],
    [CRDCheck.MaximumLowered, '.spec.size', (c: Crd): void => void (spec(c).properties.size.maximum = 9)],
    [CRDCheck.MaximumLowered, '.spec.tags', (c: Crd): void => void (spec(c).properties.tags.maxItems = 4)],
    [CRDCheck.MaximumLowered, '.spec.name', (c: Crd): void => void (spec(c).properties.name.maxLength = 10)],
    [
      CRDCheck.MaximumLowered,
      '.spec.labels',
      (c: Crd): void => void (spec(c).properties.labels.maxProperties = 3),
    ],
    [CRDCheck.MinimumRaised, '.spec.size', (c: Crd): void => void (spec(c).properties.size.minimum = 2)],
    [
      CRDCheck.MinimumRaised,
      '.spec.tags[*]',
      (c: Crd): void => void (spec(c).properties.tags.items.minLength = 2),
    ],
    [CRDCheck.MinimumRaised, '.spec.tags', (c: Crd): void => void (spec(c).properties.tags.minItems = 1)],
    [
      CRDCheck.PatternChanged,
      '.spec.name',
      (c: Crd): void => void (spec(c).properties.name.pattern = '^[a-z0-9]+$'),
    ],
    [CRDCheck.PatternChanged, '.spec.mode', (c: Crd): void => void (spec(c).properties.mode.pattern = '^f')],
    [CRDCheck.NullableRemoved, '.spec.note', (c: Crd): void => void delete spec(c).properties.note.nullable],
    [
      CRDCheck.PreserveUnknownFieldsRemoved,
      '.spec.config',
      (c: Crd): void => void delete spec(c).properties.config['x-kubernetes-preserve-unknown-fields'],
    ],
    [
      CRDCheck.TypeChanged,
      '.spec.labels{*}',
      (c: Crd): void => void (spec(c).properties.labels.additionalProperties.type = 'integer'),
    ],
  ] as const)('%s at %s', (check, path, change) => {
    const findings = changed(change);
    expect(findings).toEqual([
      expect.objectContaining({
        crd: 'widgets.example.com',
        check,
        ...(path ? { path, version: 'v1' } : {}),
      }),
    ]);
    expect(findings[0]!.message).toMatch(/\S/);
  });

  it('names the stored version dropped, and does not report it again as a served one', () => {
    expect(changed((c) => c.spec.versions.splice(0, 1))).toEqual([
      {
        crd: 'widgets.example.com',
        check: CRDCheck.StoredVersionDropped,
        version: 'v1beta1',
        message: 'version v1beta1 holds stored objects and the new CRD drops it',
      },
    ]);
  });
});

describe('CRD upgrade safety: safe changes pass', () => {
  it.each([
    ['a new optional field', (c: Crd): void => void (spec(c).properties.colour = { type: 'string' })],
    [
      'a new version',
      (c: Crd) =>
        void c.spec.versions.push({
          name: 'v2',
          served: true,
          storage: false,
          schema: c.spec.versions[1].schema,
        }),
    ],
    ['a relaxed maximum', (c: Crd): void => void (spec(c).properties.size.maximum = 20)],
    ['a relaxed minimum', (c: Crd): void => void (spec(c).properties.size.minimum = 0)],
    ['a maximum removed', (c: Crd): void => void delete spec(c).properties.tags.maxItems],
    ['a new enum value', (c: Crd): void => void spec(c).properties.mode.enum.push('careful')],
    ['an enum removed', (c: Crd): void => void delete spec(c).properties.mode.enum],
    ['a description changed', (c: Crd): void => void (spec(c).properties.note.description = 'another note')],
    ['a field no longer required', (c: Crd): void => void (spec(c).required = [])],
    ['nullable added', (c: Crd): void => void (spec(c).properties.mode.nullable = true)],
    [
      'a field removed under preserved unknown fields',
      (c: Crd): void => {
        spec(c)['x-kubernetes-preserve-unknown-fields'] = true;
        delete spec(c).properties.mode;
      },
    ],
  ])('%s', (_, change) => {
    const next = base();
    change(next);
    expect(crdUpgradeFindings(base(), next)).toEqual([]);
  });

  it('a version neither served nor stored any more is removed', () => {
    const live = base();
    live.spec.versions[0].served = false;
    live.status.storedVersions = ['v1'];
    const next = base();
    next.spec.versions.splice(0, 1);
    expect(crdUpgradeFindings(live, next)).toEqual([]);
  });
});

describe('CRD upgrade safety: properties', () => {
  const leaf = fc.record(
    {
      type: fc.constantFrom('string', 'integer', 'boolean'),
      maximum: fc.integer({ min: 0, max: 100 }),
      minLength: fc.integer({ min: 0, max: 5 }),
      enum: fc.array(fc.string(), { minLength: 1, maxLength: 3 }),
      default: fc.string(),
      nullable: fc.boolean(),
    },
    { requiredKeys: ['type'] },
  );
  const schema = fc.letrec<{ node: Record<string, unknown> }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.record({
        type: fc.constant('object'),
        properties: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie('node'), { maxKeys: 4 }),
      }),
    ),
  })).node;
  const crdOf = (s: Record<string, unknown>): CRDShape => ({
    metadata: { name: 'things.example.com' },
    spec: { scope: 'Namespaced', versions: [{ name: 'v1', served: true, schema: { openAPIV3Schema: s } }] },
    status: { storedVersions: ['v1'] },
  });

  it('an identical CRD is always safe', () => {
    fc.assert(
      fc.property(schema, (s) => {
        expect(crdUpgradeFindings(crdOf(s), crdOf(structuredClone(s)))).toEqual([]);
      }),
      runs(200),
    );
  });

  it('adding an optional property anywhere is always safe', () => {
    fc.assert(
      fc.property(schema, leaf, fc.nat(), (s, added, pick) => {
        const next = structuredClone(s);
        const objects: Record<string, unknown>[] = [];
        const collect = (n: Record<string, unknown>) => {
          if (n.type !== 'object') return;
          objects.push(n);
          for (const child of Object.values((n.properties ?? {}) as Record<string, Record<string, unknown>>))
            collect(child);
        };
        collect(next);
        if (objects.length === 0) return;
        const parent = objects[pick % objects.length]!;
        parent.properties = { ...(parent.properties as object), zzzAdded: added };
        expect(crdUpgradeFindings(crdOf(s), crdOf(next))).toEqual([]);
      }),
      runs(200),
    );
  });
});
