/**
 * A manager killed (SIGKILL) over and over, at random points of an install, an upgrade, a
 * rollback and an uninstall, converges each time to the end state of the same flow never
 * interrupted: no InstallPlan twice, nothing of a replaced or removed version left behind, no
 * custom resource lost.
 *
 * The reference flow runs first, in a namespace of its own, under one manager process that is
 * never killed; each of its phases is timed. The same flow then runs in a second namespace, and
 * during each phase the manager is SIGKILLed after a random delay within that phase's reference
 * duration (counted from the moment the new process serves HTTP, so no kill is wasted on the
 * process loading its code), restarted at once, and killed again, `killsPerPhase` times. The delays come
 * from a seeded generator; the seed is printed and `BOSUN_TEST_SEED` replays a run. After the
 * last kill of a phase the manager is left running, and what the two namespaces hold (with the
 * namespace and API group names replaced) must become equal and stay equal.
 *
 * Each namespace installs the samples with an API group of its own (`uniqueGroup()`): CRDs are
 * cluster-wide, and the 0.2 CRD (which adds a field) must not be the one the other flow finds.
 *
 * It runs by default, with the seed 20261126; when the flows differ, the failure names a file
 * with every manager process's log (the reference's first). What it found so far, each fixed with
 * a test of its own: a rollback refused by a manager that had not read its catalog yet; an
 * upgrade's CSV losing its replaces when its InstallPlan ran again; the InstallPlan of the
 * version rolled back from left behind by a manager killed between its two deletions; and, in
 * the uninterrupted run, a late cleanup of the version rolled back to deleting the ClusterRole
 * its rollback InstallPlan had just applied. The first fixes of the last two declared a rollback
 * finished while the garbage collection of the version rolled back from could still take objects
 * both versions ship; a rollback now finishes only once every object of its InstallPlan is there
 * to stay, and applies the plan again when one went.
 */
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { KubeObject, ResourceType } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import { Builtin } from '../../../src/kube/resources.js';
import {
  bosunCli,
  catalogSource,
  client,
  ConfigMapResource,
  create,
  get,
  list,
  mergePatch,
  namespaceWithOperatorGroup,
  remove,
  Resources,
  subscription,
} from '../controllers/support.js';
import { crdName, sampleCatalogsData, SamplePackage, uniqueGroup } from '../controllers/operator-support.js';
import { eventually } from '../support.js';
import { killWith, managerProcess, type ManagerProcess } from './manager-process.js';
import { seededRandom } from '../../support/random.js';

const seed = Number(process.env.BOSUN_TEST_SEED ?? 20_261_126);
const killsPerPhase = 5;
const V1 = 'bosun-sample.v0.1.1';
const V2 = 'bosun-sample.v0.2.1';

interface Flow {
  ns: string;
  group: string;
}

/** A namespace with its own OperatorGroup and catalog `samples` (both samples, their API in a group of its own). */
async function newFlow(prefix: string): Promise<Flow> {
  const ns = await namespaceWithOperatorGroup(prefix);
  const group = uniqueGroup();
  await create(ConfigMapResource, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'samples' },
    data: await sampleCatalogsData(group),
  } as never);
  await create(
    Resources.CatalogSource,
    ns,
    catalogSource(ns, 'samples', { sourceType: 'configmap', configMap: 'samples' }),
  );
  return { ns, group };
}

const RoleResource: ResourceType = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'Role',
  plural: 'roles',
  namespaced: true,
};
const RoleBindingResource: ResourceType = { ...RoleResource, kind: 'RoleBinding', plural: 'rolebindings' };
const ClusterRoleResource: ResourceType = {
  ...RoleResource,
  kind: 'ClusterRole',
  plural: 'clusterroles',
  namespaced: false,
};
const ClusterRoleBindingResource: ResourceType = {
  ...ClusterRoleResource,
  kind: 'ClusterRoleBinding',
  plural: 'clusterrolebindings',
};
const ServiceAccountResource: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  namespaced: true,
};

const widgetsPath = (f: Flow) => `/apis/${f.group}/v1alpha1/namespaces/${f.ns}/widgets`;

async function listWith<T extends KubeObject>(resource: ResourceType, ns: string, labelSelector?: string) {
  const path =
    resource.namespaced && ns
      ? `${resource.group ? `/apis/${resource.group}` : '/api'}/${resource.version}/namespaces/${ns}/${resource.plural}`
      : `${resource.group ? `/apis/${resource.group}` : '/api'}/${resource.version}/${resource.plural}`;
  return (await client().request<{ items: T[] }>({ path, query: labelSelector ? { labelSelector } : {} }))
    .items;
}

