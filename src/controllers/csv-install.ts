/**
 * Applying a CSV's install strategy: the RBAC its permissions need for the current OperatorGroup
 * targets (and removing what old targets needed), its OperatorCondition with the RBAC that lets
 * the operator write it, and its Deployments. Everything is server-side applied, so applying
 * again converges rather than duplicating.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import type { KubeObject } from '../apis/meta.js';
import type { ClusterServiceVersion } from '../apis/operators.js';
import { Resources } from '../apis/operators.js';
import type { OperatorGroupTargets } from '../install/operatorgroup.js';
import {
  addOwnerReference,
  CopiedFromLabel,
  csvOwnerReference,
  ownerLabels,
  ownerSelector,
} from '../install/ownership.js';
import { rbacForPermissions } from '../install/rbac.js';
import type { ServingObjects } from '../install/serving.js';
import { collectionPath, objectPath } from '../kube/client.js';
import type { ControllerContext } from './context.js';
import { type RbacRef, staleRbac } from './csv-rbac.js';
import { csvServiceAccounts } from './csv-requirements.js';
import { applyServingAfterDeployments } from './csv-serving.js';
import { deleteIfPresent, Rbac } from './objects.js';

/**
 * Applies, in order: the Roles and bindings for the current OperatorGroup targets (so a change of
 * targets re-scopes them; the ServiceAccounts come from the InstallPlan), the OperatorCondition
 * with the RBAC that lets the operator write it, the Services and certificate Secrets of the
 * Deployments that serve webhooks or API services, then the Deployments, and after them the
 * webhook configurations, APIServices and CRD conversions (./csv-serving.ts).
 */
export async function applyInstall(
  ctx: ControllerContext,
  csv: ClusterServiceVersion,
  targets: OperatorGroupTargets,
  deployments: V1Deployment[],
  serving?: ServingObjects,
) {
  const namespace = csv.metadata.namespace ?? '';
  const name = csv.metadata.name ?? '';
  const identity = { name, uid: csv.metadata.uid ?? '' };
  const strategy = csv.spec.install.spec;
  const rbac = rbacForPermissions({
    csv: { name, namespace },
    permissions: strategy?.permissions ?? [],
    clusterPermissions: strategy?.clusterPermissions ?? [],
    targetNamespaces: targets.namespaces,
  });
  for (const r of [...rbac.clusterRoles, ...rbac.roles, ...rbac.clusterRoleBindings, ...rbac.roleBindings]) {
    await applyPruned(ctx, r.metadata.namespace === namespace ? addOwnerReference(r, identity) : r);
  }
  await pruneRbac(ctx, csv, targets);
  for (const o of operatorConditionObjects(csv, deployments)) await ctx.applier.apply(o);
  for (const o of serving?.beforeDeployments ?? []) await ctx.applier.apply(o);
  for (const d of deployments) await applyPruned(ctx, d as KubeObject);
  if (serving) await applyServingAfterDeployments(ctx, csv, serving);
}

/**
 * Applies what comes from the CSV (its permissions' rules, its Deployment specs) without the
 * fields the kind's live schema does not declare: OLM decodes them into Go types, which drops
 * such fields, and server-side apply would refuse them. The InstallPlan reports them.
 */
async function applyPruned(ctx: ControllerContext, obj: KubeObject) {
  const { value, fields } = await ctx.schemas.prune(obj);
  if (fields.length > 0) {
    ctx.log.debug({ object: `${obj.kind}/${obj.metadata?.name ?? ''}`, fields }, 'pruned undeclared fields');
  }
  await ctx.applier.apply(value);
}

/** Deletes the RBAC the previous OperatorGroup targets needed and the current ones do not. */
async function pruneRbac(ctx: ControllerContext, csv: ClusterServiceVersion, targets: OperatorGroupTargets) {
  const ref = { name: csv.metadata.name ?? '', namespace: csv.metadata.namespace ?? '' };
  const selector = `${ownerSelector(ref)},${CopiedFromLabel}`;
  const copied: RbacRef[] = [];
  for (const kind of ['Role', 'RoleBinding'] as const) {
    const list = await ctx.client.request<{ items?: KubeObject[] }>({
      path: collectionPath(Rbac[kind]),
      query: { labelSelector: selector },
    });
    for (const o of list.items ?? []) {
      copied.push({ kind, name: o.metadata?.name ?? '', namespace: o.metadata?.namespace ?? '' });
    }
  }
  const strategy = csv.spec.install.spec;
  const stale = staleRbac({
    csv: ref,
    permissions: strategy?.permissions ?? [],
    clusterPermissions: strategy?.clusterPermissions ?? [],
    targetNamespaces: targets.namespaces,
    copied,
  });
  for (const r of stale) {
    if (await deleteIfPresent(ctx.client, objectPath(Rbac[r.kind], r.name, r.namespace))) {
      ctx.log.info({ kind: r.kind, namespace: r.namespace, name: r.name }, 'removed rbac no longer targeted');
    }
  }
}

/**
 * One OperatorCondition per CSV (OLM names it after the CSV and tells the operator through
 * OPERATOR_CONDITION_NAME), and a Role and RoleBinding letting the operator's ServiceAccounts
 * read and update it, all owned by the CSV.
 */
export function operatorConditionObjects(csv: ClusterServiceVersion, deployments: readonly V1Deployment[]) {
  const name = csv.metadata.name ?? '';
  const namespace = csv.metadata.namespace ?? '';
  const metadata = {
    name,
    namespace,
    labels: ownerLabels({ name, namespace }),
    ownerReferences: [csvOwnerReference({ name, uid: csv.metadata.uid ?? '' })],
  };
  const accounts = csvServiceAccounts(csv);
  const condition = {
    apiVersion: `${Resources.OperatorCondition.group}/${Resources.OperatorCondition.version}`,
    kind: Resources.OperatorCondition.kind,
    metadata,
    spec: { serviceAccounts: accounts, deployments: deployments.map((d) => d.metadata?.name ?? '') },
  };
  if (accounts.length === 0) return [condition];
  const role = {
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
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: accounts.map((sa) => ({ kind: 'ServiceAccount', name: sa, namespace })),
  };
  return [condition, role, binding];
}
