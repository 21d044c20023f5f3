/**
 * Applying what a CSV needs (src/install/csv-objects.ts computes it): the RBAC its permissions
 * need for the current OperatorGroup targets (and removing what old targets needed), its
 * OperatorCondition with the RBAC that lets the operator write it, and its Deployments.
 * Everything is server-side applied, so applying again converges rather than duplicating.
 */
import type { KubeObject } from '../apis/meta.js';
import type { ClusterServiceVersion } from '../apis/operators.js';
import type { CSVObjects } from '../install/csv-objects.js';
import { CopiedFromLabel, ownerSelector } from '../install/ownership.js';
import type { RbacRef } from '../install/rbac.js';
import type { ServingObjects } from '../install/serving.js';
import { collectionPath, objectPath } from '../kube/client.js';
import type { CSVContext } from './csv.js';
import { applyServingAfterDeployments } from './csv-serving.js';
import { deleteIfPresent, Rbac } from './objects.js';
import type { Writer } from './operatorgroup-scope.js';

/**
 * Applies, in order: the RBAC the current OperatorGroup targets add (so a change of targets
 * re-scopes it; the ServiceAccounts and the operator namespace's RBAC come from the InstallPlan),
 * deletes what earlier targets needed, then the OperatorCondition with the RBAC that lets the
 * operator write it, the Services and certificate Secrets of the Deployments that serve webhooks
 * or API services, then the Deployments, and after them the webhook configurations, APIServices
 * and CRD conversions (./csv-serving.ts). Everything is written with `writer`: as the manager, or
 * as the OperatorGroup's ServiceAccount (./operatorgroup-scope.ts); deleting what is no longer
 * needed stays the manager's (cleanup grants nothing).
 */
export async function applyInstall(
  ctx: CSVContext,
  csv: ClusterServiceVersion,
  desired: CSVObjects,
  writer: Writer,
  serving?: ServingObjects,
) {
  for (const r of desired.rbac) await applyPruned(ctx, writer, r);
  await deleteRbac(ctx, desired.prune);
  for (const o of desired.operatorCondition) await writer.applier.apply(o);
  for (const o of serving?.beforeDeployments ?? []) await writer.applier.apply(o);
  for (const d of desired.deployments) await applyPruned(ctx, writer, d as KubeObject);
  if (serving) await applyServingAfterDeployments(ctx, csv, serving, writer);
}

/**
 * Applies what comes from the CSV (its permissions' rules, its Deployment specs) without the
 * fields the kind's live schema does not declare: OLM decodes them into Go types, which drops
 * such fields, and server-side apply would refuse them. The InstallPlan reports them.
 */
async function applyPruned(ctx: CSVContext, writer: Writer, obj: KubeObject) {
  const { value, fields } = await ctx.schemas.prune(obj);
  if (fields.length > 0) {
    ctx.log.debug({ object: `${obj.kind}/${obj.metadata?.name ?? ''}`, fields }, 'pruned undeclared fields');
  }
  await writer.applier.apply(value);
}

/** The Roles and RoleBindings on the cluster copied from the CSV into target namespaces. */
export async function observeCopiedRbac(ctx: CSVContext, csv: ClusterServiceVersion): Promise<RbacRef[]> {
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
  return copied;
}

async function deleteRbac(ctx: CSVContext, stale: readonly RbacRef[]) {
  for (const r of stale) {
    if (await deleteIfPresent(ctx.client, objectPath(Rbac[r.kind], r.name, r.namespace))) {
      ctx.log.info({ kind: r.kind, namespace: r.namespace, name: r.name }, 'removed rbac no longer targeted');
    }
  }
}
