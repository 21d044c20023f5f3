/**
 * Installs scoped to an OperatorGroup's ServiceAccount: whom they act as (installScope), what they
 * refuse before asking anything (scopedRefusals), and what they ask the API server (accessNeeds).
 */
import { describe, expect, it } from 'vitest';
import type { OperatorGroup } from '../../../src/apis/operators.js';
import {
  type Access,
  accessNeeds,
  accessText,
  grantAccesses,
  unmetNeeds,
  unmetText,
} from '../../../src/install/access-needs.js';
import type { InstallableBundle } from '../../../src/install/bundle-objects.js';
import type { Resource } from '../../../src/olm/kinds.js';
import { installScope, scopedRefusals, serviceAccountUser } from '../../../src/install/scoped-install.js';
import { manifestFiles, manifestText, sampleBundle } from './support.js';

const og = (name: string, serviceAccountName?: string): OperatorGroup => ({
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: { name, namespace: 'team' },
  spec: { targetNamespaces: ['team'], ...(serviceAccountName !== undefined ? { serviceAccountName } : {}) },
});

describe('installScope', () => {
  it('installs as the manager without a ServiceAccount', () => {
    expect(installScope([], 'team')).toEqual({ kind: 'cluster' });
    expect(installScope([og('a')], 'team')).toEqual({ kind: 'cluster' });
    expect(installScope([og('a', '')], 'team')).toEqual({ kind: 'cluster' });
  });

  it("installs as the group's ServiceAccount", () => {
    expect(installScope([og('a', 'installer')], 'team')).toEqual({
      kind: 'serviceAccount',
      operatorGroup: 'a',
      namespace: 'team',
      name: 'installer',
      user: 'system:serviceaccount:team:installer',
    });
  });

  it('installs nothing when a second group could be a way around the scope', () => {
    for (const groups of [
      [og('a', 'installer'), og('b')],
      [og('a'), og('b', 'installer')],
      [og('a', 'x'), og('b', 'y')],
    ]) {
      const scope = installScope(groups, 'team');
      expect(scope.kind).toBe('invalid');
      expect(scope.kind === 'invalid' && scope.message).toContain('namespace team has 2 OperatorGroups');
    }
  });

  it.each([
    'a:b',
    'kube-system:default',
    'x/y',
    'UPPER',
    'a\r\nImpersonate-Group: system:masters',
    '-a',
    'a'.repeat(254),
  ])('refuses %j, which is no ServiceAccount name (nor one to impersonate)', (name) => {
    const scope = installScope([og('a', name)], 'team');
    expect(scope.kind).toBe('invalid');
    expect(scope.kind === 'invalid' && scope.message).toContain('spec.serviceAccountName');
  });

  it('names the ServiceAccount user as the API server does', () => {
    expect(serviceAccountUser('ns', 'sa')).toBe('system:serviceaccount:ns:sa');
  });
});

function bundleWith(...extra: object[]): InstallableBundle {
  return sampleBundle([...manifestFiles().map(manifestText), ...extra.map((o) => JSON.stringify(o))]);
}

/** The sample bundle with `rules` added to the CSV's clusterPermissions (or permissions). */
function csvAsking(field: 'permissions' | 'clusterPermissions', rules: object[]): InstallableBundle {
  const bundle = sampleBundle();
  const spec = structuredClone(bundle.csv.spec);
  spec.install.spec![field] = [{ serviceAccountName: 'sample-operator', rules: rules as never }];
  return { ...bundle, csv: { ...bundle.csv, spec } };
}

describe('scopedRefusals', () => {
  it('refuses nothing of the sample bundle', () => {
    expect(scopedRefusals(sampleBundle())).toEqual([]);
  });

  it.each([
    ['clusterPermissions', { apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    ['permissions', { apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    ['permissions', { apiGroups: [''], resources: ['*'], verbs: ['*'] }],
    [
      'clusterPermissions',
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['*'], verbs: ['get', '*'] },
    ],
  ] as const)('refuses a CSV whose %s ask for %j', (field, rule) => {
    expect(scopedRefusals(csvAsking(field, [rule]))).toEqual([
      `ClusterServiceVersion/sample-operator.v0.2.0: spec.install.spec.${field}[0].rules[0] asks for verbs [${rule.verbs.join(' ')}] on [*] in API groups [${rule.apiGroups.map((g) => (g === '' ? '""' : g)).join(' ')}] for ServiceAccount sample-operator`,
    ]);
  });

  it('lets a CSV ask for * on its own API group: the ServiceAccount must hold it, or the review says no', () => {
    expect(
      scopedRefusals(
        csvAsking('clusterPermissions', [{ apiGroups: ['example.com'], resources: ['*'], verbs: ['*'] }]),
      ),
    ).toEqual([]);
  });

  it.each([
    [
      'a binding of cluster-admin, even to its own ServiceAccount',
      [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'mine' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'ServiceAccount', name: 'sample-operator' }],
        },
      ],
      /ClusterRoleBinding\/mine \(properties\[\d+\]\): binds ClusterRole\/cluster-admin, which is the cluster-admin role/,
    ],
    [
      'a bundle ClusterRole granting everything',
      [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'all' },
          rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
        },
      ],
      /ClusterRole\/all \(properties\[\d+\]\): grants every verb on every resource/,
    ],
    [
      "a bundle ClusterRole aggregating the cluster's roles",
      [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'agg' },
          aggregationRule: { clusterRoleSelectors: [{}] },
        },
      ],
      /ClusterRole\/agg \(properties\[\d+\]\): aggregates every ClusterRole of the cluster/,
    ],
  ])('refuses %s', (_name, objects, message) => {
    const refusals = scopedRefusals(bundleWith(...objects));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(message);
  });
});

