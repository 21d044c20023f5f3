import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { Subscription } from '../../../src/apis/operators.js';
import { Resources } from '../../../src/apis/operators.js';
import { collectionPath, type KubeClient, objectPath } from '../../../src/kube/client.js';
import { eventually, freshNamespace } from '../support.js';
import {
  connect,
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  csvPath,
  deploymentPath,
  get,
  type Harness,
  installOperatorCrds,
  startInstallControllers,
  TestOperator,
} from './install-harness.js';

let h: Harness | undefined;

beforeAll(async () => {
  await installOperatorCrds();
});

afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** Every object Bosun could have created for the CSV in `ns`, found by label and by name. */
async function leftovers(client: KubeClient, ns: string): Promise<string[]> {
  const found: string[] = [];
  const owner = `olm.owner=${TestOperator.v1},olm.owner.namespace=${ns}`;
  const lists: [string, string][] = [
    ['/apis/rbac.authorization.k8s.io/v1/clusterroles', owner],
    ['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', owner],
    ['/apis/rbac.authorization.k8s.io/v1/roles', owner],
    ['/apis/rbac.authorization.k8s.io/v1/rolebindings', owner],
    [`/apis/apps/v1/namespaces/${ns}/deployments`, 'olm.managed=true'],
    [`/api/v1/namespaces/${ns}/serviceaccounts`, 'olm.managed=true'],
    [`/api/v1/namespaces/${ns}/configmaps`, 'olm.managed=true'],
    [`/api/v1/namespaces/${ns}/services`, 'olm.managed=true'],
    [collectionPath(Resources.OperatorCondition, ns), ''],
    [collectionPath(Resources.InstallPlan, ns), ''],
    [collectionPath(Resources.ClusterServiceVersion, ns), ''],
  ];
  for (const [path, labelSelector] of lists) {
    const list = await client.request<{ items: KubeObject[] }>({ path, query: { labelSelector } });
    for (const item of list.items) found.push(`${path.split('/').at(-1)}/${item.metadata?.name}`);
  }
  return found;
}

async function subscribe(client: KubeClient, ns: string): Promise<Subscription> {
  return client.request<Subscription>({
    method: 'POST',
    path: collectionPath(Resources.Subscription, ns),
    body: {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'testop', namespace: ns },
      spec: { name: TestOperator.package, source: 'testcat', sourceNamespace: 'olm-test', channel: 'stable' },
    },
  });
}

const widgetPath = (ns: string) => `/apis/testop.bosun.dev/v1alpha1/namespaces/${ns}/widgets/w1`;

async function installWithWidget(client: KubeClient, ns: string, targetNamespaces?: string[]) {
  await createOperatorGroup(client, ns, 'og', targetNamespaces ? { targetNamespaces } : {});
  const sub = await subscribe(client, ns);
  // The InstallPlan is owned by its Subscription, as the Subscription controller creates it.
  await createInstallPlan(client, ns, { owner: sub });
  await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
  await client.request({
    method: 'POST',
    path: `/apis/testop.bosun.dev/v1alpha1/namespaces/${ns}/widgets`,
    body: {
      apiVersion: 'testop.bosun.dev/v1alpha1',
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { size: 1 },
    },
  });
  expect((await leftovers(client, ns)).length).toBeGreaterThan(8);
}

async function uninstall(client: KubeClient, ns: string) {
  await client.request({ method: 'DELETE', path: objectPath(Resources.Subscription, 'testop', ns) });
  await client.request({ method: 'DELETE', path: csvPath(ns, TestOperator.v1) });
}

async function expectOnlyCrdAndResourcesLeft(client: KubeClient, ns: string) {
  await eventually(
    'every object Bosun created is gone',
    async () => ((await leftovers(client, ns)).length === 0 ? true : undefined),
    120_000,
  );
  expect(
    await get(client, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${TestOperator.crd}`),
  ).toBeDefined();
  expect(await get(client, widgetPath(ns))).toBeDefined();
}

describe('uninstall', () => {
  it('deleting the Subscription and the CSV removes what Bosun created and keeps CRDs and custom resources', async () => {
    h = await startInstallControllers();
    const { client } = h.ctx;
    const ns = await freshNamespace('uninst');
    await installWithWidget(client, ns);
    await uninstall(client, ns);
    await expectOnlyCrdAndResourcesLeft(client, ns);
  });

  it('a CSV deleted while the manager is down has its cluster and copied RBAC removed at the next start', async () => {
    h = await startInstallControllers();
    const { client } = h.ctx;
    const ns = await freshNamespace('down');
    // A target namespace other than its own: the copied Roles there are not garbage collected either.
    const target = await freshNamespace('downt');
    await installWithWidget(client, ns, [target]);
    const copied = await client.request<{ items: unknown[] }>({
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${target}/roles`,
      query: { labelSelector: `olm.owner=${TestOperator.v1}` },
    });
    expect(copied.items.length).toBe(1);
    await h.stop();
    h = undefined;

    const { client: direct } = connect();
    try {
      await uninstall(direct, ns);
      await eventually('csv gone', async () =>
        (await get(direct, csvPath(ns, TestOperator.v1))) ? undefined : true,
      );
    } finally {
      direct.close();
    }

    h = await startInstallControllers();
    await expectOnlyCrdAndResourcesLeft(h.ctx.client, ns);
  });

  it('a restarted manager leaves a finished install as it is and recreates what went missing meanwhile', async () => {
    h = await startInstallControllers();
    const { client } = h.ctx;
    const ns = await freshNamespace('restart');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns);
    const csv = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    await h.stop();
    h = undefined;

    const { client: direct } = connect();
    try {
      await direct.request({ method: 'DELETE', path: deploymentPath(ns, TestOperator.deployment) });
    } finally {
      direct.close();
    }
    h = await startInstallControllers();
    await eventually('deployment recreated', async () =>
      get(h?.ctx.client as KubeClient, deploymentPath(ns, TestOperator.deployment)),
    );
    const after = await csvInPhase(h.ctx.client, ns, TestOperator.v1, 'Succeeded');
    expect(after.metadata.uid).toBe(csv.metadata.uid);
    const plans = await h.ctx.client.request<{ items: unknown[] }>({
      path: collectionPath(Resources.InstallPlan, ns),
    });
    expect(plans.items.length).toBe(1);
    // Other test files share the control plane: only this install's objects count here.
    expect(h.errors.filter((e) => e.key.startsWith(`${ns}/`))).toEqual([]);
  });
});
