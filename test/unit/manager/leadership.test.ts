import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { leaderElectionOption } from '../../../src/cli/commands/operator.js';
import { WorkQueue } from '../../../src/kube/workqueue.js';
import {
  drainThenRelease,
  type ManagerElection,
  NotLeading,
  refuseWrites,
  standbyOutcome,
} from '../../../src/manager/leadership.js';
import { UserError } from '../../../src/util/errors.js';
import { deferred, FakeClock, settle } from '../kube/fake-clock.js';

const silent = pino({ level: 'silent' });

function fakeElection(events: string[]): ManagerElection {
  return {
    identity: 'me',
    lease: 'olm/bosun-manager',
    isLeader: () => true,
    writeGate: () => {},
    lost: new Promise(() => {}),
    start: () => {},
    stop: () => {
      events.push('released');
      return Promise.resolve();
    },
  };
}

describe('drainThenRelease (a stop)', () => {
  it('lets a running reconcile finish, then releases the Lease', async () => {
    const clock = new FakeClock();
    const events: string[] = [];
    const running = deferred();
    const queue = new WorkQueue({ clock, reconcile: () => running.promise });
    queue.add('ns/a');
    queue.start();
    const stopped = drainThenRelease({
      queues: [queue],
      election: fakeElection(events),
      drainMs: 20_000,
      clock,
      log: silent,
    });
    await settle();
    queue.add('ns/b'); // no new work once stopping
    clock.advance(5_000);
    await settle();
    expect(events).toEqual([]);
    events.push('reconcile finished');
    running.resolve();
    await stopped;
    expect(events).toEqual(['reconcile finished', 'released']);
    expect(queue.depth()).toBe(0);
  });

  it('abandons a reconcile still running after the bound, and releases the Lease then', async () => {
    const clock = new FakeClock();
    const events: string[] = [];
    const queue = new WorkQueue({ clock, reconcile: () => new Promise(() => {}) });
    queue.add('ns/a');
    queue.start();
    const stopped = drainThenRelease({
      queues: [queue],
      election: fakeElection(events),
      drainMs: 20_000,
      clock,
      log: silent,
    });
    await settle();
    clock.advance(19_999);
    await settle();
    expect(events).toEqual([]);
    clock.advance(1);
    await stopped;
    expect(events).toEqual(['released']);
  });
});

describe('a standby reconcile', () => {
  it('whose write was refused looks again later instead of failing', async () => {
    const refused = () => {
      try {
        refuseWrites('standby')({ method: 'PATCH', path: '/apis/x' });
      } catch (err) {
        // As the applier wraps an API failure.
        throw new Error('applying status failed', { cause: err });
      }
    };
    await expect(standbyOutcome(Promise.resolve().then(refused))).resolves.toEqual({ requeueAfter: 60_000 });
    expect(() => refuseWrites('standby')({ method: 'GET', path: '/apis/x' })).not.toThrow();
    expect(() => refuseWrites('standby')({ method: 'DELETE', path: '/apis/x' })).toThrow(NotLeading);
  });

  it('that fails otherwise still fails', async () => {
    await expect(standbyOutcome(Promise.reject(new Error('catalog unreadable')))).rejects.toThrow(
      'catalog unreadable',
    );
  });
});

describe('--leader-elect and its Lease', () => {
  it.each([
    [{}, undefined],
    [{ 'leader-elect': true }, {}],
    [
      {
        'leader-elect': true,
        'leader-election-namespace': 'bosun-system',
        'leader-election-id': 'bosun.example.com',
      },
      { namespace: 'bosun-system', id: 'bosun.example.com' },
    ],
  ])('%j', (values, expected) => {
    expect(leaderElectionOption(values)).toEqual(expected);
  });

  it.each([
    [{ 'leader-election-id': 'x' }, /--leader-election-id needs --leader-elect/],
    [{ 'leader-election-namespace': 'x' }, /--leader-election-namespace needs --leader-elect/],
    [
      { 'leader-elect': true, 'leader-election-namespace': 'Olm' },
      /--leader-election-namespace: "Olm" is not a namespace name/,
    ],
    [{ 'leader-elect': true, 'leader-election-namespace': '../x' }, /--leader-election-namespace: "..\/x"/],
    [
      { 'leader-elect': true, 'leader-election-id': 'a/b' },
      /--leader-election-id: "a\/b" is not a Lease name/,
    ],
    [{ 'leader-elect': true, 'leader-election-id': '' }, /--leader-election-id: "" is not a Lease name/],
    [{ 'leader-elect': true, 'leader-election-id': 'x'.repeat(254) }, /--leader-election-id/],
  ])('refuses %j, naming the flag', (values, message) => {
    let thrown: unknown;
    try {
      leaderElectionOption(values);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UserError);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as UserError).exitCode).toBe(2);
  });
});
