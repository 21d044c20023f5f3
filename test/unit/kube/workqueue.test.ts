import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Outcome, type ReconcileResult, WorkQueue } from '../../../src/kube/workqueue.js';
import { deferred, FakeClock, settle } from './fake-clock.js';
import { runs } from '../../support/properties.js';

const backoff = { baseMs: 100, maxMs: 1_000, jitter: 0 };

/** A queue whose reconciles finish only when the test says so. */
function controlledQueue(concurrency = 4) {
  const clock = new FakeClock();
  const running = new Map<string, ReturnType<typeof deferred<ReconcileResult | undefined>>>();
  const calls: string[] = [];
  const outcomes: Outcome[] = [];
  let maxConcurrentPerKey = 0;
  const queue = new WorkQueue({
    concurrency,
    clock,
    random: () => 0.5,
    backoff,
    onOutcome: (o) => outcomes.push(o),
    reconcile: async (key) => {
      if (running.has(key)) maxConcurrentPerKey = 2;
      calls.push(key);
      const d = deferred<ReconcileResult | undefined>();
      running.set(key, d);
      try {
        return await d.promise;
      } finally {
        running.delete(key);
      }
    },
  });
  const finish = async (key: string, result?: ReconcileResult) => {
    running.get(key)!.resolve(result);
    await settle();
  };
  const fail = async (key: string, error: unknown = new Error('boom')) => {
    running.get(key)!.reject(error);
    await settle();
  };
  return {
    clock,
    queue,
    calls,
    outcomes,
    running,
    finish,
    fail,
    maxConcurrentPerKey: () => maxConcurrentPerKey,
  };
}

