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
import { formatTime } from '../kube/conditions.js';
import type { Controller } from './context.js';

const ogApiVersion = `${Resources.OperatorGroup.group}/${Resources.OperatorGroup.version}`;
const keyOf = (og: OperatorGroup) => `${og.metadata.namespace ?? ''}/${og.metadata.name ?? ''}`;

/**
 * The status to write, or undefined when the stored one is current. A spec the API would have
 * to reject (`targetNamespaces` containing '') leaves the status as it is; the CSVs report it.
 */
export function nextOperatorGroupStatus(
  og: OperatorGroup,
  namespaces: readonly NamespaceInfo[],
  now: number,
): OperatorGroupStatus | undefined {
  const targets = operatorGroupNamespaces(og, namespaces);
  if (!targets.ok) return undefined;
  const current = og.status?.namespaces;
  if (current !== undefined && sameList(current, targets.value)) return undefined;
  return { ...og.status, namespaces: targets.value, lastUpdated: formatTime(now) };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export const operatorGroupController: Controller = {
  name: 'operatorgroup',
  kind: Resources.OperatorGroup.kind,
  watch(ctx, enqueue) {
    const { informers } = ctx;
    informers.operatorGroups.on({ add: (og) => enqueue(keyOf(og)), update: (_, og) => enqueue(keyOf(og)) });
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
    const status = nextOperatorGroupStatus(og, namespaces, ctx.clock.now());
    if (status === undefined) return;
    ctx.log.info(
      { namespace: og.metadata.namespace, name: og.metadata.name, targets: status.namespaces },
      'operatorgroup targets changed',
    );
    await ctx.applier.applyStatus({
      apiVersion: ogApiVersion,
      kind: Resources.OperatorGroup.kind,
      metadata: { name: og.metadata.name, namespace: og.metadata.namespace },
      status,
    });
  },
};
