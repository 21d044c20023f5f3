import { describe, expect, it } from 'vitest';
import { staleRbac } from '../../../src/controllers/csv-rbac.js';
import { rbacForPermissions } from '../../../src/install/rbac.js';

const csv = { name: 'op.v1', namespace: 'ops' };
const permissions = [
  { serviceAccountName: 'op', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] },
];
const clusterPermissions = [
  { serviceAccountName: 'op', rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }] },
];
const grant = (targetNamespaces: string[]) =>
  rbacForPermissions({ csv, permissions, clusterPermissions, targetNamespaces });
const roleName = grant(['ops']).roles[0]?.metadata.name as string;
const lifted = grant(['']).clusterRoles.find((r) => JSON.stringify(r.rules).includes('configmaps'));
const clusterPermissionRole = grant(['ops']).clusterRoles[0]?.metadata.name as string;

const input = (
  targetNamespaces: string[],
  copied: { kind: 'Role' | 'RoleBinding'; namespace: string; name: string }[] = [],
) => ({
  csv,
  permissions,
  clusterPermissions,
  targetNamespaces,
  copied,
});

describe('staleRbac', () => {
  it('moving from one target namespace to another removes the copies in the old one', () => {
    const copied = [
      { kind: 'Role' as const, namespace: 'old', name: roleName },
      { kind: 'RoleBinding' as const, namespace: 'old', name: roleName },
      { kind: 'Role' as const, namespace: 'new', name: roleName },
    ];
    const stale = staleRbac(input(['new'], copied));
    expect(
      stale
        .filter((r) => r.namespace === 'old')
        .map((r) => r.kind)
        .sort(),
    ).toEqual(['Role', 'RoleBinding']);
    expect(stale.some((r) => r.namespace === 'new' || r.namespace === 'ops')).toBe(false);
  });

  it('a namespaced group makes the lifted ClusterRole stale, never the clusterPermissions one', () => {
    const stale = staleRbac(input(['ops']));
    expect(stale).toEqual(
      expect.arrayContaining([
        { kind: 'ClusterRole', name: lifted?.metadata.name },
        { kind: 'ClusterRoleBinding', name: lifted?.metadata.name },
      ]),
    );
    expect(stale.some((r) => r.name === clusterPermissionRole)).toBe(false);
  });

  it('an all-namespaces group makes the Roles in the operator namespace stale', () => {
    const stale = staleRbac(input(['']));
    expect(stale).toEqual([
      { kind: 'Role', namespace: 'ops', name: roleName },
      { kind: 'RoleBinding', namespace: 'ops', name: roleName },
    ]);
  });

  it('nothing the current targets need is ever stale', () => {
    for (const targets of [[''], ['ops'], ['a'], ['a', 'b']]) {
      const wanted = grant(targets);
      const keys = new Set(
        [...wanted.roles, ...wanted.roleBindings, ...wanted.clusterRoles, ...wanted.clusterRoleBindings].map(
          (r) => `${r.metadata.namespace ?? ''}/${r.metadata.name}`,
        ),
      );
      const copied = wanted.roles.map((r) => ({
        kind: 'Role' as const,
        namespace: r.metadata.namespace ?? '',
        name: r.metadata.name,
      }));
      for (const s of staleRbac(input(targets, copied)))
        expect(keys.has(`${s.namespace ?? ''}/${s.name}`)).toBe(false);
    }
  });
});
