/**
 * A bundle published with removed API versions (a v1beta1 CRD, an rbac v1beta1 ClusterRole)
 * installs through Bosun's InstallPlan and CSV controllers on a real API server: the objects are
 * converted when the bundle is decoded, and the operator reaches Succeeded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { InstallPlan } from '../../../src/apis/operators.js';
import {
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  get,
  type Harness,
  inline,
  installOperatorCrds,
  ipPath,
  startInstallControllers,
  testCatalog,
  testCSV,
} from '../controllers/install-harness.js';
import { eventually, freshNamespace } from '../support.js';

const Legacy = {
  package: 'legacyop',
  csv: 'legacyop.v0.1.0',
  crd: 'gizmos.legacyop.bosun.dev',
  source: 'legacy',
};

const legacyCrd = {
  apiVersion: 'apiextensions.k8s.io/v1beta1',
  kind: 'CustomResourceDefinition',
  metadata: { name: Legacy.crd },
  spec: {
    group: 'legacyop.bosun.dev',
    version: 'v1alpha1',
    names: { kind: 'Gizmo', plural: 'gizmos' },
    subresources: { status: {} },
    additionalPrinterColumns: [{ name: 'Size', type: 'integer', JSONPath: '.spec.size' }],
    validation: {
      openAPIV3Schema: {
        properties: {
          spec: {
            properties: {
              size: { type: 'integer', minimum: 1 },
              tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
            },
          },
        },
      },
    },
  },
};

const legacyRole = {
  apiVersion: 'rbac.authorization.k8s.io/v1beta1',
  kind: 'ClusterRole',
  metadata: { name: 'legacyop-metrics-reader' },
  rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
};

function legacyBundle(): BundleDoc {
  const csv = testCSV('0.1.0');
  return {
    schema: 'olm.bundle',
    package: Legacy.package,
    name: Legacy.csv,
    image: '',
    properties: [
      { type: 'olm.package', value: { packageName: Legacy.package, version: '0.1.0' } },
      inline(legacyCrd),
      inline(legacyRole),
      inline({
        ...csv,
        metadata: { ...csv.metadata, name: Legacy.csv },
        spec: {
          ...csv.spec,
          customresourcedefinitions: { owned: [{ name: Legacy.crd, version: 'v1alpha1', kind: 'Gizmo' }] },
        },
      }),
    ],
  };
}

let h: Harness;

beforeAll(async () => {
  await installOperatorCrds();
  h = await startInstallControllers();
  h.catalogs.set({
    ref: { namespace: testCatalog.namespace, name: Legacy.source },
    priority: 0,
    config: {
      packages: [{ schema: 'olm.package', name: Legacy.package, defaultChannel: 'stable' }],
      channels: [
        { schema: 'olm.channel', package: Legacy.package, name: 'stable', entries: [{ name: Legacy.csv }] },
      ],
      bundles: [legacyBundle()],
      deprecations: [],
      others: [],
    },
    digest: 'legacy-1',
    fetchedAt: Date.now(),
  });
});

afterAll(async () => {
  await h?.stop();
});

describe('a bundle with removed API versions', () => {
  it('installs: its v1beta1 CRD and ClusterRole are converted, and the CSV reaches Succeeded', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('legacy');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns, { name: 'install-legacy', csv: Legacy.csv, source: Legacy.source });

    const ip = await eventually(
      'the InstallPlan to finish',
      async () => {
        const p = await get<InstallPlan>(client, ipPath(ns, 'install-legacy'));
        return p?.status?.phase === 'Complete' || p?.status?.phase === 'Failed' ? p : undefined;
      },
      120_000,
    );
    expect(ip.status?.phase, JSON.stringify(ip.status?.conditions)).toBe('Complete');
    expect(
      ip.status?.plan?.map((s) => `${s.resource.group}/${s.resource.version} ${s.resource.kind}`),
    ).toEqual(
      expect.arrayContaining([
        'apiextensions.k8s.io/v1 CustomResourceDefinition',
        'rbac.authorization.k8s.io/v1 ClusterRole',
      ]),
    );

    const crd = await get<{ spec: { versions: Record<string, unknown>[] } }>(
      client,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${Legacy.crd}`,
    );
    expect(crd?.spec.versions).toEqual([
      expect.objectContaining({
        name: 'v1alpha1',
        additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            properties: {
              // v1beta1 accepted any value where no type was given; so does the converted schema.
              spec: {
                'x-kubernetes-preserve-unknown-fields': true,
                properties: {
                  size: { type: 'integer', minimum: 1 },
                  tags: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          },
        },
      }),
    ]);
    expect(
      await get(client, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${legacyRole.metadata.name}`),
    ).toMatchObject({ rules: legacyRole.rules });

    await csvInPhase(client, ns, Legacy.csv, 'Succeeded', 'InstallSucceeded');

    // Custom resources keep what the v1beta1 schema did not declare, as they did in v1beta1.
    const gizmos = `/apis/legacyop.bosun.dev/v1alpha1/namespaces/${ns}/gizmos`;
    await client.request({
      method: 'POST',
      path: gizmos,
      body: {
        apiVersion: 'legacyop.bosun.dev/v1alpha1',
        kind: 'Gizmo',
        metadata: { name: 'g' },
        spec: { size: 1, extra: { kept: true } },
      },
    });
    expect(await get(client, `${gizmos}/g`)).toMatchObject({ spec: { size: 1, extra: { kept: true } } });
  });
});
