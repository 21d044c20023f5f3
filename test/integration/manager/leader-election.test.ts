/**
 * Two managers as real processes (`bosun operator run --leader-elect`) against the run's control
 * plane: one holds the Lease and reconciles, the other serves reads; SIGKILL of the leader hands
 * the Lease over within the lease duration, SIGTERM releases it at once.
 *
 * Who wrote when is proven from the API server's own record, not from logs: a watch records every
 * version of the Lease (holder, resourceVersion) and every version of the objects an install
 * writes. resourceVersions of one kube-apiserver over etcd are etcd revisions, one counter for
 * every object, so "the Lease's holder at the revision of a write" is well defined: each write of
 * Bosun's must fall in the term of a live leader, and none in the term of nobody.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import { collectionPath } from '../../../src/kube/client.js';
import { Builtin } from '../../../src/kube/resources.js';
import { eventually, freshNamespace } from '../support.js';
import {
  catalogSource,
  client,
  ConfigMapResource,
  create,
  list,
  Resources,
  subscription,
} from '../controllers/support.js';
import {
  csvSucceeded,
  sampleCatalogJson,
  SamplePackage,
  uniqueGroup,
} from '../controllers/operator-support.js';
import {
  catalogIds,
  killWith,
  managerProcess as spawnManager,
  type ManagerProcess,
  readyz,
} from './manager-process.js';

/** `bosun operator run --leader-elect` against the run's control plane, its global namespace `g`. */
const managerProcess = (globalNamespace: string) =>
  spawnManager({ kubeconfig: inject('kubeconfig'), globalNamespace, leaderElect: true });

interface Version {
  kind: string;
  type: string;
  namespace: string;
  name: string;
  rv: bigint;
  managers: string[];
  holder?: string;
  leaseDurationSeconds?: number;
  at: number;
}

/** Every version of the objects of `paths` from now on (list, then watch from its resourceVersion). */
async function recordVersions(paths: Record<string, string>) {
  const versions: Version[] = [];
  const stop = new AbortController();
  const c = client();
  const errors: unknown[] = [];
  for (const [kind, path] of Object.entries(paths)) {
    const listed = await c.request<{ metadata: { resourceVersion: string } }>({ path });
    const record = (type: string, o: KubeObject & { spec?: Record<string, unknown> }) =>
      versions.push({
        kind,
        type,
        namespace: o.metadata?.namespace ?? '',
        name: o.metadata?.name ?? '',
        rv: BigInt(o.metadata?.resourceVersion ?? '0'),
        managers: (o.metadata?.managedFields ?? []).map((f) => f.manager ?? ''),
        ...(kind === 'Lease'
          ? {
              holder: (o.spec?.holderIdentity as string | undefined) ?? '',
              leaseDurationSeconds: o.spec?.leaseDurationSeconds as number,
            }
          : {}),
        at: Date.now(),
      });
    void c
      .stream(
        {
          path,
          query: {
            watch: true,
            resourceVersion: listed.metadata.resourceVersion,
            allowWatchBookmarks: false,
          },
          signal: stop.signal,
        },
        (line) => {
          const e = JSON.parse(line) as { type: string; object: KubeObject };
          if (e.type === 'ERROR') errors.push(e.object);
          else record(e.type, e.object);
        },
      )
      .catch((err: unknown) => {
        if (!stop.signal.aborted) errors.push(err);
      });
  }
  return { versions, errors, stop: () => stop.abort() };
}

/** The Lease's holder at revision `rv`: the holder of its last version at or before it. */
function holderAt(leases: Version[], rv: bigint): string | undefined {
  let holder: string | undefined;
  for (const l of leases) if (l.rv <= rv) holder = l.holder;
  return holder;
}

/** The versions Bosun wrote in `ns`: status updates of what the test created, and all it created. */
function bosunWrites(versions: Version[], ns: string): Version[] {
  return versions.filter(
    (v) =>
      v.namespace === ns &&
      (((v.kind === 'CatalogSource' || v.kind === 'Subscription') && v.type === 'MODIFIED') ||
        v.kind === 'InstallPlan' ||
        v.kind === 'ClusterServiceVersion' ||
        // A Deployment's later versions are the controller-manager's status updates.
        (v.kind === 'Deployment' && v.type === 'ADDED')),
  );
}

async function leaderGauge(m: ManagerProcess): Promise<string | undefined> {
  const text = await (await fetch(`${m.url}/metrics`)).text();
  return /^bosun_leader (\d)$/m.exec(text)?.[1];
}

/** A global catalog `name` (in `g`) holding the sample operator with its API in `group`. */
async function globalCatalog(g: string, name: string, group: string) {
  await create(ConfigMapResource, g, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: { 'catalog.json': await sampleCatalogJson(group) },
  } as never);
  await create(
    Resources.CatalogSource,
    g,
    catalogSource(g, name, { sourceType: 'configmap', configMap: name }),
  );
}

