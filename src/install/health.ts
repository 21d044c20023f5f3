/**
 * Is an operator's Deployment healthy? And is the install strategy in place as rendered? These
 * answer the two questions OLM's CSV phase logic asks of the cluster
 * (pkg/controller/install/status_viewer.go and `checkForDeployments`); the CSV controller turns
 * the answers into phases: in Installing, anything not yet healthy keeps the CSV Installing
 * (InstallWaiting); in Succeeded, it sends the CSV to Failed (ComponentUnhealthy); an
 * unrecoverable answer fails the install (InstallCheckFailed); an outdated Deployment is
 * re-applied.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { DeploymentSpecHashLabel } from './ownership.js';

export const HealthState = {
  Healthy: 'Healthy',
  Progressing: 'Progressing',
  Unhealthy: 'Unhealthy',
} as const;
export type HealthState = (typeof HealthState)[keyof typeof HealthState];

export const HealthReason = {
  /** Rolled out and the Available condition is True. */
  Available: 'Available',
  /** The Deployment controller has not yet seen the latest spec (generation > observedGeneration). */
  SpecNotObserved: 'SpecNotObserved',
  /** The Progressing condition says ProgressDeadlineExceeded: the rollout gave up. */
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  /** Fewer replicas run the current template than the spec asks for. */
  ReplicasUpdating: 'ReplicasUpdating',
  /** Replicas of an older template still run. */
  OldReplicasTerminating: 'OldReplicasTerminating',
  /** Rolled out, but the Available condition is not True. */
  NotAvailable: 'NotAvailable',
} as const;
export type HealthReason = (typeof HealthReason)[keyof typeof HealthReason];

export interface DeploymentHealth {
  state: HealthState;
  reason: HealthReason;
  message: string;
}

/**
 * What health reads of a live Deployment. The informer's cached Deployments and client-node's
 * `V1Deployment` both have this shape, so either is judged without a cast.
 */
