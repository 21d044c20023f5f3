import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StrategyDeploymentPermissions } from '../../../src/apis/operators.js';
import {
  NamespaceViewRule,
  planRbac,
  rbacApplyOrder,
  type RbacRef,
  type Resource,
  staleRbac,
  targetedRbac,
} from '../../../src/install/index.js';
import { runs } from '../../support/properties.js';

const csv = { name: 'op.v1', namespace: 'ops' };
const permissions: StrategyDeploymentPermissions[] = [
  { serviceAccountName: 'op', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] },
];
const clusterPermissions: StrategyDeploymentPermissions[] = [
  { serviceAccountName: 'op', rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }] },
];
const planned = planRbac({ csv, permissions, clusterPermissions });
const roleName = planned.roles[0]?.metadata.name as string;
const targeted = (targetNamespaces: readonly string[]) =>
  targetedRbac({ csv, permissions, targetNamespaces });
const lifted = targeted(['']).clusterRoles[0]?.metadata.name as string;

/** `Kind name@namespace`, for comparing object sets. */
const outline = (objects: readonly Resource[]) =>
  objects.map((o) => `${o.kind} ${o.metadata.name}${o.metadata.namespace ? `@${o.metadata.namespace}` : ''}`);

const stale = (targetNamespaces: readonly string[], copied: RbacRef[] = []) =>
  staleRbac({ csv, permissions, targetNamespaces, copied });

describe('planRbac: what the InstallPlan creates, whatever the targets', () => {
  it('the ServiceAccount, a Role and RoleBinding in the operator namespace, and the clusterPermissions ClusterRole', () => {
    const clusterName = planned.clusterRoles[0]?.metadata.name as string;
    expect(roleName).toMatch(/^op\.v1-op-[0-9a-z]+$/);
    expect(clusterName).toMatch(/^op\.v1-[0-9a-z]+$/);
    expect(outline(rbacApplyOrder(planned))).toEqual([
      `ClusterRole ${clusterName}`,
      `Role ${roleName}@ops`,
      `ClusterRoleBinding ${clusterName}`,
      `RoleBinding ${roleName}@ops`,
    ]);
    expect(outline(planned.serviceAccounts)).toEqual(['ServiceAccount op@ops']);
    expect(planned.roleBindings[0]).toMatchObject({
      roleRef: { kind: 'Role', name: roleName },
      subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'ops' }],
    });
  });

  it('two identical grants for one ServiceAccount give one Role', () => {
    const twice = planRbac({ csv, permissions: [...permissions, ...permissions], clusterPermissions: [] });
    expect(twice.roles).toHaveLength(1);
    expect(twice.roleBindings).toHaveLength(1);
  });
});

describe('targetedRbac: what the OperatorGroup targets add', () => {
  const cases: { title: string; targets: string[]; want: string[] }[] = [
    { title: 'OwnNamespace adds nothing', targets: ['ops'], want: [] },
    {
      title: 'SingleNamespace copies the Role and RoleBinding into the target',
      targets: ['team-a'],
      want: [`Role ${roleName}@team-a`, `RoleBinding ${roleName}@team-a`],
    },
    {
      title: 'MultiNamespace with the own namespace copies into the others only',
      targets: ['ops', 'team-a', 'team-b'],
      want: [
        `Role ${roleName}@team-a`,
        `Role ${roleName}@team-b`,
        `RoleBinding ${roleName}@team-a`,
        `RoleBinding ${roleName}@team-b`,
      ],
    },
    {
      title: 'AllNamespaces lifts the permissions to a ClusterRole and binding',
      targets: [''],
      want: [`ClusterRole ${lifted}`, `ClusterRoleBinding ${lifted}`],
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      expect(outline(rbacApplyOrder(targeted(c.targets)))).toEqual(c.want);
    });
  }

  it('a copy is labelled as copied from the operator namespace and binds the account there', () => {
    const [role] = targeted(['team-a']).roles;
    const [binding] = targeted(['team-a']).roleBindings;
    expect(role?.metadata.labels).toMatchObject({ 'olm.copiedFrom': 'ops', 'olm.owner': 'op.v1' });
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'op', namespace: 'ops' }]);
  });

  it('a lifted ClusterRole may also read namespaces, and is named apart from the Role', () => {
    const [role] = targeted(['']).clusterRoles;
    expect(role?.rules).toEqual([...permissions[0]!.rules, NamespaceViewRule]);
    expect(lifted).not.toBe(roleName);
  });
});

describe('staleRbac', () => {
  it('moving from one target namespace to another removes the copies in the old one', () => {
    const copied: RbacRef[] = [
      { kind: 'Role', namespace: 'old', name: roleName },
      { kind: 'RoleBinding', namespace: 'old', name: roleName },
      { kind: 'Role', namespace: 'new', name: roleName },
    ];
    expect(stale(['new'], copied)).toEqual([
      { kind: 'ClusterRole', name: lifted },
      { kind: 'ClusterRoleBinding', name: lifted },
      { kind: 'Role', namespace: 'old', name: roleName },
      { kind: 'RoleBinding', namespace: 'old', name: roleName },
    ]);
  });

  it('a namespaced group makes the lifted ClusterRole stale, never the clusterPermissions one', () => {
    const names = stale(['ops']).map((r) => r.name);
    expect(names).toEqual([lifted, lifted]);
    expect(names).not.toContain(planned.clusterRoles[0]?.metadata.name);
  });

  it('an all-namespaces group makes the copies stale but never the Roles the InstallPlan created', () => {
    const copied: RbacRef[] = [{ kind: 'Role', namespace: 'team-a', name: roleName }];
    expect(stale([''], copied)).toEqual([{ kind: 'Role', namespace: 'team-a', name: roleName }]);
  });

  const namespaces = fc.uniqueArray(fc.constantFrom('ops', 'a', 'b', 'c'), { minLength: 1 });
  const targetsArb = fc.oneof(fc.constant(['']), namespaces);

  it('nothing the current targets need is ever stale, and what earlier targets made is', () => {
    fc.assert(
      fc.property(targetsArb, targetsArb, (before, now) => {
        const made = rbacApplyOrder(targeted(before));
        const copied = made
          .filter((o) => o.metadata.labels?.['olm.copiedFrom'])
          .map((o) => ({
            kind: o.kind as RbacRef['kind'],
            namespace: o.metadata.namespace,
            name: o.metadata.name,
          }));
        const key = (r: { kind: string; namespace?: string; name: string }) =>
          `${r.kind}/${r.namespace ?? ''}/${r.name}`;
        const wanted = new Set(rbacApplyOrder(targeted(now)).map((o) => key({ ...o, ...o.metadata })));
        const gone = new Set(stale(now, copied).map(key));
        for (const k of gone) expect(wanted.has(k)).toBe(false);
        // After pruning, what is left of the earlier targets' objects is what the current ones need.
        for (const o of made) {
          const k = key({ ...o, ...o.metadata });
          expect(wanted.has(k) || gone.has(k)).toBe(true);
        }
      }),
      runs(200),
    );
  });

  it('the InstallPlan and the CSV controller never write the same object', () => {
    fc.assert(
      fc.property(targetsArb, (targets) => {
        const a = new Set(outline(rbacApplyOrder(planned)));
        for (const o of outline(rbacApplyOrder(targeted(targets)))) expect(a.has(o)).toBe(false);
        const ownKeys = outline(rbacApplyOrder(planned));
        for (const r of stale(targets)) {
          expect(ownKeys).not.toContain(`${r.kind} ${r.name}${r.namespace ? `@${r.namespace}` : ''}`);
        }
      }),
      runs(50),
    );
  });
});
