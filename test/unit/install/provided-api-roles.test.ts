import { describe, expect, it } from 'vitest';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import {
  apiAggregationLabel,
  apiHash,
  type ClusterRole,
  providedApiRoles,
  providedApis,
  roleNeedsApply,
} from '../../../src/install/provided-api-roles.js';

describe('apiHash', () => {
  // Computed with OLM's own function (cache.APIKeyToGVKHash, FNV-1a 64 of Kind.version.group).
  it.each([
    ['Widget', 'v1alpha1', 'sample.bosun.dev', '950840cc6d859215'],
    ['EtcdCluster', 'v1beta2', 'etcd.database.coreos.com', 'c571d720f17289d3'],
    ['Gizmo', 'v1alpha1', 'gizmos.test', '2f1555530311fa46'],
    ['A', 'v1', 'b', 'b3ee9ee767100d9f'],
    // Fifteen digits: Go's %x writes no leading zero.
    ['K12', 'v1', 'x.io', '8b67a3ff5c27f1c'],
  ])('%s.%s.%s → %s', (kind, version, group, hash) => {
    expect(apiHash({ kind, version, group })).toBe(hash);
  });

  it('names the aggregation label of each level', () => {
    expect(
      apiAggregationLabel({ kind: 'Widget', version: 'v1alpha1', group: 'sample.bosun.dev' }, 'edit'),
    ).toBe('olm.opgroup.permissions/aggregate-to-950840cc6d859215-edit');
  });
});

const csv = (
  spec: Partial<ClusterServiceVersion['spec']>,
): Pick<ClusterServiceVersion, 'metadata' | 'spec'> => ({
  metadata: { name: 'etcd.v1', namespace: 'ops' },
  spec: { displayName: 'etcd', install: { strategy: 'deployment' }, ...spec },
});

describe('providedApis', () => {
  it('reads owned CRDs and API services', () => {
    expect(
      providedApis(
        csv({
          customresourcedefinitions: {
            owned: [
              { name: 'etcdclusters.etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdCluster' },
            ],
            required: [{ name: 'other.example.com', version: 'v1', kind: 'Other' }],
          },
          apiservicedefinitions: {
            owned: [{ name: 'gizmos', group: 'gizmos.test', version: 'v1alpha1', kind: 'Gizmo' }],
          },
        }),
      ),
    ).toEqual({
      ok: true,
      value: [
        {
          group: 'etcd.database.coreos.com',
          version: 'v1beta2',
          kind: 'EtcdCluster',
          plural: 'etcdclusters',
          servedBy: { kind: 'CustomResourceDefinition', name: 'etcdclusters.etcd.database.coreos.com' },
        },
        {
          group: 'gizmos.test',
          version: 'v1alpha1',
          kind: 'Gizmo',
          plural: 'gizmos',
          servedBy: { kind: 'APIService', name: 'v1alpha1.gizmos.test' },
        },
      ],
    });
  });

  it('names the field of a CRD name that is not <plural>.<group>', () => {
    expect(
      providedApis(
        csv({
          customresourcedefinitions: {
            owned: [
              { name: 'good.example.com', version: 'v1', kind: 'Good' },
              { name: 'widgets', version: 'v1', kind: 'Widget' },
              { name: 'trailing.', version: 'v1', kind: 'Widget' },
            ],
          },
        }),
      ),
    ).toEqual({
      ok: false,
      errors: [
        {
          object: 'ClusterServiceVersion/etcd.v1',
          field: 'spec.customresourcedefinitions.owned[1].name',
          message: '"widgets" is not <plural>.<group>',
        },
        {
          object: 'ClusterServiceVersion/etcd.v1',
          field: 'spec.customresourcedefinitions.owned[2].name',
          message: '"trailing." is not <plural>.<group>',
        },
      ],
    });
  });
});

const crdOwner = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  name: 'widgets.sample.bosun.dev',
  uid: 'crd-uid',
};
const widget = {
  group: 'sample.bosun.dev',
  version: 'v1alpha1',
  kind: 'Widget',
  plural: 'widgets',
  servedBy: { kind: 'CustomResourceDefinition' as const, name: 'widgets.sample.bosun.dev' },
};

