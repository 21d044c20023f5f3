/**
 * Health-gated upgrades on real operators: packages of the OperatorHub corpus (BOSUN_CORPUS_DIR)
 * whose default channel links two versions by `replaces`, imported and served over http as in
 * corpus-sample.test.ts, through a running manager on the real control plane.
 *
 * Each is subscribed at the older version with an upgrade deadline of 1ms, so that the upgrade to
 * the channel head counts as failed before it can succeed. (On this control plane a real upgrade
 * reaches Succeeded in about half a second, and the deadline's clock starts at the CSV's
 * creationTimestamp, which has whole seconds: with 1s, the upgrade beat its deadline about every
 * other time.) Bosun must roll back to the older version with every CRD (same uid) and custom
 * resource (made from the operator's own alm-examples while the older version runs) untouched,
 * leave one live CSV, the older one Succeeded, nothing of the newer one, and not try the newer one
 * again while it is held back. One package is also rolled back on demand (`bosun rollback`) after
 * an upgrade that succeeded: the older version then comes back from the catalog. And several
 * tries at a deadline close to what an upgrade takes must each end on one Succeeded CSV, the newer
 * one or the older one, however the upgrade and the rollback interleave.
 *
 * Each package prints its timings: from the deadline (the newer CSV's creation plus the deadline,
 * the moment Bosun measures from) to RollingBack and to RolledBack, as watched from here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleDoc, DeclarativeConfig } from '../../../src/apis/fbc.js';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import { RollbackAnnotations } from '../../../src/install/rollback.js';
import { collectionPath } from '../../../src/kube/client.js';
import { Builtin } from '../../../src/kube/resources.js';
import { DefaultGlobalNamespace } from '../../../src/manager/defaults.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { channelHeads } from '../../../src/olm/channel-graph.js';
import { ClusterView, type PackagePlan, planPackages, subscribe } from '../../support/corpus-install.js';
import { eventually } from '../support.js';
import { bosunCli, client, get, list, Resources, serveCorpusCatalog, startTestManager } from './support.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
if (!corpus) {
  console.warn('corpus rollback test skipped: set BOSUN_CORPUS_DIR to the OperatorHub corpus to run it');
}

/**
 * Real operators with two versions linked by `replaces` at the head of their default channel,
 * which install on this control plane (corpus-sample's list), and whose head's CRDs still serve
 * every version the older CSV owns (checked below from the bundles).
 */
const Automatic = [
  'etcd', // etcdoperator.v0.9.2 → v0.9.4: v1beta1 CRDs, three kinds; the older one itself replaces v0.9.0
  'grafana-operator', // v3.10.1 → v3.10.2: v1beta1 CRDs, three kinds
  'prometheus-exporter-operator', // v0.2.0 → v0.2.4: the older one is the channel's first
] as const;
/** The package also rolled back on demand after a good upgrade. */
const Manual = 'etcd';

/** Short enough that a real upgrade always misses it on this control plane (see above). */
const ShortDeadline = '1ms';
const ShortDeadlineMs = 1;
/**
 * A deadline close to what a real upgrade takes here (about half a second alone, longer with ten
 * at once), cut short by up to a second by the whole-second creationTimestamp: a rollback then
 * often begins while the newer version is still installing and about to reach Succeeded. Several
 * tries, their starts spread over a second, meet it or miss it by a hair; whichever, each must
 * end on one Succeeded CSV.
 */
const RaceDeadline = '1s';
const RaceTries = 5;
/**
 * The packages tried at that deadline, in fresh namespaces: not prometheus-exporter-operator,
 * whose older version cannot be installed anew once the newer one's CRD is live (kept by the
 * rollback above): the newer CRD's enum of .spec.type has a value the older one lacks, and Bosun
 * refuses to take it away (the InstallPlan fails "the upgrade would not be safe for what the
 * cluster stores").
 */
const Race = ['etcd', 'grafana-operator'] as const;
/** How long a held-back version must stay away. */
const HoldWatchMs = 6_000;

