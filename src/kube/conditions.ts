/**
 * Status conditions the Kubernetes way: one entry per `type`; `lastTransitionTime` moves only
 * when `status` changes (a new reason or message alone is not a transition); reasons are
 * CamelCase. Functions are pure and return new arrays, so a reconciler can compute the status it
 * wants and compare it with what is stored (`statusChanged`) before writing anything.
 *
 * They work for metav1.Condition and for OLM's own condition shapes (Subscription, InstallPlan),
 * which share `type`, `status`, `reason`, `message` and `lastTransitionTime`.
 */
import type { ConditionStatus, Time } from '../apis/meta.js';

export interface BaseCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastTransitionTime?: Time;
  observedGeneration?: number;
}

/** The API server's rule for condition reasons (metav1.Condition validation). */
const reasonPattern = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

export function isValidReason(reason: string): boolean {
  return reason.length <= 1024 && reasonPattern.test(reason);
}

/** A timestamp as the API server writes it: RFC 3339 in UTC, whole seconds. */
export function formatTime(ms: number): Time {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function findCondition<C extends BaseCondition>(
  conditions: readonly C[] | undefined,
  type: C['type'],
): C | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly BaseCondition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/**
 * The longest condition message written: a resolution that explains every candidate it ruled out
 * can run to megabytes, and the whole object has to fit in etcd.
 */
export const MaxConditionMessageLength = 8000;

/** `message`, cut to `MaxConditionMessageLength` with `...` marking the cut. */
export function truncateMessage(message: string): string {
  return message.length > MaxConditionMessageLength
    ? `${message.slice(0, MaxConditionMessageLength - 3)}...`
    : message;
}

/**
 * Returns `conditions` with `next` set: replacing the entry of the same type (keeping its place)
 * or appending one, its message cut to `MaxConditionMessageLength`. `lastTransitionTime` is kept
 * when the status did not change and set to `now` when it did. Throws on a reason that is not
 * CamelCase: that is a bug in the caller.
 */
export function setCondition<C extends BaseCondition>(
  conditions: readonly C[] | undefined,
  next: Omit<C, 'lastTransitionTime'>,
  now: number,
): C[] {
  if (next.reason !== undefined && next.reason !== '' && !isValidReason(next.reason)) {
    throw new Error(`condition ${next.type}: reason ${JSON.stringify(next.reason)} is not CamelCase`);
  }
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === next.type);
  const previous = index >= 0 ? list[index] : undefined;
  const lastTransitionTime =
    previous?.status === next.status && previous.lastTransitionTime !== undefined
      ? previous.lastTransitionTime
      : formatTime(now);
  const updated = {
    ...next,
    ...(typeof next.message === 'string' ? { message: truncateMessage(next.message) } : {}),
    lastTransitionTime,
  } as C;
  if (index >= 0) list[index] = updated;
  else list.push(updated);
  return list;
}

/** Returns `conditions` without the entry of `type`. */
export function removeCondition<C extends BaseCondition>(
  conditions: readonly C[] | undefined,
  type: string,
): C[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/**
 * Fields that record when a status was last written rather than what it says. Comparing
 * statuses without them means a reconcile that finds nothing new writes nothing.
 */
export const heartbeatFields: readonly string[] = ['lastUpdated', 'lastUpdateTime', 'lastHeartbeatTime'];

function equalIgnoring(a: unknown, b: unknown, ignore: ReadonlySet<string>): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => equalIgnoring(v, b[i], ignore));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  // An absent field and one set to undefined are the same once serialised.
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const k of keys) {
    if (ignore.has(k)) continue;
    if (!equalIgnoring(ra[k], rb[k], ignore)) return false;
  }
  return true;
}

/**
 * Whether `next` differs from `current` in anything but heartbeat timestamps (`heartbeatFields`
 * by default). Key order does not matter; array order does (conditions keep their place).
 */
export function statusChanged(
  current: unknown,
  next: unknown,
  ignore: readonly string[] = heartbeatFields,
): boolean {
  return !equalIgnoring(current ?? {}, next ?? {}, new Set(ignore));
}
