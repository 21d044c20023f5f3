/**
 * `npm run bench -- corpus-install`: every operator of the OperatorHub corpus (BOSUN_CORPUS_DIR),
 * installed as a new user would on a fresh local control plane: the corpus imported as
 * `bosun catalog import` does, served over http as the global CatalogSource `corpus`, and one
 * Subscription per package on its default channel, in a namespace of its own with an
 * OperatorGroup chosen by the head CSV's install modes (test/support/corpus-install.ts).
 *
 * Figures:
 * - corpus.install.succeeded: packages whose CSV reached Succeeded (inputs: the count of every
 *   other outcome, each with one example);
 * - corpus.install.settled: seconds from the first Subscription to the last package reaching its
 *   final outcome (Succeeded or a failure that waiting does not cure);
 * - corpus.manager.rss.settled / .peak: the manager's resident memory a minute after everything
 *   settled, and its high-water mark.
 * BOSUN_CORPUS_WAIT_SECONDS (default 600) bounds the wait; packages still on their way then are
 * reported with the state they are in.
 * With BOSUN_CORPUS_PACKAGES=a,b,c only those packages are subscribed (a quicker look at a few).
 */
import type { CatalogSource, ClusterServiceVersion } from '../../src/apis/operators.js';
import { Resources } from '../../src/apis/operators.js';
import type { KubeObject } from '../../src/apis/meta.js';
import { objectPath } from '../../src/kube/client.js';
import { createInformer } from '../../src/kube/informer.js';
import {
  catalogReady,
  type Outcome,
  outcomeOf,
  type PackagePlan,
  planPackages,
  subscribe,
  ClusterView,
} from '../support/corpus-install.js';
import type { Emit } from './run.js';
import {
  type BenchCluster,
  benchCluster,
  coreResource,
  importedCorpus,
  mib,
  rssBytes,
  runManager,
  serveText,
  sleep,
  stopProcess,
  waitFor,
} from './support.js';

const globalNs = 'olm';
const source = { name: 'corpus', namespace: globalNs };
const say = (line: string) => process.stderr.write(`corpus-install bench: ${line}\n`);

export interface CorpusInstall {
  plans: PackagePlan[];
  outcomes: Map<string, Outcome>;
  /** Seconds from the first Subscription to the last CSV phase change. */
  settledSeconds: number;
  /** The manager's highest resident memory sampled meanwhile, in bytes. */
  peakRss: number;
}

/**
 * Serves the corpus on `cluster` (where the manager runs as `managerPid`), subscribes every
 * package of `BOSUN_CORPUS_PACKAGES` (default: all) and waits until each has a final outcome, or
 * `BOSUN_CORPUS_WAIT_SECONDS` (default 600) have passed.
 */
export async function installCorpus(
  corpus: string,
  cluster: BenchCluster,
  managerPid: number,
): Promise<CorpusInstall & { served: { close(): void } }> {
  const waitSeconds = Number(process.env.BOSUN_CORPUS_WAIT_SECONDS ?? 600);
  const only = process.env.BOSUN_CORPUS_PACKAGES?.split(',').filter(Boolean);
  const imported = await importedCorpus(corpus);
  const plans = planPackages(imported.config).filter((p) => !only || only.includes(p.package));
  say(`imported ${imported.packages} packages, ${imported.bundles} bundles; subscribing ${plans.length}`);
  const { client, create } = cluster;
  const served = await serveText(imported.text);
  let peakSampler: NodeJS.Timeout | undefined;
  try {
    await create(coreResource('namespaces'), '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: globalNs },
    });
    await waitFor('the CRDs', () =>
      create(Resources.CatalogSource, globalNs, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        metadata: source,
        spec: { sourceType: 'http', address: served.url, displayName: 'OperatorHub 2021' },
      } as KubeObject),
    );
    await waitFor(
      'the corpus catalog to be READY',
      async () => {
        const cs = await client.request<CatalogSource>({
          path: objectPath(Resources.CatalogSource, source.name, globalNs),
        });
        return catalogReady(cs) ? cs : undefined;
      },
      300_000,
      1000,
    );
    say('catalog READY');

    // The last time each namespace's CSVs changed phase, from an informer.
    const lastChange = new Map<string, number>();
    const csvs = createInformer<ClusterServiceVersion>(client, Resources.ClusterServiceVersion);
    const seen = (c: ClusterServiceVersion) => lastChange.set(c.metadata.namespace ?? '', performance.now());
    csvs.on({
      add: seen,
      update: (a, b) => a.status?.phase !== b.status?.phase && seen(b),
    });
    csvs.start();
    await csvs.synced();

    let peak = 0;
    peakSampler = setInterval(() => {
      void rssBytes(managerPid).then(
        (b) => (peak = Math.max(peak, b)),
        () => undefined,
      );
    }, 2000);

    const start = performance.now();
    const queue = [...plans];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let p = queue.shift(); p; p = queue.shift()) await subscribe(client, p, source);
      }),
    );
    say(`${plans.length} subscriptions created in ${((performance.now() - start) / 1000).toFixed(1)} s`);

    // Wait until every package has a final outcome, or the time is up.
    const outcomes = new Map<string, Outcome>();
    const deadline = start + waitSeconds * 1000;
    const view = new ClusterView(client);
    await view.start();
    for (;;) {
      for (const p of plans) {
        const prev = outcomes.get(p.package);
        if (prev && prev.kind !== 'Pending') continue;
        outcomes.set(p.package, outcomeOf(p, view.view(p.namespace)));
      }
      const pending = [...outcomes.values()].filter((o) => o.kind === 'Pending').length;
      const succeeded = [...outcomes.values()].filter((o) => o.kind === 'Succeeded').length;
      say(
        `${Math.round((performance.now() - start) / 1000)} s: ${succeeded} succeeded, ${pending} on their way`,
      );
      if (pending === 0 || performance.now() > deadline) break;
      await sleep(10_000);
    }
    const settledAt = Math.max(start, ...plans.map((p) => lastChange.get(p.namespace) ?? start));
    await csvs.stop();
    await view.stop();
    return {
      plans,
      outcomes,
      settledSeconds: Math.round((settledAt - start) / 100) / 10,
      peakRss: peak,
      served,
    };
  } catch (err) {
    served.close();
    throw err;
  } finally {
    clearInterval(peakSampler);
  }
}