const globalNs = DefaultGlobalNamespace;
const source = { name: `corpus-rollback-${process.pid}`, namespace: globalNs };

interface Pair {
  package: string;
  channel: string;
  older: string;
  newer: string;
  olderBundle: BundleDoc;
  newerBundle: BundleDoc;
}

type Obj = KubeObject & { spec?: Record<string, unknown> };

/** The channel head and the version it replaces, with their bundles. */
function pairOf(config: DeclarativeConfig, pkg: string): Pair {
  const p = config.packages.find((x) => x.name === pkg);
  if (!p) throw new Error(`package ${pkg} is not in the corpus`);
  const channel = p.defaultChannel ?? '';
  const entries = config.channels.find((c) => c.package === pkg && c.name === channel)?.entries ?? [];
  const newer = channelHeads(entries)[0];
  const older = entries.find((e) => e.name === newer)?.replaces;
  if (!newer || !older || !entries.some((e) => e.name === older))
    throw new Error(`${pkg}: the head of channel ${channel} replaces no version in it`);
  const bundle = (name: string) => {
    const b = config.bundles.find((x) => x.package === pkg && x.name === name);
    if (!b) throw new Error(`${pkg}: no bundle ${name}`);
    return b;
  };
  return { package: pkg, channel, older, newer, olderBundle: bundle(older), newerBundle: bundle(newer) };
}

const objectsOf = (b: BundleDoc): Obj[] =>
  (b.properties ?? [])
    .filter((p) => p.type === 'olm.bundle.object')
    .map((p) => JSON.parse(Buffer.from((p.value as { data: string }).data, 'base64').toString()) as Obj);
const csvOf = (b: BundleDoc) =>
  objectsOf(b).find((o) => o.kind === 'ClusterServiceVersion') as ClusterServiceVersion | undefined;

interface CRDDoc {
  metadata: { name: string };
  spec: {
    group: string;
    scope?: string;
    names: { kind: string; plural: string };
    version?: string;
    versions?: { name: string; served?: boolean }[];
  };
}
const crdsOf = (b: BundleDoc) =>
  objectsOf(b).filter((o) => o.kind === 'CustomResourceDefinition') as unknown as CRDDoc[];
const servedBy = (crd: CRDDoc) =>
  crd.spec.versions?.filter((v) => v.served !== false).map((v) => v.name) ?? [crd.spec.version ?? ''];

/** The API versions the older CSV owns that the newer bundle's CRDs no longer serve. */
function unservedByNewer(pair: Pair): string[] {
  const newer = crdsOf(pair.newerBundle);
  return (csvOf(pair.olderBundle)?.spec.customresourcedefinitions?.owned ?? [])
    .filter((o) => !newer.find((c) => c.metadata.name === o.name && servedBy(c).includes(o.version)))
    .map((o) => `${o.name} ${o.version}`);
}

/** A custom resource to make: where it goes and what it is. */
interface CustomResource {
  path: string;
  body: Obj;
}

/** The CSV's alm-examples as custom resources of its bundle's CRDs in `namespace`, one per kind and name. */
function examplesOf(bundle: BundleDoc, namespace: string): CustomResource[] {
  const csv = csvOf(bundle);
  const examples = JSON.parse(csv?.metadata.annotations?.['alm-examples'] ?? '[]') as Obj[];
  const crds = crdsOf(bundle);
  const out = new Map<string, CustomResource>();
  for (const ex of examples) {
    const [group, version] = (ex.apiVersion ?? '').split('/');
    const crd = crds.find((c) => c.spec.group === group && c.spec.names.kind === ex.kind);
    if (!crd || !version) continue;
    const name = ex.metadata?.name ?? `${ex.kind!.toLowerCase()}-example`;
    const namespaced = crd.spec.scope !== 'Cluster';
    const body: Obj = {
      ...ex,
      metadata: { ...ex.metadata, name, ...(namespaced ? { namespace } : {}) },
    };
    delete (body as { status?: unknown }).status;
    const path = collectionPath(
      { group: group!, version, plural: crd.spec.names.plural, namespaced },
      namespace,
    );
    out.set(`${ex.kind}/${name}`, { path, body });
  }
  return [...out.values()];
}

