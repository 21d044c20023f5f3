/**
 * What a bundle may grant (install/rbac-policy.ts): every shape of binding that would reach beyond
 * the operator is left out, subject by subject, and named; what stays within the operator is
 * applied as shipped; an OperatorGroup's bosun.dev/allow-broad-rbac lets it all through.
 */
import { describe, expect, it } from 'vitest';
import type { InstallableBundle } from '../../../src/install/bundle-objects.js';
import {
  allowsBundle,
  FindingKind,
  formatFinding,
  grantsEverything,
  rulePower,
  screenBundleRbac,
} from '../../../src/install/rbac-policy.js';
import { BundleName, manifestFiles, manifestText, sampleBundle } from './support.js';

const NS = 'operators';
const rbac = 'rbac.authorization.k8s.io/v1';

/** The sample bundle (ServiceAccounts sample-operator and sample-webhook) with extra manifests. */
function bundleWith(...extra: object[]): InstallableBundle {
  return sampleBundle([...manifestFiles().map(manifestText), ...extra.map((o) => JSON.stringify(o))]);
}

const clusterRoleBinding = (name: string, role: { kind?: string; name: string }, subjects: object[]) => ({
  apiVersion: rbac,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: role.kind ?? 'ClusterRole', name: role.name },
  subjects,
});
const roleBinding = (name: string, role: { kind?: string; name: string }, subjects: object[]) => ({
  ...clusterRoleBinding(name, role, subjects),
  kind: 'RoleBinding',
});
const clusterRole = (name: string, rules: object[], extra: object = {}) => ({
  apiVersion: rbac,
  kind: 'ClusterRole',
  metadata: { name },
  rules,
  ...extra,
});
const group = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name });
const user = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name });
const sa = (name: string, namespace?: string) => ({
  kind: 'ServiceAccount',
  name,
  ...(namespace ? { namespace } : {}),
});
const limited = clusterRole('widget-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);
const everything = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];

const bindingOf = (b: InstallableBundle, kind: string, name: string) =>
  b.objects.find((o) => o.kind === kind && o.name === name)?.object as
    { subjects?: { kind: string; name: string }[] } | undefined;

describe('bindings to subjects that stand for many users are left out, whatever the role', () => {
  it.each([
    ['the group of every authenticated user', group('system:authenticated')],
    ['the group of every unauthenticated request', group('system:unauthenticated')],
    ['the group of every ServiceAccount', group('system:serviceaccounts')],
    [
      "the group of every ServiceAccount of one namespace (another's)",
      group('system:serviceaccounts:kube-system'),
    ],
    [
      "the group of every ServiceAccount of the install's own namespace",
      group(`system:serviceaccounts:${NS}`),
    ],
    ['the anonymous user', user('system:anonymous')],
    ['system:anonymous written as a group', group('system:anonymous')],
  ])('%s', (_name, subject) => {
    for (const [binding, role] of [
      [clusterRoleBinding('to-everyone', { name: 'cluster-admin' }, [subject]), undefined],
      [clusterRoleBinding('to-everyone', { name: 'widget-reader' }, [subject]), limited],
      [roleBinding('to-everyone', { name: 'widget-reader' }, [subject]), limited],
    ] as const) {
      const bundle = role ? bundleWith(role, binding) : bundleWith(binding);
      const screened = screenBundleRbac({ bundle, namespace: NS });
      expect(screened.findings.map((f) => f.kind)).toEqual([FindingKind.BroadSubject]);
      expect(screened.allowed).toBe(false);
      // The binding had no other subject: it is left out whole.
      expect(bindingOf(screened.bundle, binding.kind, 'to-everyone')).toBeUndefined();
      expect(bindingOf(bundle, binding.kind, 'to-everyone')).toBeDefined();
    }
  });

  it("keeps the operator's own subjects of a binding that also names a broad one", () => {
    const binding = clusterRoleBinding('mixed', { name: 'cluster-admin' }, [
      sa('sample-operator'),
      group('system:authenticated'),
      sa('sample-webhook', NS),
    ]);
    const screened = screenBundleRbac({ bundle: bundleWith(binding), namespace: NS });
    expect(bindingOf(screened.bundle, 'ClusterRoleBinding', 'mixed')?.subjects).toEqual([
      sa('sample-operator'),
      sa('sample-webhook', NS),
    ]);
    expect(screened.findings).toHaveLength(1);
  });

  it('names the bundle, where the object is in it, the object, the subject and the role', () => {
    const screened = screenBundleRbac({
      bundle: bundleWith(
        clusterRoleBinding('everyone-admin', { name: 'cluster-admin' }, [group('system:authenticated')]),
      ),
      namespace: NS,
    });
    const [finding] = screened.findings;
    expect(finding).toMatchObject({
      bundle: BundleName,
      object: 'ClusterRoleBinding/everyone-admin',
      subject: 'Group system:authenticated',
      role: 'ClusterRole/cluster-admin',
    });
    expect(finding?.at).toMatch(/^properties\[\d+\]$/);
    expect(formatFinding(finding!)).toBe(
      `bundle ${BundleName}, ClusterRoleBinding/everyone-admin (${finding?.at}): binds ClusterRole/cluster-admin to Group system:authenticated (every authenticated user); that subject is left out`,
    );
  });

  it('compares group names exactly, as the API server does: a look-alike is no broad group', () => {
    // Nobody is in `System:Authenticated`; binding a limited role to it grants nothing to anyone.
    const screened = screenBundleRbac({
      bundle: bundleWith(
        limited,
        clusterRoleBinding('odd', { name: 'widget-reader' }, [group('System:Authenticated')]),
      ),
      namespace: NS,
    });
    expect(screened.findings).toEqual([]);
  });
});