/**
 * Everything the flow has in the cluster, as text with the namespace and group names replaced, so
 * that two flows compare equal when they hold the same. InstallPlans are counted by what they
 * install, approval and phase (their names are generated): a duplicate shows as a second entry.
 */
async function snapshot(f: Flow) {
  const norm = (s: string) => s.replaceAll(f.ns, 'NS').replaceAll(f.group, 'GROUP');
  const names = (objs: KubeObject[]) => objs.map((o) => norm(o.metadata?.name ?? '')).sort();
  // What a CSV owns, apart from what the OperatorGroup owns (its admin, edit and view roles, which
  // stay while the OperatorGroup does). Cluster RBAC names end in a hash of their rules, which name
  // the flow's own API group: the hash is replaced, the count kept (a duplicate still shows).
  const owned = `olm.owner.namespace=${f.ns},olm.owner.kind=ClusterServiceVersion`;
  const ogOwned = `olm.owner.namespace=${f.ns},olm.owner.kind=OperatorGroup`;
  const unhashed = (objs: KubeObject[]) => names(objs).map((n) => n.replace(/-[A-Za-z0-9]{10,}$/, '-HASH'));
  // Read at once rather than one after another: a poll takes one round trip, not thirteen, and
  // the reads are closer to one moment of the cluster.
  const [sub, crd, plans, csvs, deployments, serviceAccounts, roles, roleBindings] = await Promise.all([
    get<Subscription>(Resources.Subscription, f.ns, SamplePackage),
    get<KubeObject & { spec: { versions: { name: string; served: boolean; storage: boolean }[] } }>(
      Builtin.CustomResourceDefinition,
      '',
      crdName(f.group),
    ),
    list<InstallPlan>(Resources.InstallPlan, f.ns),
    list<ClusterServiceVersion>(Resources.ClusterServiceVersion, f.ns),
    listWith<KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } }>(
      Builtin.Deployment,
      f.ns,
      'olm.managed=true',
    ),
    listWith(ServiceAccountResource, f.ns, 'olm.managed=true'),
    listWith(RoleResource, f.ns),
    listWith(RoleBindingResource, f.ns),
  ]);
  const [clusterRoles, clusterRoleBindings, operatorGroupRoles, widgets] = await Promise.all([
    listWith(ClusterRoleResource, '', owned),
    listWith(ClusterRoleBindingResource, '', owned),
    listWith(ClusterRoleResource, '', ogOwned),
    crd
      ? client()
          .request<{ items: KubeObject[] }>({ path: widgetsPath(f) })
          .then((r) => r.items)
      : [],
  ]);
  return {
    subscription: sub && {
      installedCSV: sub.status?.installedCSV,
      currentCSV: sub.status?.currentCSV,
      state: sub.status?.state,
      rollback:
        sub.status?.rollback &&
        norm(
          `${sub.status.rollback.phase} ${sub.status.rollback.from} -> ${sub.status.rollback.to} ${sub.status.rollback.message ?? ''}`,
        ),
    },
    installPlans: plans
      .map(
        (p) =>
          `${p.spec.clusterServiceVersionNames.join('+')} approved=${p.spec.approved} ${p.status?.phase}`,
      )
      .sort(),
    csvs: csvs.map((c) => `${c.metadata.name} ${c.status?.phase}`).sort(),
    deployments: deployments
      .map((d) => `${d.metadata?.name} ${d.spec.template.spec.containers.map((c) => c.image).join(',')}`)
      .sort(),
    serviceAccounts: names(serviceAccounts),
    roles: names(roles),
    roleBindings: names(roleBindings),
    clusterRoles: unhashed(clusterRoles),
    clusterRoleBindings: unhashed(clusterRoleBindings),
    crd: crd?.spec.versions.map((v) => `${v.name} served=${v.served} storage=${v.storage}`),
    widgets: names(widgets),
    operatorGroupRoles: unhashed(operatorGroupRoles),
  };
}

type Snapshot = Awaited<ReturnType<typeof snapshot>>;

/**
 * Whether the garbage collector has caught up in the flow's namespace: no object there is owned
 * only by CSVs that are gone. The reference's end state is recorded only then; recorded as soon
 * as a phase is done, it held (on a loaded machine) the Roles of the CSV an upgrade had just
 * replaced, which no run can match once they are collected.
 */
