import { describe, expect, it } from 'vitest';
import type { ClusterServiceVersion, OperatorGroup } from '../../../src/apis/operators.js';
import {
  base62Sha224,
  groupApis,
  operatorGroupOwnerOf,
  operatorGroupRoleName,
  operatorGroupRoles,
  parseProvidedApis,
} from '../../../src/install/operatorgroup-roles.js';

describe('operatorGroupRoleName', () => {
  // Computed with OLM's own getClusterRoleName (sha224 of namespace/name/suffix, base 62).
  it.each([
    [
      'operators',
      'global-operators',
      'admin',
      'olm.og.global-operators.admin-5UD4U2IfBGbw51Qy2Jaefk1uawvkj2OJILlc3w',
    ],
    [
      'operators',
      'global-operators',
      'edit',
      'olm.og.global-operators.edit-9ZbzBIwu1SlHO7KbWinNtOfyGaVjTWIYhNkNP',
    ],
    [
      'operators',
      'global-operators',
      'view',
      'olm.og.global-operators.view-6lzJtrbG08ne4wrZHGxP3h1MBUjq5e7nOF4gax',
    ],
    ['ns1', 'og', 'admin', 'olm.og.og.admin-4epqK4Xa56eQN7ygzr6D1GNqt2dFt0wArnlhj5'],
    ['my-ns', 'og', 'edit', 'olm.og.og.edit-ptULRm0uDEMshECrCqnFvjJe5Pgg7357PHaMn'],
    ['my-ns', 'og', 'view', 'olm.og.og.view-aUwjwYrwMKLSY08gCLrkECQw1orWblHTbFNIf5'],
  ] as const)('%s/%s %s → %s', (namespace, name, suffix, expected) => {
    expect(operatorGroupRoleName({ namespace, name }, suffix)).toBe(expected);
  });

  it('writes the hash in base 62 without leading zeros, as Go does', () => {
    expect(base62Sha224('n27/og/view')).toBe('DYLbyLTHCRxzk1WxafuHAqzC42Boi5peYtDsH');
  });

  it('cuts a group name too long for the name to fit in 253 characters', () => {
    const name = operatorGroupRoleName({ namespace: 'ns', name: 'g'.repeat(250) }, 'admin');
    expect(name).toBe(`olm.og.${'g'.repeat(201)}.admin-3OTrADrSWALmCwJHF6aXxCCQAc3nQI5ETyXoZK`);
    expect(name.length).toBe(253);
  });
});

describe('parseProvidedApis', () => {
  it('reads Kind.version.group entries and skips malformed ones', () => {
    expect(
      parseProvidedApis('EtcdCluster.v1beta2.etcd.database.coreos.com,Widget.v1,,Gizmo.v1alpha1.gizmos.test'),
    ).toEqual([
      { kind: 'EtcdCluster', version: 'v1beta2', group: 'etcd.database.coreos.com' },
      { kind: 'Gizmo', version: 'v1alpha1', group: 'gizmos.test' },
    ]);
    expect(parseProvidedApis(undefined)).toEqual([]);
  });
});

const csv = (
  name: string,
  ns: string,
  crds: [string, string, string][],
): Pick<ClusterServiceVersion, 'metadata' | 'spec'> => ({
  metadata: { name, namespace: ns },
  spec: {
    displayName: name,
    install: { strategy: 'deployment' },
    customresourcedefinitions: { owned: crds.map(([n, version, kind]) => ({ name: n, version, kind })) },
  },
});
const og = (ns: string, extra: Partial<OperatorGroup> = {}): Pick<OperatorGroup, 'metadata' | 'spec'> => ({
  metadata: { name: 'og', namespace: ns, ...extra.metadata },
  ...(extra.spec ? { spec: extra.spec } : {}),
});

describe('groupApis', () => {
  const csvs = [
    csv('etcd.v1', 'ops', [['etcdclusters.etcd.io', 'v1', 'EtcdCluster']]),
    // An upgrade in progress provides the same API again, and one more.
    csv('etcd.v2', 'ops', [
      ['etcdclusters.etcd.io', 'v1', 'EtcdCluster'],
      ['etcdbackups.etcd.io', 'v1', 'EtcdBackup'],
    ]),
    csv('redis.v1', 'elsewhere', [['redis.redis.io', 'v1', 'Redis']]),
  ];

  it('unites the APIs of the CSVs in the group’s namespace, sorted, each once', () => {
    expect(groupApis(og('ops'), csvs)).toEqual([
      { kind: 'EtcdBackup', version: 'v1', group: 'etcd.io' },
      { kind: 'EtcdCluster', version: 'v1', group: 'etcd.io' },
    ]);
  });

  it('reads the olm.providedAPIs annotation only of a group with static provided APIs', () => {
    const annotations = { 'olm.providedAPIs': 'Static.v1.static.io' };
    expect(groupApis(og('none', { metadata: { annotations } }), csvs)).toEqual([]);
    expect(
      groupApis(og('none', { metadata: { annotations }, spec: { staticProvidedAPIs: true } }), csvs),
    ).toEqual([{ kind: 'Static', version: 'v1', group: 'static.io' }]);
  });
});

describe('operatorGroupRoles', () => {
  const ref = { namespace: 'ops', name: 'og' };

  it('aggregates each level of every API by its label, carrying the group’s owner labels', () => {
    const roles = operatorGroupRoles(ref, [
      { kind: 'Widget', version: 'v1alpha1', group: 'sample.bosun.dev' },
      { kind: 'A', version: 'v1', group: 'b' },
    ]);
    expect(roles.map((r) => r.metadata?.name)).toEqual([
      operatorGroupRoleName(ref, 'admin'),
      operatorGroupRoleName(ref, 'edit'),
      operatorGroupRoleName(ref, 'view'),
    ]);
    expect(roles[1]).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: operatorGroupRoleName(ref, 'edit'),
        labels: {
          'olm.owner': 'og',
          'olm.owner.kind': 'OperatorGroup',
          'olm.owner.namespace': 'ops',
          'olm.managed': 'true',
        },
      },
      // Sorted by label, whatever the order of the APIs.
      aggregationRule: {
        clusterRoleSelectors: [
          { matchLabels: { 'olm.opgroup.permissions/aggregate-to-950840cc6d859215-edit': 'true' } },
          { matchLabels: { 'olm.opgroup.permissions/aggregate-to-b3ee9ee767100d9f-edit': 'true' } },
        ],
      },
    });
    expect(operatorGroupOwnerOf(roles[0]?.metadata?.labels)).toEqual(ref);
  });

  it('with no API, aggregates nothing and has no rules', () => {
    for (const role of operatorGroupRoles(ref, [])) {
      expect(role.aggregationRule).toBeUndefined();
      expect(role.rules).toEqual([]);
    }
  });

  it('does not take a CSV’s owner labels for a group’s', () => {
    expect(
      operatorGroupOwnerOf({
        'olm.owner': 'etcd.v1',
        'olm.owner.kind': 'ClusterServiceVersion',
        'olm.owner.namespace': 'ops',
      }),
    ).toBeUndefined();
  });
});
