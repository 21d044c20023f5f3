/**
 * The OperatorGroup controller (key `namespace/name`): keeps `status.namespaces` equal to the
 * namespaces the group targets (`spec.targetNamespaces`, else the Namespaces matching
 * `spec.selector`, else all namespaces as `['']`), moving `lastUpdated` only when the list
 * changes. The CSVs of the namespace follow the group through the CSV controller, which watches
 * OperatorGroups and Namespaces itself and re-annotates and re-scopes the operator's Deployments
 * and RBAC (olm.targetNamespaces).
 */
import type { OperatorGroup, OperatorGroupStatus } from '../apis/operators.js';
import { Resources } from '../apis/operators.js';
import { type NamespaceInfo, operatorGroupNamespaces } from '../install/operatorgroup.js';
import { isEmptySelector } from '../install/selector.js';
import { OperatorGroupConditionReason, OperatorGroupConditionType } from '../apis/conditions.js';
import { ConditionStatus } from '../apis/meta.js';
import { formatTime, removeCondition, setCondition, statusChanged } from '../kube/conditions.js';
import type { Controller } from './context.js';

const ogApiVersion = `${Resources.OperatorGroup.group}/${Resources.OperatorGroup.version}`;
const keyOf = (og: OperatorGroup) => `${og.metadata.namespace ?? ''}/${og.metadata.name ?? ''}`;

/**
 * The status to write, or undefined when the stored one is current. `lastUpdated` moves only when
 * the namespaces do. With other OperatorGroups in the same namespace the group carries OLM's
 * MultipleOperatorGroup condition (the namespace's CSVs fail with TooManyOperatorGroups). A spec
 * the API would have to reject (`targetNamespaces` containing '') leaves the namespaces as they
 * are; the CSVs report it.
 */
export function nextOperatorGroupStatus(
  og: OperatorGroup,
  namespaces: readonly NamespaceInfo[],
  groupsInNamespace: number,
  now: number,
): OperatorGroupStatus | undefined {
  const prev = og.status;
  const next: OperatorGroupStatus = { ...prev, lastUpdated: prev?.lastUpdated ?? formatTime(now) };
  const targets = operatorGroupNamespaces(og, namespaces);
  if (targets.ok && (prev?.namespaces === undefined || !sameList(prev.namespaces, targets.value))) {
    next.namespaces = targets.value;
    next.lastUpdated = formatTime(now);
  }
  const conditions =
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
  if (conditions.length > 0 || prev?.conditions !== undefined) next.conditions = conditions;
  // lastUpdated alone is not a change (statusChanged ignores it).
  return statusChanged(prev ?? {}, next) ? next : undefined;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export const operatorGroupController: Controller = {
  name: 'operatorgroup',
  kind: Resources.OperatorGroup.kind,
  watch(ctx, enqueue) {
    const { informers } = ctx;
    // A group appearing or going changes whether its neighbours are alone in their namespace.
    const neighbours = (og: OperatorGroup) => {
      for (const g of informers.operatorGroups.list(og.metadata.namespace)) enqueue(keyOf(g));
    };
    informers.operatorGroups.on({
      add: neighbours,
      update: (_, og) => enqueue(keyOf(og)),
      delete: neighbours,
    });
    // A namespace appearing, going or changing labels can change what a selector matches.
    const onNamespace = () => {
      for (const og of informers.operatorGroups.list()) {
        if (!isEmptySelector(og.spec?.selector) && (og.spec?.targetNamespaces ?? []).length === 0)
          enqueue(keyOf(og));
      }
    };
    informers.namespaces.on({ add: onNamespace, update: onNamespace, delete: onNamespace });
  },
  reconcile: (ctx) => async (key) => {
    const og = ctx.informers.operatorGroups.get(key);
    if (og === undefined || og.metadata.deletionTimestamp) return;
    const namespaces = ctx.informers.namespaces
      .list()
      .filter((n) => !n.metadata?.deletionTimestamp)
      .map((n) => ({ name: n.metadata?.name ?? '', labels: n.metadata?.labels }));
    const groups = ctx.informers.operatorGroups
      .list(og.metadata.namespace)
      .filter((g) => !g.metadata.deletionTimestamp);
    const status = nextOperatorGroupStatus(og, namespaces, groups.length, ctx.clock.now());
    if (status === undefined) return;
    ctx.log.info(
      { namespace: og.metadata.namespace, name: og.metadata.name, targets: status.namespaces },
      'operatorgroup status changed',
    );
    await ctx.applier.applyStatus({
      apiVersion: ogApiVersion,
      kind: Resources.OperatorGroup.kind,
      metadata: { name: og.metadata.name, namespace: og.metadata.namespace },
      status,
    });
  },
};
