/**
 * Catalog and bundle images read by the manager, in-process, from Debian's docker-registry on
 * 127.0.0.1 (plain HTTP, a storage folder of its own): the 2021 OperatorHub corpus imported as
 * `bosun catalog import --skip-invalid` writes it (BOSUN_CORPUS_DIR), else catalogs/bosun-samples,
 * built as one catalog image with Bosun's image library and pushed there.
 * - oci.catalog_image.cold: the image fetcher (src/catalog/content/image.ts) reading the image
 *   with nothing held: resolve, pull, extract, spool and parse (median of 3, each from scratch);
 * - oci.catalog_image.cached: the same fetch when the store holds that digest (median of 5);
 * - oci.bundle_unpack.cold: a sample bundle's image pulled and read by the bundle content
 *   (src/catalog/content/bundle-images.ts) into a fresh cache (median of 5);
 * - oci.subscription_succeeded.cold / .warm: in a running manager (`bosun operator run` from dist,
 *   on a control plane of its own), from applying a Subscription to its CSV Succeeded, for a
 *   bundle the catalog image names by image only: the first namespace pulls the bundle image, the
 *   second finds it in the cache;
 * - oci.manager_rss.corpus_pull.peak (oci.manager_rss.samples_pull.peak without BOSUN_CORPUS_DIR):
 *   that manager's highest resident memory while it pulls and reads the catalog image above: the
 *   larger of its RSS sampled every 100 ms until READY and its VmHWM read then (the high-water
 *   mark of its life, which catches a spike between two samples; vmHWMBefore, its mark before the
 *   pull, says what the start and the Subscriptions reached). All three are in the inputs.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../src/apis/meta.js';
import { type CatalogSource, type ClusterServiceVersion, Resources } from '../../src/apis/operators.js';
import { BundleImageCache } from '../../src/catalog/content/bundle-image-cache.js';
import { imageBundleContent } from '../../src/catalog/content/bundle-images.js';
import { imageFetcher } from '../../src/catalog/content/image.js';
import { registryAccess } from '../../src/catalog/content/registry-access.js';
import { CatalogSpool } from '../../src/catalog/content/spool.js';
import type { CatalogContent } from '../../src/catalog/content/store.js';
import { buildCatalogImage, readCatalogFiles } from '../../src/catalog/image.js';
import { main } from '../../src/cli/main.js';
import { freePort } from '../../src/cluster/ports.js';
import { objectPath } from '../../src/kube/client.js';
import { pushImage } from '../../src/oci/build.js';
import { RegistryClient } from '../../src/oci/client.js';
import { parseReference } from '../../src/oci/reference.js';
import {
  imageOnlyCatalog,
  pushCatalog,
  pushSampleBundles,
  sampleCatalog,
} from '../integration/controllers/image-catalogs.js';
import { capture } from '../support/capture.js';
import {
  baseRegistryConfig,
  RegistryBinary,
  type RegistryProcess,
  registryProcess,
} from '../support/docker-registry.js';
import type { Emit } from './run.js';
import {
  benchCluster,
  coreResource as core,
  managerAllocator,
  median,
  mib,
  round,
  rssBytes,
  runManager,
  sleep,
  stopProcess,
  waitFor,
} from './support.js';

const repo = join(import.meta.dirname, '../..');
const say = (s: string) => process.stderr.write(`oci bench: ${s}\n`);

export default async function oci(emit: Emit): Promise<void> {
  if (!existsSync(RegistryBinary)) {
    say(`skipped; ${RegistryBinary} is missing (apt-get install docker-registry)`);
    return;
  }
  const work = await mkdtemp(join(tmpdir(), 'bosun-bench-oci-'));
  const registry = await plainRegistry(work);
  const push = new RegistryClient();
  try {
    const { dir, catalog, key } = await catalogDir(work);
    const files = await readCatalogFiles(dir);
    if (!files.ok) throw new Error(`${dir}: ${JSON.stringify(files.errors.slice(0, 3))}`);
    const bytes = [...files.value.values()].reduce((n, b) => n + b.length, 0);
    const image = `${registry.host}/catalogs/bench:v1`;
    const digest = await pushImage(push, parseReference(image), buildCatalogImage(files.value));
    const inputs = { catalog, files: files.value.size, catalogMiB: mib(bytes), digest };
    await fetcherFigures(emit, image, inputs);
    const bundles = await pushSampleBundles(push, registry.host);
    await bundleUnpack(emit, bundles.get('bosun-sample.v0.2.1')!);
    const samples = `${registry.host}/catalogs/samples:v1`;
    await pushCatalog(
      push,
      samples,
      imageOnlyCatalog(await sampleCatalog(), (b) => bundles.get(b)!),
    );
    await managerFigures(emit, { samples, big: image, key }, inputs);
  } finally {
    await push.close();
    await registry.stop();
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The corpus imported (BOSUN_CORPUS_DIR), else the sample catalog; `key` names the figures
 * measured on it, so a figure of the samples is never taken for one of the corpus.
 */
