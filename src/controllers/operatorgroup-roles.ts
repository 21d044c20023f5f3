/**
 * The ClusterRoles the OperatorGroup controller keeps for the APIs its operators provide, as OLM
 * keeps them (computed in src/install/provided-api-roles.ts and src/install/operatorgroup-roles.ts):
 * - for every CSV of the group's namespace that has Succeeded, the admin/edit/view (and crdview)
 *   roles of each API it provides, owned by the CRD or APIService (the garbage collector removes
 *   them with it; uninstalling the CSV leaves them, as the custom resources stay);
 * - the group's own `olm.og.<group>.<admin|edit|view>-<hash>` roles aggregating those APIs,
 *   deleted with the group (found by its owner labels).
 * Roles are applied only where the cached one lacks something, so a reconcile that finds them
 * right writes nothing.
 */
import type { KubeObject } from '../apis/meta.js';
import { type ClusterServiceVersion, CSVPhase, type OperatorGroup } from '../apis/operators.js';
import {
  type GroupRef,
  groupApis,
  operatorGroupOwnerLabels,
  operatorGroupOwnerOf,
  operatorGroupRoles,
} from '../install/operatorgroup-roles.js';
import {
  type ApiServer,
  type ClusterRole,
  type ProvidedApi,
  providedApiRoles,
  providedApis,
  roleNeedsApply,
} from '../install/provided-api-roles.js';
import { objectKey } from '../kube/cache.js';
import { formatProblem } from '../util/result.js';
import type { OperatorGroupContext } from './operatorgroup.js';
import { deleteByLabel, Rbac } from './objects.js';

/** Applies the provided-API roles of the namespace's Succeeded CSVs and the group's own roles. */
export async function reconcileGroupRoles(ctx: OperatorGroupContext, og: OperatorGroup): Promise<void> {
  const namespace = og.metadata.namespace ?? '';
  const csvs = ctx.informers.csvs.list(namespace);
  const desired: ClusterRole[] = [];
  for (const csv of csvs) {
    if (csv.status?.phase !== CSVPhase.Succeeded || csv.metadata.deletionTimestamp) continue;
    desired.push(...csvApiRoles(ctx, csv));
  }
  desired.push(...operatorGroupRoles({ namespace, name: og.metadata.name ?? '' }, groupApis(og, csvs)));
  const written: string[] = [];
  for (const role of desired) {
    const name = role.metadata?.name ?? '';
    if (!roleNeedsApply(ctx.informers.clusterRoles.get(name), role)) continue;
    await ctx.applier.apply(role);
    written.push(name);
  }
  if (written.length > 0) ctx.log.info({ clusterRoles: written }, 'operatorgroup roles applied');
}

/** The roles of each API a CSV provides whose CRD or APIService is there to own them. */
function csvApiRoles(ctx: OperatorGroupContext, csv: ClusterServiceVersion): ClusterRole[] {
  const apis = providedApis(csv);
  if (!apis.ok) {
    ctx.log.info(
      { csv: csv.metadata.name, problems: apis.errors.map(formatProblem) },
      'no roles for apis the csv names wrongly',
    );
    return [];
  }
  return apis.value.flatMap((api) => {
    const server = apiServer(ctx, api);
    // A Succeeded CSV's CRDs exist; one deleted since comes back with the CSV's next install.
    return server ? providedApiRoles(api, server) : [];
  });
}

function apiServer(ctx: OperatorGroupContext, api: ProvidedApi): ApiServer | undefined {
  const { kind, name } = api.servedBy;
  const obj: KubeObject | undefined =
    kind === 'CustomResourceDefinition' ? ctx.informers.crds.get(name) : ctx.informers.apiServices.get(name);
  const uid = obj?.metadata?.uid;
  if (!uid) return undefined;
  const apiVersion =
    kind === 'CustomResourceDefinition' ? 'apiextensions.k8s.io/v1' : 'apiregistration.k8s.io/v1';
  return { apiVersion, kind, name, uid };
}

/** Deletes the roles of a group that is gone (found through the API: the cache may not have them all). */
export async function deleteGroupRoles(ctx: OperatorGroupContext, og: GroupRef): Promise<void> {
  const selector = Object.entries(operatorGroupOwnerLabels(og))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const deleted = await deleteByLabel(ctx.client, Rbac.ClusterRole, selector);
  if (deleted.length > 0) ctx.log.info({ clusterRoles: deleted }, 'roles of deleted operatorgroup removed');
}

/**
 * Enqueues the groups whose roles a change may concern: those of a CSV's namespace when it
 * appears, goes, changes phase or changes the APIs it owns; those of the CSVs owning a CRD or
 * APIService that appears or goes; and the group of a role of its own, or those of the CSVs
 * owning the API of a provided-API role, when the role changes or goes (it is put back).
 */
export function watchRoleSources(ctx: OperatorGroupContext, enqueue: (key: string) => void): void {
  const { informers } = ctx;
  const groupsIn = (ns: string | undefined) => {
    for (const og of informers.operatorGroups.list(ns)) enqueue(objectKey(og));
  };
  const onCSV = (c: ClusterServiceVersion) => groupsIn(c.metadata.namespace);
  informers.csvs.on({
    add: onCSV,
    update: (old, c) => {
      const apis = (x: ClusterServiceVersion) =>
        JSON.stringify([x.spec.customresourcedefinitions?.owned, x.spec.apiservicedefinitions?.owned]);
      if (old.status?.phase !== c.status?.phase || apis(old) !== apis(c)) onCSV(c);
    },
    delete: onCSV,
  });
  /** The namespaces of the CSVs that provide the API served by `kind` `name`. */
  const providers = (kind: string, name: string) => {
    for (const csv of informers.csvs.list()) {
      const apis = providedApis(csv);
      if (apis.ok && apis.value.some((a) => a.servedBy.kind === kind && a.servedBy.name === name))
        groupsIn(csv.metadata.namespace);
    }
  };
  const onServer = (kind: string) => (o: KubeObject) => providers(kind, o.metadata?.name ?? '');
  informers.crds.on({
    add: onServer('CustomResourceDefinition'),
    delete: onServer('CustomResourceDefinition'),
  });
  informers.apiServices.on({ add: onServer('APIService'), delete: onServer('APIService') });
  const onRole = (r: ClusterRole) => {
    const og = operatorGroupOwnerOf(r.metadata?.labels);
    if (og) enqueue(objectKey(og.namespace, og.name));
    for (const owner of r.metadata?.ownerReferences ?? []) providers(owner.kind, owner.name);
  };
  // A group's role seen first (at start-up too) may be of a group deleted meanwhile.
  informers.clusterRoles.on({
    add: (r) => {
      const og = operatorGroupOwnerOf(r.metadata?.labels);
      if (og) enqueue(objectKey(og.namespace, og.name));
    },
    update: (_, r) => onRole(r),
    delete: onRole,
  });
}
