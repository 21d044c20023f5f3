import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstallPlan, Subscription, SubscriptionCondition } from '../../../src/apis/operators.js';
import { catalogSourceController } from '../../../src/controllers/catalogsource.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { subscriptionController } from '../../../src/controllers/subscription.js';
import { generatedSubscriptionName } from '../../../src/controllers/subscription-plan.js';
import { eventually, freshNamespace } from '../support.js';
import { testCatalogJson } from './fixtures.js';
import {
  ConfigMapResource,
  catalogSource,
  create,
  eventsFor,
  get,
  list,
  mergePatch,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

// Only the catalog and Subscription controllers run here: InstallPlans stay as the Subscription
// controller created them, so what is asserted is its work alone.
const mine = [catalogSourceController, subscriptionController];
let manager: RunningManager;

beforeAll(async () => {
  manager = await startTestManager(mine);
});
afterAll(async () => {
  await manager?.stop();
});

const condition = (sub: Subscription | undefined, type: string): SubscriptionCondition | undefined =>
  sub?.status?.conditions?.find((c) => c.type === type);

/** A namespace with the test catalog as CatalogSource `test` (configmap). */
async function namespaceWithCatalog(): Promise<string> {
  const ns = await freshNamespace('sub');
  await create(ConfigMapResource, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'catalog' },
    data: { 'catalog.json': testCatalogJson },
  } as never);
  await create(
    Resources.CatalogSource,
    ns,
    catalogSource(ns, 'test', { sourceType: 'configmap', configMap: 'catalog' }),
  );
  return ns;
}

const plansOf = async (ns: string) => list<InstallPlan>(Resources.InstallPlan, ns);

