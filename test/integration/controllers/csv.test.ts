import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterServiceVersion, OperatorCondition, OperatorGroup } from '../../../src/apis/operators.js';
import { Resources } from '../../../src/apis/operators.js';
import { mergePatch } from '../../../src/controllers/objects.js';
import { collectionPath, objectPath } from '../../../src/kube/client.js';
import type { Deployment } from '../../../src/controllers/context.js';
import { eventually, freshNamespace } from '../support.js';
import {
  canI,
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  csvPath,
  deploymentPath,
  eventsFor,
  get,
  type Harness,
  installOperatorCrds,
  startInstallControllers,
  testBundle,
  testCatalog,
  testCatalogSnapshot,
  testCrd,
  testCSV,
  TestOperator,
} from './install-harness.js';

let h: Harness;

beforeAll(async () => {
  await installOperatorCrds();
  h = await startInstallControllers();
});

afterAll(async () => {
  await h?.stop();
});

const availableDeployment = (ns: string, check: (d: Deployment) => boolean = () => true) =>
  eventually(`deployment ${ns}/${TestOperator.deployment} available`, async () => {
    const d = await get<Deployment>(h.ctx.client, deploymentPath(ns, TestOperator.deployment));
    const available = d?.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
    return d && available && check(d) ? d : undefined;
  });

