/**
 * The manager's resident memory as users run it (`bosun operator run` from dist/, with the
 * allocator setting it gives itself), against a control plane of its own:
 * - memory.manager_rss.sample: with the repository's sample catalog (catalogs/) served over http;
 * - memory.manager_rss.corpus: with the OperatorHub corpus catalog (BOSUN_CORPUS_DIR, imported to
 *   FBC and served over http) added as a second CatalogSource; memory.manager_rss.corpus.peak: the
 *   high-water mark by then.
 * Each figure is the RSS BOSUN_MEMORY_SETTLE_S seconds (default 180) after the catalog synced,
 * sampled every 5 s (the series is in the inputs): after a catalog loads, V8 keeps the heap it grew
 * to for a minute or two before its memory reducer gives it back, so a figure taken while the
 * samples are merely flat can be that of the grown heap.
 */
import type { KubeObject } from '../../src/apis/meta.js';
import { type CatalogSource, Resources } from '../../src/apis/operators.js';
import { catalogConfigMapData } from '../../src/cli/commands/start.js';
import { objectPath } from '../../src/kube/client.js';
import type { Emit } from './run.js';
import {
  type BenchCluster,
  benchCluster,
  coreResource as core,
  importedCorpus,
  managerAllocator,
  mib,
  rssBytes,
  runManager,
  serveText,
  sleep,
  stopProcess,
  waitFor,
} from './support.js';

const globalNs = 'olm';
const settleSeconds = Number(process.env.BOSUN_MEMORY_SETTLE_S ?? 180);

/** Adds an http CatalogSource for `url` and waits until the manager has synced it. */
async function addCatalog(cluster: BenchCluster, name: string, url: string): Promise<CatalogSource> {
  // The manager installs the CRDs as it starts: until then the create is refused.
  await waitFor('the CatalogSource CRD', () =>
    cluster.create(Resources.CatalogSource, globalNs, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name, namespace: globalNs },
      spec: { sourceType: 'http', address: url },
    } as KubeObject),
  );
  return waitFor(`catalog ${name} to sync`, async () => {
    const cs = await cluster.client.request<CatalogSource>({
      path: objectPath(Resources.CatalogSource, name, globalNs),
    });
    return cs.status?.connectionState?.lastObservedState === 'READY' ? cs : undefined;
  });
}

/** RSS samples every 5 s for `seconds`, in MiB. */
async function rssSeries(pid: number, seconds: number): Promise<number[]> {
  const out: number[] = [];
  for (let t = 0; t < seconds; t += 5) {
    await sleep(5_000);
    out.push(mib(await rssBytes(pid)));
  }
  return out;
}

export default async function memory(emit: Emit): Promise<void> {
  const cluster = await benchCluster('bench-memory');
  const servers: { close(): void }[] = [];
  const manager = runManager(cluster.kubeconfig, globalNs);
  const inputs = { allocator: managerAllocator(), settleSeconds, manager: 'bosun operator run (dist)' };
  try {
    await cluster.create(core('namespaces'), '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: globalNs },
    } as KubeObject);
    const samples = Object.values(
      await catalogConfigMapData(new URL('../../catalogs', import.meta.url).pathname),
    ).join('\n---\n');
    const sampleServer = await serveText(samples);
    servers.push(sampleServer);
    await addCatalog(cluster, 'samples', sampleServer.url);
    const sampleSeries = await rssSeries(manager.pid!, settleSeconds);
    emit({
      name: 'memory.manager_rss.sample',
      value: sampleSeries.at(-1)!,
      unit: 'MiB',
      inputs: { ...inputs, catalogs: 'catalogs/', samplesMiB: sampleSeries },
    });

    const corpus = process.env.BOSUN_CORPUS_DIR;
    if (!corpus) {
      process.stderr.write('memory bench: BOSUN_CORPUS_DIR is not set; skipping the corpus catalog\n');
      return;
    }
    const { config, text } = await importedCorpus(corpus);
    const corpusServer = await serveText(text);
    servers.push(corpusServer);
    await addCatalog(cluster, 'corpus', corpusServer.url);
    const corpusSeries = await rssSeries(manager.pid!, settleSeconds);
    const corpusInputs = {
      ...inputs,
      catalogs: 'catalogs/ + corpus',
      corpusPackages: config.packages.length,
      corpusBundles: config.bundles.length,
      corpusBytes: Buffer.byteLength(text),
    };
    emit({
      name: 'memory.manager_rss.corpus',
      value: corpusSeries.at(-1)!,
      unit: 'MiB',
      inputs: { ...corpusInputs, samplesMiB: corpusSeries },
    });
    emit({
      name: 'memory.manager_rss.corpus.peak',
      value: mib(await rssBytes(manager.pid!, 'VmHWM')),
      unit: 'MiB',
      inputs: corpusInputs,
    });
  } finally {
    for (const s of servers) s.close();
    await stopProcess(manager);
    await cluster.close();
  }
}
