/**
 * An informer's cache of objects, keyed `namespace/name` (or `name` when cluster-scoped). Objects
 * are deep-frozen as they enter: many reconcilers share them, and a reconciler that changed one
 * in place would corrupt what the others see (client-node's cache hands out live objects). An
 * attempt to mutate throws a TypeError in strict mode; `mutableCopy` gives a private copy.
 */
import type { KubeObject } from '../apis/meta.js';

export type Notification<T> =
  { type: 'add'; object: T } | { type: 'update'; old: T; object: T } | { type: 'delete'; object: T };

/**
 * `namespace/name`, or `name` for cluster-scoped objects: the key of an informer's cache and of
 * a controller's work queue, for an object or for its namespace and name.
 */
export function objectKey(obj: KubeObject): string;
export function objectKey(namespace: string | undefined, name: string | undefined): string;
export function objectKey(objOrNamespace: KubeObject | string | undefined, name?: string): string {
  const [ns, n] =
    typeof objOrNamespace === 'object'
      ? [objOrNamespace.metadata?.namespace, objOrNamespace.metadata?.name]
      : [objOrNamespace, name];
  return ns ? `${ns}/${n ?? ''}` : (n ?? '');
}

/** Splits a key made by `objectKey`. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** A copy of a cached object that the caller may change. */
export function mutableCopy<T>(obj: T): T {
  return structuredClone(obj);
}

const resourceVersion = (o: KubeObject) => o.metadata?.resourceVersion;

export class ObjectCache<T extends KubeObject> {
  private objects = new Map<string, T>();

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(namespace?: string): T[] {
    const all = [...this.objects.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === namespace);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  get size(): number {
    return this.objects.size;
  }

  /** Records an added or modified object; says what changed (nothing if this version is known). */
  upsert(obj: T): Notification<T> | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (old && resourceVersion(old) === resourceVersion(obj)) return undefined;
    const object = deepFreeze(obj);
    this.objects.set(key, object);
    return old ? { type: 'update', old, object } : { type: 'add', object };
  }

  /** Records a deletion; `obj` is the object's last state as the delete event carried it. */
  remove(obj: T): Notification<T> | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.objects.delete(key);
    return { type: 'delete', object: deepFreeze(obj) };
  }

  /**
   * Replaces everything with a fresh list (after a relist) and says what changed since the last
   * state seen: objects created, changed or deleted while no watch was running are not missed.
   */
  replace(items: T[]): Notification<T>[] {
    const next = new Map<string, T>();
    const notifications: Notification<T>[] = [];
    for (const item of items) {
      const key = objectKey(item);
      const old = this.objects.get(key);
      if (old && resourceVersion(old) === resourceVersion(item)) {
        next.set(key, old);
        continue;
      }
      const object = deepFreeze(item);
      next.set(key, object);
      notifications.push(old ? { type: 'update', old, object } : { type: 'add', object });
    }
    for (const [key, old] of this.objects) {
      if (!next.has(key)) notifications.push({ type: 'delete', object: old });
    }
    this.objects = next;
    return notifications;
  }
}
