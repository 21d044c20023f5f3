/**
 * Leader election on a `coordination.k8s.io/v1` Lease, after client-go's
 * tools/leaderelection (leaderelection.go, resourcelock/leaselock.go); @kubernetes/client-node
 * has no elector. Several managers run; the one holding the Lease reconciles.
 *
 * The rules, as client-go's:
 * - A Lease is free when nobody holds it (empty `holderIdentity`) or when its holder has not
 *   renewed it for `leaseDurationSeconds` *as this elector observed it*: the time that counts is
 *   when this elector last saw the record change, on its own clock, never the `renewTime` written
 *   in the Lease. The writer's clock may be minutes off ours; comparing two readings of our own
 *   clock only needs both clocks to run at about the same rate, which they do.
 * - Every write names the resourceVersion read, so of two electors writing at once one gets a
 *   409 Conflict and has not acquired anything.
 * - The leader renews every retry period and stops leading once `renewDeadline` has passed since
 *   its last successful renewal began (7 s by default), before anyone else may take the Lease
 *   (10 s after they last saw it change, which is after that renewal was sent): so two leaders
 *   never overlap as long as clock rates differ by less than the 3 s margin in 10 s.
 * - On a clean stop the leader releases the Lease (holder cleared, duration 1 s, as client-go's
 *   ReleaseOnCancel), so a standby takes over within a retry period instead of a lease duration.
 *
 * `decideLease` is the pure rule; `LeaderElector` drives it on an injected clock through a
 * `LeaseStore` (lease-store.ts holds the API server's).
 */
import { type Clock, type Random, sleep } from './clock.js';

/** The fields of a Lease's spec that elect a leader. */
export interface LeaseRecord {
  /** Empty when nobody holds it (released). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** MicroTime strings, for people and other tools; the elector never trusts them. */
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

/** A Lease as read: its record and the resourceVersion an update must name. */
export interface StoredLease {
  record: LeaseRecord;
  resourceVersion: string;
}

/** Where the Lease lives. Every call may throw (an update conflicting with another writer does). */
export interface LeaseStore {
  /** The Lease, or undefined when there is none. */
  get(signal: AbortSignal): Promise<StoredLease | undefined>;
  create(record: LeaseRecord, signal: AbortSignal): Promise<StoredLease>;
  /** Replaces the record only if the Lease still has `resourceVersion` (else throws, e.g. 409). */
  update(record: LeaseRecord, resourceVersion: string, signal: AbortSignal): Promise<StoredLease>;
  /** Names the Lease in messages, e.g. `olm/bosun-manager`. */
  readonly describe: string;
}

export interface ElectionTiming {
  /** How long a standby waits, after it last saw the Lease change, before taking it. */
  leaseDurationMs: number;
  /** How long the leader goes on leading without a successful renewal. */
  renewDeadlineMs: number;
  /** How often the leader renews and a standby tries to acquire. */
  retryPeriodMs: number;
}

/**
 * Shorter than controller-runtime's 15/10/2 s, so that a standby takes over a killed leader within
 * 15 s: it waits a lease duration after it *saw* the last renewal, which it sees up to a retry
 * period late, and tries once per retry period, so failover takes 10 s minus the time since the
 * last renewal, plus up to two retry periods: 8 to 14 s. The leader still has three renewals in
 * its deadline before it must give up.
 */
export const defaultElectionTiming: ElectionTiming = {
  leaseDurationMs: 10_000,
  renewDeadlineMs: 7_000,
  retryPeriodMs: 2_000,
};

/** The leader must give up before a standby may take over, with room for clock rate skew. */
export function checkElectionTiming(t: ElectionTiming): string | undefined {
  if (!(t.retryPeriodMs > 0)) return 'the retry period must be positive';
  if (!(t.renewDeadlineMs > t.retryPeriodMs))
    return 'the renew deadline must be longer than the retry period';
  if (!(t.leaseDurationMs > t.renewDeadlineMs))
    return 'the lease duration must be longer than the renew deadline';
  if (t.leaseDurationMs % 1000 !== 0)
    return 'the lease duration must be whole seconds (leaseDurationSeconds)';
  return undefined;
}

/** RFC 3339 with microseconds, the form of a Lease's MicroTime fields. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface LeaseView {
  /** The record as last read. */
  current: LeaseRecord;
  /** When this elector saw `current` first, on its own clock. */
  observedAt: number;
}