describe('WorkQueue', () => {
  it('reconciles a key added several times before it runs only once', async () => {
    const q = controlledQueue();
    q.queue.add('ns/a');
    q.queue.add('ns/a');
    q.queue.add('ns/b');
    q.queue.add('ns/a');
    expect(q.queue.depth()).toBe(2);
    q.queue.start();
    await settle();
    expect(q.calls).toEqual(['ns/a', 'ns/b']);
  });

  it('never runs two reconciles of one key at once, and runs once more for adds made meanwhile', async () => {
    const q = controlledQueue();
    q.queue.start();
    q.queue.add('ns/a');
    await settle();
    q.queue.add('ns/a');
    q.queue.add('ns/a');
    await settle();
    expect(q.calls).toEqual(['ns/a']);
    expect(q.queue.inFlight()).toBe(1);

    await q.finish('ns/a');
    expect(q.calls).toEqual(['ns/a', 'ns/a']);
    await q.finish('ns/a');
    expect(q.calls).toEqual(['ns/a', 'ns/a']);
    expect(q.maxConcurrentPerKey()).toBe(0);
  });

  it('runs different keys in parallel up to the concurrency limit, in the order they were added', async () => {
    const q = controlledQueue(2);
    q.queue.start();
    for (const k of ['a', 'b', 'c', 'd']) q.queue.add(k);
    await settle();
    expect(q.calls).toEqual(['a', 'b']);
    expect(q.queue.depth()).toBe(2);
    await q.finish('b');
    expect(q.calls).toEqual(['a', 'b', 'c']);
    await q.finish('a');
    expect(q.calls).toEqual(['a', 'b', 'c', 'd']);
  });

  it('holds keys until started', async () => {
    const q = controlledQueue();
    q.queue.add('a');
    await settle();
    expect(q.calls).toEqual([]);
    q.queue.start();
    await settle();
    expect(q.calls).toEqual(['a']);
  });

  it('retries a failing key with exponential backoff up to the maximum', async () => {
    const q = controlledQueue();
    q.queue.start();
    q.queue.add('a');
    await settle();
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      await q.fail('a');
      const [delay] = q.clock.pendingDelays();
      waits.push(delay!);
      q.clock.advance(delay! - 1);
      await settle();
      expect(q.running.has('a'), `retry ${i + 1} ran early`).toBe(false);
      q.clock.advance(1);
      await settle();
      expect(q.running.has('a'), `retry ${i + 1} did not run`).toBe(true);
    }
    expect(waits).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(q.queue.failureCount('a')).toBe(6);
    expect(
      q.outcomes.filter((o) => o.kind === 'retry').map((o) => (o.kind === 'retry' ? o.attempt : 0)),
    ).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('starts backoff from the beginning after a success', async () => {
    const q = controlledQueue();
    q.queue.start();
    q.queue.add('a');
    await settle();
    await q.fail('a');
    q.clock.advance(100);
    await settle();
    await q.fail('a');
    q.clock.advance(200);
    await settle();
    await q.finish('a');
    expect(q.queue.failureCount('a')).toBe(0);
    q.queue.add('a');
    await settle();
    await q.fail('a');
    expect(q.clock.pendingDelays()).toEqual([100]);
  });

  it('keeps separate backoff per key', async () => {
    const q = controlledQueue();
    q.queue.start();
    q.queue.add('a');
    await settle();
    await q.fail('a');
    q.clock.advance(100);
    await settle();
    await q.fail('a');
    q.queue.add('b');
    await settle();
    await q.fail('b');
    expect(q.clock.pendingDelays()).toEqual([100, 200]);
  });

  it('reruns a failed key at once when it was added again while failing', async () => {
    const q = controlledQueue();
    q.queue.start();
    q.queue.add('a');
    await settle();
    q.queue.add('a');
    await q.fail('a');
    expect(q.calls).toEqual(['a', 'a']);
  });

  it('treats a reconciler that throws synchronously like one that rejects', async () => {
    const clock = new FakeClock();
    const outcomes: Outcome[] = [];
    const queue = new WorkQueue({
      clock,
      backoff,
      random: () => 0.5,
      onOutcome: (o) => outcomes.push(o),
      reconcile: (() => {
        throw new Error('bug');
      }) as unknown as () => Promise<void>,
    });
    queue.start();
    queue.add('a');
    await settle();
    expect(outcomes.map((o) => o.kind)).toEqual(['retry']);
    expect(clock.pendingDelays()).toEqual([100]);
  });

  it('honours requeueAfter', async () => {
    const q = controlledQueue();
    q.queue.start();
    q.queue.add('a');
    await settle();
    await q.finish('a', { requeueAfter: 5_000 });
    expect(q.outcomes.at(-1)).toMatchObject({ kind: 'requeue', delayMs: 5_000 });
    q.clock.advance(4_999);
    await settle();
    expect(q.calls).toEqual(['a']);
    q.clock.advance(1);
    await settle();
    expect(q.calls).toEqual(['a', 'a']);
  });

  it('keeps the earliest of several delayed adds for a key and runs it once', async () => {
    const q = controlledQueue();
    q.queue.start();
    q.queue.addAfter('a', 1_000);
    q.queue.addAfter('a', 300);
    q.queue.addAfter('a', 800);
    expect(q.queue.delayedCount()).toBe(1);
    q.clock.advance(300);
    await settle();
    expect(q.calls).toEqual(['a']);
    await q.finish('a');
    q.clock.advance(10_000);
    await settle();
    expect(q.calls).toEqual(['a']);
  });

  it('adds at once for a delay of zero', async () => {
    const q = controlledQueue();
    q.queue.start();
    q.queue.addAfter('a', 0);
    await settle();
    expect(q.calls).toEqual(['a']);
  });

  it('shutdown waits for running reconciles, drops waiting and delayed keys, and ignores later adds', async () => {
    const q = controlledQueue(1);
    q.queue.start();
    q.queue.add('a');
    q.queue.add('b');
    q.queue.addAfter('c', 1_000);
    await settle();
    let done = false;
    const stopping = q.queue.shutdown().then(() => {
      done = true;
    });
    await settle();
    expect(done).toBe(false);
    await q.finish('a');
    await stopping;
    expect(done).toBe(true);
    q.queue.add('d');
    q.clock.advance(5_000);
    await settle();
    expect(q.calls).toEqual(['a']);
    expect(q.clock.pendingDelays()).toEqual([]);
  });

  it('idle resolves once nothing is waiting or running', async () => {
    const q = controlledQueue();
    q.queue.start();
    await q.queue.idle();
    q.queue.add('a');
    let idle = false;
    void q.queue.idle().then(() => {
      idle = true;
    });
    await settle();
    expect(idle).toBe(false);
    await q.finish('a');
    expect(idle).toBe(true);
  });

  it('never overlaps reconciles of a key and reconciles every key after its last add (random schedules)', async () => {
    type Op = { op: 'add'; key: number } | { op: 'finish'; pick: number; fail: boolean };
    const opArb = fc.oneof(
      fc.record({ op: fc.constant('add' as const), key: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ op: fc.constant('finish' as const), pick: fc.nat(), fail: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { maxLength: 60 }),
        fc.integer({ min: 1, max: 3 }),
        async (ops, conc) => {
          const q = controlledQueue(conc);
          let seq = 0;
          const lastAdd = new Map<string, number>();
          const lastStart = new Map<string, number>();
          const origPush = q.calls.push.bind(q.calls);
          q.calls.push = (...keys: string[]) => {
            for (const k of keys) lastStart.set(k, ++seq);
            return origPush(...keys);
          };
          q.queue.start();
          for (const op of ops as Op[]) {
            if (op.op === 'add') {
              const key = `k${op.key}`;
              lastAdd.set(key, ++seq);
              q.queue.add(key);
              await settle();
            } else {
              const keys = [...q.running.keys()];
              if (keys.length === 0) continue;
              const key = keys[op.pick % keys.length]!;
              if (op.fail) await q.fail(key);
              else await q.finish(key);
            }
            expect(q.queue.inFlight()).toBeLessThanOrEqual(conc);
          }
          // Let everything finish: complete whatever runs, and fire retries, until quiet.
          for (let i = 0; i < 200 && (q.running.size > 0 || q.clock.pendingDelays().length > 0); i++) {
            for (const key of [...q.running.keys()]) await q.finish(key);
            q.clock.advance(q.clock.pendingDelays()[0] ?? 0);
            await settle();
          }
          expect(q.maxConcurrentPerKey()).toBe(0);
          for (const [key, added] of lastAdd) {
            expect(lastStart.get(key) ?? 0, `${key} was not reconciled after its last add`).toBeGreaterThan(
              added,
            );
          }
        },
      ),
      runs(60),
    );
  });
});