export interface LiveDeployment {
  metadata?: { name?: string; generation?: number; labels?: Record<string, string> };
  spec?: { replicas?: number; template?: { metadata?: { annotations?: Record<string, string> } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** Kubernetes' Progressing reason when a rollout passes `progressDeadlineSeconds`. */
const TimedOutReason = 'ProgressDeadlineExceeded';

/**
 * The health of one Deployment from its status alone. As in OLM, readiness is judged by the
 * Available condition (which honours the Deployment's own maxUnavailable), not by requiring
 * every replica to be ready; the ready count is reported in the message.
 */
export function deploymentHealth(d: LiveDeployment): DeploymentHealth {
  const name = d.metadata?.name ?? '?';
  const status = d.status ?? {};
  const generation = d.metadata?.generation ?? 0;
  if (generation > (status.observedGeneration ?? 0)) {
    return progressing(
      HealthReason.SpecNotObserved,
      `waiting for spec update of deployment "${name}" to be observed`,
    );
  }
  const conditions = status.conditions ?? [];
  const progressingCondition = conditions.find((c) => c.type === 'Progressing');
  if (progressingCondition?.reason === TimedOutReason) {
    return {
      state: HealthState.Unhealthy,
      reason: HealthReason.ProgressDeadlineExceeded,
      message: `deployment "${name}" exceeded its progress deadline`,
    };
  }
  const desired = d.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const ready = status.readyReplicas ?? 0;
  if (updated < desired) {
    return progressing(
      HealthReason.ReplicasUpdating,
      `deployment "${name}" waiting for rollout: ${updated} of ${desired} replicas updated, ${ready} ready`,
    );
  }
  const total = status.replicas ?? 0;
  if (total > updated) {
    return progressing(
      HealthReason.OldReplicasTerminating,
      `deployment "${name}" waiting for ${total - updated} outdated replica(s) to be terminated`,
    );
  }
  const available = conditions.find((c) => c.type === 'Available');
  if (available?.status !== 'True') {
    const why = available?.message ?? 'missing condition "Available"';
    return progressing(
      HealthReason.NotAvailable,
      `deployment "${name}" not available (${ready} of ${desired} ready): ${why}`,
    );
  }
  return {
    state: HealthState.Healthy,
    reason: HealthReason.Available,
    message: `deployment "${name}" is up-to-date and available (${ready} of ${desired} ready)`,
  };
}

function progressing(reason: HealthReason, message: string): DeploymentHealth {
  return { state: HealthState.Progressing, reason, message };
}

/** OLM's StrategyError reasons for an install strategy that is not (yet) in place. */
export const StrategyCheckReason = {
  ComponentMissing: 'ComponentMissing',
  DeploymentUpdated: 'DeploymentUpdated',
  AnnotationsMissing: 'AnnotationsMissing',
  Waiting: 'Waiting',
  Timeout: 'Timeout',
} as const;
export type StrategyCheckReason = (typeof StrategyCheckReason)[keyof typeof StrategyCheckReason];

export type StrategyCheck =
  | { installed: true }
  | {
      installed: false;
      reason: StrategyCheckReason;
      /** The Deployment to act on. */
      deployment: string;
      message: string;
      /** True when waiting will not help (the rollout gave up): the install has failed. */
      unrecoverable: boolean;
      /** True when the Deployment should be applied again (missing or outdated). */
      needsApply: boolean;
    };

/**
 * Whether the live Deployments are the rendered ones and healthy, reporting the first that is
 * not, in the strategy's order. Unlike OLM, an outdated Deployment is reported before an
 * unhealthy one: re-applying it is what makes progress, not waiting on the old spec's rollout.
 */
export function checkStrategy(
  desired: readonly V1Deployment[],
  live: readonly LiveDeployment[],
): StrategyCheck {
  const byName = new Map(live.map((d) => [d.metadata?.name, d]));
  for (const want of desired) {
    const name = want.metadata?.name ?? '?';
    const have = byName.get(name);
    if (have === undefined) {
      return notInstalled(
        StrategyCheckReason.ComponentMissing,
        name,
        `missing deployment with name=${name}`,
        {
          needsApply: true,
        },
      );
    }
    const wantHash = want.metadata?.labels?.[DeploymentSpecHashLabel];
    const haveHash = have.metadata?.labels?.[DeploymentSpecHashLabel];
    if (wantHash !== haveHash) {
      return notInstalled(
        StrategyCheckReason.DeploymentUpdated,
        name,
        haveHash === undefined
          ? `deployment ${name} doesn't have a spec hash, update it`
          : `deployment ${name} changed: old hash=${haveHash}, new hash=${wantHash}`,
        { needsApply: true },
      );
    }
    const wantAnnotations = want.spec?.template.metadata?.annotations ?? {};
    const haveAnnotations = have.spec?.template?.metadata?.annotations ?? {};
    for (const [key, value] of Object.entries(wantAnnotations)) {
      if (haveAnnotations[key] !== value) {
        return notInstalled(
          StrategyCheckReason.AnnotationsMissing,
          name,
          key in haveAnnotations
            ? `unexpected annotation on deployment ${name}: expected ${key}=${value}, found ${key}=${haveAnnotations[key]}`
            : `annotations on deployment ${name} do not contain expected key: ${key}`,
          { needsApply: true },
        );
      }
    }
    const health = deploymentHealth(have);
    if (health.state === HealthState.Unhealthy) {
      return notInstalled(
        StrategyCheckReason.Timeout,
        name,
        `deployment ${name} not ready before timeout: ${health.message}`,
        {
          unrecoverable: true,
        },
      );
    }
    if (health.state === HealthState.Progressing) {
      return notInstalled(
        StrategyCheckReason.Waiting,
        name,
        `waiting for deployment ${name} to become ready: ${health.message}`,
        {},
      );
    }
  }
  return { installed: true };
}

function notInstalled(
  reason: StrategyCheckReason,
  deployment: string,
  message: string,
  flags: { unrecoverable?: boolean; needsApply?: boolean },
): StrategyCheck {
  return {
    installed: false,
    reason,
    deployment,
    message,
    unrecoverable: flags.unrecoverable ?? false,
    needsApply: flags.needsApply ?? false,
  };
}
