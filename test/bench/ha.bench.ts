/**
 * High availability, against a local control plane of its own and managers running as their own
 * processes (`bosun operator run`, compiled to dist/ first):
 * - ha.start_to_first_reconcile_ms: from spawning a manager (CRDs already there, one CatalogSource)
 *   to the `time` of its first JSON log record of a finished reconcile; median of 3 starts.
 * - ha.failover_s: two managers with --leader-elect; the leader is killed with SIGKILL and the
 *   time runs until the Lease names the standby (polled every 100 ms); median of 3 kills, the
 *   killed manager started again as the next standby each time.
 * - ha.soak.*: the two managers left running for BOSUN_HA_SOAK_MINUTES (default 30) of catalog
 *   changes (a new version published into the ConfigMap catalog every third round, which
 *   upgrades every subscribed namespace) and Subscription churn (each round, 5 of 50 namespaces,
 *   drawn with a fixed seed, are unsubscribed, Subscription and CSV deleted, or subscribed again).
 *   The soak starts once the 50 first installs have succeeded (the warm-up, reported apart). The
 *   leader's resident memory is sampled each minute and its growth per hour is the slope of a
 *   least-squares line through the samples of the soak's second half: a leak grows through both
 *   halves, while the first half also holds the heap settling to what the churn's working set
 *   takes (the whole soak's slope is reported with it); at the end, once the managers had time to converge,
 *   every Subscription, CSV, InstallPlan and Deployment of the 50 namespaces is counted against
 *   the state the churn left: `lost` is what a subscribed namespace lacks, `leaked` what is there
 *   and should not be.
 * The load average of the machine is reported with each figure: other work on it slows the
 * managers down.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { KubeObject } from '../../src/apis/meta.js';
import { type ClusterServiceVersion, Resources, type Subscription } from '../../src/apis/operators.js';
import { collectionPath, objectPath } from '../../src/kube/client.js';
import { isNotFound } from '../../src/kube/errors.js';
import { defaultElectionTiming } from '../../src/kube/leader-election.js';
import { Builtin } from '../../src/kube/resources.js';
import { operatorDeployment, replacesChain } from '../support/operator-objects.js';
import type { Emit } from './run.js';
import {
  catalogConfigMap,
  benchAllocatorEnv,
  benchCluster,
  coreResource as core,
  managerAllocator,
  median,
  mib,
  round,
  rssBytes,
  sleep,
  stopProcess,
  waitFor,
} from './support.js';

const repo = new URL('../../', import.meta.url).pathname;
const pkg = 'hapkg';
const globalNs = 'olm';
const NAMESPACES = 50;
const CHURN_PER_ROUND = 5;
const ROUND_MS = 20_000;
const STARTS = 3;
const KILLS = 3;
const soakMinutes = Number(process.env.BOSUN_HA_SOAK_MINUTES ?? '30');

const say = (line: string) => process.stderr.write(`ha bench: ${line}\n`);
const version = (i: number) => `1.${i}.0`;
const csvName = (i: number) => `${pkg}.v${version(i)}`;
const nsName = (i: number) => `ha-${String(i).padStart(2, '0')}`;
const load = () => loadavg().map((l) => Math.round(l * 100) / 100);

/** The package with versions 1.0.0 … 1.n.0 in one channel, each replacing the one before. */
const catalog = (n: number): string =>
  replacesChain(pkg, 'ha.bosun.dev', n, (i) =>
    operatorDeployment(pkg, pkg, pkg, `registry.example/hapkg:${version(i)}`),
  );

interface Manager {
  child: ChildProcess;
  spawnedAt: number;
  /** Log `time` of the first finished reconcile, once seen. */
  firstReconcileAt?: number;
  identity?: string;
  url?: string;
  electing: boolean;
  exited: Promise<void>;
}

/** `bosun operator run` from dist/, its JSON log read for its identity, URL and first reconcile. */
function startManager(kubeconfig: string, extra: string[], level = 'info'): Manager {
  const spawnedAt = Date.now();
  const child = spawn(
    process.execPath,
    [
      join(repo, 'bin/bosun.js'),
      'operator',
      'run',
      '--kubeconfig',
      kubeconfig,
      '--global-namespace',
      globalNs,
      '--metrics-addr',
      '127.0.0.1:0',
      '--log-level',
      level,
      '--log-format',
      'json',
      ...extra,
    ],
    { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...benchAllocatorEnv() } },
  );
  const m: Manager = {
    child,
    spawnedAt,
    electing: extra.includes('--leader-elect'),
    exited: new Promise((r) => child.once('exit', () => r())),
  };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    const rec = JSON.parse(line) as { time?: number; msg?: string; identity?: string; url?: string };
    m.identity ??= rec.identity;
    m.url ??= rec.url;
    if ((rec.msg === 'reconciled' || rec.msg === 'reconcile failed, retrying') && rec.time !== undefined)
      m.firstReconcileAt ??= rec.time;
  });
  return m;
}

