/**
 * A manager process outlives its API server: on a control plane of this file's own (the API
 * server is killed and started again, which would disturb every other test file on the shared
 * one), `bosun operator run` keeps its PID through an API server outage, answers /healthz all
 * along, retries with a bounded backoff, and acts on what is made after the restart.
 *
 * And it catches up after its watches expired. A restarted API server's watch cache starts at
 * etcd's revision of that moment, so a watch resumed from any older resourceVersion is answered
 * 410 Gone: the manager is frozen (SIGSTOP) across a restart, things change while it cannot
 * see them (a catalog deleted, another created, a Subscription made), and the test shows that a
 * watch from the manager's last version is refused with 410 before it thaws it. Only a relist can
 * tell the manager about the deletion; it must learn it, and act on the rest, without a restart.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { KubeObject, ResourceType } from '../../../src/apis/meta.js';
import { type ClusterServiceVersion, type InstallPlan, Resources } from '../../../src/apis/operators.js';
import { down, startApiServer, stopApiServer, up } from '../../../src/cluster/controlplane.js';
import { collectionPath, KubeClient, objectPath } from '../../../src/kube/client.js';
import { loadKubeConfig } from '../../../src/kube/config.js';
import { Builtin } from '../../../src/kube/resources.js';
import { catalogSource, ConfigMapResource, subscription } from '../controllers/support.js';
import { crdName, sampleCatalogsData, SamplePackage, uniqueGroup } from '../controllers/operator-support.js';
import { eventually } from '../support.js';
import { catalogIds, killWith, managerProcess, type ManagerProcess, readyz } from './manager-process.js';

// With BOSUN_TEST_KUBECONFIG the run targets an existing cluster, whose API server is not ours to restart.
const skip = inject('clusterName') === '';
const clusterName = `apirestart-${process.pid}`;
const g = 'restart-global';
let c: KubeClient;
let m: ManagerProcess | undefined;
let group: string;

const post = (resource: ResourceType, ns: string, body: unknown) =>
  c.request<KubeObject>({ method: 'POST', path: collectionPath(resource, ns), body });
const items = async <T extends KubeObject>(resource: ResourceType, ns: string) =>
  (await c.request<{ items: T[] }>({ path: collectionPath(resource, ns) })).items;
const names = (objs: KubeObject[]) => objs.map((o) => o.metadata?.name).sort();

async function namespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${randomBytes(3).toString('hex')}`;
  await c.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
  return ns;
}

/** CatalogSource `name` in the global namespace, over a ConfigMap of both samples with their API in `group`. */
async function globalCatalog(name: string): Promise<void> {
  await post(ConfigMapResource, g, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: await sampleCatalogsData(group),
  });
  await post(
    Resources.CatalogSource,
    g,
    catalogSource(g, name, { sourceType: 'configmap', configMap: name }),
  );
}

/** A namespace with its own OperatorGroup, subscribed to bosun-sample from global catalog `source`. */
async function subscribed(prefix: string, source: string): Promise<string> {
  const ns = await namespace(prefix);
  await post(Resources.OperatorGroup, ns, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: ns },
    spec: { targetNamespaces: [ns] },
  });
  await post(
    Resources.Subscription,
    ns,
    subscription(ns, SamplePackage, {
      name: SamplePackage,
      source,
      sourceNamespace: g,
      channel: 'stable',
    }),
  );
  return ns;
}

/** Waits for the install in `ns` to succeed (the newest bosun-sample, in one plan). */
function installed(ns: string): Promise<ClusterServiceVersion> {
  return eventually(
    `a Succeeded CSV in ${ns}`,
    async () =>
      (await items<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns)).find(
        (csv) => csv.status?.phase === 'Succeeded',
      ),
    180_000,
  );
}

