/**
 * `kubectl get operators` as OLM users know it: the cluster-scoped Operator `<package>.<namespace>`
 * of an installed operator, listing every component by its label, following installs, upgrades
 * and uninstalls, recreated while anything of it is left, and good enough for the `kubectl
 * operator` plugin's uninstall, which reads it to find what to delete. Against a running manager
 * on the real control plane, with the sample operator (its API in a group of each test's own) and
 * once with a real operator from the corpus (BOSUN_CORPUS_DIR).
 */
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type {
  ClusterServiceVersion,
  InstallPlan,
  Operator,
  Subscription,
} from '../../../src/apis/operators.js';
import { Builtin } from '../../../src/kube/resources.js';
import { DefaultGlobalNamespace } from '../../../src/manager/defaults.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { planPackages, subscribe } from '../../support/corpus-install.js';
import { kubectlOperatorBinary, KubectlOperatorVersion } from '../../support/kubectl-operator.js';
import { eventually, freshNamespace } from '../support.js';
import {
  approvePlan,
  crdName,
  csvSucceeded,
  getOperator,
  kubectl,
  operatorNameFor,
  refsOf,
  run,
  sampleCatalogJson,
  subscribeSample,
  uniqueGroup,
} from './operator-support.js';
import {
  client,
  create,
  get,
  list,
  namespaceWithCatalog,
  remove,
  Resources,
  serveCorpusCatalog,
  startTestManager,
} from './support.js';

let manager: RunningManager;
beforeAll(async () => {
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
});

/** The Operator resource as kubectl names it without ambiguity. */
const OperatorsResource = 'operators.operators.coreos.com';
const ComponentLabelPrefix = 'operators.coreos.com/';

/** A namespace serving the sample operator's catalog (API group `group`), with an OperatorGroup. */
async function sampleNamespace(prefix: string, group: string): Promise<string> {
  return namespaceWithCatalog(prefix, await sampleCatalogJson(group));
}

/** Waits until the Operator exists and `check` holds for its refs (`kind/namespace/name`). */
function operatorWhere(name: string, what: string, check: (refs: string[]) => boolean): Promise<Operator> {
  return eventually(
    `Operator ${name}: ${what}`,
    async () => {
      const op = await getOperator(name);
      return op && check(refsOf(op)) ? op : undefined;
    },
    120_000,
  );
}

const kindsOf = (refs: string[]) => [...new Set(refs.map((r) => r.split('/')[0]))].sort();

/** Every kind the sample operator is made of once installed. */
const installedKinds = [
  'ClusterRole',
  'ClusterRoleBinding',
  'ClusterServiceVersion',
  'CustomResourceDefinition',
  'Deployment',
  'InstallPlan',
  'OperatorCondition',
  'Role',
  'RoleBinding',
  'ServiceAccount',
  'Subscription',
];

