/**
 * An informer keeps a local, always-current copy of one resource (optionally one namespace or a
 * label selection) and tells handlers about adds, updates and deletes.
 *
 * It lists, then watches from the list's resourceVersion. Watches end all the time, so:
 * - the server closing a watch (its timeout) just starts the next one from the last version;
 * - 410 Gone/Expired (the version fell out of the API server's window) relists, and the relist
 *   reports whatever changed meanwhile, deletions included;
 * - any other failure (network, 5xx, 429 while a new CRD's storage starts) is retried with
 *   jittered exponential backoff; client-node's own informer stops for good on these;
 * - a watchdog relists when nothing at all (not even a bookmark) arrived for `stallTimeoutMs`,
 *   which catches a connection that died without being closed.
 * Watches are streamed through KubeClient rather than client-node's Watch, so objects arrive as
 * the API server wrote them and no client-side timeout cuts a healthy watch.
 *
 * Cached objects are frozen (see ./cache.ts): copy before changing.
 */
import type { KubeObject, ResourceType } from '../apis/meta.js';
import { apiVersionOf } from '../apis/meta.js';
import { type BackoffOptions, backoffDelay } from './backoff.js';
import { type Notification, ObjectCache, objectKey } from './cache.js';
import { collectionPath, type KubeClient } from './client.js';
import { type Clock, type Random, sleep, systemClock, type TimerHandle } from './clock.js';
import { fromStatus, isGone } from './errors.js';

export type WatchEvent<T> =
  { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T } | { type: 'ERROR'; object: unknown };

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/** How an informer reads the API: one full list, or a stream of changes from a version. */
export interface ListerWatcher<T> {
  list(): Promise<ListResult<T>>;
  /**
   * Calls `onEvent` for each event from `resourceVersion` on. Resolves when the server ends the
   * watch; rejects when it fails; may do either once `signal` aborts.
   */
  watch(resourceVersion: string, signal: AbortSignal, onEvent: (event: WatchEvent<T>) => void): Promise<void>;
}

export interface Handlers<T> {
  add?(object: T): void;
  update?(old: T, object: T): void;
  delete?(object: T): void;
}

export interface InformerStats {
  lists: number;
  watches: number;
  /** Relists caused by 410 Gone/Expired. */
  expired: number;
  /** Relists caused by the watchdog. */
  stalls: number;
  /** Failed lists or watches (each followed by a backoff). */
  failures: number;
}

export interface InformerOptions<T> {
  listerWatcher: ListerWatcher<T>;
  /** Names the informer in errors, e.g. `subscriptions`. */
  name: string;
  clock?: Clock;
  random?: Random;
  /** Backoff between failed lists or watches. */
  backoff?: BackoffOptions;
  /** Relist when a watch has been silent for this long. Must exceed the server-side watch timeout. */
  stallTimeoutMs?: number;
  /** Told about failures the informer recovers from by itself (for logs); must not throw. */
  onError?: (error: unknown, during: 'list' | 'watch' | 'handler') => void;
}

export const defaultInformerBackoff: BackoffOptions = { baseMs: 250, maxMs: 30_000, jitter: 0.5 };

/** Server-side watch timeouts are drawn from [min, min + spread) seconds, as client-go does. */
const watchTimeoutMinSeconds = 300;
const watchTimeoutSpreadSeconds = 300;
/** Longer than any server-side watch timeout, so only a dead connection trips the watchdog. */
export const defaultStallTimeoutMs = (watchTimeoutMinSeconds + watchTimeoutSpreadSeconds + 60) * 1000;

type WatchEnd = { kind: 'closed' | 'expired' | 'stalled'; events: number; durationMs: number };

/** A watch that ends sooner than this without any event counts as a failure. */
const minHealthyWatchMs = 1_000;

export class Informer<T extends KubeObject> {
  private readonly lw: ListerWatcher<T>;
  private readonly name: string;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly backoff: BackoffOptions;
  private readonly stallTimeoutMs: number;
  private readonly onError: (error: unknown, during: 'list' | 'watch' | 'handler') => void;

  private readonly cache = new ObjectCache<T>();
  private readonly handlers = new Set<Handlers<T>>();
  private readonly stopController = new AbortController();
  private resourceVersion = '';
  private running: Promise<void> | undefined;
  private currentWatch: AbortController | undefined;
  private syncedOnce = false;
  private readonly syncWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private readonly counters: InformerStats = { lists: 0, watches: 0, expired: 0, stalls: 0, failures: 0 };

