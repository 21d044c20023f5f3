/**
 * A ClusterExtension's progress deadline, the pure part: how long an install or upgrade may take,
 * and how v1 words one that took longer. operator-controller (experimental API) reads
 * `spec.progressDeadlineMinutes` (10 to 720; unset: no deadline), starts the clock when the
 * revision that installs the bundle is created, and once it has passed without the revision
 * rolling out sets `Progressing` False, reason `ProgressDeadlineExceeded`, message
 * "Revision has not rolled out for N minute(s). Last status: <what it last said>".
 *
 * Bosun starts the clock when the first of the extension's InstallPlan and the CSV of the bundle
 * was created, and also reads the annotation Subscriptions use, `bosun.dev/upgrade-deadline`
 * (`90s`, `10m`, `0` or `off` for none): the CRD's minimum of 10 minutes is too long for a test
 * or a quick operator. The annotation wins over the field when both are set: it is the more
 * specific of the two (set on purpose, beside an API whose bounds it steps outside).
 */
import type { ClusterExtension } from '../apis/olmv1.js';
import {
  type DeadlineSetting,
  deadlineAnnotation,
  formatDuration,
  RollbackAnnotations,
} from '../install/rollback.js';

export const ReasonProgressDeadlineExceeded = 'ProgressDeadlineExceeded';

export type ExtensionDeadline = DeadlineSetting & {
  /** Where the deadline came from. */
  source: 'annotation' | 'spec' | 'none';
};

/** The extension's deadline in milliseconds (`null`: none), the annotation before the field. */
export function extensionDeadline(ext: Pick<ClusterExtension, 'metadata' | 'spec'>): ExtensionDeadline {
  const minutes = ext.spec?.progressDeadlineMinutes;
  const fromSpec = typeof minutes === 'number' && minutes > 0 ? minutes * 60_000 : null;
  const text = ext.metadata.annotations?.[RollbackAnnotations.deadline];
  if (text === undefined) return { ms: fromSpec, source: fromSpec === null ? 'none' : 'spec' };
  const setting = deadlineAnnotation(text, {
    ms: fromSpec,
    words: fromSpec === null ? 'no deadline applies' : `spec.progressDeadlineMinutes (${minutes}) applies`,
  });
  if ('problem' in setting) return { ...setting, source: fromSpec === null ? 'none' : 'spec' };
  return { ...setting, source: 'annotation' };
}

export type DeadlineState =
  /** No deadline, or no attempt to time. */
  { kind: 'none' } | { kind: 'waiting'; dueInMs: number } | { kind: 'exceeded' };

/** Where an attempt that started at `start` stands against the deadline at `now`. */
export function deadlineState(start: number | undefined, ms: number | null, now: number): DeadlineState {
  if (ms === null || start === undefined) return { kind: 'none' };
  const due = start + ms - now;
  return due > 0 ? { kind: 'waiting', dueInMs: due } : { kind: 'exceeded' };
}

/** When an attempt started: the earliest creation among its objects (unparseable times left out). */
export function attemptStart(creationTimestamps: readonly (string | undefined)[]): number | undefined {
  const times = creationTimestamps
    .map((t) => (t === undefined ? NaN : Date.parse(t)))
    .filter((t) => Number.isFinite(t));
  return times.length > 0 ? Math.min(...times) : undefined;
}

/**
 * v1's message for a deadline passed. v1 counts whole minutes; a deadline the annotation sets
 * that is not a whole number of minutes is said as Go prints a duration (`30s`).
 */
export function deadlineExceededMessage(ms: number, lastStatus: string): string {
  const span = ms % 60_000 === 0 ? `${ms / 60_000} minute(s)` : formatDuration(ms);
  return `Revision has not rolled out for ${span}. Last status: ${lastStatus}`;
}