const synced = (m: Manager) =>
  waitFor(
    'a manager to be synced',
    async () => {
      if (m.child.exitCode !== null) throw new Error('the manager exited');
      // A manager with --leader-elect logs its Lease identity before it is of any use here.
      if (!m.url || (m.electing && !m.identity)) return undefined;
      const r = await fetch(`${m.url}/readyz`);
      return r.ok ? true : undefined;
    },
    180_000,
  );

/** Least-squares slope of (x, y) pairs. */
function slope(points: readonly [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const num = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const den = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return den === 0 ? Number.NaN : num / den;
}

/** mulberry32: the churn is the same on every run. */
function seeded(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export default async function ha(emit: Emit): Promise<void> {
  const keepAlive = setInterval(() => {}, 1 << 30);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: repo, stdio: 'inherit' });
  const cluster = await benchCluster('habench');
  say(`control plane up at ${cluster.server}`);
  const { client, create } = cluster;
  const managers: Manager[] = [];
  const inputs = () => ({ loadavg_1_5_15: load(), allocator: managerAllocator() });
  try {
    await catalogConfigMap(cluster, globalNs, 'hacat', catalog(0));

    // Start to first reconcile: the first start installs the CRDs and creates the CatalogSource;
    // the timed ones find them there, as a restarted Pod does.
    const first = startManager(cluster.kubeconfig, ['--install-crds']);
    await synced(first);
    await create(Resources.CatalogSource, globalNs, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'hacat', namespace: globalNs },
      spec: { sourceType: 'configmap', configMap: 'hacat' },
    } as KubeObject);
    await stopProcess(first.child);
    const starts: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const m = startManager(cluster.kubeconfig, [], 'debug');
      await waitFor('a first reconcile', async () => m.firstReconcileAt, 120_000, 20);
      starts.push(m.firstReconcileAt! - m.spawnedAt);
      await stopProcess(m.child);
      say(`start ${i + 1}: first reconcile ${starts.at(-1)} ms after spawn`);
    }
    emit({
      name: 'ha.start_to_first_reconcile_ms',
      value: round(median(starts)),
      unit: 'ms',
      inputs: {
        ...inputs(),
        samples: starts,
        method:
          'Date.now() before spawning `node bin/bosun.js operator run --log-level debug` (CRDs installed, one configmap CatalogSource) to the `time` of its first "reconciled" or "reconcile failed, retrying" record; median',
        target_ms: 2000,
      },
    });

    // Failover: kill the leader, time until the Lease names the standby.
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${globalNs}/leases/bosun-manager`;
    const holder = async () =>
      (await client.request<{ spec?: { holderIdentity?: string } }>({ path: leasePath })).spec
        ?.holderIdentity;
    const elect = () => startManager(cluster.kubeconfig, ['--leader-elect']);
    managers.push(elect(), elect());
    await Promise.all(managers.map(synced));
    const failovers: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const leaderId = await waitFor('a leader', async () => {
        const h = await holder().catch(() => undefined);
        return managers.some((m) => m.identity === h) ? h : undefined;
      });
      const leader = managers.find((m) => m.identity === leaderId)!;
      const standby = managers.find((m) => m !== leader)!;
      await synced(standby);
      // A random point within the renew period, so the kill is not in phase with the renewals.
      await sleep(500 + Math.floor(Math.random() * 2000));
      const killedAt = performance.now();
      leader.child.kill('SIGKILL');
      await waitFor(
        'the standby to take the Lease',
        async () => ((await holder()) === standby.identity ? true : undefined),
        60_000,
        100,
      );
      failovers.push(round((performance.now() - killedAt) / 1000));
      say(`kill ${k + 1}: the standby took the Lease ${failovers.at(-1)} s after SIGKILL`);
      await leader.exited;
      managers.splice(managers.indexOf(leader), 1, elect());
      await synced(managers.at(-1)!);
    }
    emit({
      name: 'ha.failover_s',
      value: median(failovers),
      unit: 's',
      inputs: {
        ...inputs(),
        samples: failovers,
        method:
          'SIGKILL of the Lease holder to the Lease naming the other manager (polled every 100 ms), with the default timings',
        timing_ms: defaultElectionTiming,
        target_s: 15,
      },
    });

    await soak(emit, cluster, managers, holder, inputs);
  } finally {
    await Promise.all(managers.map((m) => stopProcess(m.child)));
    clearInterval(keepAlive);
    await cluster.close();
  }
}

async function soak(
  emit: Emit,
  cluster: Awaited<ReturnType<typeof benchCluster>>,
  managers: Manager[],
  holder: () => Promise<string | undefined>,
  inputs: () => Record<string, unknown>,
): Promise<void> {
  const { client, create } = cluster;
  const random = seeded(23);
  let head = 0;
  const subscribed = new Set<number>();
  const subscribe = async (i: number) => {
    await create(Resources.Subscription, nsName(i), {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: pkg, namespace: nsName(i) },
      spec: { name: pkg, channel: 'stable', source: 'hacat', sourceNamespace: globalNs },
    } as KubeObject);
    subscribed.add(i);
  };
  const del = async (path: string) => {
    try {
      await client.request({ method: 'DELETE', path });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };
  /** Uninstall as OLM documents it: the Subscription, then the CSV. */
  const unsubscribe = async (i: number) => {
    subscribed.delete(i);
    await del(objectPath(Resources.Subscription, pkg, nsName(i)));
    const csvs = await client.request<{ items: ClusterServiceVersion[] }>({
      path: collectionPath(Resources.ClusterServiceVersion, nsName(i)),
    });
    for (const c of csvs.items)
      await del(objectPath(Resources.ClusterServiceVersion, c.metadata.name ?? '', nsName(i)));
  };
  for (let i = 0; i < NAMESPACES; i++) {
    await create(core('namespaces'), '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: nsName(i) },
    });
    await create(Resources.OperatorGroup, nsName(i), {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'og', namespace: nsName(i) },
      spec: { targetNamespaces: [nsName(i)] },
    } as KubeObject);
    await subscribe(i);
  }
  // Warm-up, not counted in the soak: the 50 first installs land, and the manager's heap grows to
  // what 50 installed operators take. The soak measures what churn does to a manager in that state.
  const warmupStarted = Date.now();
  await waitFor(
    'the first installs to succeed',
    async () => {
      const csvs = await client.request<{ items: ClusterServiceVersion[] }>({
        path: collectionPath(Resources.ClusterServiceVersion, ''),
      });
      const done = csvs.items.filter(
        (c) => c.metadata.name === csvName(head) && c.status?.phase === 'Succeeded',
      );
      return done.length >= NAMESPACES ? true : undefined;
    },
    600_000,
  );
  const warmupS = Math.round((Date.now() - warmupStarted) / 1000);
  say(`${NAMESPACES} namespaces subscribed and installed after ${warmupS} s; soaking for ${soakMinutes} min`);

  const leaderPid = async () => {
    const h = await holder();
    return managers.find((m) => m.identity === h)?.child.pid;
  };
  const startedAt = Date.now();
  const samples: [number, number][] = [];
  const standbySamples: [number, number][] = [];
  const sample = async () => {
    const pid = await leaderPid();
    const other = managers.find((m) => m.child.pid !== pid)?.child.pid;
    const h = (Date.now() - startedAt) / 3_600_000;
    if (pid) samples.push([h, mib(await rssBytes(pid))]);
    if (other) standbySamples.push([h, mib(await rssBytes(other))]);
    say(
      `minute ${Math.round(h * 60)}: leader RSS ${samples.at(-1)?.[1]} MiB, standby ${standbySamples.at(-1)?.[1]} MiB`,
    );
  };
  await sample();
  let nextSample = startedAt + 60_000;
  let rounds = 0;
  let churned = 0;
  while (Date.now() - startedAt < soakMinutes * 60_000) {
    rounds++;
    if (rounds % 3 === 0) {
      head++;
      await client.request({
        method: 'PATCH',
        path: objectPath(core('configmaps'), 'hacat', globalNs),
        body: { data: { 'catalog.json': catalog(head) } },
        contentType: 'application/merge-patch+json',
      });
    }
    const picked = new Set<number>();
    while (picked.size < CHURN_PER_ROUND) picked.add(Math.floor(random() * NAMESPACES));
    for (const i of picked) await (subscribed.has(i) ? unsubscribe(i) : subscribe(i));
    churned += picked.size;
    const roundEnd = Date.now() + ROUND_MS;
    while (Date.now() < roundEnd) {
      if (Date.now() >= nextSample) {
        await sample();
        nextSample += 60_000;
      }
      await sleep(Math.min(1000, Math.max(0, roundEnd - Date.now())));
    }
  }
  await sample();
  const soakS = Math.round((Date.now() - startedAt) / 1000);
  say(`churn over after ${rounds} rounds (head ${version(head)}); waiting for the managers to converge`);

  const count = async () => {
    const items = async <T extends KubeObject>(r: Parameters<typeof collectionPath>[0], ns: string) =>
      (await client.request<{ items: T[] }>({ path: collectionPath(r, ns) })).items;
    const lost: string[] = [];
    const leaked: string[] = [];
    const totals = { subscriptions: 0, csvs: 0, installPlans: 0, deployments: 0 };
    for (let i = 0; i < NAMESPACES; i++) {
      const ns = nsName(i);
      const subs = await items<Subscription>(Resources.Subscription, ns);
      const csvs = await items<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
      const ips = await items(Resources.InstallPlan, ns);
      const deps = await items<
        KubeObject & { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } }
      >(Builtin.Deployment, ns);
      totals.subscriptions += subs.length;
      totals.csvs += csvs.length;
      totals.installPlans += ips.length;
      totals.deployments += deps.length;
      if (subscribed.has(i)) {
        const headCsv = csvs.find((c) => c.metadata.name === csvName(head));
        if (subs.length !== 1) lost.push(`${ns}: ${subs.length} Subscriptions`);
        if (headCsv?.status?.phase !== 'Succeeded')
          lost.push(`${ns}: ${csvName(head)} ${headCsv?.status?.phase ?? 'missing'}`);
        for (const c of csvs) if (c !== headCsv) leaked.push(`${ns}: CSV ${c.metadata.name}`);
        const images = deps.map((d) => d.spec?.template?.spec?.containers?.[0]?.image);
        if (!images.includes(`registry.example/hapkg:${version(head)}`))
          lost.push(`${ns}: no Deployment of ${version(head)}`);
        if (deps.length > 1) leaked.push(`${ns}: ${deps.length} Deployments`);
      } else {
        for (const [kind, list] of [
          ['Subscription', subs],
          ['CSV', csvs],
          ['InstallPlan', ips],
          ['Deployment', deps],
        ] as const)
          for (const o of list) leaked.push(`${ns}: ${kind} ${o.metadata?.name}`);
      }
    }
    return { lost, leaked, totals };
  };
  const settleStarted = Date.now();
  let end = await count();
  while ((end.lost.length > 0 || end.leaked.length > 0) && Date.now() - settleStarted < 300_000) {
    await sleep(5000);
    end = await count();
  }
  const settleS = Math.round((Date.now() - settleStarted) / 1000);
  const common = {
    ...inputs(),
    soak_s: soakS,
    rounds,
    subscriptions_churned: churned,
    versions_published: head,
    namespaces: NAMESPACES,
    subscribed_at_end: subscribed.size,
  };
  const halfway = soakMinutes / 2 / 60;
  const secondHalf = (points: [number, number][]) => points.filter(([h]) => h >= halfway);
  const perHour = (points: [number, number][]) => Math.round(slope(points) * 10) / 10;
  emit({
    name: 'ha.soak.rss_growth_mib_per_hour',
    value: perHour(secondHalf(samples)),
    unit: 'MiB/h',
    inputs: {
      ...common,
      warmup_s: warmupS,
      method:
        "least-squares slope of the leader manager's VmRSS sampled each minute over the soak's second half (the first half, where the heap settles to the churn's working size, is in whole_soak_growth_mib_per_hour)",
      whole_soak_growth_mib_per_hour: perHour(samples),
      samples_mib: samples.map(([, y]) => y),
      standby_growth_mib_per_hour: perHour(secondHalf(standbySamples)),
      standby_whole_soak_growth_mib_per_hour: perHour(standbySamples),
      standby_samples_mib: standbySamples.map(([, y]) => y),
      target_mib_per_hour: 5,
    },
  });
  emit({
    name: 'ha.soak.objects_lost',
    value: end.lost.length,
    unit: 'objects',
    inputs: { ...common, converged_after_s: settleS, what: end.lost.slice(0, 20), totals: end.totals },
  });
  emit({
    name: 'ha.soak.objects_leaked',
    value: end.leaked.length,
    unit: 'objects',
    inputs: { ...common, converged_after_s: settleS, what: end.leaked.slice(0, 20), totals: end.totals },
  });
}
