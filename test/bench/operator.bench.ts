/**
 * The meta-operator's figures, against a local control plane of its own and a manager running as
 * its own process (`bosun operator run`, compiled to dist/ first):
 * - operator.install: seconds from creating a Subscription to its CSV `Succeeded` (p50, p90 over
 *   20 installs, one namespace each, one after another), for a small operator (a CRD, RBAC and one
 *   Deployment, manifests inline in its FBC bundle);
 * - operator.install.100: seconds from creating 100 Subscriptions in 100 namespaces to all their
 *   CSVs `Succeeded`;
 * - operator.rss.idle / operator.rss.corpus: the manager's resident memory with the bench catalog
 *   only, and a minute after the OperatorHub corpus catalog (BOSUN_CORPUS_DIR, imported to FBC and
 *   served over http) is loaded as a second CatalogSource; operator.rss.corpus.peak: the
 *   high-water mark by then.
 * Timings are taken from an informer on CSVs, so they do not depend on a polling interval.
 */
import type { BundleDoc } from '../../src/apis/fbc.js';
import type { KubeObject } from '../../src/apis/meta.js';
import { type CatalogSource, type ClusterServiceVersion, Resources } from '../../src/apis/operators.js';
import { objectPath } from '../../src/kube/client.js';
import { createInformer } from '../../src/kube/informer.js';
import type { Emit } from './run.js';
import { gadgetCrd, inline, operatorCsv, operatorDeployment } from '../support/operator-objects.js';
import {
  catalogConfigMap,
  benchCluster,
  coreResource as core,
  importedCorpus,
  rssBytes,
  runManager,
  serveText,
  sleep,
  stopProcess,
  waitFor,
} from './support.js';

const pkg = 'benchop';
const csvName = `${pkg}.v1.0.0`;
const globalNs = 'olm';

/** The bench operator's catalog as a JSON stream. */
function benchCatalog(): string {
  const crd = gadgetCrd('bench.bosun.dev');
  const csv = operatorCsv(csvName, {
    displayName: 'Bench operator',
    owned: [{ name: 'gadgets.bench.bosun.dev', version: 'v1', kind: 'Gadget' }],
    permissions: [
      {
        serviceAccountName: 'benchop',
        rules: [{ apiGroups: ['bench.bosun.dev'], resources: ['gadgets'], verbs: ['*'] }],
      },
    ],
    deployments: [operatorDeployment('benchop', 'benchop', 'benchop', 'registry.example/benchop:1.0.0')],
  });
  const bundle: BundleDoc = {
    schema: 'olm.bundle',
    package: pkg,
    name: csvName,
    image: '',
    properties: [
      { type: 'olm.package', value: { packageName: pkg, version: '1.0.0' } },
      inline(crd),
      inline(csv),
    ],
  };
  const docs = [
    { schema: 'olm.package', name: pkg, defaultChannel: 'stable' },
    { schema: 'olm.channel', package: pkg, name: 'stable', entries: [{ name: csvName }] },
    bundle,
  ];
  return docs.map((d) => JSON.stringify(d)).join('\n');
}

const say = (line: string) => process.stderr.write(`operator bench: ${line}\n`);
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