describe('roles that grant everything, bound to anyone but the operator’s own ServiceAccounts, are left out', () => {
  const others: [string, object][] = [
    ['a ServiceAccount of another namespace', sa('default', 'kube-system')],
    [
      'an own ServiceAccount name in another namespace (a hard-coded namespace)',
      sa('sample-operator', 'flux-system'),
    ],
    ['a ServiceAccount written as a user', user('system:serviceaccount:kube-system:default')],
    ['the default ServiceAccount of the install namespace, which no Deployment runs as', sa('default')],
    ['a user', user('alice')],
    ['a group', group('platform-admins')],
  ];
  const powerful: [string, object[], { kind?: string; name: string }][] = [
    ['the cluster-admin role', [], { name: 'cluster-admin' }],
    ['* on * in every API group', [clusterRole('all', everything)], { name: 'all' }],
    [
      '* on * in the core group',
      [clusterRole('core', [{ apiGroups: [''], resources: ['*'], verbs: ['*'] }])],
      { name: 'core' },
    ],
    [
      '* on * in the RBAC group',
      [clusterRole('rbac', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['*'], verbs: ['*'] }])],
      { name: 'rbac' },
    ],
    [
      'a * hidden among other verbs and resources',
      [clusterRole('hidden', [{ apiGroups: ['apps', '*'], resources: ['pods', '*'], verbs: ['get', '*'] }])],
      { name: 'hidden' },
    ],
    [
      'a namespaced Role granting * on *',
      [{ apiVersion: rbac, kind: 'Role', metadata: { name: 'ns-all' }, rules: everything }],
      { kind: 'Role', name: 'ns-all' },
    ],
    [
      'impersonating users',
      [clusterRole('imp', [{ apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] }])],
      { name: 'imp' },
    ],
    [
      'escalating roles',
      [
        clusterRole('esc', [
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['escalate'] },
        ]),
      ],
      { name: 'esc' },
    ],
    [
      'binding any role',
      [
        clusterRole('bind', [
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'] },
        ]),
      ],
      { name: 'bind' },
    ],
    [
      'aggregating every ClusterRole (an empty selector)',
      [clusterRole('agg-all', [], { aggregationRule: { clusterRoleSelectors: [{}] } })],
      { name: 'agg-all' },
    ],
    [
      "aggregating the cluster's bootstrap roles",
      [
        clusterRole('agg-boot', [], {
          aggregationRule: {
            clusterRoleSelectors: [{ matchLabels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } }],
          },
        }),
      ],
      { name: 'agg-boot' },
    ],
    [
      "aggregating the parts of the cluster's admin role",
      [
        clusterRole('agg-admin', [], {
          aggregationRule: {
            clusterRoleSelectors: [
              {
                matchExpressions: [
                  { key: 'rbac.authorization.k8s.io/aggregate-to-admin', operator: 'Exists' },
                ],
              },
            ],
          },
        }),
      ],
      { name: 'agg-admin' },
    ],
    [
      'aggregating a bundle role that grants everything',
      [
        clusterRole('agg-own', [], {
          aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/part-of': 'sample' } }] },
        }),
        {
          ...clusterRole('agg-part', everything),
          metadata: { name: 'agg-part', labels: { 'example.com/part-of': 'sample' } },
        },
      ],
      { name: 'agg-own' },
    ],
  ];
  for (const [roleName, roles, ref] of powerful) {
    it.each(others)(`${roleName}, bound to %s`, (_name, subject) => {
      for (const make of [clusterRoleBinding, roleBinding]) {
        if (make === clusterRoleBinding && ref.kind === 'Role') continue;
        const binding = make('granted', ref, [subject]);
        const screened = screenBundleRbac({ bundle: bundleWith(...roles, binding), namespace: NS });
        expect(screened.findings.map((f) => f.kind)).toEqual([FindingKind.PowerfulRoleToOthers]);
        expect(bindingOf(screened.bundle, binding.kind, 'granted')).toBeUndefined();
      }
    });
  }

  it.each([
    ['its own ServiceAccount, without a namespace', sa('sample-operator')],
    ['its own ServiceAccount, in the install namespace', sa('sample-webhook', NS)],
    ['its own ServiceAccount written as a user', user(`system:serviceaccount:${NS}:sample-operator`)],
  ])('the operator may bind cluster-admin to %s', (_name, subject) => {
    const bundle = bundleWith(clusterRoleBinding('mine', { name: 'cluster-admin' }, [subject]));
    const screened = screenBundleRbac({ bundle, namespace: NS });
    expect(screened.findings).toEqual([]);
    expect(screened.bundle).toBe(bundle);
  });

  it.each([
    [
      '* on * of its own API group',
      clusterRole('own-api', [{ apiGroups: ['example.com'], resources: ['*'], verbs: ['*'] }]),
    ],
    ['reading Pods', limited],
  ])('a role granting %s may be bound to others (as real bundles do)', (_name, role) => {
    const bundle = bundleWith(
      role,
      clusterRoleBinding('others', { name: role.metadata.name }, [sa('monitoring', 'monitoring-system')]),
    );
    expect(screenBundleRbac({ bundle, namespace: NS }).findings).toEqual([]);
  });
});

