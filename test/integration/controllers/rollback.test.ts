/**
 * Health-gated upgrades on a running manager: an upgrade whose Deployment never becomes
 * available is rolled back when its deadline passes, with every custom resource kept; the
 * version is held back until a retry or a catalog change; `bosun rollback` undoes a good
 * upgrade; and a manager stopped in the middle of an upgrade or a rollback ends consistent.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import type { Deployment } from '../../../src/controllers/context.js';
import { RollbackAnnotations } from '../../../src/install/rollback.js';
import { Builtin } from '../../../src/kube/resources.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { killWith, managerProcess, type ManagerProcess } from '../manager/manager-process.js';
import { eventually } from '../support.js';
import {
  inline,
  TestOperator,
  testBundle,
  testCatalogSnapshot,
  testCrd,
  testCSV,
} from './install-harness.js';
import {
  bosunCli,
  ConfigMapResource,
  client,
  create,
  eventsFor,
  get,
  list,
  namespaceWithCatalog,
  mergePatch,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

let manager: RunningManager | undefined;
beforeAll(async () => {
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
});

/** 0.2.0 whose pods no node can take: its Deployment never becomes available. */
function brokenCSV() {
  const csv = testCSV('0.2.0');
  const d = csv.spec.install.spec.deployments[0]!;
  (d.spec.template.spec as Record<string, unknown>).nodeSelector = { 'bosun.dev/no-such-node': 'true' };
  return csv;
}

function catalogJson(v2 = testBundle('0.2.0', brokenCSV()), v1 = testBundle('0.1.0')): string {
  const { config } = testCatalogSnapshot([v1, v2]);
  return [...config.packages, ...config.channels, ...config.bundles].map((d) => JSON.stringify(d)).join('\n');
}

/** A namespace with the catalog (CatalogSource `testop`), an OperatorGroup, and a Subscription starting at 0.1.0. */
async function subscribed(
  deadline: string,
  v2?: ReturnType<typeof testBundle>,
  v1?: ReturnType<typeof testBundle>,
): Promise<string> {
  const ns = await namespaceWithCatalog('rollback', catalogJson(v2, v1));
  const sub = subscription(ns, 'testop', {
    name: TestOperator.package,
    source: 'testop',
    channel: 'stable',
    startingCSV: TestOperator.v1,
  });
  sub.metadata.annotations = { [RollbackAnnotations.deadline]: deadline };
  await create(Resources.Subscription, ns, sub);
  return ns;
}

const csvPhase = async (ns: string, name: string) =>
  (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, name))?.status?.phase;

async function inPhase(ns: string, name: string, phase: string, timeoutMs = 90_000) {
  await eventually(
    `${name} ${phase}`,
    async () => ((await csvPhase(ns, name)) === phase ? true : undefined),
    timeoutMs,
  );
}

const widgets = (ns: string) => `/apis/testop.bosun.dev/v1alpha1/namespaces/${ns}/widgets`;

/** Three custom resources, made while 0.1.0 runs. */
async function makeWidgets(ns: string) {
  for (const name of ['w1', 'w2', 'w3'])
    await client().request({
      method: 'POST',
      path: widgets(ns),
      body: {
        apiVersion: 'testop.bosun.dev/v1alpha1',
        kind: 'Widget',
        metadata: { name },
        spec: { size: name },
      },
    });
}

async function storedWidgets(ns: string) {
  const list = await client().request<{
    items: { metadata: { name: string; uid: string }; spec: unknown }[];
  }>({
    path: widgets(ns),
  });
  return list.items.map((w) => ({ name: w.metadata.name, uid: w.metadata.uid, spec: w.spec }));
}

const sub = (ns: string) => get<Subscription>(Resources.Subscription, ns, 'testop');