async function makeCustomResources(crs: readonly CustomResource[]): Promise<void> {
  const c = client();
  for (const cr of crs) {
    await c.request({ method: 'POST', path: cr.path, body: cr.body }).catch((err: Error) => {
      throw new Error(`creating ${cr.body.kind} ${cr.body.metadata?.name}: ${err.message}`);
    });
  }
  c.close();
}

/** Every custom resource of the given collections, whole, sorted by kind and name. */
async function storedCustomResources(crs: readonly CustomResource[]): Promise<KubeObject[]> {
  const c = client();
  const items: KubeObject[] = [];
  for (const path of new Set(crs.map((cr) => cr.path)))
    items.push(...(await c.request<{ items: KubeObject[] }>({ path })).items);
  c.close();
  return items.sort((a, b) => `${a.kind}/${a.metadata?.name}`.localeCompare(`${b.kind}/${b.metadata?.name}`));
}

/** The uid of each CRD (undefined when it is gone). */
async function crdUids(names: readonly string[]): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const name of names)
    out[name] = (await get<KubeObject>(Builtin.CustomResourceDefinition, '', name))?.metadata?.uid;
  return out;
}

/** What the namespace holds, for a failure message the lead can act on. */
async function describeNamespace(ns: string, pkg: string): Promise<string> {
  const sub = await get<Subscription>(Resources.Subscription, ns, pkg);
  const csvs = await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns);
  const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
  return JSON.stringify(
    {
      subscription: { annotations: sub?.metadata.annotations, status: sub?.status },
      csvs: csvs.map((c) => ({
        name: c.metadata.name,
        created: c.metadata.creationTimestamp,
        phase: c.status?.phase,
        reason: c.status?.reason,
        message: c.status?.message,
        deleting: c.metadata.deletionTimestamp !== undefined,
        phases: (c.status?.conditions ?? []).map(
          (x) => `${x.lastTransitionTime} ${x.phase} ${x.reason ?? ''}`,
        ),
        // What a CSV waiting on its requirements lacks.
        unmet: (c.status?.requirementStatus ?? [])
          .filter((r) => r.status !== 'Present')
          .map((r) => `${r.kind} ${r.name}: ${r.status} ${r.message ?? ''}`),
      })),
      installPlans: plans.map((p) => ({
        name: p.metadata.name,
        created: p.metadata.creationTimestamp,
        csvs: p.spec.clusterServiceVersionNames,
        phase: p.status?.phase,
        message: p.status?.message,
        rollbackFrom: p.metadata.annotations?.[RollbackAnnotations.rollbackFrom],
      })),
    },
    null,
    1,
  );
}

/** Waits for `check`, and on timeout says what the namespace holds. */
async function waitFor<T>(
  what: string,
  ns: string,
  pkg: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  return eventually(what, check, timeoutMs).catch(async (err: Error) => {
    throw new Error(`${pkg}: ${err.message}; the namespace holds ${await describeNamespace(ns, pkg)}`);
  });
}

/** When things happened in one namespace, as watched from here (wall clock, ms). */
interface Times {
  newerCreated?: number;
  newerSeen?: number;
  rollingBack?: number;
  rolledBack?: number;
  /** A new CSV of the newer version, or a new InstallPlan for it, seen after the rollback finished. */
  newerAgain?: string;
}

