/**
 * RBAC a CSV no longer needs after its OperatorGroup's targets changed: Roles copied into a
 * namespace that is no longer a target, permissions lifted to ClusterRoles while the group
 * targeted all namespaces (and no longer does), or Roles in the operator's namespace once the
 * group targets all namespaces (they are lifted then). Only objects Bosun generated from the
 * CSV's `permissions` are candidates, recognised by their deterministic names or their
 * `olm.copiedFrom` label, never RBAC the bundle shipped itself; `clusterPermissions` are the same
 * whatever the targets, so they are never stale.
 */
import type { StrategyDeploymentPermissions } from '../apis/operators.js';
import { AllNamespaces } from '../install/operatorgroup.js';
import type { CSVRef } from '../install/ownership.js';
import { rbacForPermissions } from '../install/rbac.js';

export interface RbacRef {
  kind: 'Role' | 'RoleBinding' | 'ClusterRole' | 'ClusterRoleBinding';
  namespace?: string;
  name: string;
}

export interface StaleRbacInput {
  csv: CSVRef;
  permissions: readonly StrategyDeploymentPermissions[];
  clusterPermissions: readonly StrategyDeploymentPermissions[];
  targetNamespaces: readonly string[];
  /** Roles and RoleBindings on the cluster that carry the CSV's owner labels and `olm.copiedFrom`. */
  copied: readonly RbacRef[];
}

const refKey = (r: RbacRef) => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

function refs(objects: ReturnType<typeof rbacForPermissions>): RbacRef[] {
  const out: RbacRef[] = [];
  const add = (kind: RbacRef['kind'], list: { metadata: { name: string; namespace?: string } }[]) => {
    for (const o of list)
      out.push({
        kind,
        name: o.metadata.name,
        ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
      });
  };
  add('ClusterRole', objects.clusterRoles);
  add('ClusterRoleBinding', objects.clusterRoleBindings);
  add('Role', objects.roles);
  add('RoleBinding', objects.roleBindings);
  return out;
}

export function staleRbac(input: StaleRbacInput): RbacRef[] {
  const grant = (targetNamespaces: readonly string[]) =>
    refs(
      rbacForPermissions({
        csv: input.csv,
        permissions: input.permissions,
        clusterPermissions: input.clusterPermissions,
        targetNamespaces,
      }),
    );
  const wanted = new Set(grant(input.targetNamespaces).map(refKey));
  // Everything the permissions could have produced under another OperatorGroup shape.
  const candidates = [...grant([AllNamespaces]), ...grant([input.csv.namespace]), ...input.copied];
  const seen = new Set<string>();
  return candidates.filter((r) => {
    const key = refKey(r);
    if (wanted.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
