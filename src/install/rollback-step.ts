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
 * 3. Finished once the version rolled back to runs again.
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
  /** Look again shortly: the version rolled back to is not running again yet. */
  AwaitReinstated: 'AwaitReinstated',
  /** The version rolled back to runs again, and nothing of the version rolled back from is left. */
  Done: 'Done',
} as const;

export type RollbackStep =
  | { kind: typeof RollbackStepKind.MakePlan }
  | { kind: typeof RollbackStepKind.AwaitPlan }
  | { kind: typeof RollbackStepKind.Failed; message: string }
  | { kind: typeof RollbackStepKind.RemakePlan; plan: string }
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
  return s.to === 'reinstated' ? { kind: RollbackStepKind.Done } : { kind: RollbackStepKind.AwaitReinstated };
}
