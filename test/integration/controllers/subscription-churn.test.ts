/**
 * What the HA soak's Subscription churn found (test/bench/ha.bench.ts), reproduced one moment at a
 * time: the whole manager runs, with its InstallPlan or CSV controller held at the point where
 * the soak's timing hit, so that each case happens on every run instead of once in thirty minutes.
 * - An unsubscribe (the Subscription deleted, then its CSVs) while the Subscription's InstallPlan
 *   runs, or is about to run, must stay final: nothing of that plan may create a CSV afterwards.
 * - Versions published while an upgrade is in flight make a chain of CSVs (each replacing the one
 *   before); retiring it must not leave its oldest CSV behind, which held the Subscription's
 *   next upgrade back for good.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import type { Controller } from '../../../src/controllers/context.js';
import { csvController } from '../../../src/controllers/csv.js';
import { installPlanController } from '../../../src/controllers/installplan.js';
import { controllers, type RunningManager } from '../../../src/manager/manager.js';
import { splitKey } from '../../../src/kube/cache.js';
import { Builtin } from '../../../src/kube/resources.js';
import { gadgetCrd, operatorDeployment, replacesChain } from '../../support/operator-objects.js';
import { eventually } from '../support.js';
import {
  ConfigMapResource,
  create,
  get,
  list,
  mergePatch,
  namespaceWithCatalog,
  remove,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

const pkg = 'churnpkg';
const group = 'churn.bosun.dev';
const version = (i: number) => `1.${i}.0`;
const csvName = (i: number) => `${pkg}.v${version(i)}`;
const image = (i: number) => `registry.example/${pkg}:${version(i)}`;

/**
 * The soak's package: versions 1.0.0 … 1.n.0 in one channel, each replacing the one before, all
 * with the same Deployment. A version in `stuck` never becomes available (its Pod selects a node
 * that does not exist), so an upgrade to it stays in flight.
 */
function catalog(n: number, stuck: ReadonlySet<number> = new Set()): string {
  return replacesChain(pkg, group, n, (i) => {
    const deployment = operatorDeployment(pkg, pkg, pkg, image(i));
    if (stuck.has(i))
      Object.assign(deployment.spec.template.spec, {
        nodeSelector: { 'churn.bosun.dev/no-such-node': 'true' },
      });
    return deployment;
  });
}

/** Where a held controller stops: before a plan's reconcile starts, or before it applies its CSV. */
type HoldPoint = 'reconcile' | 'csv';

interface Hold {
  namespace: string;
  at: HoldPoint;
  /** What the test does while the controller is held. */
  meanwhile: () => Promise<void>;
  /** Settles once the held reconcile has finished. */
  finished: PromiseWithResolvers<void>;
}

const holds: Hold[] = [];
/** A finalizer of the test's own, which keeps an object there while it is being deleted. */
const holdFinalizer = 'churn.bosun.dev/hold';

function takeHold(namespace: string, at: HoldPoint): Hold | undefined {
  const i = holds.findIndex((h) => h.namespace === namespace && h.at === at);
  return i < 0 ? undefined : holds.splice(i, 1)[0];
}

/** Holds the InstallPlan controller once at `at` in `namespace`, runs `meanwhile`, then lets it go on. */
function holdInstallPlan(namespace: string, at: HoldPoint, meanwhile: () => Promise<void>): Hold {
  const hold: Hold = { namespace, at, meanwhile, finished: Promise.withResolvers<void>() };
  holds.push(hold);
  return hold;
}

/**
 * The InstallPlan controller, held where a test asks. Held before a reconcile, it then runs with
 * the plan as its cache had it before the hold: a cache that has not seen the plan's deletion
 * yet, as happens when the garbage collector deletes it just after the reconcile has begun.
 */
const heldInstallPlans: typeof installPlanController = {
  ...installPlanController,
  reconcile: (ctx) => {
    const stale = new Map<string, InstallPlan>();
    const installPlans = new Proxy(ctx.informers.installPlans, {
      get: (target, p) =>
        p === 'get'
          ? (key: string) => stale.get(key) ?? target.get(key)
          : (Reflect.get(target, p) as unknown) instanceof Function
            ? (Reflect.get(target, p) as (...a: unknown[]) => unknown).bind(target)
            : Reflect.get(target, p),
    });
    const informers = new Proxy(ctx.informers, {
      get: (target, p) => (p === 'installPlans' ? installPlans : Reflect.get(target, p)),
    });
    const applier = new Proxy(ctx.applier, {
      get: (target, p) => {
        const value = Reflect.get(target, p) as unknown;
        if (p !== 'apply') return value instanceof Function ? value.bind(target) : value;
        return async (object: KubeObject, ...rest: unknown[]) => {
          const hold =
            object.kind === 'ClusterServiceVersion'
              ? takeHold(object.metadata?.namespace ?? '', 'csv')
              : undefined;
          if (hold) await hold.meanwhile();
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).call(target, object, ...rest);
          } finally {
            if (hold) setTimeout(() => hold.finished.resolve(), 0);
          }
        };
      },
    });
    const held = new Proxy(ctx, {
      get: (target, p, receiver) =>
        p === 'informers' ? informers : p === 'applier' ? applier : Reflect.get(target, p, receiver),
    });
    const inner = installPlanController.reconcile(held);
    return async (key) => {
      const hold = takeHold(splitKey(key).namespace ?? '', 'reconcile');
      if (!hold) return inner(key);
      const before = ctx.informers.installPlans.get(key);
      if (before) stale.set(key, before);
      await hold.meanwhile();
      try {
        return await inner(key);
      } finally {
        stale.delete(key);
        hold.finished.resolve();
      }
    };
  },
};