/**
 * Waits for the manager's part of an install in `ns`: its InstallPlan Complete, the CSV and its
 * Deployment written. Not the Deployment's availability: after an API server restart that is the
 * controller-manager's and kwok's to recover (they took up to 80 s here), not Bosun's.
 */
function planned(ns: string): Promise<true> {
  return eventually(
    `the manager to install bosun-sample in ${ns}`,
    async () => {
      const plans = await items<InstallPlan>(Resources.InstallPlan, ns);
      const csvs = await items(Resources.ClusterServiceVersion, ns);
      const deployments = await items(Builtin.Deployment, ns);
      return plans.length === 1 &&
        plans[0]!.status?.phase === 'Complete' &&
        names(csvs).join() === 'bosun-sample.v0.2.1' &&
        deployments.length > 0
        ? true
        : undefined;
    },
    120_000,
  );
}

const widgets = (ns: string) => `/apis/${group}/v1alpha1/namespaces/${ns}/widgets`;

/** What an install left in `ns`, by name, and the custom resources with their uids. */
async function snapshot(ns: string) {
  const widgetList = await c.request<{ items: KubeObject[] }>({ path: widgets(ns) });
  return {
    csvs: names(await items(Resources.ClusterServiceVersion, ns)),
    plans: names(await items(Resources.InstallPlan, ns)),
    deployments: names(await items(Builtin.Deployment, ns)),
    widgets: widgetList.items.map((w) => `${w.metadata?.name}/${w.metadata?.uid}`),
  };
}

async function alive(m: ManagerProcess): Promise<boolean> {
  return m.child.exitCode === null && m.child.signalCode === null;
}

const informerRetries = (m: ManagerProcess, from: number) =>
  m.log
    .slice(from)
    .map((l) => JSON.parse(l) as { msg?: string; informer?: string })
    .filter((r) => r.msg === 'informer error, retrying');