// ---- what a scoped install asks ----

const resources: Record<string, { name: string; namespaced: boolean }> = {
  ServiceAccount: { name: 'serviceaccounts', namespaced: true },
  ClusterRole: { name: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { name: 'clusterrolebindings', namespaced: false },
  Role: { name: 'roles', namespaced: true },
  RoleBinding: { name: 'rolebindings', namespaced: true },
};
const resourceOf = (_v: string, kind: string) => resources[kind];
const rbacV1 = 'rbac.authorization.k8s.io/v1';
const objects: Resource[] = [
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'op', namespace: 'team' } },
  {
    apiVersion: rbacV1,
    kind: 'ClusterRole',
    metadata: { name: 'op-nodes' },
    rules: [{ apiGroups: [''], resources: ['nodes', 'nodes/status'], verbs: ['get', 'list'] }],
  },
  {
    apiVersion: rbacV1,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'op-nodes' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'op-nodes' },
    subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'team' }],
  },
  {
    apiVersion: rbacV1,
    kind: 'RoleBinding',
    metadata: { name: 'op-reader', namespace: 'kube-system' },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'extension-apiserver-authentication-reader',
    },
    subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'team' }],
  },
  {
    apiVersion: rbacV1,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'op-missing' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'not-there' },
    subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'team' }],
  },
];
const liveRules = (kind: string, name: string, namespace?: string) =>
  kind === 'Role' && name === 'extension-apiserver-authentication-reader' && namespace === 'kube-system'
    ? [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          resourceNames: ['extension-apiserver-authentication'],
          verbs: ['get'],
        },
      ]
    : undefined;