/**
 * What to write to hold the Lease at `now`, or `undefined` when another holder's lease is still
 * valid by our own observation. A record we hold is renewed keeping its acquireTime and
 * transitions; taking it from someone else (or from nobody) counts one transition more.
 */
export function decideLease(
  view: LeaseView,
  identity: string,
  now: number,
  leaseDurationSeconds: number,
): LeaseRecord | undefined {
  const { current, observedAt } = view;
  const ours = current.holderIdentity === identity;
  const validUntil = observedAt + current.leaseDurationSeconds * 1000;
  if (!ours && current.holderIdentity !== '' && now < validUntil) return undefined;
  const stamp = microTime(now);
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: ours ? current.acquireTime : stamp,
    renewTime: stamp,
    leaseTransitions: ours ? current.leaseTransitions : current.leaseTransitions + 1,
  };
}

/** The record a leader writes to give the Lease up. */
export function releasedRecord(current: LeaseRecord, now: number): LeaseRecord {
  const stamp = microTime(now);
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: stamp,
    renewTime: stamp,
    leaseTransitions: current.leaseTransitions,
  };
}

/** How an election ended: stopped before leading, released on stop, or lost. */
export type ElectionEnd = 'stopped' | 'released' | 'lost';

export interface LeaderElectorOptions {
  store: LeaseStore;
  identity: string;
  clock: Clock;
  timing?: ElectionTiming;
  /** Jitter of the standby's retries (client-go's factor 1.2), so standbys do not march together. */
  random?: Random;
  /** Called once when this elector becomes the leader. */
  onStartedLeading: () => void;
  /**
   * Called synchronously, at once, when leadership ends: the renew deadline passed ('lost'), or the
   * elector was stopped while leading ('released' after the Lease was given up, or when giving it
   * up failed). Must stop every write to the cluster.
   */
  onStoppedLeading: (why: 'lost' | 'released') => void;
  /** Told what went wrong on an attempt (for a debug log); must not throw. */
  onAttemptFailed?: (err: unknown) => void;
  /** Told each new holder seen (for logs); must not throw. */
  onNewLeader?: (identity: string) => void;
}

