import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { KubeClient } from '../../../src/kube/client.js';
import {
  apiListerWatcher,
  createInformer,
  Informer,
  type ListerWatcher,
} from '../../../src/kube/informer.js';
import { eventually, freshNamespace } from '../support.js';
import { compactEtcd, connect, sleepMs } from './helpers.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

const configMaps = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function track(informer: Informer<ConfigMap>, client: KubeClient) {
  const seen: string[] = [];
  informer.on({
    add: (o) => seen.push(`add ${o.metadata?.name} ${JSON.stringify(o.data ?? {})}`),
    update: (_, o) => seen.push(`update ${o.metadata?.name} ${JSON.stringify(o.data ?? {})}`),
    delete: (o) => seen.push(`delete ${o.metadata?.name}`),
  });
  cleanups.push(async () => {
    await informer.stop();
    client.close();
  });
  return seen;
}

async function writeConfigMap(
  client: KubeClient,
  ns: string,
  name: string,
  data: Record<string, string>,
  create = false,
) {
  await client.request({
    method: create ? 'POST' : 'PUT',
    path: `/api/v1/namespaces/${ns}/configmaps${create ? '' : `/${name}`}`,
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data },
  });
}

const deleteConfigMap = (client: KubeClient, ns: string, name: string) =>
  client.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}/configmaps/${name}` });

describe('Informer against the API server', () => {
  it('sees adds, updates and deletes, and keeps a frozen cache', async () => {
    const { client } = connect();
    const ns = await freshNamespace('inf');
    await writeConfigMap(client, ns, 'before', { v: '0' }, true);
    const informer = createInformer<ConfigMap>(client, configMaps, { namespace: ns });
    const seen = track(informer, client);
    informer.start();
    await informer.synced();
    expect(informer.get(`${ns}/before`)?.data).toEqual({ v: '0' });

    await writeConfigMap(client, ns, 'cm', { v: '1' }, true);
    await writeConfigMap(client, ns, 'cm', { v: '2' });
    await deleteConfigMap(client, ns, 'cm');
    await eventually('the delete', async () => (seen.includes('delete cm') ? true : undefined));
    expect(seen.filter((s) => !s.includes('kube-root-ca.crt'))).toEqual([
      'add before {"v":"0"}',
      'add cm {"v":"1"}',
      'update cm {"v":"2"}',
      'delete cm',
    ]);
    expect(informer.get(`${ns}/cm`)).toBeUndefined();
    const cached = informer.get(`${ns}/before`)!;
    expect(cached.kind).toBe('ConfigMap');
    expect(() => {
      (cached.data as Record<string, string>).v = 'changed';
    }).toThrow(TypeError);
  });

  it('keeps one watch open past 60 seconds and still delivers events on it', async () => {
    const { client } = connect();
    const ns = await freshNamespace('long');
    const informer = createInformer<ConfigMap>(client, configMaps, { namespace: ns });
    const seen = track(informer, client);
    informer.start();
    await informer.synced();
    await writeConfigMap(client, ns, 'cm', { v: '1' }, true);
    await eventually('the add', async () => (seen.includes('add cm {"v":"1"}') ? true : undefined));

    await sleepMs(65_000);
    await writeConfigMap(client, ns, 'cm', { v: '2' });
    await eventually('the update after 65 s', async () =>
      seen.includes('update cm {"v":"2"}') ? true : undefined,
    );
    expect(informer.stats()).toEqual({ lists: 1, watches: 1, expired: 0, stalls: 0, failures: 0 });
  }, 120_000);

  it('relists when a watch has been silent past the stall timeout, and goes on delivering events', async () => {
    const { client } = connect();
    const ns = await freshNamespace('stall');
    const informer = createInformer<ConfigMap>(client, configMaps, { namespace: ns, stallTimeoutMs: 1_500 });
    const seen = track(informer, client);
    informer.start();
    await informer.synced();
    await eventually('a watchdog relist', async () => (informer.stats().lists >= 2 ? true : undefined));
    expect(informer.stats().stalls).toBeGreaterThanOrEqual(1);
    expect(informer.stats().failures).toBe(0);
    await writeConfigMap(client, ns, 'after-stall', { v: '1' }, true);
    await eventually('the add after the relist', async () =>
      seen.includes('add after-stall {"v":"1"}') ? true : undefined,
    );
  });

  it('relists on 410 Expired and reports what changed while it could not watch', async (ctx) => {
    // Events bypass the API server's watch cache, so a watch from a version etcd has compacted
    // away gets the real 410 Expired, as any watch does after a long enough disconnect.
    const events = { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true };
    const { client } = connect();
    const ns = await freshNamespace('gone');
    const createEvent = (name: string) =>
      client.request<KubeObject>({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/events`,
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name },
          involvedObject: { kind: 'ConfigMap', name: 'x', namespace: ns },
          reason: 'Test',
          message: name,
        },
      });
    const real = apiListerWatcher<KubeObject>(client, events, { namespace: ns });
    let first = true;
    let compacted = true;
    const lw: ListerWatcher<KubeObject> = {
      list: () => real.list(),
      async watch(rv, signal, onEvent) {
        if (first) {
          first = false;
          await createEvent('created-while-blind');
          // Compact past the informer's version: etcd keeps the revision it compacts at.
          const later = await createEvent('written-later');
          compacted = await compactEtcd(later.metadata!.resourceVersion!);
        }
        return real.watch(rv, signal, onEvent);
      },
    };
    const informer = new Informer<KubeObject>({ listerWatcher: lw, name: 'events' });
    const seen = track(informer as Informer<ConfigMap>, client);
    informer.start();
    await eventually('the event created while blind', async () =>
      seen.includes('add created-while-blind {}') ? true : undefined,
    );
    if (!compacted) ctx.skip('needs the local control plane, whose etcd the test compacts');
    expect(informer.stats()).toMatchObject({ expired: 1, lists: 2, failures: 0 });
    await createEvent('after-relist');
    await eventually('the add on the new watch', async () =>
      seen.includes('add after-relist {}') ? true : undefined,
    );
  });

  it('filters by label selector', async () => {
    const { client } = connect();
    const ns = await freshNamespace('sel');
    const informer = createInformer<ConfigMap>(client, configMaps, {
      namespace: ns,
      labelSelector: 'pick=me',
    });
    const seen = track(informer, client);
    informer.start();
    await informer.synced();
    for (const [name, labels] of [
      ['skipped', {}],
      ['picked', { pick: 'me' }],
    ] as const) {
      await client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/configmaps`,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels } },
      });
    }
    await eventually('the picked add', async () =>
      seen.some((s) => s.startsWith('add picked')) ? true : undefined,
    );
    expect(informer.list(ns).map((o) => o.metadata?.name)).toEqual(['picked']);
  });
});