async function collected(f: Flow): Promise<boolean> {
  const [csvs, ...lists] = await Promise.all([
    list<ClusterServiceVersion>(Resources.ClusterServiceVersion, f.ns),
    ...[Builtin.Deployment, ServiceAccountResource, RoleResource, RoleBindingResource].map((r) =>
      listWith(r, f.ns),
    ),
  ]);
  const live = new Set(csvs.map((c) => c.metadata.uid));
  return lists.flat().every((o) => {
    const owners = (o.metadata?.ownerReferences ?? []).filter((r) => r.kind === 'ClusterServiceVersion');
    return owners.length === 0 || owners.some((r) => live.has(r.uid));
  });
}

/** The custom resources of the flow by name and uid: the same uid means the very object was kept. */
async function widgetIds(f: Flow): Promise<string[]> {
  const items = (await client().request<{ items: KubeObject[] }>({ path: widgetsPath(f) })).items;
  return items.map((w) => `${w.metadata?.name}/${w.metadata?.uid}`).sort();
}

const csvPhase = async (f: Flow, name: string) =>
  (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, f.ns, name))?.status?.phase;

async function approveWaiting(f: Flow, csv: string): Promise<void> {
  const plan = await eventually(`a plan for ${csv} waiting for approval in ${f.ns}`, async () =>
    (await list<InstallPlan>(Resources.InstallPlan, f.ns)).find(
      (p) => p.status?.phase === 'RequiresApproval' && p.spec.clusterServiceVersionNames.includes(csv),
    ),
  );
  await mergePatch(Resources.InstallPlan, f.ns, plan.metadata.name!, { spec: { approved: true } });
}

interface Phase {
  name: string;
  /** What the user does to begin the phase. */
  begin(f: Flow): Promise<void>;
  /** Whether the reference flow has finished the phase. */
  done(f: Flow): Promise<boolean>;
}

const phases: Phase[] = [
  {
    name: 'install',
    async begin(f) {
      await create(
        Resources.Subscription,
        f.ns,
        subscription(f.ns, SamplePackage, {
          name: SamplePackage,
          source: 'samples',
          channel: 'stable',
          startingCSV: V1,
          installPlanApproval: 'Manual',
        }),
      );
      await approveWaiting(f, V1);
    },
    // Installed, and the upgrade planned and waiting for approval.
    done: async (f) =>
      (await csvPhase(f, V1)) === 'Succeeded' &&
      (await list<InstallPlan>(Resources.InstallPlan, f.ns)).some(
        (p) => p.status?.phase === 'RequiresApproval' && p.spec.clusterServiceVersionNames.includes(V2),
      ),
  },
  {
    name: 'upgrade',
    begin: (f) => approveWaiting(f, V2),
    done: async (f) =>
      (await csvPhase(f, V2)) === 'Succeeded' &&
      (await list(Resources.ClusterServiceVersion, f.ns)).length === 1,
  },
  {
    name: 'rollback',
    async begin(f) {
      // Without waiting for the answer (--timeout 0), as the kills must come while it is under way.
      const r = await bosunCli('rollback', '-n', f.ns, SamplePackage, '--timeout', '0');
      expect(r, r.err).toMatchObject({ code: 0 });
    },
    done: async (f) => {
      const s = await get<Subscription>(Resources.Subscription, f.ns, SamplePackage);
      return (
        s?.status?.rollback?.phase === 'RolledBack' &&
        (await csvPhase(f, V1)) === 'Succeeded' &&
        (await list(Resources.ClusterServiceVersion, f.ns)).length === 1
      );
    },
  },
  {
    name: 'uninstall',
    async begin(f) {
      await remove(Resources.Subscription, f.ns, SamplePackage);
      await remove(Resources.ClusterServiceVersion, f.ns, V1);
    },
    done: async (f) => {
      const s = await snapshot(f);
      return (
        // The InstallPlans go with their Subscription (the garbage collector removes them).
        s.installPlans.length === 0 &&
        s.csvs.length === 0 &&
        s.deployments.length === 0 &&
        s.clusterRoles.length === 0 &&
        s.clusterRoleBindings.length === 0 &&
        s.serviceAccounts.length === 0
      );
    },
  },
];