describe("a bundle's RBAC must not change what the cluster's own roles grant", () => {
  it.each([
    ['view', 'rbac.authorization.k8s.io/aggregate-to-view'],
    ['edit', 'rbac.authorization.k8s.io/aggregate-to-edit'],
    ['admin', 'rbac.authorization.k8s.io/aggregate-to-admin'],
  ])('a ClusterRole granting everything loses its label aggregating it into %s', (_role, label) => {
    const role = {
      ...clusterRole('sneaky', everything),
      metadata: { name: 'sneaky', labels: { [label]: 'true', app: 'x' } },
    };
    const screened = screenBundleRbac({ bundle: bundleWith(role), namespace: NS });
    expect(screened.findings.map((f) => f.kind)).toEqual([FindingKind.AggregatedIntoBuiltin]);
    const kept = screened.bundle.objects.find((o) => o.name === 'sneaky');
    expect(kept?.object.metadata.labels).toEqual({ app: 'x' });
  });

  it('a limited ClusterRole may aggregate into view (as OLM does for provided APIs)', () => {
    const role = {
      ...limited,
      metadata: { name: 'widget-reader', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
    };
    expect(screenBundleRbac({ bundle: bundleWith(role), namespace: NS }).findings).toEqual([]);
  });

  it.each([
    ['ClusterRole', 'cluster-admin'],
    ['ClusterRole', 'view'],
    ['ClusterRole', 'system:aggregate-to-edit'],
    ['ClusterRoleBinding', 'cluster-admin'],
    ['ClusterRoleBinding', 'system:basic-user'],
  ])('a %s named %s is left out', (kind, name) => {
    const object =
      kind === 'ClusterRole'
        ? clusterRole(name, [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }])
        : clusterRoleBinding(name, { name: 'cluster-admin' }, [sa('sample-operator')]);
    const screened = screenBundleRbac({ bundle: bundleWith(object), namespace: NS });
    expect(screened.findings.map((f) => f.kind)).toEqual([FindingKind.BuiltinName]);
    expect(screened.bundle.objects.find((o) => o.kind === kind && o.name === name)).toBeUndefined();
  });

  it('a namespaced Role named admin stays: it lives in the install namespace only', () => {
    const role = { apiVersion: rbac, kind: 'Role', metadata: { name: 'admin' }, rules: [] };
    expect(screenBundleRbac({ bundle: bundleWith(role), namespace: NS }).findings).toEqual([]);
  });
});