export default async function operator(emit: Emit): Promise<void> {
  // Waits below may rest on unref'd runtime timers only; keep the process alive meanwhile.
  const keepAlive = setInterval(() => {}, 1 << 30);
  // BOSUN_BENCH_KUBECONFIG: an existing (empty) cluster instead of a fresh local control plane.
  const cluster = await benchCluster('opbench');
  say(`control plane up at ${cluster.server}`);
  const { client, create } = cluster;
  const manager = runManager(cluster.kubeconfig, globalNs);
  manager.on('exit', (code) => say(`manager exited (${code})`));
  const servers: { close(): void }[] = [];
  try {
    // The catalog: a ConfigMap source in the global namespace.
    say('creating the catalog');
    await catalogConfigMap(cluster, globalNs, 'bench', benchCatalog());
    // The manager installs the CRDs as it starts; creating the CatalogSource waits for them.
    await waitFor('the CRDs', () =>
      create(Resources.CatalogSource, globalNs, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        metadata: { name: 'bench', namespace: globalNs },
        spec: { sourceType: 'configmap', configMap: 'bench' },
      } as KubeObject),
    );
    await waitFor('the bench catalog to be READY', async () => {
      const cs = await client.request<CatalogSource>({
        path: objectPath(Resources.CatalogSource, 'bench', globalNs),
      });
      return cs.status?.connectionState?.lastObservedState === 'READY' ? cs : undefined;
    });

    say('bench catalog READY');
    // Succeeded times, from an informer on every CSV.
    const succeededAt = new Map<string, number>();
    const csvs = createInformer<ClusterServiceVersion>(client, Resources.ClusterServiceVersion);
    const seen = (c: ClusterServiceVersion) => {
      if (c.status?.phase === 'Succeeded' && !succeededAt.has(c.metadata.namespace!)) {
        succeededAt.set(c.metadata.namespace!, performance.now());
      }
    };
    csvs.on({ add: seen, update: (_, c) => seen(c) });
    csvs.start();
    await csvs.synced();

    let n = 0;
    const run = Date.now().toString(36);
    const prepare = async () => {
      const ns = `bench-${run}-${++n}`;
      await create(core('namespaces'), '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await create(Resources.OperatorGroup, ns, {
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        metadata: { name: 'og', namespace: ns },
        spec: { targetNamespaces: [ns] },
      } as KubeObject);
      return ns;
    };
    const subscribe = async (ns: string) => {
      const t = performance.now();
      await create(Resources.Subscription, ns, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: pkg, namespace: ns },
        spec: { name: pkg, channel: 'stable', source: 'bench', sourceNamespace: globalNs },
      } as KubeObject);
      return t;
    };
    const done = (ns: string, timeoutMs = 300_000) =>
      waitFor(`${ns} Succeeded`, async () => succeededAt.get(ns), timeoutMs);

    // One warm-up install (CRD creation, first discovery), not counted.
    const warm = await prepare();
    await subscribe(warm);
    await done(warm);

    say('warm-up install done');
    const runs = 20;
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const ns = await prepare();
      const t = await subscribe(ns);
      times.push(((await done(ns)) - t) / 1000);
    }
    times.sort((a, b) => a - b);
    const inputs = { installs: runs, operator: csvName, manager: 'separate process (dist)' };
    emit({ name: 'operator.install.p50', value: quantile(times, 0.5), unit: 's', inputs });
    emit({ name: 'operator.install.p90', value: quantile(times, 0.9), unit: 's', inputs });

    say('20 installs done');
    const many = 100;
    const namespaces: string[] = [];
    for (let i = 0; i < many; i++) namespaces.push(await prepare());
    const t = performance.now();
    for (let i = 0; i < many; i += 10) await Promise.all(namespaces.slice(i, i + 10).map(subscribe));
    // On two shared cores the simulated node can miss its heartbeats under this load; its pods
    // then stay unready and those CSVs never succeed. Report how far it got instead of failing.
    const settled = await Promise.allSettled(namespaces.map((ns) => done(ns, 180_000)));
    const ok = namespaces.filter((_, i) => settled[i]!.status === 'fulfilled');
    const last = Math.max(...ok.map((ns) => succeededAt.get(ns)!));
    if (ok.length === many) {
      emit({
        name: 'operator.install.100',
        value: (last - t) / 1000,
        unit: 's',
        inputs: { namespaces: many, operator: csvName },
      });
    } else {
      say(
        `${many - ok.length} of ${many} CSVs did not reach Succeeded within 180 s (is the simulated node Ready?)`,
      );
      emit({
        name: 'operator.install.100.succeeded',
        value: ok.length,
        unit: 'namespaces',
        inputs: {
          namespaces: many,
          operator: csvName,
          waitedSeconds: 180,
          lastSucceededAfterSeconds: (last - t) / 1000,
        },
      });
    }
    await csvs.stop();

    const rssInputs = { catalogs: 'bench', installed: runs + many + 1, manager: 'separate process (dist)' };
    emit({
      name: 'operator.rss.idle',
      value: (await rssBytes(manager.pid!)) / 2 ** 20,
      unit: 'MiB',
      inputs: rssInputs,
    });

    const corpus = process.env.BOSUN_CORPUS_DIR;
    if (!corpus) {
      process.stderr.write(
        'operator bench: BOSUN_CORPUS_DIR is not set; skipping the RSS with the corpus catalog\n',
      );
      return;
    }
    const { config, text } = await importedCorpus(corpus);
    const server = await serveText(text);
    servers.push(server);
    const url = server.url;
    await create(Resources.CatalogSource, globalNs, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'corpus', namespace: globalNs },
      spec: { sourceType: 'http', address: url },
    } as KubeObject);
    const cs = await waitFor('the corpus catalog to be synced', async () => {
      const c = await client.request<CatalogSource>({
        path: objectPath(Resources.CatalogSource, 'corpus', globalNs),
      });
      return c.status?.conditions?.length ? c : undefined;
    });
    // Loading leaves garbage (the parse runs in a worker thread, whose memory goes back when it
    // ends, but the main heap shrinks only once V8's memory reducer runs, some 30 s into idling):
    // the figure is the resident memory a minute after the sync, with the peak beside it.
    const samples: number[] = [];
    for (let i = 0; i < 12; i++) {
      await sleep(5_000);
      samples.push(await rssBytes(manager.pid!));
    }
    emit({
      name: 'operator.rss.corpus.peak',
      value: (await rssBytes(manager.pid!, 'VmHWM')) / 2 ** 20,
      unit: 'MiB',
      inputs: { ...rssInputs, catalogs: 'bench + corpus' },
    });
    emit({
      name: 'operator.rss.corpus',
      value: samples.at(-1)! / 2 ** 20,
      unit: 'MiB',
      inputs: {
        samplesMiB: samples.map((s) => Math.round(s / 2 ** 20)),
        ...rssInputs,
        catalogs: 'bench + corpus',
        corpusPackages: config.packages.length,
        corpusBundles: config.bundles.length,
        corpusBytes: Buffer.byteLength(text),
        corpusState: cs.status?.connectionState?.lastObservedState,
        corpusMessage: cs.status?.message,
      },
    });
  } finally {
    for (const s of servers) s.close();
    await stopProcess(manager);
    await cluster.close();
    clearInterval(keepAlive);
  }
}
