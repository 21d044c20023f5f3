import { ApiError } from '../../../src/kube/client.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import {
  Informer,
  type ListerWatcher,
  type ListResult,
  type WatchEvent,
} from '../../../src/kube/informer.js';
import { FakeClock, settle } from './fake-clock.js';

type Obj = KubeObject & { data?: Record<string, string> };

const cm = (name: string, rv: string, data: Record<string, string> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
  data,
});

interface OpenWatch {
  resourceVersion: string;
  emit(event: WatchEvent<Obj>): void;
  /** The server ends the watch normally. */
  close(): void;
  fail(err: unknown): void;
  aborted: boolean;
}

/** A ListerWatcher the test drives: it answers lists from a script and opens watches on demand. */
class ScriptedListerWatcher implements ListerWatcher<Obj> {
  lists: (() => Promise<ListResult<Obj>>)[] = [];
  listCalls = 0;
  watches: OpenWatch[] = [];

  list(): Promise<ListResult<Obj>> {
    this.listCalls++;
    const next = this.lists.shift();
    if (!next) return Promise.reject(new Error('no list scripted'));
    return next();
  }

  watch(resourceVersion: string, signal: AbortSignal, onEvent: (e: WatchEvent<Obj>) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const w: OpenWatch = {
        resourceVersion,
        emit: onEvent,
        close: resolve,
        fail: reject,
        aborted: false,
      };
      signal.addEventListener('abort', () => {
        w.aborted = true;
        reject(new Error('aborted'));
      });
      this.watches.push(w);
    });
  }

  get current(): OpenWatch {
    return this.watches.at(-1)!;
  }

  answer(items: Obj[], resourceVersion: string): void {
    this.lists.push(async () => ({ items: items.map((o) => structuredClone(o)), resourceVersion }));
  }
}

const gone = () =>
  new ApiError(
    410,
    'Gone',
    JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }),
    {},
  );

const informers: Informer<Obj>[] = [];
afterEach(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
});

function setup(opts: { stallTimeoutMs?: number } = {}) {
  const clock = new FakeClock();
  const lw = new ScriptedListerWatcher();
  const seen: string[] = [];
  const errors: [unknown, string][] = [];
  const informer = new Informer<Obj>({
    listerWatcher: lw,
    name: 'configmaps',
    clock,
    random: () => 0.5,
    backoff: { baseMs: 250, maxMs: 2_000, jitter: 0.5 },
    stallTimeoutMs: opts.stallTimeoutMs ?? 60_000,
    onError: (e, during) => errors.push([e, during]),
  });
  informer.on({
    add: (o) => seen.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
    update: (old, o) =>
      seen.push(
        `update ${o.metadata?.name}@${old.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`,
      ),
    delete: (o) => seen.push(`delete ${o.metadata?.name}`),
  });
  informers.push(informer);
  return { clock, lw, seen, errors, informer };
}

