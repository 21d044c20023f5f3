/**
 * The CSV's phase machine as one pure function: what the CSV controller observed → the phase,
 * reason and message to write, and whether to (re)apply the install strategy now. The phases,
 * reasons and messages are OLM's (pkg/controller/operators/olm/operator.go,
 * `syncClusterServiceVersion`), so dashboards and scripts written against OLM keep working:
 *
 *   (none) → Pending (RequirementsUnknown) → Pending (RequirementsNotMet) | InstallReady
 *   InstallReady → Installing (apply the Deployments) → Succeeded when every one is healthy
 *   Succeeded → Failed (ComponentUnhealthy) when a Deployment is missing or unhealthy, or
 *             → InstallReady (NeedsReinstall) when the rendered Deployments changed
 *   Failed → Succeeded if the strategy is healthy again, else Pending (NeedsReinstall)
 *   any → Replacing (BeingReplaced) while a newer CSV replaces it, → Deleting (Replaced) once
 *         that one, or the newest of the chain of upgrades replacing it, has Succeeded, and the
 *         CSV it replaces itself is gone: a chain is retired from its oldest end, as OLM does
 *   any → Failed (NoOperatorGroup, TooManyOperatorGroups, UnsupportedOperatorGroup, ...) while
 *         the namespace's OperatorGroup does not allow the install
 *   (none) | Pending | InstallReady → Pending (OperatorConditionNotUpgradeable) while the CSV it
 *         replaces says Upgradeable=False in its OperatorCondition: the old version runs on
 *         untouched, and the upgrade goes on by itself once the condition clears
 * One step per reconcile: each write of the status reconciles the CSV again, so the history in
 * `status.conditions` shows every phase the CSV went through, as OLM's does.
 */
import { CSVReason } from '../apis/conditions.js';
import { CSVPhase } from '../apis/operators.js';
import type { StrategyCheck } from '../install/health.js';

export interface CSVObservation {
  phase: CSVPhase | undefined;
  reason: CSVReason | undefined;
  /** The verdict on the namespace's OperatorGroup and the CSV's install modes. */
  operatorGroup: { ok: true } | { ok: false; reason: CSVReason; message: string };
  requirementsMet: boolean;
  /** The live Deployments against the rendered ones. */
  strategy: StrategyCheck;
  /**
   * A CSV in the same namespace whose `spec.replaces` names this one, with the phase of the
   * newest CSV of the chain of upgrades it starts (itself, or one replacing it, and so on).
   */
  replacedBy?: { name: string; phase: CSVPhase | undefined };
  /** Whether the CSV this one replaces (`spec.replaces`) still exists, being deleted or not. */
  replacesLive?: boolean;
  /** The message of the Upgradeable=False condition of the CSV this one replaces, if it says so. */
  notUpgradeable?: string;
}

export interface CSVDecision {
  phase: CSVPhase;
  reason: CSVReason;
  message: string;
  /** Apply the RBAC, OperatorCondition and Deployments now. */
  install: boolean;
  /** Delete the CSV (it has been replaced). */
  delete: boolean;
}

const decide = (phase: CSVPhase, reason: CSVReason, message: string, install = false): CSVDecision => ({
  phase,
  reason,
  message,
  install,
  delete: false,
});

export const PhaseMessage = {
  RequirementsUnknown: 'requirements not yet checked',
  RequirementsNotMet: "one or more requirements couldn't be found",
  AllRequirementsMet: 'all requirements found, attempting install',
  InstallSucceeded: 'install strategy completed with no errors',
  Replaced: 'has been replaced by a newer ClusterServiceVersion that has successfully installed.',
} as const;

