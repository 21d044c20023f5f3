/**
 * The ServiceAccounts and RBAC a CSV's install strategy asks for, scoped by its OperatorGroup as
 * OLM scopes them:
 * - `permissions` become a Role and RoleBinding in the operator's namespace and in each target
 *   namespace; when the group targets all namespaces they are lifted to a ClusterRole and
 *   ClusterRoleBinding instead, with read access to namespaces added (an all-namespaces
 *   operator has to list them);
 * - `clusterPermissions` always become a ClusterRole and ClusterRoleBinding;
 * - every ServiceAccount named by either lives in the operator's namespace.
 *
 * Names are OLM's shape, `<csv>-<serviceaccount>-<hash>` for Roles and `<csv>-<hash>` for
 * ClusterRoles, where the hash covers the CSV's name, the grant, and for cluster-scoped objects
 * the operator's namespace (the same CSV may be installed in two namespaces). A re-plan of the
 * same CSV gives the same names; changed rules give new ones, and the old objects go with the old
 * CSV. A binding has its role's name.
 */
import type { V1PolicyRule } from '@kubernetes/client-node';
import type { ObjectMeta } from '../apis/meta.js';
import type { StrategyDeploymentPermissions } from '../apis/operators.js';
import { generatedName } from './hash.js';
import type { Resource } from './kinds.js';
import { isAllNamespaces } from './operatorgroup.js';
import { CopiedFromLabel, type CSVRef, ownerLabels } from './ownership.js';

const rbacApiVersion = 'rbac.authorization.k8s.io/v1';

/** OLM adds this rule to lifted ClusterRoles: an all-namespaces operator needs to see namespaces. */
export const NamespaceViewRule: V1PolicyRule = {
  apiGroups: [''],
  resources: ['namespaces'],
  verbs: ['get', 'list', 'watch'],
};

export interface RBACInput {
  csv: CSVRef;
  permissions: readonly StrategyDeploymentPermissions[];
  clusterPermissions: readonly StrategyDeploymentPermissions[];
  /** The OperatorGroup's target namespaces (`['']` for all). */
  targetNamespaces: readonly string[];
}

export interface RBACObjects {
  serviceAccounts: Resource[];
  roles: Resource[];
  roleBindings: Resource[];
  clusterRoles: Resource[];
  clusterRoleBindings: Resource[];
}

export function rbacForPermissions(input: RBACInput): RBACObjects {
  const { csv } = input;
  const out: RBACObjects = {
    serviceAccounts: [],
    roles: [],
    roleBindings: [],
    clusterRoles: [],
    clusterRoleBindings: [],
  };

  const accounts = new Set<string>();
  for (const p of [...input.permissions, ...input.clusterPermissions]) accounts.add(p.serviceAccountName);
  for (const name of accounts) {
    out.serviceAccounts.push({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: csv.namespace, labels: ownerLabels(csv) },
    });
  }

  if (isAllNamespaces(input.targetNamespaces)) {
    for (const p of input.permissions) {
      const name = generatedName(`${csv.name}-${p.serviceAccountName}`, [csv.name, csv.namespace, p]);
      addClusterGrant(out, csv, name, [...p.rules, NamespaceViewRule], p.serviceAccountName);
    }
  } else {
    const namespaces = [...new Set([csv.namespace, ...input.targetNamespaces])];
    for (const p of input.permissions) {
      const name = generatedName(`${csv.name}-${p.serviceAccountName}`, [csv.name, p]);
      for (const namespace of namespaces) {
        const metadata = namespacedMetadata(csv, name, namespace);
        out.roles.push({ apiVersion: rbacApiVersion, kind: 'Role', metadata, rules: p.rules });
        out.roleBindings.push({
          apiVersion: rbacApiVersion,
          kind: 'RoleBinding',
          metadata: { ...metadata, labels: { ...metadata.labels } },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
          subjects: [serviceAccountSubject(p.serviceAccountName, csv.namespace)],
        });
      }
    }
  }

  for (const p of input.clusterPermissions) {
    const name = generatedName(csv.name, [csv.name, csv.namespace, p]);
    addClusterGrant(out, csv, name, p.rules, p.serviceAccountName);
  }
  return dedupe(out);
}

function addClusterGrant(
  out: RBACObjects,
  csv: CSVRef,
  name: string,
  rules: V1PolicyRule[],
  serviceAccount: string,
): void {
  out.clusterRoles.push({
    apiVersion: rbacApiVersion,
    kind: 'ClusterRole',
    metadata: { name, labels: ownerLabels(csv) },
    rules,
  });
  out.clusterRoleBindings.push({
    apiVersion: rbacApiVersion,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: ownerLabels(csv) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [serviceAccountSubject(serviceAccount, csv.namespace)],
  });
}

/**
 * RBAC in a target namespace other than the operator's is marked as copied from it, as OLM
 * marks it; it cannot have an ownerReference to the CSV (references do not cross namespaces), so
 * the owner labels are what uninstall finds it by.
 */
function namespacedMetadata(csv: CSVRef, name: string, namespace: string): ObjectMeta & { name: string } {
  const labels = ownerLabels(csv);
  if (namespace !== csv.namespace) labels[CopiedFromLabel] = csv.namespace;
  return { name, namespace, labels };
}

function serviceAccountSubject(name: string, namespace: string) {
  return { kind: 'ServiceAccount', name, namespace };
}

/** Two identical grants for one ServiceAccount hash to one name; keep one object per name. */
function dedupe(objects: RBACObjects): RBACObjects {
  const unique = (xs: Resource[]) => {
    const seen = new Set<string>();
    return xs.filter((x) => {
      const key = `${x.metadata.namespace ?? ''}/${x.metadata.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };
  return {
    serviceAccounts: unique(objects.serviceAccounts),
    roles: unique(objects.roles),
    roleBindings: unique(objects.roleBindings),
    clusterRoles: unique(objects.clusterRoles),
    clusterRoleBindings: unique(objects.clusterRoleBindings),
  };
}