describe('the Operator of an installed operator', () => {
  it('kubectl get operators lists <package>.<namespace>, with every component, and follows an upgrade', async () => {
    const group = uniqueGroup();
    const ns = await sampleNamespace('op', group);
    // The plugin-less view first: subscribe at the oldest version, approving each plan by hand.
    await subscribeSample(ns, { startingCSV: 'bosun-sample.v0.1.0', installPlanApproval: 'Manual' });
    const first = await approvePlan(ns, 'bosun-sample.v0.1.0');
    await csvSucceeded(ns, 'bosun-sample.v0.1.0');
    const name = operatorNameFor(ns);
    await operatorWhere(name, 'every component listed', (refs) =>
      installedKinds.every((k) => kindsOf(refs).includes(k)),
    );
    // The Operator lists the CSV with its state when it last looked: it may still say Installing
    // for a moment after the CSV has succeeded, until the CSV's change reaches it.
    const op = await eventually('the Operator to show the CSV Succeeded', async () => {
      const now = await getOperator(name);
      const csv = now?.status?.components?.refs?.find((r) => r.kind === 'ClusterServiceVersion');
      return csv?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True') ? now : undefined;
    });

    // Fully qualified: other tests of the run leave CRDs whose plural is also `operators` (the OLM
    // CRDs of the parity test, in another group), which kubectl's discovery cache may still name.
    const table = await kubectl(['get', OperatorsResource]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^${name.replaceAll('.', '\\.')}\\s`, 'm'));

    const refs = refsOf(op);
    expect(refs).toEqual(
      expect.arrayContaining([
        `Subscription/${ns}/bosun-sample`,
        `ClusterServiceVersion/${ns}/bosun-sample.v0.1.0`,
        `CustomResourceDefinition/${crdName(group)}`,
        `Deployment/${ns}/bosun-sample-operator`,
        `ServiceAccount/${ns}/bosun-sample-operator`,
        `OperatorCondition/${ns}/bosun-sample.v0.1.0`,
      ]),
    );
    expect(kindsOf(refs)).toEqual(installedKinds);
    // One InstallPlan: the Subscription's latest (which may already be the upgrade's).
    await eventually('the Subscription’s latest InstallPlan, alone, listed', async () => {
      const latest = (await get<Subscription>(Resources.Subscription, ns, 'bosun-sample'))?.status
        ?.installPlanRef?.name;
      const plans = refsOf(await getOperator(name)).filter((r) => r.startsWith('InstallPlan/'));
      return plans.length === 1 && plans[0] === `InstallPlan/${ns}/${latest}` ? true : undefined;
    });
    const key = `${ComponentLabelPrefix}${name}`;
    expect(op.status?.components?.labelSelector).toEqual({ matchExpressions: [{ key, operator: 'Exists' }] });
    // Each ref names an object that carries the label, and the CSV's state is its phase.
    const csvRef = op.status?.components?.refs?.find((r) => r.kind === 'ClusterServiceVersion');
    expect(csvRef).toMatchObject({
      apiVersion: 'operators.coreos.com/v1alpha1',
      conditions: [{ type: 'Succeeded', status: 'True', reason: 'InstallSucceeded' }],
    });
    const deploymentRef = op.status?.components?.refs?.find((r) => r.kind === 'Deployment');
    expect(deploymentRef?.conditions?.map((c) => c.type)).toContain('Available');
    const sa = await get<KubeObject>(Builtin.ServiceAccount, ns, 'bosun-sample-operator');
    expect(sa?.metadata?.labels?.[key]).toBe('');

    // The upgrade: its InstallPlan becomes a component (the first one no longer is), then its CSV,
    // and the CSV it replaces goes.
    const upgrade = await eventually('the upgrade to be planned', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'bosun-sample');
      const plan = s?.status?.installPlanRef?.name;
      return plan && plan !== first.metadata.name && s.status?.currentCSV !== 'bosun-sample.v0.1.0'
        ? { plan, csv: s.status!.currentCSV! }
        : undefined;
    });
    await operatorWhere(
      name,
      'the upgrade plan listed instead of the first',
      (r) =>
        r.includes(`InstallPlan/${ns}/${upgrade.plan}`) &&
        !r.includes(`InstallPlan/${ns}/${first.metadata.name}`),
    );
    await approvePlan(ns, upgrade.csv);
    await csvSucceeded(ns, upgrade.csv);
    const after = await operatorWhere(
      name,
      'the new CSV listed and the old one gone',
      (r) =>
        r.includes(`ClusterServiceVersion/${ns}/${upgrade.csv}`) &&
        !r.includes(`ClusterServiceVersion/${ns}/bosun-sample.v0.1.0`) &&
        r.includes(`OperatorCondition/${ns}/${upgrade.csv}`) &&
        !r.includes(`OperatorCondition/${ns}/bosun-sample.v0.1.0`),
    );
    expect(kindsOf(refsOf(after))).toEqual(installedKinds);
  });

  it('an uninstall empties it but for the CRD; deleted while anything is left it comes back, once nothing is left it stays gone', async () => {
    const group = uniqueGroup();
    const ns = await sampleNamespace('opdel', group);
    await subscribeSample(ns);
    const csv = await csvSucceeded(ns);
    const name = operatorNameFor(ns);
    await operatorWhere(name, 'every component listed', (refs) =>
      installedKinds.every((k) => kindsOf(refs).includes(k)),
    );

    // The Subscription goes, and with it (garbage collected) its InstallPlans.
    await remove(Resources.Subscription, ns, 'bosun-sample');
    await operatorWhere(
      name,
      'no Subscription nor InstallPlan',
      (r) => !kindsOf(r).includes('Subscription') && !kindsOf(r).includes('InstallPlan'),
    );
    // The CSV goes, and with it everything it owned; its CRD stays, as custom resources outlive it.
    await remove(Resources.ClusterServiceVersion, ns, csv.metadata.name!);
    const left = await operatorWhere(
      name,
      'only the CRD left',
      (r) => r.length === 1 && r[0] === `CustomResourceDefinition/${crdName(group)}`,
    );

    // Deleted while the CRD is left, it is made again.
    const deleted = await kubectl(['delete', OperatorsResource, name]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const back = await eventually('the Operator back', async () => {
      const op = await getOperator(name);
      return op && op.metadata.uid !== left.metadata.uid && refsOf(op).length === 1 ? op : undefined;
    });
    expect(refsOf(back)).toEqual([`CustomResourceDefinition/${crdName(group)}`]);

    // Once the CRD goes too it has no refs, and deleted then it stays gone.
    await remove(Builtin.CustomResourceDefinition, '', crdName(group));
    await operatorWhere(name, 'no refs', (r) => r.length === 0);
    expect(back.status?.components?.labelSelector).toBeDefined();
    expect((await kubectl(['delete', OperatorsResource, name])).code).toBe(0);
    await eventually('the Operator gone', async () => ((await getOperator(name)) ? undefined : true));
    await manager.idle();
    expect(await getOperator(name)).toBeUndefined();
  });

  it('deleted while the manager is down, it is back at the next start with the components as they are then', async () => {
    const group = uniqueGroup();
    const ns = await sampleNamespace('oprst', group);
    await subscribeSample(ns);
    const csv = await csvSucceeded(ns);
    const name = operatorNameFor(ns);
    const before = await operatorWhere(name, 'every component listed', (refs) =>
      installedKinds.every((k) => kindsOf(refs).includes(k)),
    );
    await manager.stop();
    try {
      expect((await kubectl(['delete', OperatorsResource, name])).code).toBe(0);
      // Its InstallPlans go with it, by the garbage collector: no Bosun needed.
      await remove(Resources.Subscription, ns, 'bosun-sample');
      await eventually('the InstallPlans gone', async () =>
        (await list<InstallPlan>(Resources.InstallPlan, ns)).length === 0 ? true : undefined,
      );
    } finally {
      manager = await startTestManager();
    }
    const back = await operatorWhere(
      name,
      'back, without the Subscription and InstallPlan',
      (r) => !kindsOf(r).includes('Subscription') && !kindsOf(r).includes('InstallPlan') && r.length > 0,
    );
    expect(back.metadata.uid).not.toBe(before.metadata.uid);
    expect(refsOf(back)).toContain(`ClusterServiceVersion/${ns}/${csv.metadata.name}`);
    expect(kindsOf(refsOf(back))).toEqual(
      installedKinds.filter((k) => k !== 'Subscription' && k !== 'InstallPlan'),
    );
  });

  it('an Operator someone made by hand lists what they label, and is left alone when nothing is labelled', async () => {
    const name = `handmade-${Date.now().toString(36)}`;
    const made = await kubectl(['create', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', metadata: { name } }),
    });
    expect(made.code, made.stderr).toBe(0);
    const empty = await eventually('its status', async () => {
      const op = await getOperator(name);
      return op?.status?.components ? op : undefined;
    });
    expect(refsOf(empty)).toEqual([]);
    const ns = await freshNamespace('hand');
    await create(Resources.Subscription, ns, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'mine', namespace: ns, labels: { [`${ComponentLabelPrefix}${name}`]: '' } },
      spec: { name: 'not-in-any-catalog', source: 'none', sourceNamespace: ns },
    } as Subscription);
    await operatorWhere(name, 'the labelled Subscription listed', (r) =>
      r.includes(`Subscription/${ns}/mine`),
    );
    await remove(Resources.Subscription, ns, 'mine');
    await operatorWhere(name, 'nothing listed', (r) => r.length === 0);
    // Nothing left: deleted, it stays deleted.
    expect((await kubectl(['delete', OperatorsResource, name])).code).toBe(0);
    await eventually('the Operator gone', async () => ((await getOperator(name)) ? undefined : true));
    await manager.idle();
    expect(await getOperator(name)).toBeUndefined();
  });
});

// ---- the kubectl operator plugin ----

const plugin = await kubectlOperatorBinary();
if (!plugin.ok) console.warn(`skipping the kubectl operator plugin test: ${plugin.why}`);

describe.skipIf(!plugin.ok)(`kubectl operator ${KubectlOperatorVersion}`, () => {
  it('uninstall --delete-all removes the operator, its custom resources and CRD, and its Operator, which stays gone', async () => {
    const group = uniqueGroup();
    const ns = await sampleNamespace('opplug', group);
    await subscribeSample(ns);
    await csvSucceeded(ns);
    const name = operatorNameFor(ns);
    await operatorWhere(name, 'every component listed', (refs) =>
      installedKinds.every((k) => kindsOf(refs).includes(k)),
    );
    await create({ group, version: 'v1alpha1', kind: 'Widget', plural: 'widgets', namespaced: true }, ns, {
      apiVersion: `${group}/v1alpha1`,
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { size: 1 },
    } as KubeObject);

    const path = plugin.ok ? plugin.path : '';
    const env = { KUBECONFIG: inject('kubeconfig') };
    const listed = await run(path, ['list-operands', 'bosun-sample', '-n', ns], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('w1');

    const out = await run(path, ['uninstall', 'bosun-sample', '-n', ns, '--delete-all', '--timeout', '5m'], {
      env,
    });
    expect(out.code, `${out.stdout}\n${out.stderr}`).toBe(0);
    expect(out.stderr + out.stdout).toContain(`operator "${name}" deleted`);

    expect(await getOperator(name)).toBeUndefined();
    expect(await get(Builtin.CustomResourceDefinition, '', crdName(group))).toBeUndefined();
    expect(await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns)).toEqual([]);
    expect(await list<InstallPlan>(Resources.InstallPlan, ns)).toEqual([]);
    expect(await list(Resources.OperatorGroup, ns)).toEqual([]);
    await manager.idle();
    expect(await getOperator(name)).toBeUndefined();
  });
});

// ---- a real operator ----

const corpus = process.env.BOSUN_CORPUS_DIR;
if (!corpus) console.warn('the Operator of a corpus operator is not checked: set BOSUN_CORPUS_DIR to run it');

describe.skipIf(!corpus)('the Operator of a real operator from the corpus', () => {
  it('etcd: every component of its install, each CRD it owns among them', async () => {
    const source = { name: `corpus-operator-${process.pid}`, namespace: DefaultGlobalNamespace };
    const { config, served } = await serveCorpusCatalog(corpus!, source.namespace, source.name);
    // A catalog in the global namespace is seen from every namespace: it must not outlive the test.
    onTestFinished(async () => {
      await remove(Resources.CatalogSource, source.namespace, source.name);
      served.close();
    });
    const plan = planPackages(config, `opc${process.pid}`).find((p) => p.package === 'etcd');
    if (!plan) throw new Error('the corpus has no etcd package');
    const c = client();
    try {
      await subscribe(c, plan, source);
    } finally {
      c.close();
    }
    const csv = await csvSucceeded(plan.namespace, plan.head, 300_000);
    const name = `etcd.${plan.namespace}`;
    const owned = (csv.spec.customresourcedefinitions?.owned ?? []).map(
      (d) => `CustomResourceDefinition/${d.name}`,
    );
    expect(owned.length).toBeGreaterThan(0);
    const op = await operatorWhere(
      name,
      'the CSV, its Deployment and each owned CRD listed',
      (r) =>
        [
          `ClusterServiceVersion/${plan.namespace}/${plan.head}`,
          `Subscription/${plan.namespace}/etcd`,
          ...owned,
        ].every((x) => r.includes(x)) &&
        kindsOf(r).includes('Deployment') &&
        kindsOf(r).includes('InstallPlan'),
    );
    expect(kindsOf(refsOf(op))).toEqual(
      expect.arrayContaining(['OperatorCondition', 'Role', 'RoleBinding', 'ServiceAccount']),
    );
    // Every ref is an object carrying the operator's label.
    const key = `${ComponentLabelPrefix}${name}`;
    const deployment = op.status?.components?.refs?.find((r) => r.kind === 'Deployment');
    const live = await get<KubeObject>(Builtin.Deployment, plan.namespace, deployment?.name ?? '');
    expect(live?.metadata?.labels?.[key]).toBe('');
    // Each API it provides has OLM's roles, owned by its CRD.
    for (const d of csv.spec.customresourcedefinitions?.owned ?? []) {
      for (const suffix of ['admin', 'edit', 'view', 'crdview']) {
        const role = await eventually(`ClusterRole ${d.name}-${d.version}-${suffix}`, () =>
          get<KubeObject>(Builtin.ClusterRole, '', `${d.name}-${d.version}-${suffix}`),
        );
        expect(role.metadata?.ownerReferences?.[0]).toMatchObject({
          kind: 'CustomResourceDefinition',
          name: d.name,
        });
      }
    }
    await remove(Resources.Subscription, plan.namespace, 'etcd');
    await remove(Resources.ClusterServiceVersion, plan.namespace, plan.head);
    const left = await operatorWhere(name, 'only its CRDs left', (r) =>
      r.every((x) => x.startsWith('CustomResourceDefinition/')),
    );
    expect(refsOf(left)).toEqual([...owned].sort());
  });
});
