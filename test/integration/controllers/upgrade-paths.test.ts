/**
 * Upgrades along a channel through a running manager: three versions one after another along
 * `replaces`, and a `skipRange` that takes a subscriber from the first straight to the newest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { eventually } from '../support.js';
import { TestOperator, testBundle, testCSV } from './install-harness.js';
import {
  create,
  get,
  list,
  namespaceWithCatalog,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

let manager: RunningManager;
beforeAll(async () => {
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
});

const v3 = 'testop.v0.3.0';

/** 0.3.0, made from 0.2.0: replacing it, and maybe jumping from 0.1.0 by a skipRange too. */
function bundle3(edge: { replaces: string; skipRange?: string }): BundleDoc {
  const base = testCSV('0.2.0');
  const skipRange = edge.skipRange ? { 'olm.skipRange': edge.skipRange } : {};
  const csv = {
    ...base,
    metadata: { ...base.metadata, name: v3, annotations: { ...base.metadata.annotations, ...skipRange } },
    spec: { ...base.spec, version: '0.3.0', replaces: edge.replaces },
  };
  const b = testBundle('0.2.0', csv);
  return {
    ...b,
    name: v3,
    properties: b.properties.map((p) =>
      p.type === 'olm.package'
        ? { type: 'olm.package', value: { packageName: TestOperator.package, version: '0.3.0' } }
        : p,
    ),
  };
}

async function upgradeNamespace(entries: object[], bundles: BundleDoc[]): Promise<string> {
  const docs = [
    { schema: 'olm.package', name: TestOperator.package, defaultChannel: 'stable' },
    { schema: 'olm.channel', package: TestOperator.package, name: 'stable', entries },
    ...bundles,
  ];
  const ns = await namespaceWithCatalog('paths', docs.map((d) => JSON.stringify(d)).join('\n'));
  await create(
    Resources.Subscription,
    ns,
    subscription(ns, 'testop', {
      name: TestOperator.package,
      source: 'testop',
      channel: 'stable',
      startingCSV: TestOperator.v1,
    }),
  );
  return ns;
}

async function settledOn(ns: string, csv: string): Promise<Subscription> {
  return eventually(
    `the Subscription settled on ${csv}`,
    async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'testop');
      return s?.status?.installedCSV === csv && s.status.state === 'AtLatestKnown' ? s : undefined;
    },
    120_000,
  ).catch(async (err: Error) => {
    const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
    const sub = await get<Subscription>(Resources.Subscription, ns, 'testop');
    const seen = csvs.map((c) => `${c.metadata.name} ${c.status?.phase} ${c.status?.message}`);
    throw new Error(`${err.message}; CSVs: ${seen.join('; ')}; status ${JSON.stringify(sub?.status)}`);
  });
}

describe('upgrade paths', () => {
  it('three versions along replaces: 0.1.0 → 0.2.0 → 0.3.0, one InstallPlan each, one CSV left', async () => {
    const entries = [
      { name: TestOperator.v1 },
      { name: TestOperator.v2, replaces: TestOperator.v1 },
      { name: v3, replaces: TestOperator.v2 },
    ];
    const ns = await upgradeNamespace(entries, [
      testBundle('0.1.0'),
      testBundle('0.2.0'),
      bundle3({ replaces: TestOperator.v2 }),
    ]);
    await settledOn(ns, v3);
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans.map((p) => p.spec.clusterServiceVersionNames[0]).sort()).toEqual([
      TestOperator.v1,
      TestOperator.v2,
      v3,
    ]);
    expect(plans.every((p) => p.status?.phase === 'Complete')).toBe(true);
    await eventually('only 0.3.0 left', async () => {
      const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
      return csvs.length === 1 ? csvs : undefined;
    });
    const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
    expect(csvs.map((c) => `${c.metadata.name}:${c.status?.phase}`)).toEqual([`${v3}:Succeeded`]);
  });

  it('a skipRange takes 0.1.0 straight to 0.3.0, which retires 0.1.0: 0.2.0 is never installed', async () => {
    const entries = [
      { name: TestOperator.v1 },
      { name: TestOperator.v2, replaces: TestOperator.v1 },
      { name: v3, replaces: TestOperator.v2, skipRange: '>=0.1.0 <0.3.0' },
    ];
    const ns = await upgradeNamespace(entries, [
      testBundle('0.1.0'),
      testBundle('0.2.0'),
      bundle3({ replaces: TestOperator.v2, skipRange: '>=0.1.0 <0.3.0' }),
    ]);
    await settledOn(ns, v3);
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans.map((p) => p.spec.clusterServiceVersionNames[0]).sort()).toEqual([TestOperator.v1, v3]);
    // 0.3.0 replaces what was installed, as OLM writes it, so 0.1.0 is retired.
    const created = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, v3);
    expect(created?.spec.replaces).toBe(TestOperator.v1);
    await eventually('only 0.3.0 left', async () => {
      const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
      return csvs.length === 1 ? csvs : undefined;
    });
  });
});
