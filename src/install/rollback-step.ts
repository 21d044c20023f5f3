/**
 * The next step of a rollback under way, decided from what the cluster holds now and nothing
 * else: no step remembers what an earlier reconcile (or an earlier manager process) did or meant
 * to do. A manager killed between any two of a rollback's writes therefore finds, on its next
 * reconcile, the same next step as one never killed, and the rollback converges to the same end.
 *
 * The order (the Subscription controller acts on it, ../controllers/subscription-rollback.ts):
 * 1. While the version rolled back to is still there, or once the version rolled back from is
 *    gone, the rollback InstallPlan (re)installs the version rolled back to: objects both versions
 *    ship are owned by whichever installed them last, and would otherwise be collected with the
 *    version rolled back from. A plan that completed while neither CSV is left (the version
 *    rolled back to was retired as replaced meanwhile) is made anew.
 * 2. The CSV rolled back from goes, and with it every InstallPlan of the Subscription that
 *    installs it (so that a retry makes a new one). These are looked for on every reconcile, also
 *    once the CSV is gone: a manager killed between the two deletions left the plans behind.
 * 3. Once nothing of the version rolled back from is left, every object the rollback InstallPlan
 *    applied is read back (`lost`): an object gone, or owned only by CSVs that no longer exist
 *    (the garbage collector is about to take it), makes the plan run again; one being deleted is
 *    waited for, then put back the same way. Objects both versions ship (a ServiceAccount, a
 *    ClusterRole of the same name) can be applied by the plan and then removed by the collection
 *    of the version rolled back from, or by a late cleanup after a deleted CSV; an InstallPlan
 *    never runs twice by itself, so without this the version rolled back to would wait for them
 *    forever (RequirementsNotMet), or run without them.
 * 4. Finished once the version rolled back to runs again and every object of its plan is there.
 */
import { InstallPlanPhase } from '../apis/operators.js';

/** What the cluster holds of one rollback, read from the manager's caches. */
export interface RollbackState {
  /** The CSV rolled back from: there, being deleted, or gone. */
  from: 'present' | 'deleting' | 'gone';
  /** The CSV rolled back to: gone, there, or running again (Succeeded, with its Deployments its own and available). */
  to: 'gone' | 'present' | 'reinstated';
  /** The rollback's own InstallPlan, undefined until it is made. */
  plan?: { name: string; phase?: string; message?: string };
  /** The Subscription's InstallPlans that install the version rolled back from (never the rollback's own). */
  fromPlans: readonly string[];
  /**
   * The objects of the completed rollback InstallPlan that are not safely there, by name
   * (`ServiceAccount ns/etcd-operator`); undefined until they have been read.
   */
  lost?: readonly LostObject[];
}

/** An object of the rollback InstallPlan that is not safely there, and why. */
export interface LostObject {
  object: string;
  why: ObjectFate;
}

export const ObjectFate = {
  /** Not there at all. */
  Missing: 'missing',
  /** Being deleted (deletionTimestamp set). */
  Deleting: 'deleting',
  /** Owned only by CSVs that no longer exist: the garbage collector deletes it. */
  Orphaned: 'orphaned',
} as const;
export type ObjectFate = (typeof ObjectFate)[keyof typeof ObjectFate];

/** The fields of a live object that tell whether it stays. */
export interface LiveObject {
  metadata?: {
    deletionTimestamp?: string;
    ownerReferences?: readonly { kind?: string; uid?: string }[];
  };
}

/**
 * Whether an object the rollback InstallPlan applied stays: undefined when it does, else why not.
 * `liveCSVs` are the uids of the CSVs that exist and are not being deleted. An object with an
 * owner that is not a CSV is left to that owner.
 */
