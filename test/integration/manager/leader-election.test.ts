/**
 * Two managers as real processes (`bosun operator run --leader-elect`) against the run's control
 * plane: one holds the Lease and reconciles, the other serves reads; SIGKILL of the leader hands
 * the Lease over within the lease duration, SIGTERM releases it at once, and a leader cut off from
 * the API server (each manager behind a TCP proxy of its own, tcp-proxy.ts) stops leading at its
 * renew deadline, before the standby may take the Lease.
 *
 * Who wrote when is proven from the API server's own record, not from logs: a watch records every
 * version of the Lease (holder, resourceVersion) and every version of the objects an install
 * writes. resourceVersions of one kube-apiserver over etcd are etcd revisions, one counter for
 * every object, so "the Lease's holder at the revision of a write" is well defined: each write of
 * Bosun's must fall in the term of a live leader, and none in the term of nobody.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
import { tcpProxy, type TcpProxy } from './tcp-proxy.js';

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
  /** The Lease's MicroTimes, written on the writer's clock (all managers here share the host's). */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
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
              acquireTime: o.spec?.acquireTime as string,
              renewTime: o.spec?.renewTime as string,
              leaseTransitions: o.spec?.leaseTransitions as number,
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

/** Milliseconds since the epoch of a Lease's MicroTime (its microseconds cut to milliseconds). */
const microTimeMs = (t: string | undefined) => Date.parse((t ?? '').replace(/(\.\d{3})\d*Z$/, '$1Z'));

/** The run's admin kubeconfig with its API server reached through `proxy`, in a file of its own. */
async function kubeconfigThrough(proxy: TcpProxy, name: string): Promise<string> {
  const text = await readFile(inject('kubeconfig'), 'utf8');
  const file = join(inject('runDir'), `${name}-${Date.now().toString(36)}.kubeconfig`);
  await writeFile(file, text.replace(/^(\s*server:\s*)\S+$/m, `$1${proxy.url}`));
  return file;
}

/** The API server of the run's kubeconfig, as host and port. */
async function apiServerAddress(): Promise<{ host: string; port: number }> {
  const text = await readFile(inject('kubeconfig'), 'utf8');
  const url = new URL(/^\s*server:\s*(\S+)$/m.exec(text)![1]!);
  return { host: url.hostname, port: Number(url.port || 443) };
}

