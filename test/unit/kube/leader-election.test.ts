import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/kube/clock.js';
import {
  decideLease,
  defaultElectionTiming,
  type ElectionEnd,
  LeaderElector,
  type LeaseRecord,
  type LeaseStore,
  microTime,
  type StoredLease,
} from '../../../src/kube/leader-election.js';
import { runs } from '../../support/properties.js';

const T0 = 1_700_000_000_000;
const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = defaultElectionTiming;

/**
 * One true timeline for several electors, each seeing it through its own clock: shifted by an
 * offset and running at its own rate, as the clocks of two nodes do.
 */
class World {
  t = 0;
  private seq = 0;
  private timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];

  clock(offsetMs = 0, rate = 1): Clock {
    return {
      now: () => Math.round(T0 + offsetMs + this.t * rate),
      setTimer: (ms, fn) => this.schedule(Math.max(0, ms) / rate, fn),
    };
  }

  schedule(delay: number, fn: () => void): { cancel(): void } {
    const timer = { at: this.t + delay, seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** Runs the world until true time `end`, letting promise chains finish between timers. */
  async runUntil(end: number): Promise<void> {
    for (;;) {
      await flush();
      this.timers = this.timers.filter((x) => !x.cancelled);
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.t = next.at;
      next.cancelled = true;
      next.fn();
    }
    this.t = end;
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A Lease in memory with the API server's optimistic concurrency: an update naming another
 * resourceVersion fails as a 409 does. Each call takes `latencyMs` of true time, reading when it
 * is sent and writing when it arrives, so two electors can race.
 */
class MemoryLease {
  lease: StoredLease | undefined;
  private rv = 0;
  conflicts = 0;
  /** Every read: when it was answered (true time), for whom, and the resourceVersion it saw. */
  readonly reads: { t: number; by: string; resourceVersion: string | undefined }[] = [];
  /** Every successful write: when (true time), by whom, and what. */
  readonly writes: { t: number; by: string; record: LeaseRecord; resourceVersion: string }[] = [];

  constructor(
    private readonly world: World,
    private readonly latencyMs = 0,
  ) {}

  /** The store one elector sees; `cut()` partitions it from the API server. */
  storeFor(identity: string): LeaseStore & { cut: boolean } {
    const after = <T>(fn: () => T): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        this.world.schedule(this.latencyMs, () => {
          try {
            resolve(fn());
          } catch (err) {
            reject(err as Error);
          }
        });
      });
    const view = {
      cut: false,
      describe: 'olm/bosun-manager',
      get: () => {
        if (view.cut) return Promise.reject(new Error('connection refused'));
        const seen = this.lease && structuredClone(this.lease);
        return after(() => {
          this.reads.push({ t: this.world.t, by: identity, resourceVersion: seen?.resourceVersion });
          return seen;
        });
      },
      create: (record: LeaseRecord) => {
        if (view.cut) return Promise.reject(new Error('connection refused'));
        return after(() => {
          if (this.lease) throw Object.assign(new Error('AlreadyExists'), { code: 409 });
          return this.write(identity, record);
        });
      },
      update: (record: LeaseRecord, resourceVersion: string) => {
        if (view.cut) return Promise.reject(new Error('connection refused'));
        return after(() => {
          if (this.lease?.resourceVersion !== resourceVersion) {
            this.conflicts++;
            throw Object.assign(new Error('Conflict'), { code: 409 });
          }
          return this.write(identity, record);
        });
      },
    };
    return view;
  }

  private write(by: string, record: LeaseRecord): StoredLease {
    this.lease = { record: structuredClone(record), resourceVersion: String(++this.rv) };
    this.writes.push({
      t: this.world.t,
      by,
      record: structuredClone(record),
      resourceVersion: this.lease.resourceVersion,
    });
    return structuredClone(this.lease);
  }
}

/** An elector in the world, with the true times it started and stopped leading. */
function elector(world: World, lease: MemoryLease, identity: string, clock = world.clock()) {
  const store = lease.storeFor(identity);
  const terms: { from: number; to?: number; why?: string }[] = [];
  const stop = new AbortController();
  const e = new LeaderElector({
    store,
    identity,
    clock,
    random: () => 0.5,
    onStartedLeading: () => terms.push({ from: world.t }),
    onStoppedLeading: (why) => Object.assign(terms.at(-1)!, { to: world.t, why }),
  });
  let end: ElectionEnd | undefined;
  const done = e.run(stop.signal).then((x) => (end = x));
  return { e, store, terms, stop: () => stop.abort(), done, end: () => end };
}

/** True-time intervals during which each elector believed it led must never overlap. */
function expectNoOverlap(...electors: { terms: { from: number; to?: number }[] }[]): void {
  const all = electors.flatMap((x) => x.terms.map((t) => ({ from: t.from, to: t.to ?? Infinity })));
  all.sort((a, b) => a.from - b.from);
  for (let i = 1; i < all.length; i++) expect(all[i]!.from).toBeGreaterThanOrEqual(all[i - 1]!.to);
}

const record = (r: Partial<LeaseRecord>): LeaseRecord => ({
  holderIdentity: '',
  leaseDurationSeconds: 15,
  acquireTime: microTime(T0 - 60_000),
  renewTime: microTime(T0 - 60_000),
  leaseTransitions: 3,
  ...r,
});

describe('decideLease', () => {
  const now = T0;
  it.each([
    ['a released Lease is taken, one transition more', record({}), now - 1, 'me', 4],
    [
      'a Lease held by another and seen changing 14 s ago is not taken',
      record({ holderIdentity: 'other' }),
      now - 14_000,
      'me',
      undefined,
    ],
    [
      'a Lease held by another and unchanged for 15 s is taken',
      record({ holderIdentity: 'other' }),
      now - 15_000,
      'me',
      4,
    ],
    ['our own Lease is renewed, keeping its transitions', record({ holderIdentity: 'me' }), now - 1, 'me', 3],
    [
      'a released Lease (duration 1 s) is free at once even when just seen',
      record({ leaseDurationSeconds: 1 }),
      now,
      'me',
      4,
    ],
    [
      'a holder with a 1 s duration seen 1 s ago is free',
      record({ holderIdentity: 'other', leaseDurationSeconds: 1 }),
      now - 1000,
      'me',
      4,
    ],
  ])('%s', (_, current, observedAt, identity, transitions) => {
    const next = decideLease({ current, observedAt }, identity, now, 15);
    if (transitions === undefined) return expect(next).toBeUndefined();
    expect(next).toMatchObject({
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      leaseTransitions: transitions,
    });
    expect(next!.renewTime).toBe(microTime(now));
    // Taking a Lease starts a new term; renewing keeps the one that began.
    expect(next!.acquireTime).toBe(current.holderIdentity === 'me' ? current.acquireTime : microTime(now));
  });

  it('trusts when it saw the record change, not the timestamps the holder wrote', () => {
    // The holder's clock is an hour behind: its renewTime looks long expired, yet we saw it change just now.
    const behind = record({ holderIdentity: 'other', renewTime: microTime(T0 - 3_600_000) });
    expect(decideLease({ current: behind, observedAt: T0 - 1000 }, 'me', T0, 15)).toBeUndefined();
    // Its clock is an hour ahead: its renewTime looks fresh, yet nothing changed for 20 s.
    const ahead = record({ holderIdentity: 'other', renewTime: microTime(T0 + 3_600_000) });
    expect(decideLease({ current: ahead, observedAt: T0 - 20_000 }, 'me', T0, 15)?.holderIdentity).toBe('me');
  });
});

describe('LeaderElector', () => {
  it('creates a missing Lease and leads, renewing every retry period', async () => {
    const world = new World();
    const lease = new MemoryLease(world);
    const a = elector(world, lease, 'a');
    await world.runUntil(30_000);
    expect(a.e.isLeader()).toBe(true);
    expect(lease.writes[0]!.record).toMatchObject({
      holderIdentity: 'a',
      leaseDurationSeconds: leaseDurationMs / 1000,
      leaseTransitions: 0,
    });
    // One creation, then one renewal per retry period.
    expect(lease.writes.length).toBe(1 + Math.floor(30_000 / retryPeriodMs));
    expect(new Set(lease.writes.map((w) => w.record.acquireTime)).size).toBe(1);
    a.stop();
    await world.runUntil(31_000);
  });

  it('a standby never leads while the leader renews', async () => {
    const world = new World();
    const lease = new MemoryLease(world, 5);
    const a = elector(world, lease, 'a');
    await world.runUntil(1_000);
    const b = elector(world, lease, 'b');
    await world.runUntil(120_000);
    expect(a.e.isLeader()).toBe(true);
    expect(b.e.isLeader()).toBe(false);
    expect(b.terms).toEqual([]);
    expect(lease.writes.every((w) => w.by === 'a')).toBe(true);
  });

  it('two electors racing for a free Lease: one wins, the other gets a conflict', async () => {
    const world = new World();
    const lease = new MemoryLease(world, 50);
    const seed = lease.storeFor('admin');
    // A released Lease both electors see at once.
    void seed.create(record({}), AbortSignal.timeout(1000));
    await world.runUntil(100);
    const a = elector(world, lease, 'a');
    const b = elector(world, lease, 'b');
    await world.runUntil(60_000);
    expect(lease.conflicts).toBeGreaterThanOrEqual(1);
    expect([a.e.isLeader(), b.e.isLeader()].filter(Boolean)).toHaveLength(1);
    expectNoOverlap(a, b);
  });

  it('a leader cut off from the API server stops at its renew deadline; the standby takes over after the lease duration', async () => {
    const world = new World();
    const lease = new MemoryLease(world, 5);
    const a = elector(world, lease, 'a');
    await world.runUntil(1_000);
    const b = elector(world, lease, 'b');
    await world.runUntil(20_000);
    const lastRenewal = lease.writes.at(-1)!.t;
    a.store.cut = true;
    await world.runUntil(60_000);
    expect(a.end()).toBe('lost');
    expect(a.terms).toEqual([{ from: expect.any(Number), to: expect.any(Number), why: 'lost' }]);
    // It stopped within its renew deadline of the last renewal it sent (on its own clock).
    expect(a.terms[0]!.to! - lastRenewal).toBeLessThanOrEqual(renewDeadlineMs);
    const takeover = b.terms[0]!.from;
    expect(takeover - lastRenewal).toBeGreaterThanOrEqual(leaseDurationMs);
    expect(takeover - lastRenewal).toBeLessThan(leaseDurationMs + retryPeriodMs * 1.2 + 100);
    // B tries again the moment the lease runs out by its own observation (when it first read the
    // last renewal), not up to a retry period later: just a read and a write after.
    const lastRv = lease.writes.filter((w) => w.by === 'a').at(-1)!.resourceVersion;
    const seen = lease.reads.find((r) => r.by === 'b' && r.resourceVersion === lastRv)!.t;
    expect(takeover - seen).toBeGreaterThanOrEqual(leaseDurationMs);
    expect(takeover - seen).toBeLessThanOrEqual(leaseDurationMs + 2 * 5);
    expect(lease.lease!.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expectNoOverlap(a, b);
  });

  it('a leader stopped cleanly releases the Lease, and the standby takes it within a retry period', async () => {
    const world = new World();
    const lease = new MemoryLease(world, 5);
    const a = elector(world, lease, 'a');
    await world.runUntil(1_000);
    const b = elector(world, lease, 'b');
    await world.runUntil(20_000);
    a.stop();
    await world.runUntil(20_100);
    expect(a.end()).toBe('released');
    expect(a.terms[0]!.why).toBe('released');
    expect(lease.lease!.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    const released = lease.writes.at(-1)!.t;
    await world.runUntil(40_000);
    expect(b.terms[0]!.from - released).toBeLessThanOrEqual(retryPeriodMs * 1.2 + 1_000 + 50);
    expectNoOverlap(a, b);
  });

  it('a leader that sees another holder in the Lease stops at once', async () => {
    const world = new World();
    const lease = new MemoryLease(world);
    const a = elector(world, lease, 'a');
    await world.runUntil(5_000);
    const admin = lease.storeFor('admin');
    void admin.update(
      record({ holderIdentity: 'intruder' }),
      lease.lease!.resourceVersion,
      AbortSignal.timeout(1000),
    );
    await world.runUntil(5_000 + retryPeriodMs + 1);
    expect(a.end()).toBe('lost');
    expect(a.terms[0]!.to).toBeLessThanOrEqual(5_000 + retryPeriodMs);
  });

  it('stopped while a standby, it ends without writing', async () => {
    const world = new World();
    const lease = new MemoryLease(world);
    const a = elector(world, lease, 'a');
    await world.runUntil(1_000);
    const b = elector(world, lease, 'b');
    await world.runUntil(10_000);
    const writes = lease.writes.length;
    b.stop();
    await world.runUntil(10_001);
    expect(b.end()).toBe('stopped');
    expect(lease.writes.slice(writes).every((w) => w.by === 'a')).toBe(true);
    expect(a.e.isLeader()).toBe(true);
  });

  it('never two leaders when clocks are hours apart and run up to 2% fast or slow, whoever is cut off when', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            offsetMs: fc.integer({ min: -3_600_000, max: 3_600_000 }),
            rate: fc.double({ min: 0.98, max: 1.02, noNaN: true }),
          }),
          { minLength: 2, maxLength: 3 },
        ),
        fc.array(
          fc.record({
            at: fc.integer({ min: 0, max: 120_000 }),
            who: fc.nat(),
            forMs: fc.integer({ min: 0, max: 40_000 }),
          }),
          {
            maxLength: 4,
          },
        ),
        fc.integer({ min: 0, max: 200 }),
        async (clocks, cuts, latencyMs) => {
          const world = new World();
          const lease = new MemoryLease(world, latencyMs);
          const electors = clocks.map((c, i) =>
            elector(world, lease, `e${i}`, world.clock(c.offsetMs, c.rate)),
          );
          for (const cut of cuts) {
            const target = electors[cut.who % electors.length]!;
            world.schedule(cut.at, () => void (target.store.cut = true));
            world.schedule(cut.at + cut.forMs, () => void (target.store.cut = false));
          }
          await world.runUntil(180_000);
          expectNoOverlap(...electors);
          // Someone led (the property is not met by nobody ever leading).
          expect(electors.some((e) => e.terms.length > 0)).toBe(true);
        },
      ),
      runs(40),
    );
  });
});