export function decideCSVPhase(o: CSVObservation): CSVDecision {
  if (o.replacedBy !== undefined) {
    // A CSV in the middle of a chain of upgrades waits for the older ones to go first (OLM's
    // "not a leaf, skipping gc"): deleted before them, it would leave the CSV it replaces replaced
    // by nothing, which then counts as installed again beside the newest, runs its own version of
    // the operator's Deployment and holds the Subscription's upgrades back.
    if (o.replacedBy.phase === CSVPhase.Succeeded && !o.replacesLive) {
      return { ...decide(CSVPhase.Deleting, CSVReason.Replaced, PhaseMessage.Replaced), delete: true };
    }
    return decide(CSVPhase.Replacing, CSVReason.BeingReplaced, `being replaced by csv: ${o.replacedBy.name}`);
  }
  if (!o.operatorGroup.ok) return decide(CSVPhase.Failed, o.operatorGroup.reason, o.operatorGroup.message);

  const phase = o.phase ?? CSVPhase.None;
  const gated = [CSVPhase.None, CSVPhase.Unknown, CSVPhase.Pending, CSVPhase.InstallReady] as CSVPhase[];
  if (o.notUpgradeable !== undefined && gated.includes(phase))
    return decide(CSVPhase.Pending, CSVReason.OperatorConditionNotUpgradeable, o.notUpgradeable);
  const s = o.strategy;
  switch (phase) {
    case CSVPhase.None:
    case CSVPhase.Unknown:
      return decide(CSVPhase.Pending, CSVReason.RequirementsUnknown, PhaseMessage.RequirementsUnknown);
    case CSVPhase.Pending:
      return o.requirementsMet
        ? decide(CSVPhase.InstallReady, CSVReason.AllRequirementsMet, PhaseMessage.AllRequirementsMet)
        : decide(CSVPhase.Pending, CSVReason.RequirementsNotMet, PhaseMessage.RequirementsNotMet);
    case CSVPhase.InstallReady:
      if (!o.requirementsMet) return notMet();
      return decide(
        CSVPhase.Installing,
        CSVReason.InstallWaiting,
        'waiting for install components to report healthy',
        true,
      );
    case CSVPhase.Installing:
      if (!o.requirementsMet) return notMet();
      if (s.installed)
        return decide(CSVPhase.Succeeded, CSVReason.InstallSucceeded, PhaseMessage.InstallSucceeded);
      if (s.unrecoverable)
        return decide(CSVPhase.Failed, CSVReason.InstallCheckFailed, `install failed: ${s.message}`);
      return decide(CSVPhase.Installing, CSVReason.InstallWaiting, `installing: ${s.message}`, s.needsApply);
    case CSVPhase.Succeeded:
      if (!o.requirementsMet) return notMet();
      if (s.installed)
        return decide(CSVPhase.Succeeded, CSVReason.InstallSucceeded, PhaseMessage.InstallSucceeded);
      if (s.unrecoverable)
        return decide(CSVPhase.Failed, CSVReason.InstallCheckFailed, `install failed: ${s.message}`);
      // A Deployment whose rendering changed (new OperatorGroup targets, Subscription config)
      // is reinstalled; one that is gone or unhealthy fails the CSV until it recovers.
      if (s.reason === 'DeploymentUpdated' || s.reason === 'AnnotationsMissing') {
        return decide(CSVPhase.InstallReady, CSVReason.NeedsReinstall, `installing: ${s.message}`);
      }
      return decide(CSVPhase.Failed, CSVReason.ComponentUnhealthy, `installing: ${s.message}`);
    case CSVPhase.Failed:
    case CSVPhase.Replacing:
    case CSVPhase.Deleting:
      // Also where a CSV lands when the OperatorGroup problem it failed on is fixed, or the CSV
      // that was replacing it went away.
      if (s.installed && o.requirementsMet) {
        return decide(CSVPhase.Succeeded, CSVReason.InstallSucceeded, PhaseMessage.InstallSucceeded);
      }
      // A rollout that gave up stays failed until its Deployment changes: reinstalling the same
      // spec would only fail the same way, over and over.
      if (!s.installed && s.unrecoverable) {
        return decide(CSVPhase.Failed, CSVReason.InstallCheckFailed, `install failed: ${s.message}`);
      }
      return decide(
        CSVPhase.Pending,
        CSVReason.NeedsReinstall,
        s.installed ? PhaseMessage.RequirementsNotMet : `installing: ${s.message}`,
      );
  }
  return decide(CSVPhase.Pending, CSVReason.RequirementsUnknown, PhaseMessage.RequirementsUnknown);
}

function notMet(): CSVDecision {
  return decide(CSVPhase.Pending, CSVReason.RequirementsNotMet, PhaseMessage.RequirementsNotMet);
}
