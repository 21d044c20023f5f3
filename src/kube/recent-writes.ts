/**
 * The statuses a controller wrote that its informer has not delivered yet. A reconcile that
 * follows a write closely (the write's own events trigger it) may read the object from the cache
 * as it was before the write; a controller whose status carries state from one reconcile to the
 * next (a rollback under way, a history) would then write the old state back. Reading through
 * this keeps the written status until the cache has caught up: until it holds the written
 * resourceVersion (watch events arrive in order), or, should a relist skip it, for `ttlMs`.
 */
import type { KubeObject } from '../apis/meta.js';

interface Written {
  resourceVersion: string;
  status: unknown;
  at: number;
}

export class RecentWrites {
  private readonly byUid = new Map<string, Written>();

  constructor(
    private readonly ttlMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Remembers the object as stored by a status write. */
  remember(stored: KubeObject & { status?: unknown }): void {
    const uid = stored.metadata?.uid;
    const resourceVersion = stored.metadata?.resourceVersion;
    const now = this.now();
    // Writes of objects no longer read (deleted ones) go once they are old.
    for (const [key, w] of this.byUid) if (now - w.at > this.ttlMs) this.byUid.delete(key);
    if (uid && resourceVersion) this.byUid.set(uid, { resourceVersion, status: stored.status, at: now });
  }

  /** How many writes are remembered. */
  get size(): number {
    return this.byUid.size;
  }

  /** The cached object, with the status last written when the cache has not caught up with it. */
  freshest<T extends KubeObject & { status?: unknown }>(cached: T): T {
    const uid = cached.metadata?.uid;
    const w = uid ? this.byUid.get(uid) : undefined;
    if (!w) return cached;
    if (cached.metadata?.resourceVersion === w.resourceVersion || this.now() - w.at > this.ttlMs) {
      this.byUid.delete(uid!);
      return cached;
    }
    return { ...cached, status: w.status };
  }
}