export default async function corpusInstall(emit: Emit): Promise<void> {
  const corpus = process.env.BOSUN_CORPUS_DIR;
  if (!corpus) {
    say('BOSUN_CORPUS_DIR is not set; skipping (point it at the OperatorHub corpus)');
    return;
  }
  const keepAlive = setInterval(() => {}, 1 << 30);
  const cluster = await benchCluster('corpusbench');
  const manager = runManager(cluster.kubeconfig, globalNs);
  manager.on('exit', (code) => say(`manager exited (${code})`));
  let served: { close(): void } | undefined;
  try {
    const run = await installCorpus(corpus, cluster, manager.pid!);
    served = run.served;
    const { plans, outcomes } = run;
    const byClass = new Map<string, { count: number; example: string }>();
    for (const p of plans) {
      const o = outcomes.get(p.package)!;
      const key = o.kind === 'Succeeded' ? 'Succeeded' : `${o.kind}: ${o.class}`;
      const entry = byClass.get(key) ?? { count: 0, example: '' };
      entry.count++;
      if (!entry.example) entry.example = o.kind === 'Succeeded' ? p.package : `${p.package}: ${o.detail}`;
      byClass.set(key, entry);
    }
    const report = [...byClass.entries()].sort((a, b) => b[1].count - a[1].count);
    for (const [k, v] of report)
      say(`${String(v.count).padStart(4)}  ${k}  (e.g. ${v.example.slice(0, 300)})`);
    const failures = plans
      .filter((p) => outcomes.get(p.package)!.kind !== 'Succeeded')
      .map((p) => ({ package: p.package, mode: p.mode, ...outcomes.get(p.package) }));
    const inputs = {
      packages: plans.length,
      outcomes: Object.fromEntries(report),
      notSucceeded: failures,
      waitedSecondsAtMost: Number(process.env.BOSUN_CORPUS_WAIT_SECONDS ?? 600),
    };
    emit({
      name: 'corpus.install.succeeded',
      value: byClass.get('Succeeded')?.count ?? 0,
      unit: 'packages',
      inputs,
    });
    emit({
      name: 'corpus.install.settled',
      value: run.settledSeconds,
      unit: 's',
      inputs: { packages: plans.length },
    });

    // Memory once the catalog and the installs are done with: a minute later, as an idle manager.
    await sleep(60_000);
    emit({
      name: 'corpus.manager.rss.settled',
      value: mib(await rssBytes(manager.pid!)),
      unit: 'MiB',
      inputs: { packages: plans.length, manager: 'separate process (dist)' },
    });
    emit({
      name: 'corpus.manager.rss.peak',
      value: mib(Math.max(run.peakRss, await rssBytes(manager.pid!, 'VmHWM'))),
      unit: 'MiB',
      inputs: { packages: plans.length, manager: 'separate process (dist)' },
    });
  } finally {
    served?.close();
    await stopProcess(manager);
    await cluster.close();
    clearInterval(keepAlive);
  }
}