describe('Subscription controller', () => {
  it('a Subscription creates exactly one InstallPlan for the channel head, owned by it', async () => {
    const ns = await namespaceWithCatalog();
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'foo', { name: 'foo', source: 'test', channel: 'stable' }),
    );
    const sub = await eventually('the Subscription to reference an InstallPlan', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'foo');
      return s?.status?.installPlanRef ? s : undefined;
    });
    expect(sub.status).toMatchObject({ currentCSV: 'foo.v0.2.0', state: 'UpgradePending' });
    expect(sub.status?.installedCSV).toBeUndefined();
    expect(condition(sub, 'CatalogSourcesUnhealthy')).toMatchObject({
      status: 'False',
      reason: 'AllCatalogSourcesHealthy',
    });
    expect(condition(sub, 'ResolutionFailed')).toBeUndefined();
    expect(sub.status?.catalogHealth).toEqual([
      expect.objectContaining({
        catalogSourceRef: expect.objectContaining({ name: 'test', namespace: ns }),
        healthy: true,
      }),
    ]);

    await manager.idle();
    const plans = await plansOf(ns);
    expect(plans).toHaveLength(1);
    const ip = plans[0]!;
    expect(ip.metadata.name).toBe(sub.status?.installPlanRef?.name);
    expect(ip.spec).toMatchObject({
      clusterServiceVersionNames: ['foo.v0.2.0'],
      approval: 'Automatic',
      approved: true,
      source: 'test',
      sourceNamespace: ns,
    });
    expect(ip.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Subscription', name: 'foo', uid: sub.metadata.uid }),
    ]);
    expect(ip.metadata.labels?.['operators.coreos.com/subscription']).toBe('foo');
    expect((await eventsFor(ns, 'foo')).map((e) => e.reason)).toContain('InstallPlanCreated');
  });

  it('a Manual Subscription waits for approval while an Automatic neighbour proceeds', async () => {
    const ns = await namespaceWithCatalog();
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'foo', { name: 'foo', source: 'test', installPlanApproval: 'Manual' }),
    );
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'qux', { name: 'qux', source: 'test', installPlanApproval: 'Automatic' }),
    );
    const manual = await eventually('the Manual Subscription to wait for approval', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'foo');
      return condition(s, 'InstallPlanPending')?.reason === 'RequiresApproval' ? s : undefined;
    });
    expect(condition(manual, 'InstallPlanPending')?.message).toContain('spec.approved');
    const auto = await eventually('the Automatic Subscription to have its plan', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'qux');
      return s?.status?.installPlanRef ? s : undefined;
    });
    expect(condition(auto, 'InstallPlanPending')?.reason).not.toBe('RequiresApproval');

    const plans = await plansOf(ns);
    expect(plans).toHaveLength(2);
    const byCsv = new Map(plans.map((p) => [p.spec.clusterServiceVersionNames[0], p]));
    expect(byCsv.get('foo.v0.2.0')?.spec).toMatchObject({ approval: 'Manual', approved: false });
    expect(byCsv.get('qux.v1.0.0')?.spec).toMatchObject({ approval: 'Automatic', approved: true });

    // Approving the plan is all it takes; the Subscription stops saying it needs approval.
    await mergePatch(Resources.InstallPlan, ns, byCsv.get('foo.v0.2.0')!.metadata.name!, {
      spec: { approved: true },
    });
    await eventually('RequiresApproval to clear', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'foo');
      return condition(s, 'InstallPlanPending')?.reason !== 'RequiresApproval' ? s : undefined;
    });
    await manager.idle();
    expect(await plansOf(ns)).toHaveLength(2);
  });

  it('a dependency gets a generated Subscription that inherits the approval of the one needing it', async () => {
    const ns = await namespaceWithCatalog();
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'bar', { name: 'bar', source: 'test', installPlanApproval: 'Manual' }),
    );
    const name = generatedSubscriptionName('foo', 'stable', 'test', ns);
    const generated = await eventually('the generated Subscription', () =>
      get<Subscription>(Resources.Subscription, ns, name),
    );
    expect(generated.spec).toMatchObject({
      name: 'foo',
      channel: 'stable',
      source: 'test',
      sourceNamespace: ns,
      installPlanApproval: 'Manual',
    });
    const plans = await eventually('an InstallPlan for each', async () => {
      const p = await plansOf(ns);
      return p.length === 2 ? p : undefined;
    });
    expect(plans.map((p) => p.spec.clusterServiceVersionNames[0]).sort()).toEqual([
      'bar.v1.0.0',
      'foo.v0.2.0',
    ]);
    expect(plans.every((p) => p.spec.approval === 'Manual' && !p.spec.approved)).toBe(true);
    expect((await eventsFor(ns, 'bar')).map((e) => e.reason)).toContain('DependencySubscriptionCreated');
  });

  it('an unsatisfiable Subscription shows ResolutionFailed with the explanation, and no InstallPlan', async () => {
    const ns = await namespaceWithCatalog();
    await create(Resources.Subscription, ns, subscription(ns, 'baz', { name: 'baz', source: 'test' }));
    const sub = await eventually('ResolutionFailed', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'baz');
      return condition(s, 'ResolutionFailed')?.status === 'True' ? s : undefined;
    });
    const failed = condition(sub, 'ResolutionFailed')!;
    expect(failed.reason).toBe('ConstraintsNotSatisfiable');
    expect(failed.message).toContain('baz.v1.0.0 requires package nothere');
    expect(failed.message).toContain('What was tried');
    await manager.idle();
    expect(await plansOf(ns)).toHaveLength(0);
    expect(
      (await eventsFor(ns, 'baz')).some((e) => e.type === 'Warning' && e.reason === 'ResolutionFailed'),
    ).toBe(true);
  });

  it('a Subscription to a catalog that does not exist names the catalog to create', async () => {
    const ns = await freshNamespace('sub');
    await create(Resources.Subscription, ns, subscription(ns, 'foo', { name: 'foo', source: 'nowhere' }));
    const sub = await eventually('CatalogSourcesUnhealthy', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'foo');
      return condition(s, 'CatalogSourcesUnhealthy')?.status === 'True' ? s : undefined;
    });
    expect(condition(sub, 'CatalogSourcesUnhealthy')?.message).toContain(`CatalogSource ${ns}/nowhere`);
    expect(condition(sub, 'ResolutionFailed')?.message).toContain('nowhere');
  });

  it('a catalog that goes away and comes back leaves no stale condition', async () => {
    const ns = await freshNamespace('sub');
    const failing = { on: false };
    const server: Server = createServer((_req, res) => {
      if (failing.on) res.writeHead(500).end('broken');
      else res.writeHead(200).end(testCatalogJson);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalog`;
      await create(
        Resources.CatalogSource,
        ns,
        catalogSource(ns, 'web', {
          sourceType: 'http',
          address: url,
          updateStrategy: { registryPoll: { interval: '1s' } },
        }),
      );
      await create(Resources.Subscription, ns, subscription(ns, 'qux', { name: 'qux', source: 'web' }));
      await eventually('the InstallPlan', async () => {
        const s = await get<Subscription>(Resources.Subscription, ns, 'qux');
        return s?.status?.installPlanRef ? s : undefined;
      });

      failing.on = true;
      const broken = await eventually('CatalogSourcesUnhealthy=True', async () => {
        const s = await get<Subscription>(Resources.Subscription, ns, 'qux');
        return condition(s, 'CatalogSourcesUnhealthy')?.status === 'True' ? s : undefined;
      });
      expect(condition(broken, 'CatalogSourcesUnhealthy')).toMatchObject({
        reason: 'UnhealthyCatalogSourceFound',
      });
      expect(condition(broken, 'CatalogSourcesUnhealthy')?.message).toContain('HTTP 500');
      expect(broken.status?.catalogHealth?.[0]?.healthy).toBe(false);
      // The last good content is still used: resolution does not fail meanwhile.
      expect(condition(broken, 'ResolutionFailed')).toBeUndefined();

      failing.on = false;
      const healed = await eventually('CatalogSourcesUnhealthy=False', async () => {
        const s = await get<Subscription>(Resources.Subscription, ns, 'qux');
        return condition(s, 'CatalogSourcesUnhealthy')?.status === 'False' ? s : undefined;
      });
      expect(healed.status?.conditions?.filter((c) => c.status === 'True')).toEqual([
        expect.objectContaining({ type: 'InstallPlanPending' }),
      ]);
      expect(healed.status?.catalogHealth?.[0]?.healthy).toBe(true);
      await manager.idle();
      expect(await plansOf(ns)).toHaveLength(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('restarting the manager mid-way creates no duplicate InstallPlans', async () => {
    const ns = await namespaceWithCatalog();
    for (const pkg of ['foo', 'qux', 'bar']) {
      await create(Resources.Subscription, ns, subscription(ns, pkg, { name: pkg, source: 'test' }));
    }
    // Stop as soon as the first plan exists, while the rest of the namespace is still being worked on.
    await eventually(
      'a first InstallPlan',
      async () => ((await plansOf(ns)).length > 0 ? true : undefined),
      60_000,
    );
    await manager.stop();
    manager = await startTestManager(mine);
    await eventually('every Subscription to reference its plan', async () => {
      const subs = await list<Subscription>(Resources.Subscription, ns);
      return subs.length === 3 && subs.every((s) => s.status?.installPlanRef) ? subs : undefined;
    });
    await manager.stop();
    manager = await startTestManager(mine);
    await eventually('the manager to settle', async () => (manager.ready() ? true : undefined));
    await manager.idle();
    const plans = await plansOf(ns);
    const csvs = plans.map((p) => p.spec.clusterServiceVersionNames[0]).sort();
    expect(csvs).toEqual(['bar.v1.0.0', 'foo.v0.2.0', 'qux.v1.0.0']);
  });
});
