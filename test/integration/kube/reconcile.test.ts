import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SubscriptionConditionReason, SubscriptionConditionType } from '../../../src/apis/conditions.js';
import {
  type CatalogSource,
  Resources,
  type Subscription,
  type SubscriptionCondition,
  type SubscriptionStatus,
} from '../../../src/apis/operators.js';
import { objectKey } from '../../../src/kube/cache.js';
import { findCondition, formatTime, setCondition, statusChanged } from '../../../src/kube/conditions.js';
import { EventRecorder } from '../../../src/kube/events.js';
import { createInformer } from '../../../src/kube/informer.js';
import { WorkQueue } from '../../../src/kube/workqueue.js';
import { eventually, freshNamespace } from '../support.js';
import { connect, installOperatorCrds, sleepMs } from './helpers.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/**
 * A deliberately small controller built only from src/kube: it keeps each Subscription's
 * CatalogSourcesUnhealthy condition true to whether its CatalogSource exists, as OLM does.
 */
async function startCatalogHealthController(namespace: string) {
  const { client, applier } = connect();
  const subscriptions = createInformer<Subscription>(client, Resources.Subscription, { namespace });
  const catalogs = createInformer<CatalogSource>(client, Resources.CatalogSource, { namespace });
  const recorder = new EventRecorder({ client, instance: 'test' });
  const counts = { reconciles: 0, statusWrites: 0 };

  const queue = new WorkQueue({
    concurrency: 2,
    reconcile: async (key) => {
      counts.reconciles++;
      const sub = subscriptions.get(key);
      if (!sub) return;
      const catalogKey = `${sub.spec.sourceNamespace}/${sub.spec.source}`;
      const healthy = catalogs.get(catalogKey) !== undefined;
      const conditions = setCondition<SubscriptionCondition>(
        sub.status?.conditions,
        {
          type: SubscriptionConditionType.CatalogSourcesUnhealthy,
          status: healthy ? 'False' : 'True',
          reason: healthy
            ? SubscriptionConditionReason.AllCatalogSourcesHealthy
            : SubscriptionConditionReason.NoCatalogSourcesFound,
          message: healthy
            ? 'all available catalogsources are healthy'
            : `catalogsource ${catalogKey} not found`,
        },
        Date.now(),
      );
      const status: SubscriptionStatus = { ...sub.status, conditions, lastUpdated: formatTime(Date.now()) };
      // Level-based: every pass recomputes the status; only a real change is written.
      if (!statusChanged(sub.status, status)) return;
      counts.statusWrites++;
      await applier.applyStatus<Subscription>({
        apiVersion: sub.apiVersion,
        kind: sub.kind,
        metadata: { name: sub.metadata.name, namespace: sub.metadata.namespace },
        spec: sub.spec,
        status,
      });
      const before = findCondition(sub.status?.conditions, SubscriptionConditionType.CatalogSourcesUnhealthy);
      const after = findCondition(conditions, SubscriptionConditionType.CatalogSourcesUnhealthy)!;
      if (before?.status !== after.status) {
        if (healthy) await recorder.normal(sub, after.reason!, after.message!);
        else await recorder.warning(sub, after.reason!, after.message!);
      }
    },
  });

  subscriptions.on({
    add: (s) => queue.add(objectKey(s)),
    update: (_, s) => queue.add(objectKey(s)),
  });
  const enqueueUsers = (c: CatalogSource) => {
    for (const s of subscriptions.list(namespace)) {
      if (s.spec.source === c.metadata.name && s.spec.sourceNamespace === c.metadata.namespace)
        queue.add(objectKey(s));
    }
  };
  catalogs.on({ add: enqueueUsers, update: (_, c) => enqueueUsers(c), delete: enqueueUsers });

  subscriptions.start();
  catalogs.start();
  await Promise.all([subscriptions.synced(), catalogs.synced()]);
  queue.start();
  stops.push(async () => {
    await queue.shutdown();
    await Promise.all([subscriptions.stop(), catalogs.stop()]);
    client.close();
  });
  return { counts, queue, subscriptions };
}

describe('a work queue and informers driving a reconcile', () => {
  beforeAll(async () => {
    await installOperatorCrds();
  });

  it('keeps a condition true to the world, writes status only on change, and records events', async () => {
    const ns = await freshNamespace('reconcile');
    const { client, applier } = connect();
    const controller = await startCatalogHealthController(ns);

    await applier.apply<Subscription>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: ns },
      spec: { name: 'etcd', source: 'community', sourceNamespace: ns, channel: 'stable' },
    });
    const condition = () =>
      findCondition(
        controller.subscriptions.get(`${ns}/etcd`)?.status?.conditions,
        'CatalogSourcesUnhealthy',
      );

    const unhealthy = await eventually('CatalogSourcesUnhealthy=True', async () =>
      condition()?.status === 'True' ? condition() : undefined,
    );
    expect(unhealthy).toMatchObject({
      reason: 'NoCatalogSourcesFound',
      message: `catalogsource ${ns}/community not found`,
    });

    await applier.apply<CatalogSource>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'community', namespace: ns },
      spec: { sourceType: 'configmap', configMap: 'community-catalog' },
    });
    const healthy = await eventually('CatalogSourcesUnhealthy=False', async () =>
      condition()?.status === 'False' ? condition() : undefined,
    );
    expect(healthy).toMatchObject({ reason: 'AllCatalogSourcesHealthy' });

    // Each status write comes back as an update and is reconciled again; those passes find
    // nothing new and write nothing.
    await sleepMs(1_000);
    await controller.queue.idle();
    expect(controller.counts.statusWrites).toBe(2);
    expect(controller.counts.reconciles).toBeGreaterThan(controller.counts.statusWrites);

    const { items } = await client.request<{
      items: { type: string; reason: string; involvedObject: { name: string } }[];
    }>({
      path: `/api/v1/namespaces/${ns}/events`,
    });
    expect(items.map((e) => [e.involvedObject.name, e.type, e.reason]).sort()).toEqual([
      ['etcd', 'Normal', 'AllCatalogSourcesHealthy'],
      ['etcd', 'Warning', 'NoCatalogSourcesFound'],
    ]);
    client.close();
  });
});