/** A namespace with its own OperatorGroup, subscribed to the sample operator of global catalog `source`. */
async function subscribedFrom(g: string, source: string, prefix: string) {
  const ns = await freshNamespace(prefix);
  await create(Resources.OperatorGroup, ns, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: ns },
    spec: { targetNamespaces: [ns] },
  });
  await create(
    Resources.Subscription,
    ns,
    subscription(ns, SamplePackage, { name: SamplePackage, source, sourceNamespace: g, channel: 'stable' }),
  );
  return ns;
}

const figures: Record<string, number> = {};
const running: ManagerProcess[] = [];
let g: string;
let leaseRecorder: Awaited<ReturnType<typeof recordVersions>> | undefined;
let objectRecorder: Awaited<ReturnType<typeof recordVersions>> | undefined;
const recorder = {
  get versions() {
    return [...(leaseRecorder?.versions ?? []), ...(objectRecorder?.versions ?? [])];
  },
  get errors() {
    return [...(leaseRecorder?.errors ?? []), ...(objectRecorder?.errors ?? [])];
  },
};
const leasePath = () =>
  `${collectionPath({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true }, g)}`;

beforeAll(async () => {
  // The managers' global namespace, of this file alone: it holds their Lease and the catalogs.
  // Not a freshNamespace: those are deleted after each test, and this one must outlive them.
  g = `le-global-${Date.now().toString(36)}`;
  await client().request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: g } } });
  leaseRecorder = await recordVersions({ Lease: leasePath() });
});

/** Once a manager has installed the CRDs: every version of what an install writes. */
async function recordObjects() {
  objectRecorder = await recordVersions({
    CatalogSource: collectionPath(Resources.CatalogSource),
    Subscription: collectionPath(Resources.Subscription),
    InstallPlan: collectionPath(Resources.InstallPlan),
    ClusterServiceVersion: collectionPath(Resources.ClusterServiceVersion),
    Deployment: collectionPath(Builtin.Deployment),
  });
}

afterAll(async () => {
  leaseRecorder?.stop();
  objectRecorder?.stop();
  await Promise.all(running.map((m) => killWith(m, 'SIGKILL')));
  if (g) await client().request({ method: 'DELETE', path: `/api/v1/namespaces/${g}` });
  console.log(`leader election figures: ${JSON.stringify(figures)}`);
});

const leases = () => recorder.versions.filter((v) => v.kind === 'Lease');
const currentHolder = () => leases().at(-1)?.holder;

