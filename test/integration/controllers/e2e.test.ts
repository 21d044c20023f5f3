/**
 * The whole path through a running manager: CatalogSource → Subscription → InstallPlan → CSV →
 * Deployment, for the install harness's test operator (inline manifests in its FBC bundles).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Builtin } from '../../../src/kube/resources.js';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import type { Deployment } from '../../../src/controllers/context.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { eventually } from '../support.js';
import { TestOperator, testCatalogSnapshot } from './install-harness.js';
import {
  create,
  get,
  list,
  namespaceWithCatalog,
  mergePatch,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

const DeploymentResource = Builtin.Deployment;

let manager: RunningManager;
beforeAll(async () => {
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
});

/** The test operator's catalog as a JSON stream. */
function catalogJson(): string {
  const { config } = testCatalogSnapshot();
  return [...config.packages, ...config.channels, ...config.bundles].map((d) => JSON.stringify(d)).join('\n');
}

/** A namespace with the catalog (CatalogSource `testop`) and an OperatorGroup targeting itself. */
const operatorNamespace = () => namespaceWithCatalog('e2e', catalogJson());

const available = (d: Deployment | undefined) =>
  d?.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true;

async function succeeded(ns: string, csv: string): Promise<ClusterServiceVersion> {
  return eventually(
    `CSV ${csv} to be Succeeded`,
    async () => {
      const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csv);
      return c?.status?.phase === 'Succeeded' ? c : undefined;
    },
    120_000,
  );
}

describe('end to end', () => {
  it('applying a Subscription installs the operator: CSV Succeeded, Deployment Available, Subscription AtLatestKnown', async () => {
    const ns = await operatorNamespace();
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'testop', { name: TestOperator.package, source: 'testop', channel: 'stable' }),
    );
    await succeeded(ns, TestOperator.v2);
    const deployment = await get<Deployment>(DeploymentResource, ns, TestOperator.deployment);
    expect(available(deployment)).toBe(true);
    const sub = await eventually('the Subscription to be AtLatestKnown', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'testop');
      return s?.status?.state === 'AtLatestKnown' ? s : undefined;
    });
    expect(sub.status).toMatchObject({ currentCSV: TestOperator.v2, installedCSV: TestOperator.v2 });
    expect(sub.status?.conditions?.filter((c) => c.status === 'True')).toEqual([]);
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans).toHaveLength(1);
    expect(plans[0]?.status?.phase).toBe('Complete');
  });

  it('a startingCSV installs the old version, then the Subscription upgrades it along the channel', async () => {
    const ns = await operatorNamespace();
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'testop', {
        name: TestOperator.package,
        source: 'testop',
        startingCSV: TestOperator.v1,
      }),
    );
    await succeeded(ns, TestOperator.v2);
    await eventually('the replaced CSV to be gone', async () =>
      (await get(Resources.ClusterServiceVersion, ns, TestOperator.v1)) ? undefined : true,
    );
    const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plans.map((p) => p.spec.clusterServiceVersionNames[0]).sort()).toEqual([
      TestOperator.v1,
      TestOperator.v2,
    ]);
    const sub = await eventually('AtLatestKnown on the new version', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'testop');
      return s?.status?.state === 'AtLatestKnown' && s.status.installedCSV === TestOperator.v2
        ? s
        : undefined;
    });
    expect(sub.status?.currentCSV).toBe(TestOperator.v2);
  });

  it('a Manual Subscription installs nothing until its InstallPlan is approved', async () => {
    const ns = await operatorNamespace();
    await create(
      Resources.Subscription,
      ns,
      subscription(ns, 'testop', {
        name: TestOperator.package,
        source: 'testop',
        installPlanApproval: 'Manual',
      }),
    );
    const plan = await eventually('a plan waiting for approval', async () => {
      const [p] = await list<InstallPlan>(Resources.InstallPlan, ns);
      return p?.status?.phase === 'RequiresApproval' ? p : undefined;
    });
    await manager.idle();
    expect(await get(Resources.ClusterServiceVersion, ns, TestOperator.v2)).toBeUndefined();
    await mergePatch(Resources.InstallPlan, ns, plan.metadata.name!, { spec: { approved: true } });
    await succeeded(ns, TestOperator.v2);
    expect(available(await get<Deployment>(DeploymentResource, ns, TestOperator.deployment))).toBe(true);
  });
});