describe('providedApiRoles', () => {
  it('gives a CRD admin, edit, view and crdview roles, aggregated into the built-in roles and owned by the CRD', () => {
    const roles = providedApiRoles(widget, crdOwner);
    expect(roles.map((r) => [r.metadata?.name, r.rules])).toEqual([
      [
        'widgets.sample.bosun.dev-v1alpha1-admin',
        [{ apiGroups: ['sample.bosun.dev'], resources: ['widgets'], verbs: ['*'] }],
      ],
      [
        'widgets.sample.bosun.dev-v1alpha1-edit',
        [
          {
            apiGroups: ['sample.bosun.dev'],
            resources: ['widgets'],
            verbs: ['create', 'update', 'patch', 'delete'],
          },
        ],
      ],
      [
        'widgets.sample.bosun.dev-v1alpha1-view',
        [{ apiGroups: ['sample.bosun.dev'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }],
      ],
      [
        'widgets.sample.bosun.dev-v1alpha1-crdview',
        [
          {
            apiGroups: ['apiextensions.k8s.io'],
            resources: ['customresourcedefinitions'],
            resourceNames: ['widgets.sample.bosun.dev'],
            verbs: ['get'],
          },
        ],
      ],
    ]);
    expect(roles.map((r) => r.metadata?.labels)).toEqual([
      {
        'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
        'olm.opgroup.permissions/aggregate-to-950840cc6d859215-admin': 'true',
        'olm.managed': 'true',
      },
      {
        'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
        'olm.opgroup.permissions/aggregate-to-950840cc6d859215-edit': 'true',
        'olm.managed': 'true',
      },
      {
        'rbac.authorization.k8s.io/aggregate-to-view': 'true',
        'olm.opgroup.permissions/aggregate-to-950840cc6d859215-view': 'true',
        'olm.managed': 'true',
      },
      {
        'rbac.authorization.k8s.io/aggregate-to-view': 'true',
        'olm.opgroup.permissions/aggregate-to-950840cc6d859215-view': 'true',
        'olm.managed': 'true',
      },
    ]);
    for (const r of roles) {
      expect(r.metadata?.ownerReferences).toEqual([
        { ...crdOwner, controller: false, blockOwnerDeletion: false },
      ]);
    }
  });

  it('gives an API service admin, edit and view roles named by its resource, owned by the APIService', () => {
    const api = {
      group: 'gizmos.test',
      version: 'v1alpha1',
      kind: 'Gizmo',
      plural: 'gizmos',
      servedBy: { kind: 'APIService' as const, name: 'v1alpha1.gizmos.test' },
    };
    const owner = {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      name: 'v1alpha1.gizmos.test',
      uid: 'u',
    };
    const roles = providedApiRoles(api, owner);
    expect(roles.map((r) => r.metadata?.name)).toEqual([
      'gizmos-v1alpha1-admin',
      'gizmos-v1alpha1-edit',
      'gizmos-v1alpha1-view',
    ]);
    expect(roles[1]?.rules).toEqual([
      { apiGroups: ['gizmos.test'], resources: ['gizmos'], verbs: ['create', 'update', 'patch', 'delete'] },
    ]);
    expect(roles[0]?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'APIService', uid: 'u' });
  });
});

describe('roleNeedsApply', () => {
  const [desired] = providedApiRoles(widget, crdOwner) as [ClusterRole];

  it('applies a missing role', () => {
    expect(roleNeedsApply(undefined, desired)).toBe(true);
  });

  it('leaves a role that has everything, with labels and owners others added and fields the API server added', () => {
    const live: ClusterRole = {
      ...desired,
      metadata: {
        ...desired.metadata,
        uid: 'r',
        labels: { ...desired.metadata?.labels, 'operators.coreos.com/x.y': '' },
        ownerReferences: [
          ...(desired.metadata?.ownerReferences ?? []),
          { apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x' },
        ],
      },
      rules: [{ verbs: ['*'], apiGroups: ['sample.bosun.dev'], resources: ['widgets'], resourceNames: [] }],
    };
    expect(roleNeedsApply(live, desired)).toBe(false);
  });

  it.each([
    [
      'a label is missing',
      (r: ClusterRole) => ({ ...r, metadata: { ...r.metadata, labels: { 'olm.managed': 'true' } } }),
    ],
    [
      'a label has another value',
      (r: ClusterRole) => ({
        ...r,
        metadata: { ...r.metadata, labels: { ...r.metadata?.labels, 'olm.managed': 'false' } },
      }),
    ],
    [
      'the owner is another CRD (recreated)',
      (r: ClusterRole) => ({
        ...r,
        metadata: { ...r.metadata, ownerReferences: [{ ...crdOwner, uid: 'old' }] },
      }),
    ],
    [
      'the rules differ',
      (r: ClusterRole) => ({
        ...r,
        rules: [{ apiGroups: ['sample.bosun.dev'], resources: ['widgets'], verbs: ['get'] }],
      }),
    ],
    [
      'someone added an aggregation rule',
      (r: ClusterRole) => ({
        ...r,
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] },
      }),
    ],
  ])('applies a role when %s', (_, change) => {
    expect(roleNeedsApply(change(desired), desired)).toBe(true);
  });

  it('leaves the rules of an aggregated role to the aggregation controller, but not its selectors', () => {
    const aggregated: ClusterRole = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'olm.og.og.edit-x', labels: { 'olm.managed': 'true' } },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'true' } }] },
    };
    const live = { ...aggregated, rules: [{ apiGroups: ['x'], resources: ['y'], verbs: ['create'] }] };
    expect(roleNeedsApply(live, aggregated)).toBe(false);
    const other = { ...live, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { b: 'true' } }] } };
    expect(roleNeedsApply(other, aggregated)).toBe(true);
    // An empty role clears what aggregation left.
    const empty: ClusterRole = { ...aggregated, aggregationRule: undefined, rules: [] };
    delete empty.aggregationRule;
    expect(roleNeedsApply(live, empty)).toBe(true);
    expect(roleNeedsApply({ ...empty, rules: undefined }, empty)).toBe(false);
  });
});
