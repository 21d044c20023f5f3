/**
 * The one way a reconciler writes status: compare the status it computed with the one stored,
 * and only when they differ (in anything but heartbeat timestamps) apply it through the status
 * subresource. A reconcile that finds nothing new writes nothing, so it does not wake every
 * watcher of the object again.
 */
import { apiVersionOf, type KubeObject, type ResourceType } from '../apis/meta.js';
import type { Applier } from './apply.js';
import { heartbeatFields, statusChanged } from './conditions.js';

export interface StatusWrite<S> {
  /** The object's kind (objects from a list may lack apiVersion and kind). */
  resource: Pick<ResourceType, 'group' | 'version' | 'kind'>;
  /** The object whose status is written, as read (its `status` is what `next` is compared with). */
  object: KubeObject & { status?: unknown };
  next: S;
  /** Fields whose change alone is no change (heartbeat timestamps by default). */
  ignore?: readonly string[];
  /** What to compare `next` with, when not the object's whole status. */
  current?: unknown;
  /** Write even when the status is the same (e.g. the object's content changed under it). */
  force?: boolean;
  /** Told the object as stored after the write (see recent-writes.ts). */
  written?: (stored: KubeObject & { status?: unknown }) => void;
}

/** Applies `next` as the object's status when it changed; returns whether it wrote. */
export async function writeStatus<S>(
  applier: Pick<Applier, 'applyStatus'>,
  w: StatusWrite<S>,
): Promise<boolean> {
  const current = 'current' in w ? w.current : w.object.status;
  if (!w.force && !statusChanged(current, w.next, w.ignore ?? heartbeatFields)) return false;
  const stored = await applier.applyStatus({
    apiVersion: apiVersionOf(w.resource),
    kind: w.resource.kind,
    metadata: { name: w.object.metadata?.name, namespace: w.object.metadata?.namespace },
    status: w.next,
  });
  w.written?.(stored);
  return true;
}