  constructor(opts: InformerOptions<T>) {
    this.lw = opts.listerWatcher;
    this.name = opts.name;
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.backoff = opts.backoff ?? defaultInformerBackoff;
    this.stallTimeoutMs = opts.stallTimeoutMs ?? defaultStallTimeoutMs;
    this.onError = opts.onError ?? (() => {});
  }

  /** Registers handlers; returns a function that removes them. Register before `start` to see every object. */
  on(handlers: Handlers<T>): () => void {
    this.handlers.add(handlers);
    return () => this.handlers.delete(handlers);
  }

  start(): void {
    if (this.running) return;
    if (this.stopController.signal.aborted) throw new Error(`informer ${this.name}: start after stop`);
    this.running = this.run();
  }

  /** Resolves once the first list is in the cache. */
  synced(): Promise<void> {
    if (this.syncedOnce) return Promise.resolve();
    if (this.stopController.signal.aborted) return Promise.reject(new Error(`informer ${this.name} stopped`));
    return new Promise((resolve, reject) => this.syncWaiters.push({ resolve, reject }));
  }

  hasSynced(): boolean {
    return this.syncedOnce;
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.currentWatch?.abort();
    for (const w of this.syncWaiters.splice(0))
      w.reject(new Error(`informer ${this.name} stopped before it synced`));
    await this.running;
  }

  /** The cached object with this key (`namespace/name`, or `name`), frozen. */
  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  /** Cached objects, all or in one namespace, frozen. */
  list(namespace?: string): T[] {
    return this.cache.list(namespace);
  }

  /** The resourceVersion the next watch starts from. */
  lastResourceVersion(): string {
    return this.resourceVersion;
  }

  stats(): InformerStats {
    return { ...this.counters };
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private async run(): Promise<void> {
    let needList = true;
    let failures = 0;
    while (!this.stopped) {
      let during: 'list' | 'watch' = 'list';
      try {
        if (needList) {
          await this.relist();
          needList = false;
          failures = 0;
        }
        during = 'watch';
        const end = await this.watchOnce();
        if (this.stopped) break;
        if (end.kind === 'closed' && end.events === 0 && end.durationMs < minHealthyWatchMs) {
          // A watch the server ends at once, with nothing in it, is a failure in disguise:
          // back off rather than spin.
          throw new Error(`watch on ${this.name} closed without any event`);
        }
        failures = 0;
        if (end.kind === 'expired') this.counters.expired++;
        if (end.kind === 'stalled') this.counters.stalls++;
        if (end.kind !== 'closed') needList = true;
      } catch (err) {
        if (this.stopped) break;
        if (during === 'watch' && isGone(err)) {
          this.counters.expired++;
          needList = true;
          continue;
        }
        failures++;
        this.counters.failures++;
        this.onError(err, during);
        await sleep(
          this.clock,
          backoffDelay(this.backoff, failures, this.random),
          this.stopController.signal,
        );
      }
    }
  }

  private async relist(): Promise<void> {
    const { items, resourceVersion } = await this.lw.list();
    this.counters.lists++;
    const notifications = this.cache.replace(items);
    this.resourceVersion = resourceVersion;
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const w of this.syncWaiters.splice(0)) w.resolve();
    }
    for (const n of notifications) this.notify(n);
  }

  private async watchOnce(): Promise<WatchEnd> {
    const controller = new AbortController();
    this.currentWatch = controller;
    this.counters.watches++;
    let kind: WatchEnd['kind'] = 'closed';
    let events = 0;
    let failure: unknown;
    let watchdog: TimerHandle | undefined;
    const startedAt = this.clock.now();
    const arm = () => {
      watchdog?.cancel();
      watchdog = this.clock.setTimer(this.stallTimeoutMs, () => {
        kind = 'stalled';
        controller.abort();
      });
    };
    arm();
    try {
      await this.lw.watch(this.resourceVersion, controller.signal, (event) => {
        if (controller.signal.aborted) return;
        arm();
        events++;
        if (event.type === 'ERROR') {
          const status = fromStatus(event.object);
          if (status?.code === 410 || isGone(status)) kind = 'expired';
          else failure = watchError(this.name, event.object);
          controller.abort();
          return;
        }
        const rv = event.object.metadata?.resourceVersion;
        if (event.type === 'ADDED' || event.type === 'MODIFIED') this.notify(this.cache.upsert(event.object));
        else if (event.type === 'DELETED') this.notify(this.cache.remove(event.object));
        if (rv) this.resourceVersion = rv;
      });
    } catch (err) {
      // Aborting (stop, watchdog, an ERROR event) ends the stream with an error; that is expected.
      if (!controller.signal.aborted) throw err;
    } finally {
      watchdog?.cancel();
      this.currentWatch = undefined;
    }
    if (failure !== undefined) throw failure;
    return { kind, events, durationMs: this.clock.now() - startedAt };
  }

  private notify(n: Notification<T> | undefined): void {
    if (!n) return;
    for (const h of [...this.handlers]) {
      try {
        if (n.type === 'add') h.add?.(n.object);
        else if (n.type === 'update') h.update?.(n.old, n.object);
        else h.delete?.(n.object);
      } catch (err) {
        this.onError(err, 'handler');
      }
    }
  }
}

