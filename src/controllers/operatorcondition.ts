/**
 * The OperatorCondition controller (key `namespace/name`), minimal for now: `status.conditions`
 * mirrors what the operator reports in `spec.conditions` (OperatorCondition v2: the operator
 * writes spec, the status is what Bosun's upgrade logic reads), with an admin's
 * `spec.overrides` winning over the operator's condition of the same type, as in OLM.
 */
import type { Condition, Time } from '../apis/meta.js';
import type { ConditionOverride, OperatorCondition } from '../apis/operators.js';
import { Resources } from '../apis/operators.js';
import { OperatorConditionType } from '../apis/conditions.js';
import { objectKey } from '../kube/cache.js';
import { formatTime } from '../kube/conditions.js';
import { writeStatus } from '../kube/status.js';
import type { Controller, ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';

/**
 * The operator's conditions with the overrides put in their place (or appended). An override
 * may leave out lastTransitionTime: it keeps the time of the `previous` condition of its type
 * when the status is unchanged, and is stamped `now` otherwise.
 */
export function effectiveConditions(
  spec: OperatorCondition['spec'],
  previous: readonly Condition[] = [],
  now?: Time,
): Condition[] {
  const stamped = (o: ConditionOverride): Condition => {
    if (o.lastTransitionTime !== undefined) return { ...o, lastTransitionTime: o.lastTransitionTime };
    const before = previous.find((p) => p.type === o.type && p.status === o.status);
    const at = before?.lastTransitionTime ?? now;
    if (at === undefined)
      throw new Error(`override ${o.type} has no lastTransitionTime and no time was given`);
    return { ...o, lastTransitionTime: at };
  };
  const all = (spec?.overrides ?? []).map(stamped);
  const overrides = new Map(all.map((c) => [c.type, c]));
  const out = (spec?.conditions ?? []).map((c) => overrides.get(c.type) ?? c);
  const seen = new Set(out.map((c) => c.type));
  for (const o of all) if (!seen.has(o.type)) out.push(o);
  return out;
}

/**
 * Why the operator holds back its own upgrade, read as OLM reads it: an admin's Upgradeable
 * override, else the operator's Upgradeable condition; undefined unless its status is False.
 */
export function upgradeBlocked(cond: OperatorCondition | undefined): string | undefined {
  const find = (list: readonly { type: string }[] | undefined) =>
    list?.find((c) => c.type === OperatorConditionType.Upgradeable);
  const upgradeable = (find(cond?.spec?.overrides) ?? find(cond?.spec?.conditions)) as
    { status?: string; reason?: string; message?: string } | undefined;
  if (upgradeable?.status !== 'False') return undefined;
  const why = upgradeable.message || upgradeable.reason || 'no reason given';
  return `the operator is not upgradeable: ${why}`;
}

const uses = {
  informers: ['operatorConditions'] as const,
  ports: ['applier', 'clock'] as const,
};

/** What this controller reads and writes through; the manager gives it nothing else. */
export type OperatorConditionContext = ScopedContext<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
>;

const operatorConditionControllerOwn: Controller<
  (typeof uses.informers)[number],
  (typeof uses.ports)[number]
> = {
  ...uses,
  name: 'operatorcondition',
  kind: Resources.OperatorCondition.kind,
  watch(ctx, enqueue) {
    ctx.informers.operatorConditions.on({
      add: (c) => enqueue(objectKey(c)),
      update: (_, c) => enqueue(objectKey(c)),
    });
  },
  reconcile: (ctx) => async (key) => {
    const oc = ctx.informers.operatorConditions.get(key);
    if (oc === undefined || oc.metadata.deletionTimestamp) return;
    const conditions = effectiveConditions(oc.spec, oc.status?.conditions ?? [], formatTime(ctx.clock.now()));
    // Only the conditions are Bosun's to write, and every change of them counts.
    await writeStatus(ctx.applier, {
      resource: Resources.OperatorCondition,
      object: oc,
      current: { conditions: oc.status?.conditions ?? [] },
      next: { conditions },
      ignore: [],
    });
  },
};

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const operatorConditionController = reportingForbidden(operatorConditionControllerOwn, (ctx, key) =>
  [ctx.informers.operatorConditions.get(key)].filter((o) => o !== undefined),
);