async function rolledBack(ns: string, from: string, timeoutMs = 120_000): Promise<Subscription> {
  const dump = async () => {
    const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
    return JSON.stringify({
      sub: (await sub(ns))?.status,
      csvs: csvs.map((c) => [c.metadata.name, c.status?.phase, c.status?.message]),
    });
  };
  return eventually(
    `the rollback from ${from} to finish`,
    async () => {
      const s = await sub(ns);
      const r = s?.status?.rollback;
      return r?.phase === 'RolledBack' && r.from === from && s?.status?.installedCSV === TestOperator.v1
        ? s
        : undefined;
    },
    timeoutMs,
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}; the namespace has ${await dump()}`);
  });
}

/** What must hold after any rollback: one live CSV, 0.1.0's Deployment, nothing left of 0.2.0. */
async function consistentOnV1(ns: string) {
  const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
  expect(csvs.map((c) => `${c.metadata.name}:${c.status?.phase}`)).toEqual([`${TestOperator.v1}:Succeeded`]);
  const deployment = await get<Deployment>(Builtin.Deployment, ns, TestOperator.deployment);
  const image = (deployment as { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } })
    ?.spec?.template?.spec?.containers?.[0]?.image;
  expect(image).toBe('registry.example/testop:0.1.0');
  const owners = deployment?.metadata?.ownerReferences?.map((o) => o.name);
  expect(owners).toEqual([TestOperator.v1]);
  const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
  expect(plans.filter((p) => p.spec.clusterServiceVersionNames.includes(TestOperator.v2))).toEqual([]);
}

/**
 * The manager as its own process (the CLI's `operator run`), so that a test can kill it with
 * SIGKILL: no shutdown, no reconcile finished.
 */
const managerAlone = () => managerProcess({ kubeconfig: inject('kubeconfig') });
const killed = (m: ManagerProcess) => killWith(m, 'SIGKILL');

/**
 * A ValidatingAdmissionPolicy (and its binding) refusing every delete of an InstallPlan in `ns`;
 * returns once the API server refuses to delete `probe` (an InstallPlan there), as it takes up a
 * new policy a moment after it is made.
 */
async function refuseInstallPlanDeletes(ns: string, probe: string): Promise<{ remove(): Promise<void> }> {
  const base = '/apis/admissionregistration.k8s.io/v1';
  const name = `refuse-installplan-deletes-${ns}`;
  await client().request({
    method: 'POST',
    path: `${base}/validatingadmissionpolicies`,
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['operators.coreos.com'],
              apiVersions: ['*'],
              operations: ['DELETE'],
              resources: ['installplans'],
            },
          ],
        },
        validations: [{ expression: 'false', message: 'InstallPlan deletes are refused by the test' }],
      },
    },
  });
  await client().request({
    method: 'POST',
    path: `${base}/validatingadmissionpolicybindings`,
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      },
    },
  });
  await eventually(
    'InstallPlan deletes to be refused',
    async () => {
      try {
        await client().request({
          method: 'DELETE',
          path: `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/installplans/${probe}`,
          query: { dryRun: 'All' },
        });
        return undefined;
      } catch (err) {
        return /refused by the test/.test((err as { body?: string }).body ?? '') ? true : undefined;
      }
    },
    30_000,
  );
  return {
    async remove() {
      for (const kind of ['validatingadmissionpolicybindings', 'validatingadmissionpolicies'])
        await client().request({ method: 'DELETE', path: `${base}/${kind}/${name}` });
    },
  };
}

describe('health-gated upgrades', () => {
  it('an upgrade that never becomes available is rolled back at its deadline, keeping every custom resource; held back until a retry', async () => {
    const ns = await subscribed('8s');
    // The upgrade to 0.2.0 begins as soon as 0.1.0 has Succeeded; the widgets are made meanwhile.
    await eventually('0.2.0 to be created', async () =>
      (await csvPhase(ns, TestOperator.v2)) ? true : undefined,
    );
    await makeWidgets(ns);
    const before = await storedWidgets(ns);
    expect(before).toHaveLength(3);

    const s = await rolledBack(ns, TestOperator.v2);
    expect(s.status?.rollback).toMatchObject({ from: TestOperator.v2, to: TestOperator.v1 });
    expect(s.status?.rollback?.cause).toMatch(/did not reach Succeeded within 8s/);
    expect(s.status?.state).toBe('UpgradeFailed');
    expect(s.status?.conditions?.find((c) => c.type === 'RolledBack')).toMatchObject({
      status: 'True',
      reason: 'RolledBack',
    });
    // (0.1.0 shows as Installed before them only when it reached Succeeded before 0.2.0 replaced it.)
    expect(s.status?.history?.slice(0, 2).map((h) => `${h.csv}:${h.outcome}`)).toEqual([
      `${TestOperator.v1}:RolledBack`,
      `${TestOperator.v2}:Failed`,
    ]);
    await consistentOnV1(ns);
    expect(await storedWidgets(ns)).toEqual(before);
    const reasons = (await eventsFor(ns, 'testop')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['RollingBack', 'RolledBack']));

    // Held back: no new attempt at 0.2.0 while the catalog is unchanged.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await csvPhase(ns, TestOperator.v2)).toBeUndefined();
    expect((await sub(ns))?.status?.currentCSV).toBe(TestOperator.v1);

    // A retry tries 0.2.0 once more; it fails the same way and is rolled back again.
    const retry = await bosunCli('upgrade', 'retry', '-n', ns, 'testop');
    expect(retry).toMatchObject({ code: 0 });
    await eventually('0.2.0 to be tried again', async () =>
      (await csvPhase(ns, TestOperator.v2)) ? true : undefined,
    );
    const again = await rolledBack(ns, TestOperator.v2);
    expect(again.status?.history?.filter((h) => h.outcome === 'Failed')).toHaveLength(2);
    await consistentOnV1(ns);
    expect(await storedWidgets(ns)).toEqual(before);
  });

  it('a fixed 0.2.0 in the catalog lifts the hold, and the upgrade then succeeds', async () => {
    const ns = await subscribed('6s');
    await rolledBack(ns, TestOperator.v2);
    await mergePatch(ConfigMapResource, ns, 'testop-catalog', {
      data: { 'catalog.json': catalogJson(testBundle('0.2.0')) },
    });
    await inPhase(ns, TestOperator.v2, 'Succeeded');
    const s = await eventually('the Subscription on 0.2.0', async () => {
      const x = await sub(ns);
      return x?.status?.installedCSV === TestOperator.v2 ? x : undefined;
    });
    expect(s.status?.rollback).toBeUndefined();
    expect(s.status?.conditions?.find((c) => c.type === 'RolledBack')).toBeUndefined();
    expect(s.status?.history?.[0]).toMatchObject({ csv: TestOperator.v2, outcome: 'Installed' });
  });

  it('`bosun rollback` undoes an upgrade that succeeded: 0.1.0 comes back from the catalog, the newer CRD and every widget stay', async () => {
    const ns = await subscribed('5m', testBundle('0.2.0'));
    await inPhase(ns, TestOperator.v2, 'Succeeded');
    await eventually('0.1.0 to be gone', async () =>
      (await csvPhase(ns, TestOperator.v1)) ? undefined : true,
    );
    await makeWidgets(ns);
    const before = await storedWidgets(ns);
    const crdBefore = await client().request<{ metadata: { uid: string } }>({
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${TestOperator.crd}`,
    });

    const result = await bosunCli('rollback', '-n', ns, 'testop');
    expect(result.err).toBe('');
    expect(result).toMatchObject({ code: 0 });
    expect(result.out).toContain(`rolled back from ${TestOperator.v2} to ${TestOperator.v1}`);
    await consistentOnV1(ns);
    expect(await storedWidgets(ns)).toEqual(before);
    const crdAfter = await client().request<{ metadata: { uid: string } }>({
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${TestOperator.crd}`,
    });
    expect(crdAfter.metadata.uid).toBe(crdBefore.metadata.uid);
    const s = await sub(ns);
    expect(s?.status?.rollback?.cause).toMatch(/rollback asked for/);
    expect(s?.metadata.annotations?.[RollbackAnnotations.rollback]).toBeUndefined();
  });

  it('a manager stopped in the middle of an upgrade, and again in the middle of its rollback, ends with one live CSV and nothing orphaned', async () => {
    const ns = await subscribed('10s');
    await eventually('0.2.0 to be created', async () =>
      (await csvPhase(ns, TestOperator.v2)) ? true : undefined,
    );
    await makeWidgets(ns);
    const before = await storedWidgets(ns);
    await eventually('0.2.0 to be installing', async () =>
      (await csvPhase(ns, TestOperator.v2)) === 'Installing' ? true : undefined,
    );
    await manager?.stop();
    manager = undefined;
    // While no manager runs, the deadline passes.
    await new Promise((r) => setTimeout(r, 11_000));
    manager = await startTestManager();
    await eventually(
      'the rollback to begin',
      async () => ((await sub(ns))?.status?.rollback?.phase === 'RollingBack' ? true : undefined),
      60_000,
    );
    await manager.stop();
    manager = undefined;
    manager = await startTestManager();
    await rolledBack(ns, TestOperator.v2);
    await consistentOnV1(ns);
    expect(await storedWidgets(ns)).toEqual(before);
    // No RBAC of 0.2.0 is left behind (roles and cluster roles carry their CSV's owner labels).
    const roles = await client().request<{ items: { metadata: { labels?: Record<string, string> } }[] }>({
      path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      query: { labelSelector: `olm.owner=${TestOperator.v2},olm.owner.namespace=${ns}` },
    });
    expect(roles.items).toEqual([]);
  });

  it('a manager killed (SIGKILL) in the middle of an upgrade, and again in the middle of its rollback, ends with one live CSV and nothing orphaned', async () => {
    await manager?.stop();
    manager = undefined;
    let child = await managerAlone();
    try {
      const ns = await subscribed('10s');
      await eventually('0.2.0 to be installing', async () =>
        (await csvPhase(ns, TestOperator.v2)) === 'Installing' ? true : undefined,
      );
      await makeWidgets(ns);
      const before = await storedWidgets(ns);
      await killed(child);
      await new Promise((r) => setTimeout(r, 11_000));
      child = await managerAlone();
      await eventually(
        'the rollback to begin',
        async () => ((await sub(ns))?.status?.rollback?.phase === 'RollingBack' ? true : undefined),
        60_000,
      );
      await killed(child);
      child = await managerAlone();
      await rolledBack(ns, TestOperator.v2);
      await consistentOnV1(ns);
      expect(await storedWidgets(ns)).toEqual(before);
    } finally {
      await killed(child);
      manager = await startTestManager();
    }
  });

  it('a rollback stopped after removing the CSV rolled back from, before its InstallPlan, removes the InstallPlan when the manager starts again', async () => {
    const ns = await subscribed('5m', testBundle('0.2.0'));
    await inPhase(ns, TestOperator.v2, 'Succeeded');
    await eventually('0.1.0 to be gone', async () =>
      (await csvPhase(ns, TestOperator.v1)) ? undefined : true,
    );
    await makeWidgets(ns);
    const before = await storedWidgets(ns);
    const v2Plans = async () =>
      (await list<InstallPlan>(Resources.InstallPlan, ns))
        .filter((p) => p.spec.clusterServiceVersionNames.includes(TestOperator.v2))
        .map((p) => p.metadata.name!);
    const [v2Plan] = await v2Plans();
    expect(v2Plan).toBeDefined();
    // The state a manager killed between its two deletions leaves (0.2.0's CSV gone, its
    // InstallPlan not), made deterministic: the API server refuses to delete InstallPlans of this
    // namespace until the manager is stopped.
    const undeletable = await refuseInstallPlanDeletes(ns, v2Plan!);
    try {
      const result = await bosunCli('rollback', '-n', ns, 'testop', '--timeout', '0');
      expect(result, result.err).toMatchObject({ code: 0 });
      await inPhase(ns, TestOperator.v1, 'Succeeded');
      await eventually('0.2.0 to be gone', async () =>
        (await csvPhase(ns, TestOperator.v2)) ? undefined : true,
      );
      // While 0.2.0's InstallPlan is there, the rollback is not finished.
      await new Promise((r) => setTimeout(r, 3_000));
      expect((await sub(ns))?.status?.rollback?.phase).toBe('RollingBack');
      expect(await v2Plans()).toEqual([v2Plan]);
      await manager?.stop();
      manager = undefined;
    } finally {
      await undeletable.remove();
    }
    manager = await startTestManager();
    await rolledBack(ns, TestOperator.v2);
    await consistentOnV1(ns);
    expect(await v2Plans()).toEqual([]);
    expect(await storedWidgets(ns)).toEqual(before);
  });

  it('objects of the rollback InstallPlan that go before the rollback finishes are put back, and the rollback waits for them', async () => {
    const ns = await subscribed('5m', testBundle('0.2.0'));
    await inPhase(ns, TestOperator.v2, 'Succeeded');
    await eventually('0.1.0 to be gone', async () =>
      (await csvPhase(ns, TestOperator.v1)) ? undefined : true,
    );
    // The rollback is kept from finishing (0.2.0's InstallPlan cannot be deleted) until the
    // manager is stopped, so that objects of the rollback's InstallPlan can be taken away in
    // between: what the garbage collection of 0.2.0 (a ServiceAccount both versions ship) or a
    // late cleanup after 0.1.0's earlier deletion (its ClusterRole) did in full runs.
    const [v2Plan] = (await list<InstallPlan>(Resources.InstallPlan, ns))
      .filter((p) => p.spec.clusterServiceVersionNames.includes(TestOperator.v2))
      .map((p) => p.metadata.name!);
    const undeletable = await refuseInstallPlanDeletes(ns, v2Plan!);
    let rollbackPlan: InstallPlan | undefined;
    try {
      const result = await bosunCli('rollback', '-n', ns, 'testop', '--timeout', '0');
      expect(result, result.err).toMatchObject({ code: 0 });
      await inPhase(ns, TestOperator.v1, 'Succeeded');
      rollbackPlan = await eventually('the rollback InstallPlan to complete', async () =>
        (await list<InstallPlan>(Resources.InstallPlan, ns)).find(
          (p) => p.metadata.name?.startsWith('rollback-') && p.status?.phase === 'Complete',
        ),
      );
      expect((await sub(ns))?.status?.rollback?.phase).toBe('RollingBack');
      await manager?.stop();
      manager = undefined;
    } finally {
      await undeletable.remove();
    }
    const steps = rollbackPlan.status?.plan ?? [];
    const lost = steps.filter((s) => ['ServiceAccount', 'ClusterRole'].includes(s.resource.kind));
    expect(lost.map((s) => s.resource.kind).sort()).toEqual(['ClusterRole', 'ServiceAccount']);
    const pathOf = (kind: string, name: string) =>
      kind === 'ServiceAccount'
        ? `/api/v1/namespaces/${ns}/serviceaccounts/${name}`
        : `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`;
    for (const { resource } of lost)
      await client().request({ method: 'DELETE', path: pathOf(resource.kind, resource.name) });

    manager = await startTestManager();
    await rolledBack(ns, TestOperator.v2);
    for (const { resource } of lost) {
      const back = await client().request<{ metadata: { ownerReferences?: { name: string }[] } }>({
        path: pathOf(resource.kind, resource.name),
      });
      if (resource.kind === 'ServiceAccount')
        expect(back.metadata.ownerReferences?.map((o) => o.name)).toEqual([TestOperator.v1]);
    }
    await consistentOnV1(ns);
    const reapplied = (await eventsFor(ns, 'testop')).filter((e) => e.reason === 'RollbackReapplied');
    expect(reapplied.map((e) => e.message).join('\n')).toContain(`ServiceAccount ${ns}/`);
  });

  it('`bosun rollback` is refused, changing nothing, when the live CRD no longer serves the version the older operator needs', async () => {
    // A CRD of this test's own (the test operator's is shared by every test): 0.2.0 adds v1beta1
    // (stored) beside v1alpha1; an admin then stops serving v1alpha1.
    const name = 'gizmos.rollback.bosun.dev';
    const v1crd = {
      ...testCrd,
      metadata: { name },
      spec: {
        ...testCrd.spec,
        group: 'rollback.bosun.dev',
        names: { kind: 'Gizmo', listKind: 'GizmoList', plural: 'gizmos', singular: 'gizmo' },
      },
    };
    const alpha = { ...testCrd.spec.versions[0]!, storage: false };
    const v2crd = {
      ...v1crd,
      spec: { ...v1crd.spec, versions: [alpha, { ...alpha, name: 'v1beta1', storage: true }] },
    };
    const gizmoBundle = (version: '0.1.0' | '0.2.0', crd: object) => {
      const base = testCSV(version);
      const owned = [{ name, version: 'v1alpha1', kind: 'Gizmo' }];
      const csv = { ...base, spec: { ...base.spec, customresourcedefinitions: { owned } } };
      const b = testBundle(version, csv);
      return { ...b, properties: b.properties.map((p, i) => (i === 1 ? inline(crd) : p)) };
    };
    const ns = await subscribed('5m', gizmoBundle('0.2.0', v2crd), gizmoBundle('0.1.0', v1crd));
    await inPhase(ns, TestOperator.v2, 'Succeeded');
    await eventually('0.1.0 to be gone', async () =>
      (await csvPhase(ns, TestOperator.v1)) ? undefined : true,
    );
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
    const live = await client().request<{ spec: { versions: { name: string; served: boolean }[] } }>({
      path: crdPath,
    });
    await client().request({
      method: 'PATCH',
      path: crdPath,
      contentType: 'application/merge-patch+json',
      body: {
        spec: {
          versions: live.spec.versions.map((v) => (v.name === 'v1alpha1' ? { ...v, served: false } : v)),
        },
      },
    });
    const crdBefore = await client().request<{ metadata: { resourceVersion: string } }>({ path: crdPath });

    const result = await bosunCli('rollback', '-n', ns, 'testop');
    expect(result.code).not.toBe(0);
    expect(result.err).toContain('rollback refused');
    expect(result.err).toContain(
      `needs Gizmo v1alpha1 of CustomResourceDefinition ${name}, which no longer serves it`,
    );
    const s = await sub(ns);
    expect(s?.status?.rollback).toMatchObject({
      phase: 'Refused',
      from: TestOperator.v2,
      to: TestOperator.v1,
    });
    // The command records the refusal; the manager's next reconcile of the Subscription writes
    // the condition from it.
    const refusedCondition = await eventually('the RolledBack condition to say RollbackRefused', async () =>
      (await sub(ns))?.status?.conditions?.find(
        (c) => c.type === 'RolledBack' && c.reason === 'RollbackRefused',
      ),
    );
    expect(refusedCondition).toMatchObject({ status: 'False', reason: 'RollbackRefused' });
    // Nothing changed: 0.2.0 runs on, alone, and the CRD is as the admin left it.
    await new Promise((r) => setTimeout(r, 2_000));
    const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
    expect(csvs.map((c) => `${c.metadata.name}:${c.status?.phase}`)).toEqual([
      `${TestOperator.v2}:Succeeded`,
    ]);
    const crdAfter = await client().request<{ metadata: { resourceVersion: string } }>({ path: crdPath });
    expect(crdAfter.metadata.resourceVersion).toBe(crdBefore.metadata.resourceVersion);
    expect((await eventsFor(ns, 'testop')).map((e) => e.reason)).toContain('RollbackRefused');
  });
});