/** Watches one namespace through the cluster view every 100 ms until stopped. */
function watchTimes(cluster: ClusterView, ns: string, pair: Pair): { times: Times; stop(): void } {
  const times: Times = {};
  // The newer version's CSVs and InstallPlans known before the rollback finished, by uid: any
  // other one seen after it is a new attempt (an informer a little behind is not).
  const known = new Set<string>();
  const timer = setInterval(() => {
    const now = Date.now();
    const view = cluster.view(ns);
    const sub = view.subscriptions.find((s) => s.metadata.name === pair.package);
    const newer = view.csvs.find((c) => c.metadata.name === pair.newer);
    if (newer && times.newerSeen === undefined) {
      times.newerSeen = now;
      times.newerCreated = Date.parse(newer.metadata.creationTimestamp ?? '');
    }
    const phase = sub?.status?.rollback?.from === pair.newer ? sub.status.rollback.phase : undefined;
    if (phase === 'RollingBack' && times.rollingBack === undefined) times.rollingBack = now;
    if (phase === 'RolledBack' && times.rolledBack === undefined) times.rolledBack = now;
    const plans = view.installPlans.filter((p) => p.spec.clusterServiceVersionNames.includes(pair.newer));
    if (times.rolledBack === undefined) {
      for (const o of [newer, ...plans]) if (o?.metadata.uid) known.add(o.metadata.uid);
    } else if (times.newerAgain === undefined) {
      const plan = plans.find((p) => !known.has(p.metadata.uid ?? ''));
      if (newer && !known.has(newer.metadata.uid ?? ''))
        times.newerAgain = `CSV ${pair.newer} (${newer.status?.phase ?? 'no phase'})`;
      else if (plan) times.newerAgain = `InstallPlan ${plan.metadata.name} for ${pair.newer}`;
    }
  }, 100);
  return { times, stop: () => clearInterval(timer) };
}

const seconds = (from: number | undefined, to: number | undefined) =>
  from === undefined || to === undefined ? '?' : ((to - from) / 1000).toFixed(1);

/**
 * What must hold once a package is back on its older version. Right after RolledBack
 * (`justRolledBack`), the older CSV must already be Succeeded: that is what RolledBack says. That is
 * a soft check, and then the older CSV is given a minute to settle, so that a run shows both
 * whether RolledBack came too early and whether the package ends consistent.
 */
async function assertBackOnOlder(
  ns: string,
  pair: Pair,
  crds: Record<string, string | undefined>,
  before: readonly KubeObject[],
  crs: readonly CustomResource[],
  justRolledBack = false,
): Promise<void> {
  const context = await describeNamespace(ns, pair.package);
  const phases = async () =>
    (await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns))
      .filter((c) => c.status?.reason !== 'Copied')
      .map((c) => `${c.metadata.name}:${c.status?.phase}`);
  const expected = [`${pair.older}:Succeeded`];
  if (justRolledBack) {
    expect
      .soft(await phases(), `${pair.package}: the CSVs when the Subscription said RolledBack; ${context}`)
      .toEqual(expected);
    await waitFor(
      `${pair.older} alone and Succeeded`,
      ns,
      pair.package,
      async () => ((await phases()).join() === expected.join() ? true : undefined),
      60_000,
    ).catch(() => undefined);
  }
  expect(await phases(), await describeNamespace(ns, pair.package)).toEqual(expected);
  expect(await get(Resources.ClusterServiceVersion, ns, pair.newer), context).toBeUndefined();
  const plans = await list<InstallPlan>(Resources.InstallPlan, ns);
  expect(
    plans.filter((p) => p.spec.clusterServiceVersionNames.includes(pair.newer)).map((p) => p.metadata.name),
    context,
  ).toEqual([]);
  // The older version was reinstated by a rollback InstallPlan, which completed.
  const rollbackPlans = plans.filter(
    (p) => p.metadata.annotations?.[RollbackAnnotations.rollbackFrom] === pair.newer,
  );
  expect(
    rollbackPlans.map((p) => `${p.spec.clusterServiceVersionNames.join(',')}:${p.status?.phase}`),
    context,
  ).toEqual([`${pair.older}:Complete`]);
  // Every CRD is the same object, and every custom resource is as it was (same resourceVersion).
  expect(await crdUids(Object.keys(crds))).toEqual(crds);
  expect(await storedCustomResources(crs)).toEqual(before);
}