export class LeaderElector {
  private readonly timing: ElectionTiming;
  private readonly random: Random;
  private view: (LeaseView & { resourceVersion: string; raw: string }) | undefined;
  private leading = false;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.timing = opts.timing ?? defaultElectionTiming;
    const bad = checkElectionTiming(this.timing);
    if (bad) throw new Error(`leader election for ${opts.store.describe}: ${bad}`);
    this.random = opts.random ?? Math.random;
  }

  get identity(): string {
    return this.opts.identity;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Acquires the Lease (retrying until `signal` aborts), then renews it until the renew deadline
   * passes ('lost') or `signal` aborts (the Lease is released: 'released'). Never throws.
   */
  async run(signal: AbortSignal): Promise<ElectionEnd> {
    const { clock } = this.opts;
    const { retryPeriodMs, renewDeadlineMs } = this.timing;
    let acquired = false;
    while (!signal.aborted) {
      acquired = await this.attempt(signal, clock.now() + retryPeriodMs);
      if (acquired) break;
      await sleep(clock, this.nextTry(retryPeriodMs * (1 + 0.2 * this.random())), signal);
    }
    if (signal.aborted) {
      // Stopped as the Lease was being taken: hand it back rather than leave it held by nobody.
      if (acquired) await this.release();
      return 'stopped';
    }

    this.leading = true;
    this.opts.onStartedLeading();
    // Leadership lasts until renewDeadline after the last successful renewal *began*: the write
    // may have reached the API server at any moment of the request.
    let validUntil = clock.now() + renewDeadlineMs;
    const lost = new AbortController();
    let deadline = clock.setTimer(renewDeadlineMs, () => lost.abort());
    const lose = () => {
      this.leading = false;
      this.opts.onStoppedLeading('lost');
    };
    // The deadline timer ends leadership at once, even while a renewal hangs.
    lost.signal.addEventListener('abort', lose, { once: true });
    const either = AbortSignal.any([signal, lost.signal]);
    while (!either.aborted) {
      await sleep(clock, retryPeriodMs, either);
      if (either.aborted) break;
      const began = clock.now();
      if (await this.attempt(either, validUntil)) {
        validUntil = began + renewDeadlineMs;
        deadline.cancel();
        deadline = clock.setTimer(validUntil - clock.now(), () => lost.abort());
      } else if (this.heldByAnother()) {
        // Someone else holds it (an admin edited the Lease, or we were partitioned for long):
        // waiting for our deadline would mean two leaders meanwhile.
        lost.abort();
      }
    }
    deadline.cancel();
    if (lost.signal.aborted) return 'lost';
    lost.signal.removeEventListener('abort', lose);
    // Stopped while leading: the caller has stopped its writers; give the Lease up.
    await this.release();
    this.leading = false;
    this.opts.onStoppedLeading('released');
    return 'released';
  }

  /** One try to acquire or renew, given up at `until` (our clock). */
  private async attempt(signal: AbortSignal, until: number): Promise<boolean> {
    const { store, identity, clock } = this.opts;
    const timeout = new AbortController();
    const timer = clock.setTimer(until - clock.now(), () => timeout.abort());
    const both = AbortSignal.any([signal, timeout.signal]);
    try {
      const got = await store.get(both);
      const durationSeconds = this.timing.leaseDurationMs / 1000;
      if (!got) {
        this.observe(await store.create(firstRecord(identity, clock.now(), durationSeconds), both));
        return true;
      }
      this.observe(got);
      const next = decideLease(this.view!, identity, clock.now(), durationSeconds);
      if (!next) return false;
      if (both.aborted) return false;
      this.observe(await store.update(next, got.resourceVersion, both));
      return true;
    } catch (err) {
      this.opts.onAttemptFailed?.(err);
      return false;
    } finally {
      timer.cancel();
    }
  }

  /**
   * When a standby tries again: after the jittered retry period, or the moment the holder's lease
   * runs out by our observation if that is sooner, so a crashed leader is replaced as soon as the
   * rules allow rather than up to a retry period later.
   */
  private nextTry(retryMs: number): number {
    if (!this.view || !this.heldByAnother()) return retryMs;
    const untilFree =
      this.view.observedAt + this.view.current.leaseDurationSeconds * 1000 - this.opts.clock.now();
    return untilFree > 0 ? Math.min(retryMs, untilFree) : retryMs;
  }

  private heldByAnother(): boolean {
    const holder = this.view?.current.holderIdentity ?? '';
    return holder !== '' && holder !== this.opts.identity;
  }

  /** Remembers the record, restarting the observation time only when it changed. */
  private observe(got: StoredLease): void {
    const raw = JSON.stringify(got.record);
    if (this.view?.raw === raw) {
      this.view.resourceVersion = got.resourceVersion;
      return;
    }
    if (got.record.holderIdentity !== this.view?.current.holderIdentity)
      this.opts.onNewLeader?.(got.record.holderIdentity);
    this.view = {
      current: got.record,
      observedAt: this.opts.clock.now(),
      resourceVersion: got.resourceVersion,
      raw,
    };
  }

  /** Clears the holder if it is still us, within one renew deadline; a conflict is read again. */
  private async release(): Promise<void> {
    const { store, identity, clock } = this.opts;
    const timeout = new AbortController();
    const timer = clock.setTimer(this.timing.renewDeadlineMs, () => timeout.abort());
    try {
      for (let tries = 0; tries < 3 && !timeout.signal.aborted; tries++) {
        try {
          const got = await store.get(timeout.signal);
          if (!got || got.record.holderIdentity !== identity) return;
          this.observe(
            await store.update(releasedRecord(got.record, clock.now()), got.resourceVersion, timeout.signal),
          );
          return;
        } catch (err) {
          this.opts.onAttemptFailed?.(err);
        }
      }
    } finally {
      timer.cancel();
    }
  }
}

/** The record that creates the Lease. */
export function firstRecord(identity: string, now: number, leaseDurationSeconds: number): LeaseRecord {
  const stamp = microTime(now);
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: stamp,
    renewTime: stamp,
    leaseTransitions: 0,
  };
}
