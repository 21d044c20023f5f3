/**
 * The status of an OLM v1 ClusterCatalog, exactly as operator-controller v1.2.0's catalogd writes
 * it (internal/catalogd/controllers/core/clustercatalog_controller.go), for one outcome of a
 * reconcile. Pure: no clients, no clock (times are passed in).
 *
 * - Serving content: `Serving` True `Available`, `Progressing` True `Succeeded`, with
 *   `resolvedSource.image.ref` (the digest read), `urls.base` and `lastUnpacked` (when the
 *   content last changed, whole seconds).
 * - A fetch that failed: `Progressing` True `Retrying` (False `Blocked` when retrying cannot
 *   help: the reference does not parse) with the cause; the content served before, if any,
 *   goes on being served and its fields stay. With none (the manager started since), `Serving`
 *   becomes False `Unavailable` if it was there, and the fields that point at content go.
 * - `availabilityMode: Unavailable`: both conditions say so (`UserSpecifiedUnavailable`), and the
 *   fields that point at content go.
 * Conditions of other types are dropped, as v1 drops them.
 *
 * And when to reconcile again (clusterCatalogRequeue).
 */
import type { Condition } from '../apis/meta.js';
import {
  type ClusterCatalog,
  ClusterCatalogConditionReason as Reason,
  ClusterCatalogConditionType as Type,
  type ClusterCatalogStatus,
  SourceType,
} from '../apis/olmv1.js';
import { formatTime, setCondition } from '../kube/conditions.js';
import type { ReconcileResult } from '../kube/workqueue.js';

/** What the catalog serves: the image pinned to its digest, since when, and where. */
export interface ServingState {
  image: string;
  lastModified: number;
  baseUrl: string;
}

export type ClusterCatalogOutcome =
  | { kind: 'serving'; serving: ServingState }
  | { kind: 'failed'; terminal: boolean; message: string; serving?: ServingState }
  | { kind: 'unavailable' };

const UnavailableMessage = 'Catalog availability mode is set to Unavailable';

export function clusterCatalogStatus(
  current: ClusterCatalog,
  outcome: ClusterCatalogOutcome,
  now: number,
): ClusterCatalogStatus {
  const generation = current.metadata.generation;
  let conditions: Condition[] = (current.status?.conditions ?? []).filter(
    (c) => c.type === Type.Serving || c.type === Type.Progressing,
  );
  const set = (type: string, status: 'True' | 'False', reason: string, message: string) => {
    conditions = setCondition<Condition>(
      conditions,
      {
        type,
        status,
        reason,
        message,
        ...(generation !== undefined ? { observedGeneration: generation } : {}),
      },
      now,
    );
  };
  const serving = outcome.kind === 'unavailable' ? undefined : outcome.serving;
  switch (outcome.kind) {
    case 'serving':
      set(
        Type.Progressing,
        'True',
        Reason.Succeeded,
        'Successfully unpacked and stored content from resolved source',
      );
      break;
    case 'failed':
      if (outcome.terminal) set(Type.Progressing, 'False', Reason.Blocked, outcome.message);
      else set(Type.Progressing, 'True', Reason.Retrying, outcome.message);
      break;
    case 'unavailable':
      set(Type.Progressing, 'True', Reason.Succeeded, UnavailableMessage);
      set(Type.Serving, 'False', Reason.UserSpecifiedUnavailable, UnavailableMessage);
      break;
  }
  // A failure leaves a Serving condition as it was (v1 does not touch it), generation included.
  const servingAlready = conditions.some((c) => c.type === Type.Serving && c.status === 'True');
  if (serving) {
    if (outcome.kind === 'serving' || !servingAlready)
      set(Type.Serving, 'True', Reason.Available, 'Serving desired content from resolved source');
  } else if (outcome.kind === 'failed' && conditions.some((c) => c.type === Type.Serving))
    set(Type.Serving, 'False', Reason.Unavailable, '');
  // v1 sets Progressing before Serving when it first writes both.
  conditions.sort((a, b) => order(a.type) - order(b.type));
  return {
    conditions,
    ...(serving
      ? {
          resolvedSource: { type: SourceType.Image, image: { ref: serving.image } },
          urls: { base: serving.baseUrl },
          lastUnpacked: formatTime(serving.lastModified),
        }
      : {}),
  };
}

const order = (type: string) => (type === Type.Progressing ? 0 : 1);

/** A failing image is tried again this often (or at its poll interval, if that is sooner). */
export const FailureRetryMs = 10_000;

/**
 * When to reconcile again: after `pollIntervalMinutes` while serving (never without one: a
 * digest reference has none, the CRD refuses it), sooner after a failure, and never after one
 * retrying cannot mend or while Unavailable (a change of spec is an event of its own). v1 adds
 * up to 1% of jitter to the poll; Bosun polls on the minute.
 */
export function clusterCatalogRequeue(
  cc: ClusterCatalog,
  outcome: ClusterCatalogOutcome,
): ReconcileResult | undefined {
  const minutes = cc.spec.source.image?.pollIntervalMinutes;
  const pollMs = minutes !== undefined && minutes > 0 ? minutes * 60_000 : undefined;
  if (outcome.kind === 'unavailable') return undefined;
  if (outcome.kind === 'failed') {
    if (outcome.terminal) return undefined;
    return { requeueAfter: Math.min(pollMs ?? FailureRetryMs, FailureRetryMs) };
  }
  return pollMs === undefined ? undefined : { requeueAfter: pollMs };
}