describe('leader election between two manager processes', () => {
  let a: ManagerProcess;
  let b: ManagerProcess;

  it('one manager holds the Lease and reconciles; the standby serves the web catalog and /readyz; SIGKILL of the leader hands over within the lease duration', async () => {
    a = await managerProcess(g);
    running.push(a);
    await recordObjects();
    await eventually(
      'the first manager to hold the Lease',
      async () => (currentHolder() === a.identity ? true : undefined),
      60_000,
    );
    b = await managerProcess(g);
    running.push(b);
    await eventually(
      'the second manager to be ready',
      async () => ((await readyz(b)).status === 200 ? true : undefined),
      60_000,
    );
    expect(await readyz(a)).toEqual({ status: 200, body: 'leader\n' });
    expect(await readyz(b)).toEqual({ status: 200, body: 'standby\n' });
    expect(await leaderGauge(a)).toBe('1');
    expect(await leaderGauge(b)).toBe('0');

    // An install while A leads.
    await globalCatalog(g, 'first', uniqueGroup());
    const ns1 = await subscribedFrom(g, 'first', 'le1');
    const csv1 = await csvSucceeded(ns1);
    // The standby loaded the catalog and serves it, without having written its status.
    await eventually('the standby to serve the catalog', async () =>
      (await catalogIds(b)).includes(`${g}/first`) ? true : undefined,
    );
    expect(currentHolder()).toBe(a.identity);
    expect(await readyz(b)).toEqual({ status: 200, body: 'standby\n' });

    // SIGKILL the leader; at once a new catalog and a Subscription, which only a leader may act on.
    const killedAt = Date.now();
    await killWith(a, 'SIGKILL');
    await globalCatalog(g, 'second', uniqueGroup());
    const ns2 = await subscribedFrom(g, 'second', 'le2');
    // Meanwhile the standby reads the new catalog and serves it, still a standby.
    await eventually('the standby to serve the new catalog', async () =>
      (await catalogIds(b)).includes(`${g}/second`) ? true : undefined,
    );
    const servedWhileStandby = currentHolder() === a.identity;
    await eventually(
      'the standby to take the Lease',
      async () => (currentHolder() === b.identity ? true : undefined),
      30_000,
    );
    figures.failoverAfterSigkillMs = leases().find((l) => l.holder === b.identity)!.at - killedAt;
    expect(figures.failoverAfterSigkillMs).toBeLessThan(20_000);
    expect(await readyz(b)).toEqual({ status: 200, body: 'leader\n' });
    expect(await leaderGauge(b)).toBe('1');
    const csv2 = await csvSucceeded(ns2);

    // Every write of Bosun's in ns1 was made in A's term, in ns2 in B's; none while nobody held it.
    const versions = recorder.versions;
    const takenByB = leases().find((l) => l.holder === b.identity)!.rv;
    const w1 = bosunWrites(versions, ns1).filter((v) => v.rv < takenByB);
    const w2 = bosunWrites(versions, ns2);
    expect(w1.length).toBeGreaterThan(3);
    expect(w2.length).toBeGreaterThan(3);
    for (const w of w1) expect(holderAt(leases(), w.rv), `${w.kind} ${w.name} rv ${w.rv}`).toBe(a.identity);
    for (const w of w2) expect(holderAt(leases(), w.rv), `${w.kind} ${w.name} rv ${w.rv}`).toBe(b.identity);
    // The second catalog's status was first written by B as leader, though B had read it before.
    const secondStatus = versions.filter(
      (v) => v.kind === 'CatalogSource' && v.name === 'second' && v.type === 'MODIFIED',
    );
    expect(secondStatus.length).toBeGreaterThan(0);
    expect(secondStatus.every((v) => v.rv > takenByB)).toBe(true);
    figures.standbyServedNewCatalogBeforeTakeover = servedWhileStandby ? 1 : 0;
    // What the installs wrote carries Bosun's field manager.
    for (const ns of [ns1, ns2]) {
      const objects = [
        ...(await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns)),
        ...(await list<KubeObject>(Resources.InstallPlan, ns)),
        ...(await list<KubeObject>(Builtin.Deployment, ns)),
      ];
      expect(objects.length).toBeGreaterThanOrEqual(3);
      for (const o of objects)
        expect(
          o.metadata?.managedFields?.map((f) => f.manager),
          `${o.kind} ${o.metadata?.name}`,
        ).toContain('bosun');
    }
    expect([csv1.metadata.name, csv2.metadata.name]).toEqual([
      expect.stringContaining(SamplePackage),
      expect.stringContaining(SamplePackage),
    ]);
    expect(recorder.errors).toEqual([]);
  });

  it('SIGTERM of the leader releases the Lease and exits 0; the standby takes over within a few seconds', async () => {
    const c = await managerProcess(g);
    running.push(c);
    await eventually(
      'the new manager to be a ready standby',
      async () => ((await readyz(c).catch(() => undefined))?.body === 'standby\n' ? true : undefined),
      60_000,
    );
    const before = leases().length;
    const termAt = Date.now();
    const exit = await killWith(b, 'SIGTERM');
    figures.sigtermExitMs = exit.at - termAt;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(figures.sigtermExitMs).toBeLessThan(30_000);
    // The last version B wrote gave the Lease up.
    const released = leases()
      .slice(before)
      .find((l) => l.holder === '');
    expect(released).toMatchObject({ holder: '', leaseDurationSeconds: 1 });
    await eventually(
      'the standby to take the released Lease',
      async () => (currentHolder() === c.identity ? true : undefined),
      20_000,
    );
    figures.takeoverAfterReleaseMs = leases().find((l) => l.holder === c.identity)!.at - released!.at;
    expect(figures.takeoverAfterReleaseMs).toBeLessThan(5_000);
    expect(await readyz(c)).toEqual({ status: 200, body: 'leader\n' });
    // Nobody held the Lease between B's release and C's acquisition: no one wrote in between.
    const gap = { from: released!.rv, to: leases().find((l) => l.holder === c.identity)!.rv };
    const between = recorder.versions.filter(
      (v) =>
        v.kind !== 'Lease' &&
        v.rv > gap.from &&
        v.rv < gap.to &&
        v.managers.includes('bosun') &&
        v.namespace.startsWith('le'),
    );
    expect(
      between.filter(
        (v) => v.type === 'MODIFIED' && (v.kind === 'CatalogSource' || v.kind === 'Subscription'),
      ),
    ).toEqual([]);
    const stopped = await killWith(c, 'SIGTERM');
    expect(stopped.code).toBe(0);
  });

  it('a leader that finds another holder in its Lease stops reconciling and exits 1 at once', async () => {
    const d = await managerProcess(g);
    running.push(d);
    await eventually(
      'the manager to hold the Lease',
      async () => (currentHolder() === d.identity ? true : undefined),
      30_000,
    );
    // Someone allowed to write the Lease gives it to another holder (as a partitioned leader would find it taken).
    const c = client();
    const path = `${leasePath()}/bosun-manager`;
    const lease = await c.request<KubeObject & { spec: Record<string, unknown> }>({ path });
    const takenAt = Date.now();
    await c.request({
      method: 'PUT',
      path,
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'an-admin', leaseDurationSeconds: 3600 } },
    });
    const exit = await d.exited;
    figures.exitAfterLeaseTakenMs = exit.at - takenAt;
    expect(exit).toMatchObject({ code: 1, signal: null });
    // Within a retry period (2 s, with jitter) and the time to exit.
    expect(figures.exitAfterLeaseTakenMs).toBeLessThan(5_000);
    expect(d.log.some((l) => l.includes('lost the leader Lease'))).toBe(true);
  });
});