export async function catalogDir(
  work: string,
): Promise<{ dir: string; catalog: string; key: 'corpus' | 'samples' }> {
  const corpus = process.env.BOSUN_CORPUS_DIR;
  if (!corpus || !existsSync(corpus)) {
    say('BOSUN_CORPUS_DIR is not set; using catalogs/bosun-samples');
    return { dir: join(repo, 'catalogs/bosun-samples'), catalog: 'catalogs/bosun-samples', key: 'samples' };
  }
  const dir = join(work, 'catalog');
  const c = capture();
  say('importing the corpus');
  const code = await main(['catalog', 'import', '--skip-invalid', corpus, dir], c.ctx);
  if (code !== 0) throw new Error(`catalog import failed: ${c.stderr.slice(-2000)}`);
  return { dir, catalog: 'the 2021 OperatorHub corpus, imported', key: 'corpus' };
}

/** The manager's RSS figure, named by the catalog whose pull it watched. */
export const managerRssFigure = (key: 'corpus' | 'samples') => `oci.manager_rss.${key}_pull.peak`;

const noSecrets = registryAccess({ readSecret: async () => ({ ok: false, notFound: true, message: '' }) });

const source = (image: string): CatalogSource => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  metadata: { namespace: 'bench', name: 'image' },
  spec: { sourceType: 'grpc', image },
});

async function fetcherFigures(emit: Emit, image: string, inputs: Record<string, unknown>) {
  const cold: number[] = [];
  let held: CatalogContent | undefined;
  for (let i = 0; i < 3; i++) {
    const spool = await CatalogSpool.open();
    const fetcher = imageFetcher({ spool, access: noSecrets });
    const t = performance.now();
    const got = await fetcher.fetch(source(image), undefined, AbortSignal.timeout(600_000));
    cold.push(performance.now() - t);
    if (!got.ok) throw new Error(got.message);
    held = got.content;
    if (i < 2) await spool.close();
    else {
      const cached: number[] = [];
      for (let j = 0; j < 5; j++) {
        const t2 = performance.now();
        const again = await fetcher.fetch(source(image), held, AbortSignal.timeout(60_000));
        cached.push(performance.now() - t2);
        if (!again.ok || again.content !== held) throw new Error('the same digest was read again');
      }
      emit({
        name: 'oci.catalog_image.cached',
        value: round(median(cached)),
        unit: 'ms',
        inputs: { ...inputs, runs: cached.map(round) },
      });
      await spool.close();
    }
  }
  emit({
    name: 'oci.catalog_image.cold',
    value: round(median(cold)),
    unit: 'ms',
    inputs: { ...inputs, runs: cold.map(round), bundles: held?.config.bundles.length },
  });
}

