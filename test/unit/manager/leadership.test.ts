import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { leaderElectionOption } from '../../../src/cli/commands/operator.js';
import { ApiError, type KubeClient, type RequestOptions } from '../../../src/kube/client.js';
import { WorkQueue } from '../../../src/kube/workqueue.js';
import { createLogger } from '../../../src/util/log.js';
import {
  drainThenRelease,
  managerElection,
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

describe('the Lease as a log shows it', () => {
  /** A client stub whose Lease is held by `holder`, and who refuses writes with `refusal`. */
  function stubClient(holder: string, refusal: string): KubeClient {
    return {
      request: (opts: RequestOptions) => {
        if ((opts.method ?? 'GET') === 'GET')
          return Promise.resolve({
            metadata: { name: 'bosun-manager', namespace: 'olm', resourceVersion: '1' },
            spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
          });
        return Promise.reject(
          new ApiError(403, 'Forbidden', JSON.stringify({ kind: 'Status', code: 403, message: refusal }), {}),
        );
      },
    } as unknown as KubeClient;
  }

  it.each([
    [
      'a hyperlink and a forged line',
      '\u001b]8;;https://evil.example\u0007me\u001b]8;;\u0007\n07:00:00.000 INFO  became the leader',
    ],
    ['a cursor move and a screen clear', 'x\u001b[2J\u001b[H\u001b[1A'],
    ['a carriage return and a bidi override', 'a\rb\u202egnidael'],
    ['a C1 control sequence', 'x\u009b31mred'],
  ])('a holder identity with %s is logged inert', async (_, hostile) => {
    const clock = new FakeClock();
    const lines: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = createLogger({ level: 'debug', format: 'text', out });
    // A holder that has written nothing for 20 s is taken over; the write is refused with the holder in the message.
    const election = managerElection({
      client: stubClient(hostile, `leases "bosun-manager" is forbidden: held by ${hostile}`),
      clock,
      log,
      globalNamespace: 'olm',
      identity: 'me',
    });
    election.start({ onStartedLeading: () => {}, onLost: () => {} });
    await settle();
    clock.advance(20_000);
    await settle();
    await election.stop();
    const text = lines.join('');
    expect(text).toContain('the leader is another manager');
    expect(text).toContain('could not read or write the leader Lease');
    // Nothing a terminal acts on; every line is a record of its own or the indented cause of one.
    // eslint-disable-next-line no-control-regex -- looking for control characters is the test
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    for (const line of text.trimEnd().split('\n')) expect(line).toMatch(/^(\d\d:\d\d:\d\d\.\d{3} | {4}\S)/);
    expect(text).not.toMatch(/^07:00:00\.000/m);
  });
});