describe.skipIf(!corpus)('rollback of real operators of the OperatorHub corpus', () => {
  let manager: RunningManager;
  let served: { url: string; close(): void };
  let config: DeclarativeConfig;
  let cluster: ClusterView;
  const namespaces: string[] = [];

  beforeAll(async () => {
    manager = await startTestManager();
    ({ config, served } = await serveCorpusCatalog(corpus!, globalNs, source.name));
    const c = client();
    cluster = new ClusterView(c);
    await cluster.start();
  }, 600_000);

  afterAll(async () => {
    await cluster?.stop();
    const c = client();
    for (const ns of namespaces)
      await c.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => undefined);
    await c
      .request({
        method: 'DELETE',
        path: `/apis/operators.coreos.com/v1alpha1/namespaces/${globalNs}/catalogsources/${source.name}`,
      })
      .catch(() => undefined);
    c.close();
    served?.close();
    await manager?.stop();
  });

  /** The package's plan (OperatorGroup by its head's install modes) in a namespace named by `prefix`. */
  function planFor(pkg: string, prefix: string): PackagePlan {
    const plan = planPackages(
      { ...config, packages: config.packages.filter((p) => p.name === pkg) },
      `${prefix}${process.pid % 10000}`,
    )[0]!;
    namespaces.push(plan.namespace, ...plan.extraNamespaces);
    return plan;
  }

  it('picks packages whose head replaces an older version whose APIs its CRDs still serve', () => {
    for (const pkg of Automatic) {
      const pair = pairOf(config, pkg);
      expect(unservedByNewer(pair), pkg).toEqual([]);
      expect(
        examplesOf(pair.olderBundle, 'x').length,
        `${pkg}: custom resources from alm-examples`,
      ).toBeGreaterThan(0);
    }
  });

  for (const pkg of Automatic) {
    it(`${pkg}: an upgrade that misses its ${ShortDeadline} deadline is rolled back, keeping CRDs and custom resources; held back`, async () => {
      const pair = pairOf(config, pkg);
      const plan = planFor(pkg, 'rba');
      const ns = plan.namespace;
      const watch = watchTimes(cluster, ns, pair);
      try {
        const c = client();
        await subscribe(c, plan, source, {
          startingCSV: pair.older,
          annotations: { [RollbackAnnotations.deadline]: ShortDeadline },
        });
        c.close();

        // The older version is installed and its CRDs exist (the upgrade may begin before it has
        // Succeeded): make custom resources.
        await waitFor(
          `${pair.older} to run and the upgrade to ${pair.newer} to begin`,
          ns,
          pkg,
          async () =>
            watch.times.newerSeen !== undefined || watch.times.rollingBack !== undefined ? true : undefined,
          120_000,
        );
        const crdNames = crdsOf(pair.olderBundle).map((c) => c.metadata.name);
        const crds = await crdUids(crdNames);
        expect(
          Object.values(crds).every((u) => u !== undefined),
          JSON.stringify(crds),
        ).toBe(true);
        const crs = examplesOf(pair.olderBundle, ns);
        await makeCustomResources(crs);
        const before = await storedCustomResources(crs);
        expect(before).toHaveLength(crs.length);

        const sub = await waitFor(
          `the rollback from ${pair.newer} to ${pair.older} to finish`,
          ns,
          pkg,
          async () => {
            const s = await get<Subscription>(Resources.Subscription, ns, pkg);
            const r = s?.status?.rollback;
            return r?.phase === 'RolledBack' &&
              r.from === pair.newer &&
              s?.status?.installedCSV === pair.older
              ? s
              : undefined;
          },
          120_000,
        );
        expect(sub.status?.rollback, await describeNamespace(ns, pkg)).toMatchObject({
          phase: 'RolledBack',
          from: pair.newer,
          to: pair.older,
        });
        expect(sub.status?.rollback?.cause).toMatch(
          new RegExp(`did not reach Succeeded within ${ShortDeadline}`),
        );
        expect(sub.status?.conditions?.find((x) => x.type === 'RolledBack')).toMatchObject({
          status: 'True',
        });
        expect(sub.status?.history?.map((h) => `${h.csv}:${h.outcome}`)).toEqual(
          expect.arrayContaining([`${pair.older}:RolledBack`, `${pair.newer}:Failed`]),
        );
        await assertBackOnOlder(ns, pair, crds, before, crs, true);

        // Held back: the newer version is not tried again while the catalog is unchanged.
        await new Promise((r) => setTimeout(r, HoldWatchMs));
        expect(watch.times.newerAgain, await describeNamespace(ns, pkg)).toBeUndefined();
        const held = await get<Subscription>(Resources.Subscription, ns, pkg);
        expect(held?.status?.currentCSV).toBe(pair.older);
        expect(held?.status?.installedCSV).toBe(pair.older);
        expect(held?.status?.rollback).toMatchObject({ phase: 'RolledBack', from: pair.newer });
        await assertBackOnOlder(ns, pair, crds, before, crs);

        const t = watch.times;
        const deadlineAt = t.newerCreated === undefined ? undefined : t.newerCreated + ShortDeadlineMs;
        console.log(
          `[corpus rollback] ${pkg}: ${pair.newer} → ${pair.older}, ${crs.length} custom resources kept; ` +
            `deadline ${ShortDeadline} → RollingBack ${seconds(deadlineAt, t.rollingBack)} s → RolledBack ${seconds(deadlineAt, t.rolledBack)} s ` +
            `(newer CSV seen → RollingBack ${seconds(t.newerSeen, t.rollingBack)} s → RolledBack ${seconds(t.newerSeen, t.rolledBack)} s)`,
        );
      } finally {
        watch.stop();
      }
    }, 600_000);
  }

  it(`a ${RaceDeadline} deadline, met or missed by a hair, always ends on one Succeeded CSV: the newer one, or the older one after a rollback`, async () => {
    const tries = Race.flatMap((pkg) =>
      Array.from({ length: RaceTries }, (_, i) => ({
        pair: pairOf(config, pkg),
        plan: planFor(pkg, `rbr${i}-`),
      })),
    );
    const c = client();
    await Promise.all(
      tries.map(async (t, i) => {
        await new Promise((r) => setTimeout(r, (i * 1_000) / tries.length));
        await subscribe(c, t.plan, source, {
          startingCSV: t.pair.older,
          annotations: { [RollbackAnnotations.deadline]: RaceDeadline },
        });
      }),
    );
    c.close();

    /** How one try ended, once it has (and stays so). */
    const outcome = async ({ pair, plan }: (typeof tries)[number]) => {
      const sub = await get<Subscription>(Resources.Subscription, plan.namespace, pair.package);
      const csvs = (await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, plan.namespace))
        .filter((x) => x.status?.reason !== 'Copied')
        .map((x) => `${x.metadata.name}:${x.status?.phase}`);
      const only = (name: string) => csvs.length === 1 && csvs[0] === `${name}:Succeeded`;
      const r = sub?.status?.rollback;
      if (r?.phase === 'RolledBack' && r.from === pair.newer && only(pair.older)) return 'rolled back';
      if (r === undefined && sub?.status?.installedCSV === pair.newer && only(pair.newer)) return 'upgraded';
      return undefined;
    };
    const ended = new Map<string, string>();
    await eventually(
      'every try to end on one Succeeded CSV',
      async () => {
        for (const t of tries) {
          const o = await outcome(t);
          if (o) ended.set(t.plan.namespace, o);
          else ended.delete(t.plan.namespace);
        }
        return ended.size === tries.length ? true : undefined;
      },
      120_000,
    ).catch(async (err: Error) => {
      const stuck = tries.filter((t) => !ended.has(t.plan.namespace));
      const dumps = await Promise.all(
        stuck.map(
          async (t) => `${t.plan.namespace}: ${await describeNamespace(t.plan.namespace, t.pair.package)}`,
        ),
      );
      throw new Error(
        `${err.message}: ${stuck.length} of ${tries.length} did not (the others: ${[...ended].map(([ns, o]) => `${ns} ${o}`).join(', ')}); ${dumps.join('\n')}`,
      );
    });
    // And each stays so.
    await new Promise((r) => setTimeout(r, 3_000));
    for (const t of tries) expect(await outcome(t), t.plan.namespace).toBe(ended.get(t.plan.namespace));
    const count = (o: string) => [...ended.values()].filter((x) => x === o).length;
    console.log(
      `[corpus rollback] ${RaceDeadline} deadline, ${tries.length} tries: ${count('upgraded')} upgraded within it, ${count('rolled back')} rolled back`,
    );
  }, 600_000);

  it(`${Manual}: \`bosun rollback\` after a good upgrade reinstalls the older version from the catalog, keeping CRDs and custom resources`, async () => {
    const pair = pairOf(config, Manual);
    const plan = planFor(Manual, 'rbm');
    const ns = plan.namespace;
    const watch = watchTimes(cluster, ns, pair);
    try {
      const c = client();
      await subscribe(c, plan, source, {
        startingCSV: pair.older,
        annotations: { [RollbackAnnotations.deadline]: '5m' },
      });
      c.close();
      await waitFor(
        `the upgrade to ${pair.newer} to succeed and ${pair.older} to go`,
        ns,
        Manual,
        async () => {
          const csvs = cluster.view(ns).csvs;
          const newer = csvs.find((x) => x.metadata.name === pair.newer);
          const older = csvs.find((x) => x.metadata.name === pair.older);
          return newer?.status?.phase === 'Succeeded' && !older ? true : undefined;
        },
        300_000,
      );
      const crdNames = crdsOf(pair.newerBundle).map((x) => x.metadata.name);
      const crds = await crdUids(crdNames);
      expect(
        Object.values(crds).every((u) => u !== undefined),
        JSON.stringify(crds),
      ).toBe(true);
      const crs = examplesOf(pair.newerBundle, ns);
      await makeCustomResources(crs);
      const before = await storedCustomResources(crs);
      expect(before).toHaveLength(crs.length);

      const asked = Date.now();
      const result = await bosunCli('rollback', '-n', ns, Manual, '--timeout', '240');
      const answered = Date.now();
      const context = await describeNamespace(ns, Manual);
      expect(result.err, context).toBe('');
      expect(result, context).toMatchObject({ code: 0 });
      expect(result.out).toContain(`rolled back from ${pair.newer} to ${pair.older}`);
      const sub = await get<Subscription>(Resources.Subscription, ns, Manual);
      expect(sub?.status?.rollback, context).toMatchObject({
        phase: 'RolledBack',
        from: pair.newer,
        to: pair.older,
      });
      expect(sub?.status?.rollback?.cause).toMatch(/rollback asked for/);
      expect(sub?.status?.installedCSV).toBe(pair.older);
      expect(sub?.metadata.annotations?.[RollbackAnnotations.rollback]).toBeUndefined();
      await assertBackOnOlder(ns, pair, crds, before, crs, true);

      await new Promise((r) => setTimeout(r, HoldWatchMs));
      expect(watch.times.newerAgain, await describeNamespace(ns, Manual)).toBeUndefined();
      expect((await get<Subscription>(Resources.Subscription, ns, Manual))?.status?.currentCSV).toBe(
        pair.older,
      );
      await assertBackOnOlder(ns, pair, crds, before, crs);

      console.log(
        `[corpus rollback] ${Manual} (bosun rollback): ${pair.newer} → ${pair.older} from the catalog, ` +
          `${crs.length} custom resources kept; asked → RolledBack ${seconds(asked, watch.times.rolledBack)} s ` +
          `(CLI answered after ${seconds(asked, answered)} s)`,
      );
    } finally {
      watch.stop();
    }
  }, 600_000);
});