let manager: ManagerProcess | undefined;
/** Every manager process's log, in start order, written to a file when the flows differ. */
const managerLogs: string[][] = [];
/** How long each manager process took to serve HTTP, in ms: most of the test's time. */
const startMs: number[] = [];
const start = async () => {
  const t = Date.now();
  const m = await managerProcess({ kubeconfig: inject('kubeconfig') });
  startMs.push(Date.now() - t);
  managerLogs.push(m.log);
  return m;
};

/** Writes the managers' logs to a file and returns its path, for a failure message to name. */
async function saveLogs(what: string): Promise<string> {
  const path = join(tmpdir(), `bosun-sigkill-${seed}-${what}-${process.pid}.log`);
  await writeFile(path, managerLogs.map((l, i) => `=== manager ${i}\n${l.join('\n')}\n`).join(''));
  return path;
}

beforeAll(async () => {
  manager = await start();
});

afterAll(async () => {
  if (manager) await killWith(manager, 'SIGKILL');
});

/** Three custom resources, made once the operator runs. */
async function makeWidgets(f: Flow): Promise<void> {
  for (const name of ['w1', 'w2', 'w3'])
    await eventually(`Widget ${name}`, () =>
      client().request({
        method: 'POST',
        path: widgetsPath(f),
        body: { apiVersion: `${f.group}/v1alpha1`, kind: 'Widget', metadata: { name }, spec: { size: 1 } },
      }),
    );
}

describe('a manager SIGKILLed at random points', () => {
  it(`converges to the end state of an uninterrupted install, upgrade, rollback and uninstall (seed ${seed})`, async () => {
    console.log(`sigkill convergence: seed ${seed} (BOSUN_TEST_SEED replays it)`);
    const random = seededRandom(seed);

    // The reference: every phase under one manager never killed, timed, its end state recorded.
    const ref = await newFlow('sk-ref');
    const refSnapshots: Snapshot[] = [];
    const refMs: number[] = [];
    for (const phase of phases) {
      const t = Date.now();
      await phase.begin(ref);
      await eventually(
        `the reference ${phase.name} to finish`,
        async () => ((await phase.done(ref)) && (await collected(ref)) ? true : undefined),
        120_000,
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}; it holds ${JSON.stringify(await snapshot(ref))}`);
      });
      refMs.push(Date.now() - t);
      if (phase.name === 'install') await makeWidgets(ref);
      // (eventually: a new CRD's storage answers 429 for a moment)
      refSnapshots.push(await eventually('the reference snapshot', () => snapshot(ref)));
    }
    console.log(
      `reference phase durations (ms): ${phases.map((p, i) => `${p.name} ${refMs[i]}`).join(', ')}`,
    );

    const f = await newFlow('sk-kill');
    let widgets: string[] = [];
    const kills: string[] = [];
    for (const [i, phase] of phases.entries()) {
      await phase.begin(f);
      for (let k = 0; k < killsPerPhase; k++) {
        const delay = Math.round(random() * refMs[i]!);
        await new Promise((r) => setTimeout(r, delay));
        await killWith(manager!, 'SIGKILL');
        kills.push(`${phase.name}+${delay}ms`);
        manager = await start();
      }
      // Left running, the manager must reach the reference's end state and stay there.
      const expected = refSnapshots[i]!;
      let last: Snapshot | undefined;
      await eventually(
        `the ${phase.name} to converge to the reference's end state`,
        async () => {
          if (phase.name === 'install' && widgets.length === 0 && (await csvPhase(f, V1)) === 'Succeeded') {
            await makeWidgets(f);
            widgets = await widgetIds(f);
          }
          last = await snapshot(f);
          return JSON.stringify(last) === JSON.stringify(expected) ? true : undefined;
        },
        180_000,
      ).catch(async (err: Error) => {
        const logs = await saveLogs(phase.name);
        expect(last, `${err.message} (the managers' logs: ${logs})`).toEqual(expected);
      });
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await snapshot(f), `${phase.name}: still the same 3 s later`).toEqual(expected);
      // The very custom resources made after the install, not copies.
      expect(await widgetIds(f)).toEqual(widgets);
    }
    expect(kills).toHaveLength(phases.length * killsPerPhase);
    console.log(`sigkill convergence: ${kills.length} kills: ${kills.join(' ')}`);
    const sorted = [...startMs].sort((x, y) => x - y);
    console.log(
      `sigkill convergence: ${startMs.length} manager starts, ${sorted.reduce((x, y) => x + y, 0)} ms in all, median ${sorted[sorted.length >> 1]} ms`,
    );
  }, 900_000);
});
