/**
 * Uninstall: objects in a CSV's namespace carry an ownerReference to it, so the garbage
 * collector removes them with it. Cluster-scoped RBAC, webhook configurations and APIServices,
 * and RBAC in other namespaces, cannot be owned by a namespaced CSV; like OLM, Bosun deletes them
 * when it sees the CSV gone, found by their owner labels, and sweeps once at start-up for CSVs
 * deleted while it was down. CRDs whose conversion webhook the CSV served go back to strategy
 * None unless a CSV left in the namespace declares it. No finalizer: a CSV stays deletable (and
 * its namespace too) when Bosun is not running. CRDs and custom resources are never deleted.
 */
import type { KubeObject } from '../apis/meta.js';
import {
  type InstallPlan,
  InstallPlanPhase,
  Resources,
  RollbackPhase,
  type Subscription,
} from '../apis/operators.js';
import { anyCSVOwnerSelector, CopiedFromLabel, csvOwnerOf, ownerSelector } from '../install/ownership.js';
import { objectKey } from '../kube/cache.js';
import { collectionPath, objectPath } from '../kube/client.js';
import type { CSVContext } from './csv.js';
import { resetOrphanedConversions, ServingClusterResources } from './csv-serving.js';
import { deleteByLabel, exists, Rbac } from './objects.js';

/**
 * After a CSV is gone: delete the webhook configurations, APIServices, cluster-scoped RBAC and
 * RBAC in other namespaces that its owner labels point at, and reset orphaned conversions.
 * Checked against the API (not only the cache) so a CSV that the cache has not seen yet is never
 * cleaned up, and skipped while the CSV is being put back
 * (`reinstalling`: its RBAC is applied before the CSV exists). Both are read again before each
 * kind is deleted: a cleanup that runs late (retried, or queued behind others) can overlap a
 * rollback that reinstalls the same CSV, and would otherwise delete the ClusterRole the rollback's
 * InstallPlan had just applied, leaving the operator its binding without its role.
 */
export async function cleanupDeleted(ctx: CSVContext, namespace: string, name: string) {
  // The cache first, the API second: an InstallPlan creates the CSV before it says Complete, so
  // a plan seen finished here means the CSV exists for the API by then.
  const gone = async () =>
    !reinstalling(
      name,
      ctx.informers.installPlans.list(namespace),
      ctx.informers.subscriptions.list(namespace),
    ) && !(await exists(ctx.client, objectPath(Resources.ClusterServiceVersion, name, namespace)));
  const selector = ownerSelector({ name, namespace });
  const deleted: string[] = [];
  // Webhook configurations first: one whose operator is gone can only refuse requests.
  for (const resource of [
    ...ServingClusterResources,
    Rbac.ClusterRoleBinding,
    Rbac.ClusterRole,
    Rbac.RoleBinding,
    Rbac.Role,
  ]) {
    if (!(await gone())) return;
    deleted.push(...(await deleteByLabel(ctx.client, resource, selector)));
  }
  if (deleted.length > 0) ctx.log.info({ deleted }, 'removed cluster objects of deleted csv');
  const reset = await resetOrphanedConversions(ctx, namespace);
  if (reset.length > 0) ctx.log.info({ crds: reset }, 'removed conversion webhooks of deleted csv');
}

/**
 * Whether the CSV `name`, gone now, is being put back: an InstallPlan that installs it has not
 * finished, or a rollback under way goes back to it (the rollback is in the Subscription's status
 * before its InstallPlan is made, and stays there until the CSV runs again).
 */
export function reinstalling(
  name: string,
  installPlans: readonly Pick<InstallPlan, 'spec' | 'status'>[],
  subscriptions: readonly Pick<Subscription, 'status'>[],
): boolean {
  return (
    installPlans.some(
      (ip) =>
        ip.spec.clusterServiceVersionNames.includes(name) &&
        ip.status?.phase !== InstallPlanPhase.Complete &&
        ip.status?.phase !== InstallPlanPhase.Failed,
    ) ||
    subscriptions.some(
      (s) => s.status?.rollback?.phase === RollbackPhase.RollingBack && s.status.rollback.to === name,
    )
  );
}

/** Once the caches are filled: enqueue the CSVs that own cluster RBAC but no longer exist. */
export async function sweepOrphans(ctx: CSVContext, enqueue: (key: string) => void) {
  try {
    await Promise.all([ctx.informers.csvs.synced(), ctx.informers.installPlans.synced()]);
    // ClusterRoles, webhook configurations, APIServices, and Roles copied into target
    // namespaces: none can be garbage collected.
    const selectors = [
      ...[Rbac.ClusterRole, ...ServingClusterResources].map((resource) => ({
        resource,
        labelSelector: anyCSVOwnerSelector,
      })),
      {
        resource: Rbac.Role,
        labelSelector: `${anyCSVOwnerSelector},${CopiedFromLabel}`,
      },
    ];
    for (const { resource, labelSelector } of selectors) {
      const list = await ctx.client.request<{ items?: KubeObject[] }>({
        path: collectionPath(resource),
        query: { labelSelector },
      });
      for (const item of list.items ?? []) {
        const owner = csvOwnerOf(item.metadata?.labels);
        if (owner === undefined) continue;
        const key = objectKey(owner.namespace, owner.name);
        if (ctx.informers.csvs.get(key) === undefined) enqueue(key);
      }
    }
  } catch (err) {
    ctx.log.warn({ err }, 'could not sweep rbac of deleted csvs');
  }
}
