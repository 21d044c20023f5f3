/**
 * What a ClusterExtension reports of its progress deadline and of a rollback, the pure part: the
 * `Progressing` condition in v1's words where v1 has them (`ProgressDeadlineExceeded`), Bosun's
 * reasons where v1 has none (v1 does not roll back), and the status fields Bosun adds, in the
 * shape Subscriptions use: `status.rollback` (the last rollback) and `status.heldBack` (the
 * versions kept out of resolution).
 *
 * A version rolled back from is held back while the extension's spec is the one it failed under
 * (its generation) and the catalog's bundle of it is the one that failed (its digest): a user
 * who changes the spec, or a catalog that publishes the bundle anew, asks for it again.
 */
import type { Condition } from '../apis/meta.js';
import type { ClusterExtension, ClusterExtensionStatus } from '../apis/olmv1.js';
import {
  type ClusterServiceVersion,
  type HeldVersion,
  RollbackPhase,
  type SubscriptionRollback,
} from '../apis/operators.js';
import { setCondition } from '../kube/conditions.js';
import { ReasonProgressDeadlineExceeded } from './clusterextension-deadline.js';
import { ExtensionConditionType } from './clusterextension-status.js';

/** Bosun's reasons for `Progressing` around a rollback (v1 has none: it does not roll back). */
export const ExtensionRollbackReason = {
  /** The failed version is being removed and the previous one reinstated. */
  RollingBack: 'RollingBack',
  /** Rolled back after the new version Failed for a reason reinstalling would not fix. */
  RolledBack: 'RolledBack',
  ProgressDeadlineExceeded: ReasonProgressDeadlineExceeded,
} as const;

/** A Subscription's rollback, with what the extension needs besides. */
export interface ExtensionRollback extends SubscriptionRollback {
  /** `ProgressDeadlineExceeded` (the deadline passed) or `RolledBack` (the new CSV failed for good). */
  reason: string;
  /** The extension's generation the upgrade failed under. */
  generation: number;
}

/** A version held back, and where from. */
export interface ExtensionHeldVersion extends HeldVersion {
  /** The extension's generation it failed under: another spec lifts the hold. */
  generation: number;
  /** The ClusterCatalog its bundle came from (its digest is of that catalog's bundle). */
  catalog: string;
}

export interface ExtensionRollbackStatus {
  rollback?: ExtensionRollback;
  heldBack?: ExtensionHeldVersion[];
}

/** The status fields Bosun adds, as stored (the CRD keeps fields its schema does not list). */
export function storedRollback(ext: ClusterExtension): ExtensionRollbackStatus {
  const status = (ext.status ?? {}) as ClusterExtensionStatus & ExtensionRollbackStatus;
  return {
    ...(status.rollback ? { rollback: status.rollback } : {}),
    ...(Array.isArray(status.heldBack) ? { heldBack: status.heldBack } : {}),
  };
}

/**
 * The versions still held back: those that failed under the extension's current generation,
 * whose catalog bundle is unchanged. `digestNow` answers a bundle's fingerprint in its catalog
 * now: a string, undefined when the catalog no longer has it (the hold is lifted), or `unknown`
 * while the catalog has not been read (the hold stays: a manager just started knows nothing new).
 */
export function stillHeldBack(
  held: readonly ExtensionHeldVersion[],
  generation: number,
  digestNow: (h: ExtensionHeldVersion) => string | undefined | 'unknown',
): ExtensionHeldVersion[] {
  return held.filter((h) => {
    if (h.generation !== generation) return false;
    const now = digestNow(h);
    return now === 'unknown' || (now !== undefined && now === h.bundleDigest);
  });
}

/**
 * The CSVs a rollback names (the one it removes, the one it reinstates) that exist and are not
 * the extension's own: a rollback read back from status acts on none of them. A CSV that does
 * not exist is no one's: the rollback removes nothing then, and its plan makes the one it
 * reinstates, the extension's.
 */
export function foreignCSVs(
  rollback: Pick<ExtensionRollback, 'from' | 'to'>,
  csvs: readonly ClusterServiceVersion[],
  owned: (csv: ClusterServiceVersion) => boolean,
): string[] {
  const names = [rollback.from, ...(rollback.to !== undefined ? [rollback.to] : [])];
  return names.filter((name) => {
    const csv = csvs.find((c) => c.metadata.name === name);
    return csv !== undefined && !owned(csv);
  });
}

/** What the reconcile found of the extension's deadline and rollback. */
export interface ProgressReport {
  rollback?: ExtensionRollback;
  held: readonly ExtensionHeldVersion[];
  /** v1's message, when the install or upgrade under way has passed its deadline. */
  deadlineExceeded?: string;
}

/** The `Progressing` condition the report calls for, or undefined where v1's own stands. */
export function progressingFor(
  report: ProgressReport,
): { status: 'True' | 'False'; reason: string; message: string } | undefined {
  const { rollback } = report;
  if (rollback?.phase === RollbackPhase.RollingBack)
    return {
      status: 'True',
      reason: ExtensionRollbackReason.RollingBack,
      message: `${rollback.cause}; rolling back to ${rollback.to}`,
    };
  // Rolled back, and the version held back still: the spec asks for what cannot be had.
  if (rollback?.phase === RollbackPhase.RolledBack && report.held.some((h) => h.csv === rollback.from))
    return {
      status: 'False',
      reason: rollback.reason,
      message: `${rollback.cause}; rolled back to ${rollback.to}, and ${rollback.from} is held back until the extension's spec or the catalog's bundle of it changes`,
    };
  if (report.deadlineExceeded !== undefined)
    return {
      status: 'False',
      reason: ReasonProgressDeadlineExceeded,
      message:
        rollback?.phase === RollbackPhase.Refused
          ? `${report.deadlineExceeded}; not rolled back: ${rollback.message ?? ''}`
          : report.deadlineExceeded,
    };
  return undefined;
}

/**
 * The extension's status with the report applied: `Progressing` as progressingFor says (its
 * transition time judged against the condition as stored, not against the one v1's rules just
 * computed), and the rollback and the versions held back.
 */
export function withProgressReport(
  ext: ClusterExtension,
  status: ClusterExtensionStatus,
  report: ProgressReport,
  now: number,
): ClusterExtensionStatus & ExtensionRollbackStatus {
  const progressing = progressingFor(report);
  let conditions = status.conditions ?? [];
  if (progressing) {
    const stored = ext.status?.conditions?.find((c) => c.type === ExtensionConditionType.Progressing);
    const base = conditions
      .filter((c) => c.type !== ExtensionConditionType.Progressing)
      .concat(stored ? [stored] : []);
    const generation = ext.metadata.generation;
    const updated = setCondition<Condition>(
      base,
      {
        type: ExtensionConditionType.Progressing,
        ...progressing,
        ...(generation !== undefined ? { observedGeneration: generation } : {}),
      },
      now,
    );
    // The order v1's rules gave the conditions stays.
    conditions = conditions.map((c) =>
      c.type === ExtensionConditionType.Progressing
        ? updated.find((u) => u.type === ExtensionConditionType.Progressing)!
        : c,
    );
  }
  return {
    ...status,
    conditions,
    ...(report.rollback ? { rollback: report.rollback } : {}),
    ...(report.held.length > 0 ? { heldBack: [...report.held] } : {}),
  };
}