/** `/readyz` of `m` every 100 ms until stopped: when each request was sent, and what it said ('gone' once the process is). */
function pollReadyz(m: ManagerProcess) {
  const samples: { sentAt: number; body: string }[] = [];
  let on = true;
  const done = (async () => {
    while (on) {
      const sentAt = Date.now();
      const body = await readyz(m).then(
        (r) => r.body.trim(),
        () => 'gone',
      );
      samples.push({ sentAt, body });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    samples,
    stop: async () => {
      on = false;
      await done;
    },
  };
}

// On a cluster of the run's own: an existing one's certificate need not name 127.0.0.1, where the proxies listen.
describe.skipIf(inject('clusterName') === '')('a leader partitioned from the API server', () => {
  const proxies: TcpProxy[] = [];
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()));
  });

  it('stops leading at its renew deadline, before the standby takes the Lease, and comes back as a standby once it reaches the API server again', async () => {
    // Whatever the cases before left in the Lease (an admin's hold of an hour) is not this case's.
    await client()
      .request({ method: 'DELETE', path: `${leasePath()}/bosun-manager` })
      .catch(() => undefined);
    const api = await apiServerAddress();
    const toA = await tcpProxy(api);
    const toB = await tcpProxy(api);
    proxies.push(toA, toB);
    const kubeconfigA = await kubeconfigThrough(toA, 'manager-a');
    const start = (kubeconfig: string) =>
      spawnManager({ kubeconfig, globalNamespace: g, leaderElect: true }).then((m) => {
        running.push(m);
        return m;
      });

    const a = await start(kubeconfigA);
    await eventually(
      'the first manager to hold the Lease',
      async () => (currentHolder() === a.identity ? true : undefined),
      60_000,
    );
    if (!objectRecorder) await recordObjects();
    const b = await start(await kubeconfigThrough(toB, 'manager-b'));
    await eventually('the second manager to be a ready standby', async () =>
      (await readyz(b).catch(() => undefined))?.body === 'standby\n' ? true : undefined,
    );
    // An install while A leads: A's last writes of objects.
    await globalCatalog(g, 'before-cut', uniqueGroup());
    const ns1 = await subscribedFrom(g, 'before-cut', 'lp1');
    await csvSucceeded(ns1);

    // Only A loses the API server; the test's client and B still reach it.
    const polls = pollReadyz(a);
    toA.cut();
    const cutAt = Date.now();
    // Made during the outage: only a leader that reaches the API server can act on them.
    await globalCatalog(g, 'during-cut', uniqueGroup());
    const ns2 = await subscribedFrom(g, 'during-cut', 'lp2');
    await eventually(
      'the standby to take the Lease',
      async () => (currentHolder() === b.identity ? true : undefined),
      30_000,
    );
    const exitA = await Promise.race([
      a.exited,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000)),
    ]);
    const lastOfA = leases()
      .filter((l) => l.holder === a.identity)
      .at(-1)!;
    const firstOfB = leases().find((l) => l.holder === b.identity)!;
    const takenAt = microTimeMs(firstOfB.acquireTime);
    await eventually('a request to the old leader /readyz sent after the takeover', async () =>
      polls.samples.some((s) => s.sentAt >= takenAt) ? true : undefined,
    );
    await polls.stop();
    const lostAt = a.log
      .map((l) => JSON.parse(l) as { msg?: string; time?: number })
      .find((r) => r.msg === 'lost the leader Lease: controllers stopped, writes refused')?.time;
    figures.partitionRenewToLostMs = (lostAt ?? NaN) - microTimeMs(lastOfA.renewTime);
    figures.partitionLostToTakeoverMs = takenAt - (lostAt ?? NaN);
    figures.partitionCutToTakeoverMs = takenAt - cutAt;

    // A stopped leading before B took the Lease, by B's own acquireTime (one host, one clock):
    // its /readyz, which answered leader once cut off, answered it to no request sent after.
    const readyAfterTakeover = polls.samples.filter((s) => s.sentAt >= takenAt).map((s) => s.body);
    const readyWhileCut = polls.samples.filter((s) => s.sentAt > cutAt && s.sentAt < cutAt + 3_000);
    expect(readyWhileCut.map((s) => s.body)).toContain('leader');
    expect(readyAfterTakeover.length).toBeGreaterThan(0);
    expect(readyAfterTakeover, 'the old leader /readyz once the standby took the Lease').not.toContain(
      'leader',
    );
    // It exited 1 (its Deployment starts it again) before B took the Lease and before the test saw it.
    expect(exitA, 'the old leader to exit within 10 s of the takeover').toMatchObject({
      code: 1,
      signal: null,
    });
    expect(exitA!.at).toBeLessThan(takenAt);
    expect(exitA!.at).toBeLessThan(firstOfB.at);
    // It stopped at its renew deadline: 7 s after its last renewal began, which was before it
    // stamped renewTime; and it led when cut off, so the outage is what ended it.
    expect(lostAt, 'the old leader to log the loss of the Lease').toBeDefined();
    expect(lostAt!).toBeGreaterThan(cutAt);
    expect(lostAt!).toBeLessThan(takenAt);
    expect(figures.partitionRenewToLostMs).toBeLessThanOrEqual(7_000 + 500);
    // B's acquisition took the Lease from A's last version: nobody else wrote it in between.
    expect(leases().filter((l) => l.rv > lastOfA.rv && l.rv < firstOfB.rv)).toEqual([]);
    expect(firstOfB.leaseTransitions).toBe(lastOfA.leaseTransitions! + 1);

    // By resourceVersion: A's writes of objects all came before B's term, every write in the
    // namespace subscribed during the outage in B's term, and nobody's between A's last reach
    // of the API server and B's acquisition.
    const w1 = bosunWrites(recorder.versions, ns1);
    const w2 = bosunWrites(recorder.versions, ns2);
    expect(w1.length).toBeGreaterThan(3);
    for (const w of w1.filter((v) => v.rv < firstOfB.rv))
      expect(holderAt(leases(), w.rv), `${w.kind} ${w.name} rv ${w.rv}`).toBe(a.identity);
    expect(w1.filter((v) => v.rv < firstOfB.rv && v.at > cutAt + 1_000)).toEqual([]);
    const during = recorder.versions.filter(
      (v) => v.name === 'during-cut' && v.kind === 'CatalogSource' && v.type === 'MODIFIED',
    );

    // A reaches the API server again; its Deployment would start it again: it comes back as a standby.
    toA.restore();
    const a2 = await start(kubeconfigA);
    await eventually('the restarted manager to be a ready standby', async () =>
      (await readyz(a2).catch(() => undefined))?.body === 'standby\n' ? true : undefined,
    );
    await csvSucceeded(ns2);
    // Past two of its retry periods (2 s, jittered up to 2.4 s): it tried and left the Lease alone.
    const restartedAt = Date.now();
    await new Promise((r) => setTimeout(r, 5_000));
    const w2After = bosunWrites(recorder.versions, ns2);
    expect(w2After.length).toBeGreaterThan(3);
    for (const w of [...w2After, ...during])
      expect(holderAt(leases(), w.rv), `${w.kind} ${w.name} rv ${w.rv}`).toBe(b.identity);
    expect(w2.every((v) => v.rv > firstOfB.rv)).toBe(true);
    const sinceTakeover = leases().filter((l) => l.rv >= firstOfB.rv);
    expect(new Set(sinceTakeover.map((l) => l.holder))).toEqual(new Set([b.identity]));
    expect(new Set(sinceTakeover.map((l) => l.leaseTransitions))).toEqual(
      new Set([firstOfB.leaseTransitions]),
    );
    expect(leases().filter((l) => l.at > restartedAt).length).toBeGreaterThan(0);
    expect(await readyz(a2)).toEqual({ status: 200, body: 'standby\n' });
    expect(await leaderGauge(a2)).toBe('0');
    expect(await readyz(b)).toEqual({ status: 200, body: 'leader\n' });

    // An object both leaders wrote: ns1's Subscription, whose status A wrote before the cut and
    // B on its first reconcile as leader. Both write as field manager bosun; which of them wrote a
    // version is the Lease's holder at its resourceVersion, and A's last came before B's term.
    const sub1 = recorder.versions.filter(
      (v) => v.kind === 'Subscription' && v.namespace === ns1 && v.type === 'MODIFIED',
    );
    const byA = sub1.filter((v) => v.managers.includes('bosun') && v.rv < firstOfB.rv);
    const byB = sub1.filter((v) => v.rv > firstOfB.rv);
    expect(byA.length, 'status writes of ns1 Subscription by A').toBeGreaterThan(0);
    expect(byB.length, 'status writes of ns1 Subscription by B').toBeGreaterThan(0);
    for (const v of [...byA, ...byB]) expect(v.managers).toContain('bosun');
    expect(byA.at(-1)!.at).toBeLessThan(cutAt + 1_000);
    expect(byB[0]!.at).toBeGreaterThan(takenAt);
    expect(holderAt(leases(), byA.at(-1)!.rv)).toBe(a.identity);
    expect(holderAt(leases(), byB[0]!.rv)).toBe(b.identity);

    // The cluster converged: each Subscription installed once, by one InstallPlan.
    for (const ns of [ns1, ns2]) {
      const plans = recorder.versions.filter(
        (v) => v.kind === 'InstallPlan' && v.namespace === ns && v.type === 'ADDED',
      );
      expect(
        plans.map((p) => p.name),
        `InstallPlans made in ${ns}`,
      ).toHaveLength(1);
      expect(await list<KubeObject>(Resources.InstallPlan, ns)).toHaveLength(1);
      const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
      expect(csvs.map((c) => c.status?.phase)).toEqual(['Succeeded']);
    }
    expect(recorder.errors).toEqual([]);
  });
});