describe.skipIf(skip)('a manager under an API server that restarts', () => {
  beforeAll(async () => {
    const state = await up({ name: clusterName });
    c = new KubeClient(loadKubeConfig({ path: state.kubeconfig }).access);
    await c.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: g } } });
    group = uniqueGroup();
    m = await managerProcess({ kubeconfig: state.kubeconfig, globalNamespace: g });
    await eventually('the manager to be ready', async () =>
      (await readyz(m!)).status === 200 ? true : undefined,
    );
  }, 180_000);

  afterAll(async () => {
    if (m) await killWith(m, 'SIGKILL');
    if (!skip) await down({ name: clusterName });
  });

  it('keeps running through an API server outage, /healthz answering, and installs what is subscribed after it', async () => {
    const manager = m!;
    await globalCatalog('before');
    const ns1 = await subscribed('before', 'before');
    await installed(ns1);
    // The API server answers 429 for a moment while a new CRD's storage starts.
    await eventually('a Widget to be created', () =>
      c.request({
        method: 'POST',
        path: widgets(ns1),
        body: {
          apiVersion: `${group}/v1alpha1`,
          kind: 'Widget',
          metadata: { name: 'kept' },
          spec: { size: 1 },
        },
      }),
    );
    const before = await snapshot(ns1);
    expect(before.widgets).toHaveLength(1);

    // 10 s without an API server: the manager's watches fail and retry, it does not exit.
    const logFrom = manager.log.length;
    await stopApiServer({ name: clusterName });
    const outageStart = Date.now();
    const health: number[] = [];
    const ready: number[] = [];
    while (Date.now() - outageStart < 10_000) {
      health.push((await fetch(`${manager.url}/healthz`)).status);
      ready.push((await readyz(manager)).status);
      await new Promise((r) => setTimeout(r, 500));
    }
    const outageMs = Date.now() - outageStart;
    expect(await alive(manager)).toBe(true);
    // /healthz says the process answers, which it does: a restart would not bring the API back.
    expect(new Set(health)).toEqual(new Set([200]));
    // /readyz stays 200 too: the informers keep serving their last list (what the web catalog
    // and the PackageManifest API read), as client-go's do; the outage shows in the log instead.
    expect(new Set(ready)).toEqual(new Set([200]));
    // Bounded retries: each informer retries with a backoff that at least doubles (from 125 ms at
    // the lowest jitter), so an outage of T ms allows at most log2(T / 125) + 1 failures each.
    const retries = informerRetries(manager, logFrom);
    expect(retries.length).toBeGreaterThan(0);
    const perInformer = new Map<string, number>();
    for (const r of retries) perInformer.set(r.informer!, (perInformer.get(r.informer!) ?? 0) + 1);
    const bound = Math.floor(Math.log2(outageMs / 125)) + 2;
    for (const [informer, n] of perInformer) expect(n, informer).toBeLessThanOrEqual(bound);

    await startApiServer({ name: clusterName });
    // The same process acts on a Subscription made after the restart...
    const ns2 = await subscribed('after', 'before');
    await planned(ns2);
    expect(await alive(manager)).toBe(true);
    expect(manager.child.pid).toBe(manager.pid);
    // ...and what it made before is as it was: no plan added, no CSV, Deployment or custom resource lost.
    expect(await eventually('the objects of ns1', () => snapshot(ns1))).toEqual(before);
    const crd = await c.request<KubeObject>({
      path: objectPath(Builtin.CustomResourceDefinition, crdName(group)),
    });
    expect(crd.metadata?.name).toBe(crdName(group));
  });

  it('relists watches that expired (410 Gone) while it was away, and catches up on what changed meanwhile', async () => {
    const manager = m!;
    await globalCatalog('doomed');
    await eventually('the manager to serve catalog doomed', async () =>
      (await catalogIds(manager)).includes(`${g}/doomed`) ? true : undefined,
    );
    // No version the manager holds is newer than this: it has seen nothing since.
    const lastSeen = (
      await c.request<{ metadata: { resourceVersion: string } }>({
        path: collectionPath(Resources.CatalogSource, g),
      })
    ).metadata.resourceVersion;

    process.kill(manager.pid, 'SIGSTOP');
    try {
      // One write after that version, so that the restarted API server's watch cache begins past
      // it: otherwise (nothing written meanwhile) the cache may begin exactly there and resume it.
      await c.request({
        method: 'POST',
        path: collectionPath(Builtin.ConfigMap, g),
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'past-last-seen' } },
      });
      await stopApiServer({ name: clusterName });
      await startApiServer({ name: clusterName });
      // What changes while the manager cannot see it.
      await c.request({ method: 'DELETE', path: objectPath(Resources.CatalogSource, 'doomed', g) });
      await globalCatalog('newer');
      const ns3 = await subscribed('meanwhile', 'newer');

      // Its watches cannot resume: the API server refuses that version as expired.
      const answers: string[] = [];
      await c
        .stream(
          {
            path: collectionPath(Resources.CatalogSource, g),
            query: { watch: true, resourceVersion: lastSeen },
            signal: AbortSignal.timeout(5_000),
          },
          (line) => answers.push(line),
        )
        .catch((err: unknown) => answers.push(JSON.stringify({ error: (err as { code?: number }).code })));
      expect(answers[0], answers.join('\n')).toMatch(/"code":410|"error":410/);

      process.kill(manager.pid, 'SIGCONT');
      // The deletion reaches it only through a relist; the rest through the watches that follow.
      await eventually(
        'the manager to drop catalog doomed and serve catalog newer',
        async () => {
          const ids = await catalogIds(manager);
          return !ids.includes(`${g}/doomed`) && ids.includes(`${g}/newer`) ? true : undefined;
        },
        60_000,
      );
      await planned(ns3);
      expect(await alive(manager)).toBe(true);
      expect(manager.child.pid).toBe(manager.pid);
    } finally {
      if (await alive(manager)) process.kill(manager.pid, 'SIGCONT');
    }
  });
});