export function objectFate(
  live: LiveObject | undefined,
  liveCSVs: ReadonlySet<string>,
): ObjectFate | undefined {
  if (live === undefined) return ObjectFate.Missing;
  if (live.metadata?.deletionTimestamp) return ObjectFate.Deleting;
  const owners = live.metadata?.ownerReferences ?? [];
  const orphaned =
    owners.length > 0 &&
    owners.every((o) => o.kind === 'ClusterServiceVersion' && !liveCSVs.has(o.uid ?? ''));
  return orphaned ? ObjectFate.Orphaned : undefined;
}

export const RollbackStepKind = {
  /** Create the rollback InstallPlan. */
  MakePlan: 'MakePlan',
  /** Wait for the rollback InstallPlan to run (its changes trigger the next reconcile). */
  AwaitPlan: 'AwaitPlan',
  /** The rollback InstallPlan failed: the rollback stops and says why. */
  Failed: 'Failed',
  /** Delete the completed rollback InstallPlan, so that it is made and run anew. */
  RemakePlan: 'RemakePlan',
  /** Delete the CSV rolled back from (unless it is already being deleted) and its InstallPlans. */
  RemoveFrom: 'RemoveFrom',
  /** Read back the objects the completed rollback InstallPlan applied, then decide again (`lost`). */
  CheckObjects: 'CheckObjects',
  /** Look again shortly: objects of the rollback InstallPlan are being deleted (then put back). */
  AwaitObjects: 'AwaitObjects',
  /** Look again shortly: the version rolled back to is not running again yet. */
  AwaitReinstated: 'AwaitReinstated',
  /** The version rolled back to runs again, and nothing of the version rolled back from is left. */
  Done: 'Done',
} as const;

export type RollbackStep =
  | { kind: typeof RollbackStepKind.MakePlan }
  | { kind: typeof RollbackStepKind.AwaitPlan }
  | { kind: typeof RollbackStepKind.Failed; message: string }
  /** `lost`: the objects the plan puts back (none when the previous CSV itself went). */
  | { kind: typeof RollbackStepKind.RemakePlan; plan: string; lost?: readonly string[] }
  | { kind: typeof RollbackStepKind.CheckObjects }
  | { kind: typeof RollbackStepKind.AwaitObjects; objects: readonly string[] }
  | { kind: typeof RollbackStepKind.RemoveFrom; csv: boolean; plans: readonly string[] }
  | { kind: typeof RollbackStepKind.AwaitReinstated }
  | { kind: typeof RollbackStepKind.Done };

export function nextRollbackStep(s: RollbackState): RollbackStep {
  if (s.to !== 'gone' || s.from === 'gone') {
    if (!s.plan) return { kind: RollbackStepKind.MakePlan };
    if (s.plan.phase === InstallPlanPhase.Failed) {
      return {
        kind: RollbackStepKind.Failed,
        message: `InstallPlan ${s.plan.name} failed: ${s.plan.message ?? ''}`,
      };
    }
    if (s.plan.phase !== InstallPlanPhase.Complete) return { kind: RollbackStepKind.AwaitPlan };
    if (s.to === 'gone') return { kind: RollbackStepKind.RemakePlan, plan: s.plan.name };
  }
  if (s.from !== 'gone' || s.fromPlans.length > 0) {
    return { kind: RollbackStepKind.RemoveFrom, csv: s.from === 'present', plans: s.fromPlans };
  }
  // Here the plan is Complete and the version rolled back to is there.
  if (s.lost === undefined) return { kind: RollbackStepKind.CheckObjects };
  const deleting = s.lost.filter((l) => l.why === ObjectFate.Deleting);
  if (deleting.length > 0)
    return { kind: RollbackStepKind.AwaitObjects, objects: deleting.map((l) => l.object) };
  if (s.lost.length > 0)
    return { kind: RollbackStepKind.RemakePlan, plan: s.plan!.name, lost: s.lost.map((l) => l.object) };
  return s.to === 'reinstated' ? { kind: RollbackStepKind.Done } : { kind: RollbackStepKind.AwaitReinstated };
}
