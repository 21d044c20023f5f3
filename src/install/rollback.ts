/**
 * Health-gated upgrades, the pure part: when an upgrade counts as failed, whether going back is
 * safe for the CRDs, and what the Subscription remembers (its history, and the version held
 * back after a rollback). No clients, no clock: the Subscription controller passes `now`.
 *
 * An upgrade has failed when the new CSV has never been Succeeded and either goes Failed for a
 * reason reinstalling would not fix (its install check or strategy), or is not Succeeded within
 * the Subscription's deadline. The deadline's clock starts when the CSV is created, or when the
 * operator's own upgrade gate (Upgradeable=False) last let it go: a version that waits on the
 * operator is not failing.
 */
import { createHash } from 'node:crypto';
import { CSVReason } from '../apis/conditions.js';
import {
  type ClusterServiceVersion,
  CSVPhase,
  type HeldVersion,
  type Subscription,
  type SubscriptionHistoryEntry,
} from '../apis/operators.js';

/** The annotations through which users tune and steer rollbacks (on Subscriptions, or InstallPlans). */
export const RollbackAnnotations = {
  /** On a Subscription: how long a new version may take to reach Succeeded (`90s`, `10m`, `0` for never roll back). */
  deadline: 'bosun.dev/upgrade-deadline',
  /** On a Subscription: any new value asks for a rollback of the installed version (`bosun rollback`). */
  rollback: 'bosun.dev/rollback',
  /** On a Subscription: any value lifts the hold on the version rolled back from (`bosun upgrade retry`). */
  retry: 'bosun.dev/retry-upgrade',
  /** On an InstallPlan: it reinstates a version rolled back to, and keeps every live CRD as it is. */
  rollbackFrom: 'bosun.dev/rollback-from',
} as const;

export const DefaultUpgradeDeadlineMs = 5 * 60_000;
/** How many entries `status.history` keeps. */
export const MaxHistory = 10;

const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A Go duration (`300ms`, `90s`, `1h30m`, `1.5h`) in milliseconds; `0` is zero. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === '0') return 0;
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < t.length) {
    part.lastIndex = at;
    const m = part.exec(t);
    if (!m) return undefined;
    total += Number(m[1]) * units[m[2]!]!;
    at = part.lastIndex;
  }
  return at > 0 ? Math.round(total) : undefined;
}

/** `1h2m3s` style, as Go prints durations. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1_000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1_000;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

export type DeadlineSetting =
  | { ms: number | null }
  /** The annotation could not be read: the fallback applies, and the problem is said. */
  | { ms: number | null; problem: string };

/** The Subscription's upgrade deadline; `null` when automatic rollback is off (`0` or `off`). */
export function upgradeDeadline(sub: Subscription): DeadlineSetting {
  const text = sub.metadata.annotations?.[RollbackAnnotations.deadline];
  if (text === undefined) return { ms: DefaultUpgradeDeadlineMs };
  return deadlineAnnotation(text, {
    ms: DefaultUpgradeDeadlineMs,
    words: `the default ${formatDuration(DefaultUpgradeDeadlineMs)} applies`,
  });
}

/**
 * The deadline an annotation `bosun.dev/upgrade-deadline` sets: a duration, or `0`/`off` for none
 * (`null`). Text that is neither gives `fallback`, with the problem in words ending in `fallback.words`.
 * Shared by Subscriptions and ClusterExtensions, so both read the annotation alike.
 */
export function deadlineAnnotation(
  text: string,
  fallback: { ms: number | null; words: string },
): DeadlineSetting {
  if (text.trim() === 'off') return { ms: null };
  const ms = parseDuration(text);
  if (ms === undefined) {
    return {
      ms: fallback.ms,
      problem: `annotation ${RollbackAnnotations.deadline}: "${text}" is not a duration like 90s, 10m or 1h (or 0 or off); ${fallback.words}`,
    };
  }
  return { ms: ms === 0 ? null : ms };
}

const timeOf = (t: string | undefined): number | undefined => {
  const ms = t === undefined ? NaN : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
};

/** Whether the CSV was ever Succeeded (now, or in the phase history of `status.conditions`). */
export function everSucceeded(csv: ClusterServiceVersion): boolean {
  return (
    csv.status?.phase === CSVPhase.Succeeded ||
    (csv.status?.conditions ?? []).some((c) => c.phase === CSVPhase.Succeeded)
  );
}

/**
 * When the CSV's deadline starts: its creation, or the first phase change after it last waited
 * on the operator's upgrade gate. Undefined while it waits there now.
 */
export function healthClockStart(csv: ClusterServiceVersion): number | undefined {
  if (csv.status?.reason === CSVReason.OperatorConditionNotUpgradeable) return undefined;
  const history = csv.status?.conditions ?? [];
  const lastGated = history.findLastIndex((c) => c.reason === CSVReason.OperatorConditionNotUpgradeable);
  const released = lastGated >= 0 ? timeOf(history[lastGated + 1]?.lastTransitionTime) : undefined;
  return released ?? timeOf(csv.metadata.creationTimestamp);
}