/** CSV reconciles held per key until `until` says so (or `maxMs` passed). */
const csvHolds = new Map<string, { until: () => Promise<boolean>; maxMs: number; released: boolean }>();

const heldCSVs: typeof csvController = {
  ...csvController,
  reconcile: (ctx) => {
    const inner = csvController.reconcile(ctx);
    return async (key) => {
      const hold = csvHolds.get(key);
      if (hold && !hold.released) {
        const deadline = Date.now() + hold.maxMs;
        while (Date.now() < deadline && !(await hold.until())) await new Promise((r) => setTimeout(r, 100));
        hold.released = true;
      }
      return inner(key);
    };
  },
};

const mine: Controller[] = controllers.map((c) =>
  c === installPlanController ? heldInstallPlans : c === csvController ? heldCSVs : c,
) as Controller[];

let manager: RunningManager;
beforeAll(async () => {
  // The package's CRD, Established before any plan applies it, so that no plan stops to wait
  // for it where a test holds it.
  await create(Builtin.CustomResourceDefinition, '', gadgetCrd(group)).catch(() => undefined);
  await eventually('the CRD to be Established', async () => {
    const crd = await get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
      Builtin.CustomResourceDefinition,
      '',
      `gadgets.${group}`,
    );
    return crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')
      ? true
      : undefined;
  });
  manager = await startTestManager(mine);
});
afterAll(async () => {
  await manager?.stop();
});

const subscribe = (ns: string) =>
  create(
    Resources.Subscription,
    ns,
    subscription(ns, pkg, { name: pkg, source: 'churn', channel: 'stable', sourceNamespace: ns }),
  );

/** The soak's unsubscribe, as OLM documents it: the Subscription, then every CSV of the namespace. */
async function unsubscribe(ns: string): Promise<void> {
  await remove(Resources.Subscription, ns, pkg);
  await eventually('the Subscription to be gone', async () =>
    (await get(Resources.Subscription, ns, pkg)) ? undefined : true,
  );
  for (const c of await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns))
    await remove(Resources.ClusterServiceVersion, ns, c.metadata.name ?? '');
}

const names = async (ns: string) =>
  (await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns)).map((c) => c.metadata.name).sort();

/** Nothing of the package left in the namespace: no CSV, Deployment, ServiceAccount or InstallPlan. */
async function nothingLeft(ns: string): Promise<string[]> {
  const left = [
    ...(await names(ns)).map((n) => `CSV ${n}`),
    ...(await list(Builtin.Deployment, ns)).map((d) => `Deployment ${d.metadata?.name}`),
    ...(await list(Resources.InstallPlan, ns)).map((p) => `InstallPlan ${p.metadata?.name}`),
    ...((await get(Builtin.ServiceAccount, ns, pkg)) ? [`ServiceAccount ${pkg}`] : []),
  ];
  return left;
}