describe('accessNeeds', () => {
  const { needs } = accessNeeds({ objects, patchedCRDs: ['widgets.example.com'], resourceOf, liveRules });
  const texts = (alt: Access[] | undefined) => (alt ?? []).map(accessText);

  it('asks to create and patch each object by name, in its namespace or cluster-wide', () => {
    expect(needs.filter((n) => n.grants === undefined).map((n) => [n.object, texts(n.anyOf[0])])).toEqual([
      [
        'ServiceAccount team/op',
        ['create serviceaccounts op in namespace team', 'patch serviceaccounts op in namespace team'],
      ],
      [
        'ClusterRole op-nodes',
        [
          'create clusterroles.rbac.authorization.k8s.io op-nodes cluster-wide',
          'patch clusterroles.rbac.authorization.k8s.io op-nodes cluster-wide',
        ],
      ],
      [
        'ClusterRoleBinding op-nodes',
        [
          'create clusterrolebindings.rbac.authorization.k8s.io op-nodes cluster-wide',
          'patch clusterrolebindings.rbac.authorization.k8s.io op-nodes cluster-wide',
        ],
      ],
      [
        'RoleBinding kube-system/op-reader',
        [
          'create rolebindings.rbac.authorization.k8s.io op-reader in namespace kube-system',
          'patch rolebindings.rbac.authorization.k8s.io op-reader in namespace kube-system',
        ],
      ],
      [
        'ClusterRoleBinding op-missing',
        [
          'create clusterrolebindings.rbac.authorization.k8s.io op-missing cluster-wide',
          'patch clusterrolebindings.rbac.authorization.k8s.io op-missing cluster-wide',
        ],
      ],
      [
        'CustomResourceDefinition widgets.example.com (conversion)',
        ['patch customresourcedefinitions.apiextensions.k8s.io widgets.example.com cluster-wide'],
      ],
    ]);
  });

  it('asks, for a role, to escalate or to hold each permission it grants', () => {
    const role = needs.find((n) => n.object === 'ClusterRole op-nodes' && n.grants);
    expect(role?.anyOf.map(texts)).toEqual([
      ['escalate clusterroles.rbac.authorization.k8s.io op-nodes cluster-wide'],
      [
        'get nodes cluster-wide',
        'list nodes cluster-wide',
        'get nodes/status cluster-wide',
        'list nodes/status cluster-wide',
      ],
    ]);
  });

  it("asks, for a binding, to bind its role or to hold the role's permissions (the plan's, or the cluster's)", () => {
    const created = needs.find((n) => n.object === 'ClusterRoleBinding op-nodes' && n.grants);
    expect(texts(created?.anyOf[0])).toEqual([
      'bind clusterroles.rbac.authorization.k8s.io op-nodes cluster-wide',
    ]);
    expect(texts(created?.anyOf[1])).toHaveLength(4);
    const live = needs.find((n) => n.object === 'RoleBinding kube-system/op-reader' && n.grants);
    expect(live?.anyOf.map(texts)).toEqual([
      [
        'bind roles.rbac.authorization.k8s.io extension-apiserver-authentication-reader in namespace kube-system',
      ],
      ['get configmaps extension-apiserver-authentication in namespace kube-system'],
    ]);
    // A role nobody has: only bind will do, as the API server decides.
    const unknown = needs.find((n) => n.object === 'ClusterRoleBinding op-missing' && n.grants);
    expect(unknown?.anyOf.map(texts)).toEqual([
      ['bind clusterroles.rbac.authorization.k8s.io not-there cluster-wide'],
    ]);
  });

  it('lists every unmet need, and what would have done instead', () => {
    const allowed = (a: Access) =>
      'resource' in a &&
      ['create', 'patch'].includes(a.resource.verb) &&
      a.resource.resource !== 'clusterroles';
    const unmet = unmetNeeds(needs, allowed).map(unmetText);
    expect(unmet).toEqual([
      'ClusterRole op-nodes: may not create clusterroles.rbac.authorization.k8s.io op-nodes cluster-wide, patch clusterroles.rbac.authorization.k8s.io op-nodes cluster-wide',
      'ClusterRole op-nodes: grants what the ServiceAccount does not hold (get nodes cluster-wide, list nodes cluster-wide, get nodes/status cluster-wide, list nodes/status cluster-wide), and it may not escalate clusterroles.rbac.authorization.k8s.io op-nodes cluster-wide',
      'ClusterRoleBinding op-nodes: grants what the ServiceAccount does not hold (get nodes cluster-wide, list nodes cluster-wide, get nodes/status cluster-wide, list nodes/status cluster-wide), and it may not bind clusterroles.rbac.authorization.k8s.io op-nodes cluster-wide',
      'RoleBinding kube-system/op-reader: grants what the ServiceAccount does not hold (get configmaps extension-apiserver-authentication in namespace kube-system), and it may not bind roles.rbac.authorization.k8s.io extension-apiserver-authentication-reader in namespace kube-system',
      'ClusterRoleBinding op-missing: refers to a role that does not exist yet, so it may only be bound with bind clusterroles.rbac.authorization.k8s.io not-there cluster-wide, which is not allowed',
    ]);
    expect(unmetNeeds(needs, () => true)).toEqual([]);
  });

  it('is met by escalate or bind without the permissions themselves', () => {
    const allowed = (a: Access) =>
      'resource' in a && ['create', 'patch', 'escalate', 'bind'].includes(a.resource.verb);
    expect(unmetNeeds(needs, allowed)).toEqual([]);
  });

  it('leaves out kinds the API server does not serve (their apply fails on its own)', () => {
    const r = accessNeeds({
      objects: [
        {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'ServiceMonitor',
          metadata: { name: 'm', namespace: 'team' },
        },
      ],
      resourceOf,
      liveRules,
    });
    expect(r).toEqual({ needs: [], unknownKinds: ['monitoring.coreos.com/v1 ServiceMonitor'] });
  });
});

describe('grantAccesses', () => {
  it('asks each group, resource, subresource, verb and name once; wildcards as themselves; URLs as non-resource requests', () => {
    const accesses = grantAccesses(
      [
        {
          apiGroups: ['', 'apps'],
          resources: ['deployments/scale', '*'],
          verbs: ['get', '*'],
          resourceNames: ['a'],
        },
        { apiGroups: [''], resources: ['deployments/scale'], verbs: ['get'], resourceNames: ['a'] },
        { nonResourceURLs: ['/metrics', '/healthz/*'], verbs: ['get'] },
      ],
      'team',
    );
    expect(accesses.map(accessText)).toEqual([
      'get deployments/scale a in namespace team',
      '* deployments/scale a in namespace team',
      'get * a in namespace team',
      '* * a in namespace team',
      'get deployments.apps/scale a in namespace team',
      '* deployments.apps/scale a in namespace team',
      'get *.apps a in namespace team',
      '* *.apps a in namespace team',
      'get /metrics',
      'get /healthz/*',
    ]);
  });
});