/** Failed reasons that reinstalling the same version would not fix. */
const failedForGood: ReadonlySet<string> = new Set([
  CSVReason.InstallCheckFailed,
  CSVReason.InvalidInstallStrategy,
]);

export type UpgradeHealth =
  /** Not an upgrade whose health is in question (it was Succeeded once, or waits on the operator). */
  | { kind: 'settled' }
  /** Still within its deadline; look again after `dueInMs` (none: no deadline). */
  | { kind: 'waiting'; dueInMs?: number }
  | { kind: 'failed'; cause: string };

/** Whether the new CSV of an upgrade has failed, given the deadline (null: none) and the time. */
export function upgradeHealth(
  csv: ClusterServiceVersion,
  deadlineMs: number | null,
  now: number,
): UpgradeHealth {
  if (everSucceeded(csv)) return { kind: 'settled' };
  // Off means off: no automatic rollback, whatever happens to the new version.
  if (deadlineMs === null) return { kind: 'waiting' };
  const name = csv.metadata.name ?? '';
  const { phase, reason, message } = csv.status ?? {};
  if (phase === CSVPhase.Failed && reason !== undefined && failedForGood.has(reason)) {
    return { kind: 'failed', cause: `${name} failed (${reason}): ${message ?? ''}` };
  }
  const start = healthClockStart(csv);
  if (start === undefined) return { kind: 'settled' };
  const due = start + deadlineMs - now;
  if (due > 0) return { kind: 'waiting', dueInMs: due };
  return {
    kind: 'failed',
    cause: `${name} did not reach Succeeded within ${formatDuration(deadlineMs)} (it is ${phase || 'not yet reconciled'}${message ? `: ${message}` : ''})`,
  };
}

/** An API version the version rolled back to needs: by CRD name, or by group and kind (from the catalog's olm.gvk). */
export interface NeededAPI {
  name?: string;
  group?: string;
  kind: string;
  version: string;
}

/** The fields of a live CRD this check reads. */
export interface LiveCRD {
  metadata: { name?: string };
  spec?: { group?: string; names?: { kind?: string }; versions?: { name: string; served?: boolean }[] };
  status?: { storedVersions?: string[] };
}

/**
 * Why going back to `to` would not be safe for the CRDs, one line each; empty when it is.
 * A rollback never replaces a live CRD, so it never drops a stored version or a field custom
 * resources use: the newer CRD stays. That is unsafe only when the newer CRD no longer serves an
 * API version the older operator needs. A CRD that does not exist is created by the rollback.
 */
export function rollbackCRDProblems(
  to: string,
  needed: readonly NeededAPI[],
  live: readonly LiveCRD[],
): string[] {
  const problems: string[] = [];
  for (const api of needed) {
    const crd = live.find((c) =>
      api.name !== undefined
        ? c.metadata.name === api.name
        : c.spec?.group === api.group && c.spec?.names?.kind === api.kind,
    );
    if (crd === undefined) continue;
    const served = crd.spec?.versions?.some((v) => v.name === api.version && v.served !== false);
    if (served) continue;
    const stored = crd.status?.storedVersions ?? [];
    problems.push(
      `${to} needs ${api.kind} ${api.version} of CustomResourceDefinition ${crd.metadata.name}, which no longer serves it; ` +
        `going back would mean replacing the CRD${stored.length ? ` (stored versions ${stored.join(', ')})` : ''}, and a rollback never replaces one`,
    );
  }
  return problems;
}

/** A short fingerprint of a catalog bundle's content: the hold on a version lasts while it is unchanged. */
export function bundleContentDigest(bundle: unknown): string | undefined {
  if (bundle === undefined) return undefined;
  return createHash('sha256').update(JSON.stringify(bundle)).digest('hex').slice(0, 16);
}

/** The history with `entry` first, unless it only repeats the newest entry; at most MaxHistory. */
export function pushHistory(
  history: readonly SubscriptionHistoryEntry[],
  entry: SubscriptionHistoryEntry,
): SubscriptionHistoryEntry[] {
  const newest = history[0];
  if (newest && newest.csv === entry.csv && newest.outcome === entry.outcome) return [...history];
  return [entry, ...history].slice(0, MaxHistory);
}

/**
 * The versions still held back, given the catalog's fingerprint of each now (undefined: the
 * catalog has no such bundle any more). A version stays held while its bundle is the one that
 * failed; a changed or removed bundle lifts the hold.
 */
export function stillHeld(
  held: readonly HeldVersion[],
  digestNow: (csv: string) => string | undefined,
): HeldVersion[] {
  return held.filter((h) => {
    const now = digestNow(h.csv);
    return now !== undefined && now === h.bundleDigest;
  });
}