/** Waits until nothing of the package is left, then checks that it stays so once the manager is idle. */
async function staysUnsubscribed(ns: string): Promise<void> {
  let left: string[] = [];
  await eventually(
    'nothing of the unsubscribed package to be left',
    async () => ((left = await nothingLeft(ns)).length === 0 ? true : undefined),
    // The garbage collector of a control plane just started takes some 20 s to delete anything.
    60_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; left in ${ns}: ${left.join(', ')}`);
  });
  await manager.idle();
  await new Promise((r) => setTimeout(r, 2_000));
  await manager.idle();
  expect(await nothingLeft(ns)).toEqual([]);
}

const publish = (ns: string, text: string) =>
  mergePatch(ConfigMapResource, ns, 'churn-catalog', { data: { 'catalog.json': text } });

const csvIn = (ns: string, name: string, phase: string, timeoutMs = 90_000) =>
  eventually(
    `${name} to be ${phase}`,
    async () => {
      const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, name);
      return c?.status?.phase === phase ? c : undefined;
    },
    timeoutMs,
  );

describe('Subscription churn', () => {
  it('an unsubscribe while the InstallPlan applies its steps is final: the CSV it creates meanwhile is deleted again', async () => {
    const ns = await namespaceWithCatalog('churn-run', catalog(0), 'churn');
    // Held just before the CSV is applied: the user unsubscribes there, finding no CSV to delete.
    const hold = holdInstallPlan(ns, 'csv', () => unsubscribe(ns));
    await subscribe(ns);
    await hold.finished.promise;
    await staysUnsubscribed(ns);
  });

  it('an unsubscribe just before the InstallPlan runs is final: the plan applies nothing', async () => {
    const ns = await namespaceWithCatalog('churn-start', catalog(0), 'churn');
    // Held before the plan's first reconcile, which then reads the plan as its cache had it:
    // approved, not yet being deleted, while the Subscription is gone and the garbage collector
    // has begun to delete the plan (a finalizer keeps it there, as the moment before the
    // collector gets to it would).
    const hold = holdInstallPlan(ns, 'reconcile', async () => {
      const [plan] = await list<InstallPlan>(Resources.InstallPlan, ns);
      await mergePatch(Resources.InstallPlan, ns, plan!.metadata.name!, {
        metadata: { finalizers: [holdFinalizer] },
      });
      await unsubscribe(ns);
      await eventually('the garbage collector to delete the InstallPlan', async () => {
        const p = await get<InstallPlan>(Resources.InstallPlan, ns, plan!.metadata.name!);
        return p?.metadata.deletionTimestamp ? true : undefined;
      });
    });
    await subscribe(ns);
    await hold.finished.promise;
    // Right after that reconcile: it wrote nothing, not even the plan's ServiceAccount.
    const left = await nothingLeft(ns);
    for (const p of await list<InstallPlan>(Resources.InstallPlan, ns))
      await mergePatch(Resources.InstallPlan, ns, p.metadata.name!, { metadata: { finalizers: null } });
    expect(left.filter((o) => !o.startsWith('InstallPlan '))).toEqual([]);
    await staysUnsubscribed(ns);
  });

  it('a Subscription deleted and made again while its old plan runs gets its operator from its own plan', async () => {
    const ns = await namespaceWithCatalog('churn-again', catalog(0), 'churn');
    const hold = holdInstallPlan(ns, 'csv', async () => {
      await unsubscribe(ns);
      await subscribe(ns);
    });
    await subscribe(ns);
    await hold.finished.promise;
    await csvIn(ns, csvName(0), 'Succeeded');
    const sub = await eventually('the new Subscription to be AtLatestKnown', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, pkg);
      return s?.status?.state === 'AtLatestKnown' ? s : undefined;
    });
    expect(sub.status?.installedCSV).toBe(csvName(0));
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans.map((p) => p.metadata.ownerReferences?.[0]?.uid)).toEqual([sub.metadata.uid]);
    expect(await names(ns)).toEqual([csvName(0)]);
  });

  it('a chain of upgrades is retired from its oldest CSV, so the next upgrade is not held back', async () => {
    const ns = await namespaceWithCatalog('churn-chain', catalog(0), 'churn');
    await subscribe(ns);
    await csvIn(ns, csvName(0), 'Succeeded');
    // 1.1.0 never becomes available: the upgrade to it is in flight when 1.2.0 is published.
    const stuck = new Set([1]);
    await publish(ns, catalog(1, stuck));
    await csvIn(ns, csvName(0), 'Replacing');
    await eventually(`${csvName(1)} to be installing`, async () => {
      const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csvName(1));
      return c?.status?.phase === 'Installing' ? c : undefined;
    });
    // The oldest CSV's reconciles come after the middle one's deletion, had it been deleted (as
    // they did in the soak, where the middle one went first); at most 15 s otherwise.
    csvHolds.set(`${ns}/${csvName(0)}`, {
      until: async () => !(await get(Resources.ClusterServiceVersion, ns, csvName(1))),
      maxMs: 15_000,
      released: false,
    });
    await publish(ns, catalog(2, stuck));
    await csvIn(ns, csvName(2), 'Succeeded');
    let seen: (string | undefined)[] = [];
    await eventually(
      `only ${csvName(2)} to be left`,
      async () => ((seen = await names(ns)).join() === csvName(2) ? true : undefined),
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; CSVs: ${seen.join(', ')}`);
    });
    // The next version upgrades the Subscription as usual.
    await publish(ns, catalog(3, stuck));
    await csvIn(ns, csvName(3), 'Succeeded');
    const sub = await eventually(`the Subscription to be at ${csvName(3)}`, async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, pkg);
      return s?.status?.state === 'AtLatestKnown' && s.status.installedCSV === csvName(3) ? s : undefined;
    });
    expect(sub.status?.currentCSV).toBe(csvName(3));
    await eventually(`only ${csvName(3)} to be left`, async () =>
      (await names(ns)).join() === csvName(3) ? true : undefined,
    );
    const deployment = await get<
      KubeObject & { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } }
    >(Builtin.Deployment, ns, pkg);
    expect(deployment?.spec?.template?.spec?.containers?.[0]?.image).toBe(image(3));
  });
});
