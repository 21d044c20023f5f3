/**
 * A keyed work queue for level-based reconcilers, after controller-runtime's: a key is queued at
 * most once however many events name it; at most one reconcile per key runs at a time, and a key
 * added while its reconcile runs is reconciled once more afterwards (so no change is missed);
 * failures are retried with jittered exponential backoff per key; a reconcile may ask to run
 * again after a delay (`requeueAfter`). Keys are usually `namespace/name`.
 */
import { type BackoffOptions, backoffDelay } from './backoff.js';
import { type Clock, type Random, systemClock, type TimerHandle } from './clock.js';

export interface ReconcileResult {
  /** Reconcile this key again after this many milliseconds (e.g. to poll something). */
  requeueAfter?: number;
}

/**
 * Reconciles one key. Throwing means "retry with backoff"; a failure retrying will not fix is
 * said in the object's status and the reconcile returns.
 */
export type Reconcile = (key: string) => Promise<ReconcileResult | undefined | void>;

export type Outcome =
  | { key: string; kind: 'success'; durationMs: number }
  | { key: string; kind: 'requeue'; durationMs: number; delayMs: number }
  | { key: string; kind: 'retry'; durationMs: number; delayMs: number; attempt: number; error: unknown };

export interface WorkQueueOptions {
  reconcile: Reconcile;
  /** How many different keys may be reconciled at once. */
  concurrency?: number;
  backoff?: BackoffOptions;
  clock?: Clock;
  random?: Random;
  /** Told about every finished reconcile (for logs and metrics); must not throw. */
  onOutcome?: (outcome: Outcome) => void;
}

export const defaultQueueBackoff: BackoffOptions = { baseMs: 100, maxMs: 5 * 60_000, jitter: 0.2 };

export class WorkQueue {
  private readonly reconcile: Reconcile;
  private readonly concurrency: number;
  private readonly backoff: BackoffOptions;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly onOutcome: (outcome: Outcome) => void;

  /** Keys ready to run, oldest first; each is also in `dirty` and not in `processing`. */
  private readonly ready: string[] = [];
  /** Keys that need a reconcile: queued, or re-added while their reconcile runs. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: TimerHandle }>();
  private started = false;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(opts: WorkQueueOptions) {
    this.reconcile = opts.reconcile;
    this.concurrency = Math.max(1, opts.concurrency ?? 1);
    this.backoff = opts.backoff ?? defaultQueueBackoff;
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.onOutcome = opts.onOutcome ?? (() => {});
  }

  /** Starts running reconciles; keys added before are kept and run now. */
  start(): void {
    if (this.stopped) throw new Error('work queue: start after shutdown');
    this.started = true;
    this.pump();
  }

  /** Asks for `key` to be reconciled. Adding a key that is already waiting does nothing. */
  add(key: string): void {
    if (this.stopped || this.dirty.has(key)) return;
    this.dirty.add(key);
    // A key being reconciled now goes back in line when that reconcile finishes.
    if (this.processing.has(key)) return;
    this.ready.push(key);
    this.pump();
  }

  /** Adds `key` after `delayMs`. If the key is already due earlier, the earlier time wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    pending?.timer.cancel();
    const timer = this.clock.setTimer(delayMs, () => {
      this.delayed.delete(key);
      this.add(key);
    });
    this.delayed.set(key, { at, timer });
  }

  /** Keys waiting to run (not counting delayed retries): the queue depth. */
  depth(): number {
    return this.ready.length;
  }

  /** Keys being reconciled now. */
  inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delay (a retry or a requeueAfter). */
  delayedCount(): number {
    return this.delayed.size;
  }

  /** Failures of `key` since its last success (what its next backoff is based on). */
  failureCount(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Resolves when nothing is ready or running (delayed keys may still be pending). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking keys, drops delayed ones, and resolves once running reconciles have finished. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.delayed.values()) timer.cancel();
    this.delayed.clear();
    for (const key of this.ready) this.dirty.delete(key);
    this.ready.length = 0;
    await this.idle();
  }

  private isIdle(): boolean {
    return this.ready.length === 0 && this.processing.size === 0;
  }

  private pump(): void {
    while (
      this.started &&
      !this.stopped &&
      this.processing.size < this.concurrency &&
      this.ready.length > 0
    ) {
      const key = this.ready.shift()!;
      this.dirty.delete(key);
      this.processing.add(key);
      void this.run(key);
    }
    if (this.isIdle()) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async run(key: string): Promise<void> {
    const startedAt = this.clock.now();
    let outcome: Outcome;
    try {
      // Call through a promise so that a reconciler throwing synchronously is handled the same.
      const result = await Promise.resolve().then(() => this.reconcile(key));
      this.failures.delete(key);
      const delayMs = result?.requeueAfter ?? 0;
      if (delayMs > 0) {
        this.addAfter(key, delayMs);
        outcome = { key, kind: 'requeue', durationMs: this.clock.now() - startedAt, delayMs };
      } else {
        outcome = { key, kind: 'success', durationMs: this.clock.now() - startedAt };
      }
    } catch (error) {
      const durationMs = this.clock.now() - startedAt;
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      const delayMs = backoffDelay(this.backoff, attempt, this.random);
      this.addAfter(key, delayMs);
      outcome = { key, kind: 'retry', durationMs, delayMs, attempt, error };
    }
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.stopped) this.ready.push(key);
    else this.dirty.delete(key);
    try {
      this.onOutcome(outcome);
    } catch (err) {
      // A throwing observer is a bug; surface it without leaving the queue stuck.
      queueMicrotask(() => {
        throw err;
      });
    }
    this.pump();
  }
}