describe('Informer', () => {
  it('lists, then watches from the list’s resourceVersion, and tells handlers about every change', async () => {
    const { lw, seen, informer } = setup();
    lw.answer([cm('a', '10')], '12');
    informer.start();
    await informer.synced();
    await settle();
    expect(lw.current.resourceVersion).toBe('12');
    lw.current.emit({ type: 'ADDED', object: cm('b', '13') });
    lw.current.emit({ type: 'MODIFIED', object: cm('a', '14', { k: 'v' }) });
    lw.current.emit({ type: 'DELETED', object: cm('b', '15') });
    expect(seen).toEqual(['add a@10', 'add b@13', 'update a@10->14', 'delete b']);
    expect(informer.get('ns/a')?.data).toEqual({ k: 'v' });
    expect(informer.get('ns/b')).toBeUndefined();
    expect(informer.lastResourceVersion()).toBe('15');
  });

  it('follows bookmarks and starts the next watch where the last one ended when the server closes it', async () => {
    const { lw, informer } = setup();
    lw.answer([], '1');
    informer.start();
    await settle();
    lw.current.emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '40' } } });
    lw.current.close();
    await settle();
    expect(lw.watches.map((w) => w.resourceVersion)).toEqual(['1', '40']);
    expect(informer.stats()).toMatchObject({ lists: 1, watches: 2, failures: 0 });
  });

  it('relists on a 410 ERROR event and reports what changed meanwhile, deletions included', async () => {
    const { lw, seen, informer } = setup();
    lw.answer([cm('a', '1'), cm('b', '1')], '5');
    informer.start();
    await settle();
    lw.answer([cm('a', '9'), cm('c', '8')], '10');
    lw.current.emit({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' },
    });
    await settle();
    expect(seen).toEqual(['add a@1', 'add b@1', 'update a@1->9', 'add c@8', 'delete b']);
    expect(lw.current.resourceVersion).toBe('10');
    expect(informer.stats()).toMatchObject({ lists: 2, expired: 1, failures: 0 });
  });

  it('relists at once when the watch request itself answers 410 Gone', async () => {
    const { lw, clock, informer } = setup();
    lw.answer([], '5');
    informer.start();
    await settle();
    lw.answer([], '20');
    lw.current.fail(gone());
    await settle();
    expect(clock.pendingDelays().filter((d) => d < 60_000)).toEqual([]);
    expect(lw.listCalls).toBe(2);
    expect(lw.current.resourceVersion).toBe('20');
  });

  it('after an API server restart, resumes from its version until answered 410, then relists (retrying a failed list) and never watches from the expired version again', async () => {
    const { lw, clock, seen, errors, informer } = setup();
    const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    lw.answer([cm('a', '1'), cm('b', '1')], '5');
    informer.start();
    await settle();
    // The API server goes away: the open watch breaks, the next attempt is refused.
    lw.current.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await settle();
    clock.advance(250);
    await settle();
    lw.current.fail(refused());
    await settle();
    expect(clock.pendingDelays().filter((d) => d < 60_000)).toEqual([500]);
    clock.advance(500);
    await settle();
    // Back, with a watch cache that starts after version 5: the resumed watch has expired.
    lw.lists.push(() => Promise.reject(refused()));
    lw.current.fail(gone());
    await settle();
    expect(lw.listCalls).toBe(2);
    // That relist failed (a moment's unavailability): it backs off and lists again, not watches.
    expect(clock.pendingDelays().filter((d) => d < 60_000)).toEqual([1_000]);
    lw.answer([cm('a', '9')], '30');
    clock.advance(1_000);
    await settle();
    expect(lw.listCalls).toBe(3);
    expect(lw.watches.map((w) => w.resourceVersion)).toEqual(['5', '5', '5', '30']);
    expect(seen).toEqual(['add a@1', 'add b@1', 'update a@1->9', 'delete b']);
    expect(errors.map(([, during]) => during)).toEqual(['watch', 'watch', 'list']);
    expect(informer.stats()).toMatchObject({ lists: 2, expired: 1, failures: 3 });
  });

  it('restarts a failed watch after a jittered backoff, from the same version, without relisting', async () => {
    const { lw, clock, errors, informer } = setup();
    lw.answer([], '5');
    informer.start();
    await settle();
    lw.current.emit({ type: 'ADDED', object: cm('a', '6') });
    lw.current.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await settle();
    expect(lw.watches).toHaveLength(1);
    expect(clock.pendingDelays()).toEqual([250]);
    clock.advance(250);
    await settle();
    expect(lw.watches.map((w) => w.resourceVersion)).toEqual(['5', '6']);
    expect(lw.listCalls).toBe(1);
    expect(errors.map(([e, during]) => [(e as Error).message, during])).toEqual([
      ['socket hang up', 'watch'],
    ]);
  });

  it('backs off more after each failure in a row, up to the maximum, and starts over after a success', async () => {
    const { lw, clock, informer } = setup();
    informer.start();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      await settle();
      delays.push(clock.pendingDelays()[0]!);
      clock.advance(delays.at(-1)!);
    }
    expect(delays).toEqual([250, 500, 1_000, 2_000, 2_000]);
    lw.answer([], '1');
    await settle();
    expect(informer.hasSynced()).toBe(true);
    lw.current.fail(new Error('reset'));
    await settle();
    expect(clock.pendingDelays()).toEqual([250]);
  });

  it('treats an ERROR event other than 410 as a failure', async () => {
    const { lw, clock, errors, informer } = setup();
    lw.answer([], '5');
    informer.start();
    await settle();
    lw.current.emit({
      type: 'ERROR',
      object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd' },
    });
    await settle();
    expect(lw.current.aborted).toBe(true);
    expect(clock.pendingDelays()).toEqual([250]);
    expect(String(errors[0]?.[0])).toContain('etcd');
  });

  it('backs off when the server ends watches at once with nothing in them', async () => {
    const { lw, clock, informer } = setup();
    lw.answer([], '5');
    informer.start();
    await settle();
    lw.current.close();
    await settle();
    expect(lw.watches).toHaveLength(1);
    expect(clock.pendingDelays()).toEqual([250]);
  });

  it('relists when a watch stays silent past the stall timeout; events keep it alive', async () => {
    const { lw, clock, informer } = setup({ stallTimeoutMs: 60_000 });
    lw.answer([], '5');
    informer.start();
    await settle();
    clock.advance(59_000);
    lw.current.emit({ type: 'ADDED', object: cm('a', '6') });
    clock.advance(59_000);
    await settle();
    expect(lw.current.aborted).toBe(false);
    lw.answer([cm('a', '6')], '30');
    clock.advance(1_000);
    await settle();
    expect(lw.watches[0]?.aborted).toBe(true);
    expect(informer.stats()).toMatchObject({ stalls: 1, lists: 2 });
    expect(lw.current.resourceVersion).toBe('30');
  });

  it('keeps telling other handlers when one throws', async () => {
    const { lw, seen, errors, informer } = setup();
    informer.on({
      add: () => {
        throw new Error('handler bug');
      },
    });
    lw.answer([cm('a', '1')], '1');
    informer.start();
    await settle();
    lw.current.emit({ type: 'ADDED', object: cm('b', '2') });
    expect(seen).toEqual(['add a@1', 'add b@2']);
    expect(errors.map(([, during]) => during)).toEqual(['handler', 'handler']);
  });

  it('gives handlers frozen objects', async () => {
    const { lw, informer } = setup();
    const caught: unknown[] = [];
    informer.on({
      add: (o) => {
        try {
          (o.data as Record<string, string>).k = 'changed';
        } catch (err) {
          caught.push(err);
        }
      },
    });
    lw.answer([cm('a', '1', { k: 'v' })], '1');
    informer.start();
    await settle();
    expect(caught[0]).toBeInstanceOf(TypeError);
    expect(informer.get('ns/a')?.data).toEqual({ k: 'v' });
  });

  it('stops: ends the watch, the loop, and waiting for sync', async () => {
    const { lw, informer } = setup();
    informer.start();
    const waiting = informer.synced();
    await informer.stop();
    await expect(waiting).rejects.toThrow(/stopped before it synced/);
    const watchesAtStop = lw.watches.length;
    await settle();
    expect(lw.watches).toHaveLength(watchesAtStop);
  });
});