async function bundleUnpack(emit: Emit, image: string) {
  const times: number[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'bosun-bench-bundles-'));
  try {
    for (let i = 0; i < 5; i++) {
      const content = imageBundleContent({
        access: noSecrets,
        secretsOf: () => [],
        cache: await BundleImageCache.open(join(dir, String(i)), 64 * 2 ** 20),
      });
      const doc = {
        schema: 'olm.bundle' as const,
        package: 'bosun-sample',
        name: 'bosun-sample.v0.2.1',
        image,
        properties: [],
      };
      const t = performance.now();
      const found = await content.manifestsOf(
        { catalog: { namespace: 'bench', name: 'c' }, name: doc.name, image },
        doc,
      );
      if (!found.ok) throw new Error(found.message);
      const read = await found.value.read();
      times.push(performance.now() - t);
      if (!read.ok) throw new Error(read.message);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  emit({
    name: 'oci.bundle_unpack.cold',
    value: round(median(times)),
    unit: 'ms',
    inputs: { image, runs: times.map(round) },
  });
}

async function managerFigures(
  emit: Emit,
  images: { samples: string; big: string; key: 'corpus' | 'samples' },
  inputs: Record<string, unknown>,
) {
  const cluster = await benchCluster('bench-oci');
  const manager = runManager(cluster.kubeconfig, 'olm');
  try {
    await cluster.create(core('namespaces'), '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'olm' },
    } as KubeObject);
    await addImageCatalog(cluster, 'samples', images.samples);
    for (const [name, temperature] of [
      ['bench-oci-cold', 'cold'],
      ['bench-oci-warm', 'warm'],
    ] as const) {
      await cluster.create(core('namespaces'), '', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
      } as KubeObject);
      await cluster.create(Resources.OperatorGroup, name, {
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        metadata: { name: 'og', namespace: name },
        spec: { targetNamespaces: [name] },
      } as KubeObject);
      const t = performance.now();
      await cluster.create(Resources.Subscription, name, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: 'sample', namespace: name },
        spec: { name: 'bosun-sample', channel: 'stable', source: 'samples', sourceNamespace: 'olm' },
      } as KubeObject);
      await waitFor(
        'the CSV to succeed',
        async () => {
          const csv = await cluster.client
            .request<ClusterServiceVersion>({
              path: objectPath(Resources.ClusterServiceVersion, 'bosun-sample.v0.2.1', name),
            })
            .catch(() => undefined);
          return csv?.status?.phase === 'Succeeded' || undefined;
        },
        120_000,
        20,
      );
      emit({
        name: `oci.subscription_succeeded.${temperature}`,
        value: round(performance.now() - t),
        unit: 'ms',
        inputs: {
          bundle: 'bosun-sample.v0.2.1, named by image only',
          cache: temperature,
          manager: 'bosun operator run (dist)',
        },
      });
    }

    // The catalog image of the fetcher figures (the corpus's where given), its pull watched from outside.
    const samples: number[] = [];
    // What the manager reached before (its start, the Subscriptions): the figure below is the pull's only where it is higher.
    const hwmBefore = await rssBytes(manager.pid!, 'VmHWM');
    let done = false;
    const watch = (async () => {
      while (!done) {
        samples.push(await rssBytes(manager.pid!));
        await sleep(100);
      }
    })();
    const t = performance.now();
    // A CatalogSource of its own: `samples` is already the one the Subscriptions above read.
    await addImageCatalog(cluster, `${images.key}-pull`, images.big);
    const readyMs = performance.now() - t;
    done = true;
    await watch;
    // A spike shorter than the sampling interval is seen only by the kernel's high-water mark,
    // so the figure is the larger of the two: the peak the manager reached, not the peak sampled.
    const hwm = await rssBytes(manager.pid!, 'VmHWM');
    const sampled = Math.max(...samples);
    emit({
      name: managerRssFigure(images.key),
      value: mib(Math.max(sampled, hwm)),
      unit: 'MiB',
      inputs: {
        ...inputs,
        allocator: managerAllocator(),
        before: mib(samples[0]!),
        sampledPeak: mib(sampled),
        vmHWM: mib(hwm),
        vmHWMBefore: mib(hwmBefore),
        samples: samples.length,
        createToReadyMs: round(readyMs),
      },
    });
  } finally {
    await stopProcess(manager as ChildProcess);
    await cluster.close();
  }
}

async function addImageCatalog(
  cluster: Awaited<ReturnType<typeof benchCluster>>,
  name: string,
  image: string,
) {
  await waitFor('the CatalogSource CRD', () =>
    cluster.create(Resources.CatalogSource, 'olm', {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name, namespace: 'olm' },
      spec: { sourceType: 'grpc', image },
    } as KubeObject),
  );
  return waitFor(
    `catalog ${name} to be READY`,
    async () => {
      const cs = await cluster.client.request<CatalogSource>({
        path: objectPath(Resources.CatalogSource, name, 'olm'),
      });
      return cs.status?.connectionState?.lastObservedState === 'READY' ? cs : undefined;
    },
    600_000,
    50,
  );
}

/** A plain-HTTP docker-registry on a free port of 127.0.0.1. */
async function plainRegistry(work: string): Promise<RegistryProcess & { host: string }> {
  const dir = join(work, 'registry');
  await mkdir(join(dir, 'storage'), { recursive: true });
  const host = `127.0.0.1:${await freePort()}`;
  const registry = await registryProcess(dir, baseRegistryConfig(join(dir, 'storage'), host), host);
  await registry.start();
  return { host, ...registry };
}