function watchError(name: string, status: unknown): Error {
  const parsed = fromStatus(status);
  return Object.assign(new Error(`watch on ${name}: ${parsed?.message ?? JSON.stringify(status)}`), {
    code: parsed?.code,
    body: JSON.stringify(status),
  });
}

export interface ApiListerWatcherOptions<T = KubeObject> {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Objects per list page. */
  pageSize?: number;
  random?: Random;
  /**
   * What of each object to keep, applied as it arrives (list and watch), before anything holds
   * it: an informer's cache lives as long as the manager, so fields no reconcile reads are best
   * never kept (a CRD's schemas, a CSV's icon). Must not mutate its input.
   */
  transform?: (obj: T) => T;
}

/** Lists and watches `resource` through the API server. */
export function apiListerWatcher<T extends KubeObject>(
  client: KubeClient,
  resource: ResourceType,
  opts: ApiListerWatcherOptions<T> = {},
): ListerWatcher<T> {
  const path = collectionPath(resource, opts.namespace);
  const random = opts.random ?? Math.random;
  const apiVersion = apiVersionOf(resource);
  // List items of built-in kinds come without apiVersion and kind; watch events carry them.
  const withType = (obj: T): T =>
    obj.apiVersion && obj.kind ? obj : { ...obj, apiVersion, kind: resource.kind };
  const transform = opts.transform;
  const typed = transform ? (obj: T): T => transform(withType(obj)) : withType;
  const selectors = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };
  return {
    async list() {
      const items: T[] = [];
      let token: string | undefined;
      for (;;) {
        const page = await client.request<{
          items?: T[];
          metadata?: { resourceVersion?: string; continue?: string };
        }>({
          path,
          query: { ...selectors, limit: opts.pageSize ?? 500, continue: token },
        });
        for (const item of page.items ?? []) items.push(typed(item));
        token = page.metadata?.continue || undefined;
        if (!token) return { items, resourceVersion: page.metadata?.resourceVersion ?? '' };
      }
    },
    watch(resourceVersion, signal, onEvent) {
      const timeoutSeconds = watchTimeoutMinSeconds + Math.floor(random() * watchTimeoutSpreadSeconds);
      return client.stream(
        {
          path,
          query: { ...selectors, watch: true, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
          signal,
        },
        (line) => {
          const event = JSON.parse(line) as WatchEvent<T>;
          if (event.type !== 'ERROR' && event.type !== 'BOOKMARK') event.object = typed(event.object);
          onEvent(event);
        },
      );
    },
  };
}

export interface CreateInformerOptions<T = KubeObject>
  extends ApiListerWatcherOptions<T>, Omit<InformerOptions<never>, 'listerWatcher' | 'name'> {}

/** An informer for `resource` through the API server. */
export function createInformer<T extends KubeObject>(
  client: KubeClient,
  resource: ResourceType,
  opts: CreateInformerOptions<T> = {},
): Informer<T> {
  const scope = opts.namespace ? `${opts.namespace}/` : '';
  return new Informer<T>({
    ...opts,
    name: `${scope}${resource.plural}`,
    listerWatcher: apiListerWatcher<T>(client, resource, opts),
  });
}

export { objectKey };
