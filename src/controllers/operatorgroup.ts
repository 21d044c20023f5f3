/**
 * The OperatorGroup controller (key `namespace/name`): keeps `status.namespaces` equal to the
 * namespaces the group targets (`spec.targetNamespaces`, else the Namespaces matching
 * `spec.selector`, else all namespaces as `['']`), moving `lastUpdated` only when the list
 * changes. Like OLM, it also labels each namespace the group targets (unless it targets all
 * namespaces) with `olm.operatorgroup.uid/<uid>`, which its operators' admission webhooks select,
 * and removes the label where the group no longer applies. The CSVs of the namespace follow the
 * group through the CSV controller, which watches OperatorGroups and Namespaces itself and
 * re-annotates and re-scopes the operator's Deployments and RBAC (olm.targetNamespaces).
 * It also keeps the ClusterRoles for the APIs the namespace's operators provide, and the group's
 * own aggregating roles (./operatorgroup-roles.ts). A group naming a ServiceAccount
 * (`spec.serviceAccountName`, which installs in its namespace act as: ./operatorgroup-scope.ts)
 * gets OLM's `status.serviceAccountRef` once it exists, and the OperatorGroupServiceAccount
 * condition while it does not.
 */
import type { OperatorGroup, OperatorGroupStatus } from '../apis/operators.js';
import { Resources } from '../apis/operators.js';
import {
  type NamespaceInfo,
  namespaceLabelChanges,
  operatorGroupNamespaces,
} from '../install/operatorgroup.js';
import { isEmptySelector } from '../olm/selector.js';
import { installScope } from '../install/scoped-install.js';
import { OperatorGroupConditionReason, OperatorGroupConditionType } from '../apis/conditions.js';
import { ConditionStatus } from '../apis/meta.js';
import { objectKey, splitKey } from '../kube/cache.js';
import { formatTime, removeCondition, setCondition, statusChanged } from '../kube/conditions.js';
import { writeStatus } from '../kube/status.js';
import { objectPath } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { Builtin } from '../kube/resources.js';
import type { Controller, ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';
import { mergePatch } from './objects.js';
import { deleteGroupRoles, reconcileGroupRoles, watchRoleSources } from './operatorgroup-roles.js';

/**
 * What the controller found of the ServiceAccount a group names (`spec.serviceAccountName`):
 * its uid when it exists, or why it cannot be used.
 */
export type ServiceAccountSeen = { found: true; uid: string } | { found: false; message: string };

/**
 * The status to write, or undefined when the stored one is current. `lastUpdated` moves only when
 * the namespaces or the ServiceAccount reference do. With other OperatorGroups in the same
 * namespace the group carries OLM's MultipleOperatorGroup condition (the namespace's CSVs fail
 * with TooManyOperatorGroups). A spec the API would have to reject (`targetNamespaces` containing
 * '') leaves the namespaces as they are; the CSVs report it. A group naming a ServiceAccount gets
 * OLM's `status.serviceAccountRef` once it exists, and the OperatorGroupServiceAccount condition
 * (ServiceAccountNotFound) while it does not: installs in the namespace wait for it.
 */
export function nextOperatorGroupStatus(
  og: OperatorGroup,
  namespaces: readonly NamespaceInfo[],
  groupsInNamespace: number,
  now: number,
  serviceAccount?: ServiceAccountSeen,
): OperatorGroupStatus | undefined {
  const prev = og.status;
  const next: OperatorGroupStatus = { ...prev, lastUpdated: prev?.lastUpdated ?? formatTime(now) };
  const targets = operatorGroupNamespaces(og, namespaces);
  if (targets.ok && (prev?.namespaces === undefined || !sameList(prev.namespaces, targets.value))) {
    next.namespaces = targets.value;
    next.lastUpdated = formatTime(now);
  }
  const name = og.spec?.serviceAccountName ?? '';
  const ref =
    name !== '' && serviceAccount?.found
      ? {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          namespace: og.metadata.namespace ?? '',
          name,
          uid: serviceAccount.uid,
        }
      : undefined;
  if (JSON.stringify(ref) !== JSON.stringify(prev?.serviceAccountRef)) {
    if (ref) next.serviceAccountRef = ref;
    else delete next.serviceAccountRef;
    next.lastUpdated = formatTime(now);
  }
  let conditions =
    groupsInNamespace > 1
      ? setCondition(
          prev?.conditions,
          {
            type: OperatorGroupConditionType.MultipleOperatorGroup,
            status: ConditionStatus.True,
            reason: OperatorGroupConditionReason.MultipleOperatorGroupsFound,
            message: 'Multiple OperatorGroup found in the same namespace',
          },
          now,
        )
      : removeCondition(prev?.conditions, OperatorGroupConditionType.MultipleOperatorGroup);
  conditions =
    name !== '' && serviceAccount !== undefined && !serviceAccount.found
      ? setCondition(
          conditions,
          {
            type: OperatorGroupConditionType.OperatorGroupServiceAccount,
            status: ConditionStatus.True,
            reason: OperatorGroupConditionReason.ServiceAccountNotFound,
            message: serviceAccount.message,
          },
          now,
        )
      : removeCondition(conditions, OperatorGroupConditionType.OperatorGroupServiceAccount);
  if (conditions.length > 0 || prev?.conditions !== undefined) next.conditions = conditions;
  // lastUpdated alone is not a change (statusChanged ignores it).
  return statusChanged(prev ?? {}, next) ? next : undefined;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const uses = {
  informers: ['namespaces', 'operatorGroups', 'csvs', 'crds', 'clusterRoles', 'apiServices'] as const,
  ports: ['applier', 'client', 'clock'] as const,
};

/** What this controller reads and writes through; the manager gives it nothing else. */
export type OperatorGroupContext = ScopedContext<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
>;

const operatorGroupControllerOwn: Controller<(typeof uses.informers)[number], (typeof uses.ports)[number]> = {
  ...uses,
  name: 'operatorgroup',
  kind: Resources.OperatorGroup.kind,
  watch(ctx, enqueue) {
    const { informers } = ctx;
    // A group appearing or going changes whether its neighbours are alone in their namespace.
    const neighbours = (og: OperatorGroup) => {
      for (const g of informers.operatorGroups.list(og.metadata.namespace)) enqueue(objectKey(g));
    };
    informers.operatorGroups.on({
      add: neighbours,
      update: (_, og) => enqueue(objectKey(og)),
      // The group's own key too: its namespaces lose its label.
      delete: (og) => {
        enqueue(objectKey(og));
        neighbours(og);
      },
    });
    // A namespace appearing, going or changing labels can change what a selector matches; and
    // a namespace a group lists by name needs the group's label, also when it appears later.
    const onNamespace = (ns: { metadata?: { name?: string } }) => {
      for (const og of informers.operatorGroups.list()) {
        if (!isEmptySelector(og.spec?.selector) && (og.spec?.targetNamespaces ?? []).length === 0)
          enqueue(objectKey(og));
        else if (og.status?.namespaces?.includes(ns.metadata?.name ?? '')) enqueue(objectKey(og));
      }
    };
    informers.namespaces.on({ add: onNamespace, update: (_, ns) => onNamespace(ns), delete: onNamespace });
    watchRoleSources(ctx, enqueue);
  },
  reconcile: (ctx) => async (key) => {
    const og = ctx.informers.operatorGroups.get(key);
    const namespaces = ctx.informers.namespaces
      .list()
      .filter((n) => !n.metadata?.deletionTimestamp)
      .map((n) => ({ name: n.metadata?.name ?? '', labels: n.metadata?.labels }));
    if (og === undefined || og.metadata.deletionTimestamp) {
      await labelNamespaces(ctx, namespaces);
      const { namespace = '', name } = splitKey(key);
      await deleteGroupRoles(ctx, { namespace, name });
      return;
    }
    const groups = ctx.informers.operatorGroups
      .list(og.metadata.namespace)
      .filter((g) => !g.metadata.deletionTimestamp);
    const serviceAccount = await observeServiceAccount(ctx, og);
    const status = nextOperatorGroupStatus(og, namespaces, groups.length, ctx.clock.now(), serviceAccount);
    await labelNamespaces(ctx, namespaces, og, status?.namespaces);
    await reconcileGroupRoles(ctx, og);
    if (status !== undefined) {
      ctx.log.info(
        { namespace: og.metadata.namespace, name: og.metadata.name, targets: status.namespaces },
        'operatorgroup status changed',
      );
      await writeStatus(ctx.applier, { resource: Resources.OperatorGroup, object: og, next: status });
    }
    // ServiceAccounts have no informer here: look again for one that is missing, or went.
    if (serviceAccount === undefined) return;
    return { requeueAfter: serviceAccount.found ? serviceAccountRecheckMs : missingServiceAccountRetryMs };
  },
};

const missingServiceAccountRetryMs = 5_000;
const serviceAccountRecheckMs = 60_000;

/** Whether the ServiceAccount the group names exists (undefined when it names none). */
async function observeServiceAccount(
  ctx: OperatorGroupContext,
  og: OperatorGroup,
): Promise<ServiceAccountSeen | undefined> {
  const namespace = og.metadata.namespace ?? '';
  const name = og.spec?.serviceAccountName ?? '';
  if (name === '') return undefined;
  const scope = installScope([og], namespace);
  if (scope.kind === 'invalid') return { found: false, message: scope.message };
  try {
    const sa = await ctx.client.request<{ metadata?: { uid?: string } }>({
      path: objectPath(Builtin.ServiceAccount, name, namespace),
    });
    return { found: true, uid: sa.metadata?.uid ?? '' };
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return {
      found: false,
      message: `ServiceAccount ${name} not found: installs in namespace ${namespace} wait for it`,
    };
  }
}

/**
 * Puts OLM's `olm.operatorgroup.uid/<uid>` label on the namespaces each group targets and takes
 * it off the others (and off every namespace for groups that are gone), so admission webhooks can
 * select a group's namespaces. `og` is the group being reconciled, with its new targets.
 */
async function labelNamespaces(
  ctx: OperatorGroupContext,
  namespaces: readonly NamespaceInfo[],
  og?: OperatorGroup,
  targets?: readonly string[],
) {
  const groups = ctx.informers.operatorGroups
    .list()
    .filter((g) => !g.metadata.deletionTimestamp)
    .map((g) => ({
      uid: g.metadata.uid ?? '',
      namespaces:
        og !== undefined && g.metadata.uid === og.metadata.uid
          ? (targets ?? g.status?.namespaces ?? [])
          : (g.status?.namespaces ?? []),
    }));
  for (const change of namespaceLabelChanges(namespaces, groups)) {
    try {
      await mergePatch(ctx.client, objectPath(Builtin.Namespace, change.name), {
        metadata: { labels: change.labels },
      });
    } catch (err) {
      // A namespace deleted meanwhile needs no label.
      if (!isNotFound(err)) throw err;
    }
  }
}

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const operatorGroupController = reportingForbidden(operatorGroupControllerOwn, (ctx, key) =>
  [ctx.informers.operatorGroups.get(key)].filter((o) => o !== undefined),
);