describe('the OperatorGroup override (bosun.dev/allow-broad-rbac)', () => {
  const bundle = bundleWith(
    clusterRoleBinding('everyone-admin', { name: 'cluster-admin' }, [group('system:authenticated')]),
  );

  it.each(['*', 'sample-operator', BundleName, ` other , ${BundleName} `])(
    'allows the bundle when it lists %j: applied as shipped, findings still reported',
    (allow) => {
      const screened = screenBundleRbac({ bundle, namespace: NS, allow });
      expect(screened.allowed).toBe(true);
      expect(screened.bundle).toBe(bundle);
      expect(screened.findings).toHaveLength(1);
    },
  );

  it.each(['', 'other-operator', 'sample-operator.v0.1.0', 'true', 'sample'])(
    'does not allow it for %j',
    (allow) => {
      const screened = screenBundleRbac({ bundle, namespace: NS, allow });
      expect(screened.allowed).toBe(false);
      expect(bindingOf(screened.bundle, 'ClusterRoleBinding', 'everyone-admin')).toBeUndefined();
    },
  );

  it('matches packages and bundle names, nothing else', () => {
    expect(allowsBundle('a,b', { name: 'b', package: 'x' })).toBe(true);
    expect(allowsBundle('a,b', { name: 'c', package: 'a' })).toBe(true);
    expect(allowsBundle('a,b', { name: 'ab', package: 'ba' })).toBe(false);
  });
});

describe('rule predicates', () => {
  it.each([
    [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, true],
    [{ apiGroups: [''], resources: ['*'], verbs: ['*'] }, true],
    [{ apiGroups: ['example.com'], resources: ['*'], verbs: ['*'] }, false],
    [{ apiGroups: ['*'], resources: ['pods'], verbs: ['*'] }, false],
    [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] }, false],
  ])('grantsEverything(%j) is %s', (rule, expected) => {
    expect(grantsEverything(rule)).toBe(expected);
  });

  it('tells everything from escalation from limited', () => {
    expect(rulePower({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] })?.level).toBe('everything');
    expect(
      rulePower({ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] })?.level,
    ).toBe('escalation');
    expect(rulePower({ apiGroups: ['*'], resources: ['roles'], verbs: ['*'] })?.level).toBe('escalation');
    expect(rulePower({ apiGroups: [''], resources: ['pods'], verbs: ['*'] })).toBeUndefined();
  });
});