describe('CSV controller', () => {
  it('a namespace without an OperatorGroup fails the CSV with NoOperatorGroup until one is created', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('nog');
    await createInstallPlan(client, ns);
    const failed = await csvInPhase(client, ns, TestOperator.v1, 'Failed', 'NoOperatorGroup');
    expect(failed.status?.message).toBe('csv in namespace with no operatorgroups');
    expect(await get(client, deploymentPath(ns, TestOperator.deployment))).toBeUndefined();
    const events = await eventsFor(client, ns, TestOperator.v1);
    expect(events).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Warning', reason: 'NoOperatorGroup' })]),
    );

    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    await availableDeployment(ns);
  });

  it('two OperatorGroups in the namespace fail the CSV with TooManyOperatorGroups until one goes', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('twog');
    await createOperatorGroup(client, ns, 'og-a');
    await createOperatorGroup(client, ns, 'og-b');
    await createInstallPlan(client, ns);
    const failed = await csvInPhase(client, ns, TestOperator.v1, 'Failed', 'TooManyOperatorGroups');
    expect(failed.status?.message).toContain('multiple operatorgroups');
    const ogPath = (name: string) => objectPath(Resources.OperatorGroup, name, ns);
    const condition = (og?: OperatorGroup) =>
      og?.status?.conditions?.find((c) => c.type === 'MultipleOperatorGroup');
    await eventually('both groups say there are several', async () => {
      const [a, b] = await Promise.all([
        get<OperatorGroup>(client, ogPath('og-a')),
        get<OperatorGroup>(client, ogPath('og-b')),
      ]);
      return condition(a)?.reason === 'MultipleOperatorGroupsFound' && condition(b)?.status === 'True'
        ? true
        : undefined;
    });

    // Removing one lets the CSV install and clears the condition on the other.
    await client.request({ method: 'DELETE', path: ogPath('og-b') });
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    await eventually('condition cleared', async () =>
      condition(await get<OperatorGroup>(client, ogPath('og-a'))) === undefined ? true : undefined,
    );
  });

  it('an OperatorGroup the install modes do not allow fails the CSV with UnsupportedOperatorGroup', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('unsup');
    const ownOnly = testCSV('0.1.0', [
      { type: 'OwnNamespace', supported: true },
      { type: 'SingleNamespace', supported: false },
      { type: 'MultiNamespace', supported: false },
      { type: 'AllNamespaces', supported: false },
    ]);
    h.catalogs.set(testCatalogSnapshot([testBundle('0.1.0', ownOnly)], { ...testCatalog, name: 'own-only' }));
    await createOperatorGroup(client, ns, 'og'); // all namespaces
    await createInstallPlan(client, ns, { source: 'own-only' });
    const failed = await csvInPhase(client, ns, TestOperator.v1, 'Failed', 'UnsupportedOperatorGroup');
    expect(failed.status?.message).toBe(
      'AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces',
    );
  });

  it('a deleted Deployment is recreated and the CSV returns to Succeeded', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('heal');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns);
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    const before = await availableDeployment(ns);

    await client.request({ method: 'DELETE', path: deploymentPath(ns, TestOperator.deployment) });
    await availableDeployment(ns, (d) => d.metadata?.uid !== before.metadata?.uid);
    const csv = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    // The history records that it noticed the missing Deployment on the way back.
    const history = csv.status?.conditions ?? [];
    const unhealthy = history.find((c) => c.reason === 'ComponentUnhealthy');
    expect(unhealthy).toMatchObject({ phase: 'Failed' });
    expect(unhealthy?.message).toContain(`missing deployment with name=${TestOperator.deployment}`);
    expect(history.at(-1)).toMatchObject({ phase: 'Succeeded', reason: 'InstallSucceeded' });
  });

  it('an upgrade: the CSV replacing another takes over its Deployment and the old CSV is deleted', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('upg');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns, { name: 'install-v1' });
    const old = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');

    await createInstallPlan(client, ns, { name: 'install-v2', csv: TestOperator.v2 });
    const next = await csvInPhase(client, ns, TestOperator.v2, 'Succeeded');
    expect(next.spec.replaces).toBe(TestOperator.v1);
    await eventually('old csv deleted', async () =>
      (await get<ClusterServiceVersion>(client, csvPath(ns, TestOperator.v1))) === undefined
        ? true
        : undefined,
    );
    const dep = await availableDeployment(ns, (d) =>
      JSON.stringify(d.spec?.template).includes('registry.example/testop:0.2.0'),
    );
    // Owned by the new CSV only, so the old CSV's garbage collection leaves it.
    expect(dep.metadata?.ownerReferences?.map((r) => r.uid)).toEqual([next.metadata.uid]);
    expect(dep.metadata?.ownerReferences?.map((r) => r.uid)).not.toContain(old.metadata.uid);
    const events = await eventsFor(client, ns, TestOperator.v1);
    expect(events.map((e) => e.reason)).toEqual(expect.arrayContaining(['BeingReplaced']));
  });

  it('an operator that says Upgradeable=False holds its upgrade until it clears', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('gate');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns, { name: 'install-v1' });
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    const path = objectPath(Resources.OperatorCondition, TestOperator.v1, ns);
    await eventually('operatorcondition', () => get<OperatorCondition>(client, path));
    const upgradeable = (status: 'True' | 'False', message: string) => ({
      type: 'Upgradeable',
      status,
      reason: status === 'False' ? 'Migrating' : 'Ready',
      message,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    await mergePatch(client, path, {
      spec: { conditions: [upgradeable('False', 'a migration is running')] },
    });
    const before = await availableDeployment(ns);

    await createInstallPlan(client, ns, { name: 'install-v2', csv: TestOperator.v2 });
    const held = await csvInPhase(client, ns, TestOperator.v2, 'Pending', 'OperatorConditionNotUpgradeable');
    expect(held.status?.message).toBe('the operator is not upgradeable: a migration is running');
    // Held for a while: the old version's Deployment is untouched all along.
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await get<ClusterServiceVersion>(client, csvPath(ns, TestOperator.v2)))?.status?.reason).toBe(
      'OperatorConditionNotUpgradeable',
    );
    const still = await get<Deployment>(
      client,
      `/apis/apps/v1/namespaces/${ns}/deployments/${TestOperator.deployment}`,
    );
    expect(still?.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);

    // Cleared by the operator: the upgrade goes on by itself.
    await mergePatch(client, path, { spec: { conditions: [upgradeable('True', 'done')] } });
    await csvInPhase(client, ns, TestOperator.v2, 'Succeeded');
    await availableDeployment(ns, (d) =>
      JSON.stringify(d.spec?.template).includes('registry.example/testop:0.2.0'),
    );
  });

  it('each CSV gets an OperatorCondition its operator may update, mirrored into status and put back when deleted', async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('cond');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(client, ns);
    const csv = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    const path = objectPath(Resources.OperatorCondition, TestOperator.v1, ns);
    const condition = await eventually('operatorcondition', () => get<OperatorCondition>(client, path));
    expect(condition.spec).toMatchObject({
      serviceAccounts: [TestOperator.serviceAccount],
      deployments: [TestOperator.deployment],
    });
    expect(condition.metadata.ownerReferences?.map((r) => r.uid)).toEqual([csv.metadata.uid]);

    const sa = { namespace: ns, name: TestOperator.serviceAccount };
    const attrs = { group: 'operators.coreos.com', resource: 'operatorconditions', namespace: ns };
    expect(await canI(client, sa, { ...attrs, verb: 'update', name: TestOperator.v1 })).toBe(true);
    expect(await canI(client, sa, { ...attrs, verb: 'update', name: 'someone-else' })).toBe(false);

    // The operator finds it through OPERATOR_CONDITION_NAME.
    const dep = await availableDeployment(ns);
    expect(JSON.stringify(dep.spec?.template)).toContain(
      `"name":"OPERATOR_CONDITION_NAME","value":"${TestOperator.v1}"`,
    );

    const upgradeable = {
      type: 'Upgradeable',
      status: 'False',
      reason: 'Migrating',
      message: 'a migration is running',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    await mergePatch(client, path, { spec: { conditions: [upgradeable] } });
    await eventually('status mirrors spec.conditions', async () => {
      const c = await get<OperatorCondition>(client, path);
      return c?.status?.conditions?.[0]?.reason === 'Migrating' ? c : undefined;
    });

    await client.request({ method: 'DELETE', path });
    await eventually('operatorcondition recreated', async () => {
      const c = await get<OperatorCondition>(client, path);
      return c !== undefined && c.metadata.uid !== condition.metadata.uid ? c : undefined;
    });
  });

  it("the Subscription's spec.config is merged into the Deployment, and a change to it rolls the Deployment", async () => {
    const { client } = h.ctx;
    const ns = await freshNamespace('cfg');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await client.request({
      method: 'POST',
      path: collectionPath(Resources.Subscription, ns),
      body: {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: 'testop', namespace: ns },
        spec: {
          name: TestOperator.package,
          source: 'testcat',
          sourceNamespace: 'olm-test',
          config: {
            env: [{ name: 'LOG_LEVEL', value: 'debug' }],
            nodeSelector: { 'kubernetes.io/os': 'linux' },
          },
        },
      },
    });
    // What the Subscription controller records once it has resolved.
    const subPath = objectPath(Resources.Subscription, 'testop', ns);
    await mergePatch(client, `${subPath}/status`, {
      status: { currentCSV: TestOperator.v1, lastUpdated: '2026-01-01T00:00:00Z' },
    });
    await createInstallPlan(client, ns);
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    const first = await availableDeployment(ns, (d) =>
      JSON.stringify(d.spec?.template).includes('LOG_LEVEL'),
    );
    const pod = JSON.stringify(first.spec?.template);
    expect(pod).toContain('{"name":"LOG_LEVEL","value":"debug"}');
    expect(pod).toContain('"nodeSelector":{"kubernetes.io/os":"linux"}');

    await mergePatch(client, subPath, { spec: { config: { env: [{ name: 'LOG_LEVEL', value: 'info' }] } } });
    await availableDeployment(ns, (d) =>
      JSON.stringify(d.spec?.template).includes('{"name":"LOG_LEVEL","value":"info"}'),
    );
    await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
  });

  it('a CSV whose ServiceAccount is missing waits in Pending (RequirementsNotMet) and installs once it exists', async () => {
    const { client, applier } = h.ctx;
    const ns = await freshNamespace('req');
    await createOperatorGroup(client, ns, 'og', { targetNamespaces: [ns] });
    await applier.apply(testCrd);
    // Created directly, without the InstallPlan that would have created its ServiceAccount.
    await client.request({
      method: 'POST',
      path: collectionPath(Resources.ClusterServiceVersion, ns),
      body: { ...testCSV('0.1.0'), metadata: { name: TestOperator.v1, namespace: ns } },
    });
    const pending = await csvInPhase(client, ns, TestOperator.v1, 'Pending', 'RequirementsNotMet');
    expect(pending.status?.requirementStatus).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'ServiceAccount',
          name: TestOperator.serviceAccount,
          status: 'NotPresent',
        }),
        expect.objectContaining({
          kind: 'CustomResourceDefinition',
          name: TestOperator.crd,
          status: 'Present',
        }),
      ]),
    );
    expect(await get(client, deploymentPath(ns, TestOperator.deployment))).toBeUndefined();

    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/serviceaccounts`,
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: TestOperator.serviceAccount } },
    });
    const done = await csvInPhase(client, ns, TestOperator.v1, 'Succeeded');
    expect(done.status?.requirementStatus?.every((r) => r.status === 'Present')).toBe(true);
    await availableDeployment(ns);
  });
});
