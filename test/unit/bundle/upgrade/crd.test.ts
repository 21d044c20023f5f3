import { describe, expect, it } from 'vitest';
import { ApprovalAnnotation, convertCRD, UnapprovedValue } from '../../../../src/bundle/upgrade/crd.js';
import type { JsonObject } from '../../../../src/bundle/upgrade/json.js';

const P = 'x-kubernetes-preserve-unknown-fields';

function legacy(spec: JsonObject, metadata: JsonObject = { name: 'gizmos.example.com' }): JsonObject {
  return { apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'CustomResourceDefinition', metadata, spec };
}

const base: JsonObject = { group: 'example.com', names: { kind: 'Gizmo', plural: 'gizmos' } };

describe('convertCRD: v1beta1 defaults, then v1beta1 → v1', () => {
  it('applies v1beta1 defaults: scope, singular, listKind, versions from version, conversion None', () => {
    const r = convertCRD(legacy({ ...base, version: 'v1' }));
    expect(r.errors).toEqual([]);
    expect(r.object).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gizmos.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Gizmo', plural: 'gizmos', singular: 'gizmo', listKind: 'GizmoList' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', [P]: true } },
          },
        ],
        conversion: { strategy: 'None' },
      },
    });
  });

  it('keeps names and scope the author set', () => {
    const r = convertCRD(
      legacy({
        ...base,
        scope: 'Cluster',
        names: { kind: 'Gizmo', plural: 'gizmos', singular: 'giz', listKind: 'Gizmos', shortNames: ['gz'] },
        version: 'v1',
      }),
    );
    expect(r.object.spec).toMatchObject({
      scope: 'Cluster',
      names: { kind: 'Gizmo', plural: 'gizmos', singular: 'giz', listKind: 'Gizmos', shortNames: ['gz'] },
    });
  });

  it('copies top-level validation, subresources and printer columns into every version', () => {
    const r = convertCRD(
      legacy({
        ...base,
        version: 'v2',
        versions: [
          { name: 'v2', served: true, storage: true },
          { name: 'v1', served: true, storage: false },
        ],
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
        },
        additionalPrinterColumns: [
          {
            name: 'Replicas',
            type: 'integer',
            JSONPath: '.spec.replicas',
            description: 'how many',
            priority: 1,
          },
          { name: 'Age', type: 'date', JSONPath: '.metadata.creationTimestamp' },
        ],
        validation: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } },
      }),
    );
    const versions = (r.object.spec as JsonObject).versions as JsonObject[];
    expect(versions).toHaveLength(2);
    for (const v of versions) {
      expect(v.subresources).toEqual({
        status: {},
        scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
      });
      expect(v.additionalPrinterColumns).toEqual([
        {
          name: 'Replicas',
          type: 'integer',
          jsonPath: '.spec.replicas',
          description: 'how many',
          priority: 1,
        },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ]);
      expect(v.schema).toEqual({
        openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', [P]: true } }, [P]: true },
      });
    }
    expect(versions.map((v) => [v.name, v.storage])).toEqual([
      ['v2', true],
      ['v1', false],
    ]);
    expect(r.object.spec).not.toHaveProperty('version');
    expect(r.object.spec).not.toHaveProperty('validation');
    expect(r.notes).toEqual([]);
  });

  it('keeps per-version schemas, each repaired for its own status subresource', () => {
    const r = convertCRD(
      legacy({
        ...base,
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', minProperties: 1 } },
          },
          {
            name: 'v1beta1',
            served: false,
            storage: false,
            schema: { openAPIV3Schema: { type: 'object', minProperties: 1 } },
          },
        ],
      }),
    );
    const versions = (r.object.spec as JsonObject).versions as JsonObject[];
    expect(versions.map((v) => v.schema)).toEqual([
      { openAPIV3Schema: { type: 'object', [P]: true } },
      { openAPIV3Schema: { type: 'object', minProperties: 1, [P]: true } },
    ]);
    expect(r.notes).toEqual([
      {
        field: 'spec.versions[0].schema.openAPIV3Schema.minProperties',
        message: expect.stringMatching(/status subresource/),
      },
    ]);
  });

  it('with preserveUnknownFields: false, the schema is kept as written (no preserve flags added)', () => {
    const schema = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } },
    };
    const r = convertCRD(
      legacy({
        ...base,
        version: 'v1',
        preserveUnknownFields: false,
        validation: { openAPIV3Schema: schema },
      }),
    );
    expect(((r.object.spec as JsonObject).versions as JsonObject[])[0]!.schema).toEqual({
      openAPIV3Schema: schema,
    });
    expect(r.object.spec).not.toHaveProperty('preserveUnknownFields');
  });

  it('moves a conversion webhook under conversion.webhook, with v1beta1 defaults', () => {
    const r = convertCRD(
      legacy({
        ...base,
        versions: [
          { name: 'v1', served: true, storage: true },
          { name: 'v2', served: true, storage: false },
        ],
        preserveUnknownFields: false,
        conversion: {
          strategy: 'Webhook',
          webhookClientConfig: {
            caBundle: 'Cg==',
            service: { namespace: 'ops', name: 'hook', path: '/convert' },
          },
        },
      }),
    );
    expect((r.object.spec as JsonObject).conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1beta1'],
        clientConfig: {
          caBundle: 'Cg==',
          service: { namespace: 'ops', name: 'hook', path: '/convert', port: 443 },
        },
      },
    });
  });

  it('keeps the conversion review versions the author declared', () => {
    const r = convertCRD(
      legacy({
        ...base,
        version: 'v1',
        conversion: {
          strategy: 'Webhook',
          conversionReviewVersions: ['v1', 'v1beta1'],
          webhookClientConfig: { url: 'https://h/c' },
        },
      }),
    );
    expect((r.object.spec as JsonObject).conversion).toEqual({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig: { url: 'https://h/c' } },
    });
  });

  it('drops webhook settings beside strategy None, noted', () => {
    const r = convertCRD(
      legacy({ ...base, version: 'v1', conversion: { strategy: 'None', conversionReviewVersions: ['v1'] } }),
    );
    expect((r.object.spec as JsonObject).conversion).toEqual({ strategy: 'None' });
    expect(r.notes.map((n) => n.field)).toEqual(['spec.conversion']);
  });

  it('marks a CRD of a group Kubernetes reserves as unapproved, which v1 requires', () => {
    const r = convertCRD(
      legacy({ ...base, group: 'keda.k8s.io', version: 'v1' }, { name: 'gizmos.keda.k8s.io' }),
    );
    expect(r.object.metadata).toEqual({
      name: 'gizmos.keda.k8s.io',
      annotations: { [ApprovalAnnotation]: UnapprovedValue },
    });
    expect(r.notes.map((n) => n.field)).toEqual([`metadata.annotations["${ApprovalAnnotation}"]`]);
  });

  it('keeps an approval a reserved-group CRD already has', () => {
    const metadata = {
      name: 'gizmos.x.k8s.io',
      annotations: { [ApprovalAnnotation]: 'https://github.com/kubernetes/enhancements/pull/1111' },
    };
    const r = convertCRD(legacy({ ...base, group: 'x.k8s.io', version: 'v1' }, metadata));
    expect(r.object.metadata).toEqual(metadata);
    expect(r.notes).toEqual([]);
  });

  it('drops a printer column the API server would refuse, noted', () => {
    const r = convertCRD(
      legacy({
        ...base,
        version: 'v1',
        additionalPrinterColumns: [{ name: 'X', type: 'quantity', JSONPath: '.spec.x' }],
      }),
    );
    const v = ((r.object.spec as JsonObject).versions as JsonObject[])[0]!;
    expect(v).not.toHaveProperty('additionalPrinterColumns');
    expect(r.notes).toEqual([
      {
        field: 'spec.additionalPrinterColumns[0]',
        message: expect.stringMatching(/type "quantity" is not one of/),
      },
    ]);
  });

  it('uses the top-level schema when a version has its own too, as the API server converts', () => {
    const r = convertCRD(
      legacy({
        ...base,
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', minProperties: 2 } },
          },
        ],
        validation: { openAPIV3Schema: { type: 'object' } },
      }),
    );
    expect(((r.object.spec as JsonObject).versions as JsonObject[])[0]!.schema).toEqual({
      openAPIV3Schema: { type: 'object', [P]: true },
    });
    expect(r.notes.map((n) => n.field)).toEqual(['spec.versions[0].schema']);
  });

  const refusals: { name: string; spec: JsonObject; fields: string[] }[] = [
    {
      name: 'no group',
      spec: { names: { kind: 'Gizmo', plural: 'gizmos' }, version: 'v1' },
      fields: ['spec.group'],
    },
    {
      name: 'no kind or plural',
      spec: { group: 'example.com', names: {}, version: 'v1' },
      fields: ['spec.names.kind', 'spec.names.plural'],
    },
    { name: 'no version at all', spec: { ...base }, fields: ['spec.versions'] },
    {
      name: 'two storage versions',
      spec: {
        ...base,
        versions: [
          { name: 'v1', served: true, storage: true },
          { name: 'v2', served: true, storage: true },
        ],
      },
      fields: ['spec.versions'],
    },
  ];
  for (const c of refusals) {
    it(`refuses what no conversion can supply: ${c.name}`, () => {
      expect(convertCRD(legacy(c.spec)).errors.map((e) => e.field)).toEqual(c.fields);
    });
  }

  it('does not change its input', () => {
    const input = legacy({
      ...base,
      version: 'v1',
      validation: { openAPIV3Schema: { properties: { a: {} } } },
    });
    const copy = structuredClone(input);
    convertCRD(input);
    expect(input).toEqual(copy);
  });
});
