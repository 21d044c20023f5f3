/**
 * The ServiceAccounts and RBAC a CSV's install strategy asks for, split the way OLM splits who
 * writes them:
 * - `planRbac` (written by the InstallPlan, as steps): every ServiceAccount the strategy names,
 *   a Role and RoleBinding in the operator's namespace for each of `permissions`, and a
 *   ClusterRole and ClusterRoleBinding for each of `clusterPermissions`. None of these depends on
 *   the OperatorGroup's targets.
 * - `targetedRbac` (written by the CSV controller, which follows the OperatorGroup): what the
 *   targets add to `permissions`. A copy of each Role and RoleBinding in every target namespace
 *   other than the operator's, labelled `olm.copiedFrom`; or, when the group targets all
 *   namespaces, the permissions lifted to a ClusterRole and ClusterRoleBinding with read access
 *   to namespaces added (an all-namespaces operator has to list them).
 * - `staleRbac`: what `targetedRbac` made for earlier targets and the current ones do not need.
 *
 * Names are OLM's shape, `<csv>-<serviceaccount>-<hash>` for Roles and lifted ClusterRoles and
 * `<csv>-<hash>` for the ClusterRoles of `clusterPermissions`, where the hash covers the CSV's
 * name, the grant, and for cluster-scoped objects the operator's namespace (the same CSV may be
 * installed in two namespaces). A re-plan of the same CSV gives the same names; changed rules
 * give new ones, and the old objects go with the old CSV. A binding has its role's name.
 */
import type { V1PolicyRule } from '@kubernetes/client-node';
import type { ObjectMeta } from '../apis/meta.js';
import type { StrategyDeploymentPermissions } from '../apis/operators.js';
import { generatedName } from './hash.js';
import type { Resource } from '../olm/kinds.js';
import { AllNamespaces, isAllNamespaces } from './operatorgroup.js';
import { CopiedFromLabel, type CSVRef, ownerLabels } from './ownership.js';

const rbacApiVersion = 'rbac.authorization.k8s.io/v1';

/** OLM adds this rule to lifted ClusterRoles: an all-namespaces operator needs to see namespaces. */
export const NamespaceViewRule: V1PolicyRule = {
  apiGroups: [''],
  resources: ['namespaces'],
  verbs: ['get', 'list', 'watch'],
};

export interface PermissionsInput {
  csv: CSVRef;
  permissions: readonly StrategyDeploymentPermissions[];
  clusterPermissions: readonly StrategyDeploymentPermissions[];
}

export interface TargetedInput {
  csv: CSVRef;
  permissions: readonly StrategyDeploymentPermissions[];
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

/** Names one RBAC object, for pruning. */
export interface RbacRef {
  kind: 'Role' | 'RoleBinding' | 'ClusterRole' | 'ClusterRoleBinding';
  namespace?: string;
  name: string;
}

export interface StaleRbacInput extends TargetedInput {
  /** Roles and RoleBindings on the cluster that carry the CSV's owner labels and `olm.copiedFrom`. */
  copied: readonly RbacRef[];
}

const empty = (): RBACObjects => ({
  serviceAccounts: [],
  roles: [],
  roleBindings: [],
  clusterRoles: [],
  clusterRoleBindings: [],
});

/** The RBAC the InstallPlan creates: independent of the OperatorGroup's targets. */
export function planRbac(input: PermissionsInput): RBACObjects {
  const { csv } = input;
  const out = empty();
  const accounts = new Set<string>();
  for (const p of [...input.permissions, ...input.clusterPermissions]) accounts.add(p.serviceAccountName);
  for (const name of accounts) {
    out.serviceAccounts.push({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: csv.namespace, labels: ownerLabels(csv) },
    });
  }
  for (const p of input.permissions) addNamespacedGrant(out, csv, p, csv.namespace);
  for (const p of input.clusterPermissions) {
    addClusterGrant(
      out,
      csv,
      generatedName(csv.name, [csv.name, csv.namespace, p]),
      p.rules,
      p.serviceAccountName,
    );
  }
  return dedupe(out);
}

/** The RBAC the OperatorGroup's targets add to the CSV's `permissions`. */
export function targetedRbac(input: TargetedInput): RBACObjects {
  const { csv } = input;
  const out = empty();
  if (isAllNamespaces(input.targetNamespaces)) {
    for (const p of input.permissions) {
      const name = generatedName(`${csv.name}-${p.serviceAccountName}`, [csv.name, csv.namespace, p]);
      addClusterGrant(out, csv, name, [...p.rules, NamespaceViewRule], p.serviceAccountName);
    }
    return dedupe(out);
  }
  const copies = [...new Set(input.targetNamespaces)].filter((ns) => ns !== csv.namespace);
  for (const p of input.permissions) for (const ns of copies) addNamespacedGrant(out, csv, p, ns);
  return dedupe(out);
}

/**
 * RBAC a CSV no longer needs after its OperatorGroup's targets changed: Roles copied into a
 * namespace that is no longer a target, or permissions lifted to ClusterRoles while the group
 * targeted all namespaces (and no longer does). Only objects `targetedRbac` generates are
 * candidates, recognised by their deterministic names or their `olm.copiedFrom` label, never
 * RBAC the InstallPlan created or the bundle shipped itself.
 */
export function staleRbac(input: StaleRbacInput): RbacRef[] {
  const grant = (targetNamespaces: readonly string[]) =>
    rbacRefs(targetedRbac({ ...input, targetNamespaces }));
  const wanted = new Set(grant(input.targetNamespaces).map(refKey));
  // Everything the permissions could have produced under another OperatorGroup shape.
  const candidates = [...grant([AllNamespaces]), ...input.copied];
  const seen = new Set<string>();
  return candidates.filter((r) => {
    const key = refKey(r);
    if (wanted.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The objects in the order they are applied: roles before the bindings that name them. */
export function rbacApplyOrder(objects: RBACObjects): Resource[] {
  return [...objects.clusterRoles, ...objects.roles, ...objects.clusterRoleBindings, ...objects.roleBindings];
}

function rbacRefs(objects: RBACObjects): RbacRef[] {
  return rbacApplyOrder(objects).map((o) => ({
    kind: o.kind as RbacRef['kind'],
    name: o.metadata.name,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  }));
}

const refKey = (r: RbacRef) => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

function addNamespacedGrant(
  out: RBACObjects,
  csv: CSVRef,
  p: StrategyDeploymentPermissions,
  namespace: string,
): void {
  const name = generatedName(`${csv.name}-${p.serviceAccountName}`, [csv.name, p]);
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
