/**
 * What an installed CSV needs on the cluster besides what its InstallPlan created, computed in
 * one place from plain data: the CSV controller observes, calls `desiredCSVObjects`, applies the
 * result in order (`rbac`, `operatorCondition`, then `deployments`) and deletes `prune`.
 *
 * - `rbac`: what the OperatorGroup's targets add to the CSV's `permissions` (copies in other
 *   target namespaces, or ClusterRoles lifted for all namespaces; ./rbac.ts). The InstallPlan
 *   created the rest, so each object has one writer.
 * - `operatorCondition`: the OperatorCondition named after the CSV (OLM tells the operator its
 *   name through OPERATOR_CONDITION_NAME) and a Role and RoleBinding that let the operator's
 *   ServiceAccounts read and update it, all owned by the CSV.
 * - `deployments`: the strategy's Deployments with the OperatorGroup's annotations, the
 *   Subscription's `spec.config` and the serving certificates mounted (./deployments.ts).
 * - `prune`: targeted RBAC the current targets no longer need.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import type { ClusterServiceVersion, SubscriptionConfig } from '../apis/operators.js';
import { Resources } from '../apis/operators.js';
import { fail, ok, type Result } from '../util/result.js';
import { renderDeployments } from './deployments.js';
import type { Resource } from '../olm/kinds.js';
import type { OperatorGroupTargets } from './operatorgroup.js';
import { csvOwnerReference, ownerLabels } from './ownership.js';
import { rbacApplyOrder, type RbacRef, staleRbac, targetedRbac } from './rbac.js';
import type { DeploymentCertificate } from './serving.js';

export interface CSVObjectsInput {
  /** The CSV as it is on the cluster (its uid is what ownerReferences need). */
  csv: ClusterServiceVersion;
  /** The OperatorGroup's targets. */
  targets: OperatorGroupTargets;
  /** The owning Subscription's `spec.config`. */
  config?: SubscriptionConfig;
  /** The serving certificate of each Deployment that serves webhooks or API services. */
  servingCertificates?: Readonly<Record<string, DeploymentCertificate>>;
  /** Roles and RoleBindings on the cluster labelled as copied from this CSV (`olm.copiedFrom`). */
  copiedRbac?: readonly RbacRef[];
}

export interface CSVObjects {
  rbac: Resource[];
  operatorCondition: Resource[];
  deployments: V1Deployment[];
  prune: RbacRef[];
}

export function desiredCSVObjects(input: CSVObjectsInput): Result<CSVObjects> {
  const { csv } = input;
  const deployments = renderDeployments({
    csv,
    targets: input.targets,
    config: input.config,
    servingCertificates: input.servingCertificates,
  });
  if (!deployments.ok) return fail(deployments.errors);
  const ref = { name: csv.metadata.name ?? '', namespace: csv.metadata.namespace ?? '' };
  const permissions = csv.spec.install.spec?.permissions ?? [];
  const targetNamespaces = input.targets.namespaces;
  return ok({
    rbac: rbacApplyOrder(targetedRbac({ csv: ref, permissions, targetNamespaces })),
    operatorCondition: operatorConditionObjects(csv, deployments.value),
    deployments: deployments.value,
    prune: staleRbac({ csv: ref, permissions, targetNamespaces, copied: input.copiedRbac ?? [] }),
  });
}

/** The ServiceAccounts a CSV's permissions and clusterPermissions name. */
export function csvServiceAccounts(csv: ClusterServiceVersion): string[] {
  const spec = csv.spec.install.spec;
  const all = [...(spec?.permissions ?? []), ...(spec?.clusterPermissions ?? [])];
  return [...new Set(all.map((p) => p.serviceAccountName))].sort();
}

/** The OperatorCondition of a CSV and the RBAC that lets its operator write it. */
export function operatorConditionObjects(
  csv: ClusterServiceVersion,
  deployments: readonly V1Deployment[],
): Resource[] {
  const name = csv.metadata.name ?? '';
  const namespace = csv.metadata.namespace ?? '';
  const metadata = {
    name,
    namespace,
    labels: ownerLabels({ name, namespace }),
    ownerReferences: [csvOwnerReference({ name, uid: csv.metadata.uid ?? '' })],
  };
  const accounts = csvServiceAccounts(csv);
  const condition: Resource = {
    apiVersion: `${Resources.OperatorCondition.group}/${Resources.OperatorCondition.version}`,
    kind: Resources.OperatorCondition.kind,
    metadata,
    spec: { serviceAccounts: accounts, deployments: deployments.map((d) => d.metadata?.name ?? '') },
  };
  if (accounts.length === 0) return [condition];
  const role: Resource = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata,
    rules: [
      {
        apiGroups: [Resources.OperatorCondition.group],
        resources: [Resources.OperatorCondition.plural, `${Resources.OperatorCondition.plural}/status`],
        resourceNames: [name],
        verbs: ['get', 'update', 'patch'],
      },
    ],
  };
  const binding: Resource = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: accounts.map((sa) => ({ kind: 'ServiceAccount', name: sa, namespace })),
  };
  return [condition, role, binding];
}
