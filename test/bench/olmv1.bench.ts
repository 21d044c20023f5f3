/**
 * OLM v1's front end on a running manager (`bosun operator run` from dist, on a control plane of
 * its own), its catalogs and bundles as images in Debian's docker-registry on 127.0.0.1:
 * - olmv1.extension_installed_ms: from applying a ClusterExtension for bosun-sample (its bundles
 *   named by image in a ClusterCatalog already Serving) to its `Installed` condition True; median
 *   of 5 runs, each in a fresh namespace with its ServiceAccount bound to cluster-admin and its
 *   own copy of the sample API group (so each run creates its CRD), the previous extension
 *   deleted and uninstalled first. Split into apply → InstallPlan created (`.to_installplan_ms`)
 *   → InstallPlan Complete (`.to_installplan_complete_ms`: its steps applied, the CSV created) →
 *   CSV Succeeded (`.to_csv_succeeded_ms`), so a reader sees where the time goes;
 * - olmv1.extension_installed_corpus_ms: the same for the first corpus package, in name order,
 *   whose bundles have no dependency and support AllNamespaces and which installs here, from the
 *   corpus imported (BOSUN_CORPUS_DIR) and pushed as one catalog image with its bundles inline;
 * - olmv1.catalogd_all_cold_ms / olmv1.catalogd_all_ims_ms: GET `<urls.base>/api/v1/all` of that
 *   corpus ClusterCatalog, the body read whole and gzip accepted, and the same with
 *   `If-Modified-Since` of its `Last-Modified` (a 304); medians;
 * - olmv1.manager_rss_mib: the manager's VmRSS (VmHWM in the inputs) with both front ends holding
 *   the corpus, as a ClusterCatalog and as a CatalogSource, one Subscription and one
 *   ClusterExtension installed.
 * Figures of the corpus are skipped, saying so, without BOSUN_CORPUS_DIR.
 * BOSUN_BENCH_OLMV1_LOG=<file> writes the manager's debug log there (for the timings of its steps).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { request as httpGet } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { type BundleDoc, type DeclarativeConfig, PropertyType } from '../../src/apis/fbc.js';
import type { Condition, KubeObject } from '../../src/apis/meta.js';
import { type ClusterCatalog, type ClusterExtension, V1Resources } from '../../src/apis/olmv1.js';
import {
  type CatalogSource,
  type ClusterServiceVersion,
  CSVPhase,
  type InstallPlan,
  InstallPlanPhase,
  Resources,
} from '../../src/apis/operators.js';
import { readCatalogFiles } from '../../src/catalog/image.js';
import { loadCatalog } from '../../src/catalog/load.js';
import { main } from '../../src/cli/main.js';
import { freePort } from '../../src/cluster/ports.js';
import { collectionPath, objectPath } from '../../src/kube/client.js';
import { isNotFound } from '../../src/kube/errors.js';
import { Builtin } from '../../src/kube/resources.js';
import { RegistryClient } from '../../src/oci/client.js';
import {
  imageOnlyCatalog,
  pushCatalog,
  pushSampleBundles,
  SampleGroup,
  sampleCatalog,
} from '../integration/controllers/image-catalogs.js';
import { capture } from '../support/capture.js';
import { baseRegistryConfig, RegistryBinary, registryProcess } from '../support/docker-registry.js';
import type { Emit } from './run.js';
import {
  type BenchCluster,
  benchCluster,
  coreResource as core,
  managerAllocator,
  median,
  mib,
  round,
  rssBytes,
  runManager,
  stopProcess,
  waitFor,
} from './support.js';

const say = (s: string) => process.stderr.write(`olmv1 bench: ${s}\n`);
const load = () => loadavg().map((l) => Math.round(l * 100) / 100);
const RUNS = 5;
const CC = V1Resources.ClusterCatalog;
const CE = V1Resources.ClusterExtension;
const manager_ = 'bosun operator run (dist), its own process';

export default async function olmv1(emit: Emit): Promise<void> {
  if (!existsSync(RegistryBinary)) {
    say(`skipped; ${RegistryBinary} is missing (apt-get install docker-registry)`);
    return;
  }
  const corpus = process.env.BOSUN_CORPUS_DIR;
  const withCorpus = corpus !== undefined && existsSync(corpus);
  if (!withCorpus)
    say(
      'the corpus figures (extension_installed_corpus_ms, catalogd_all_*, manager_rss_mib) are skipped: set BOSUN_CORPUS_DIR to the upstream-community-operators folder',
    );
  const work = await mkdtemp(join(tmpdir(), 'bosun-bench-olmv1-'));
  const registry = await plainRegistry(work);
  const push = new RegistryClient();
  const cluster = await benchCluster('bench-olmv1');
  const logFile = process.env.BOSUN_BENCH_OLMV1_LOG;
  const manager = runManager(
    cluster.kubeconfig,
    'olm',
    logFile ? ['--log-level', 'debug'] : [],
    logFile ? openSync(logFile, 'w') : 'ignore',
  );
  try {
    await waitFor('the ClusterCatalog CRD', () =>
      cluster.client.request({ path: collectionPath(CC, '') }).then(() => true),
    );
    await cluster.create(core('namespaces'), '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'olm' },
    } as KubeObject);
    await sampleFigures(emit, cluster, registry.host, push);
    if (!withCorpus) return;
    const corpusImage = await pushCorpus(work, corpus, registry.host, push);
    await corpusFigures(emit, cluster, corpusImage, manager.pid!);
  } finally {
    await stopProcess(manager);
    await cluster.close();
    await push.close();
    await registry.stop();
    await rm(work, { recursive: true, force: true });
  }
}

/** How long each step of one install took, from the apply, in ms. */
interface Split {
  installPlan: number;
  installPlanComplete: number;
  csvSucceeded: number;
  installed: number;
}

async function sampleFigures(emit: Emit, cluster: BenchCluster, host: string, push: RegistryClient) {
  const splits: Split[] = [];
  let previous: string | undefined;
  let bundle: string | undefined;
  for (let i = 0; i < RUNS; i++) {
    // Each run's own copy of the sample API group, so its install creates its CRDs as a first install does.
    const group = `w${randomBytes(4).toString('hex')}.${SampleGroup}`;
    const images = await pushSampleBundles(push, host, group);
    const catalog = await serveCatalog(
      cluster,
      `samples-${i}`,
      `${host}/catalogs/samples-${i}:v1`,
      async (ref) =>
        pushCatalog(
          push,
          ref,
          imageOnlyCatalog(await sampleCatalog(), (b) => images.get(b)!, undefined, group),
        ),
    );
    if (previous) await uninstall(cluster, previous);
    const ns = await extensionNamespace(cluster, `bench-ce-samples-${i}`);
    const name = `samples-${i}`;
    splits.push(await timedInstall(cluster, name, ns, 'bosun-sample', catalog));
    bundle = (await getObject<ClusterExtension>(cluster, CE, '', name))?.status?.install?.bundle.name;
    previous = name;
  }
  emitSplits(emit, 'olmv1.extension_installed_ms', splits, {
    package: 'bosun-sample',
    bundle,
    catalog:
      'catalogs/bosun-samples, each bundle named by image only, a ClusterCatalog Serving before the clock starts',
  });
  // The last extension stays installed, for the memory figure.
}

function emitSplits(emit: Emit, name: string, splits: Split[], inputs: Record<string, unknown>) {
  const all = {
    ...inputs,
    method:
      'POST of the ClusterExtension to its Installed condition True, each step seen as its watch event arrives (watches opened before the POST); a fresh namespace and ServiceAccount (cluster-admin) per run',
    manager: manager_,
    allocator: managerAllocator(),
    loadavg_1_5_15: load(),
  };
  const samples = (k: keyof Split) => splits.map((s) => round(s[k]));
  emit({
    name,
    value: round(median(splits.map((s) => s.installed))),
    unit: 'ms',
    inputs: { ...all, target_ms: 1000, samples: samples('installed') },
  });
  emit({
    name: name.replace(/_ms$/, '.to_installplan_ms'),
    value: round(median(splits.map((s) => s.installPlan))),
    unit: 'ms',
    inputs: { ...all, samples: samples('installPlan') },
  });
  emit({
    name: name.replace(/_ms$/, '.to_installplan_complete_ms'),
    value: round(median(splits.map((s) => s.installPlanComplete))),
    unit: 'ms',
    inputs: { ...all, samples: samples('installPlanComplete') },
  });
  emit({
    name: name.replace(/_ms$/, '.to_csv_succeeded_ms'),
    value: round(median(splits.map((s) => s.csvSucceeded))),
    unit: 'ms',
    inputs: { ...all, samples: samples('csvSucceeded') },
  });
}

async function corpusFigures(emit: Emit, cluster: BenchCluster, corpus: CorpusImage, pid: number) {
  const catalog = await serveCatalog(cluster, 'corpus', corpus.image, async () => corpus.digest);
  const cc = await getObject<ClusterCatalog>(cluster, CC, '', 'corpus');
  const base = cc?.status?.urls?.base;
  if (!base) throw new Error('ClusterCatalog corpus is Serving without status.urls.base');
  await catalogdFigures(emit, `${base}/api/v1/all`, corpus);

  // The package: the first candidate that installs on this cluster.
  let chosen: { pkg: string; first: Split; skipped: string[] } | undefined;
  const skipped: string[] = [];
  for (const pkg of corpus.candidates.slice(0, 8)) {
    const ns = await extensionNamespace(cluster, `bench-ce-${pkg}-0`.slice(0, 63));
    try {
      const first = await timedInstall(cluster, `corpus-${pkg}-0`, ns, pkg, catalog, 120_000);
      chosen = { pkg, first, skipped: [...skipped] };
      break;
    } catch (err) {
      say(`${pkg} does not install here (${(err as Error).message.slice(0, 300)}); trying the next`);
      skipped.push(pkg);
      await uninstall(cluster, `corpus-${pkg}-0`);
    }
  }
  if (!chosen) throw new Error(`none of ${corpus.candidates.slice(0, 8).join(', ')} installs`);
  const { pkg } = chosen;
  const splits = [chosen.first];
  let previous = `corpus-${pkg}-0`;
  for (let i = 1; i < RUNS; i++) {
    await uninstall(cluster, previous);
    const name = `corpus-${pkg}-${i}`;
    const ns = await extensionNamespace(cluster, `bench-ce-${pkg}-${i}`.slice(0, 63));
    splits.push(await timedInstall(cluster, name, ns, pkg, catalog));
    previous = name;
  }
  const bundle = (await getObject<ClusterExtension>(cluster, CE, '', previous))?.status?.install?.bundle.name;
  emitSplits(emit, 'olmv1.extension_installed_corpus_ms', splits, {
    package: pkg,
    bundle,
    chosenAs: `the first package in name order whose bundles have no dependency and support AllNamespaces and that installs here (${corpus.candidates.length} qualify; tried before: ${chosen.skipped.join(', ') || 'none'})`,
    crds: 'created by the first run; later runs find them (CRDs stay when an extension is deleted)',
    catalog: corpus.inputs,
  });
  await uninstall(cluster, previous);

  // Both front ends busy: the same corpus as a CatalogSource too, a Subscription from it.
  await waitFor('the CatalogSource CRD', () =>
    cluster.create(Resources.CatalogSource, 'olm', {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'corpus', namespace: 'olm' },
      spec: { sourceType: 'grpc', image: corpus.image },
    } as KubeObject),
  );
  await waitFor(
    'CatalogSource olm/corpus to be READY',
    async () => {
      const cs = await getObject<CatalogSource>(cluster, Resources.CatalogSource, 'olm', 'corpus');
      return cs?.status?.connectionState?.lastObservedState === 'READY' || undefined;
    },
    600_000,
    100,
  );
  const subNs = 'bench-subscription';
  await cluster.create(core('namespaces'), '', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: subNs },
  } as KubeObject);
  await cluster.create(Resources.OperatorGroup, subNs, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'global', namespace: subNs },
    spec: {},
  } as KubeObject);
  await cluster.create(Resources.Subscription, subNs, {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: pkg, namespace: subNs },
    spec: { name: pkg, source: 'corpus', sourceNamespace: 'olm' },
  } as KubeObject);
  const installedCSV = await waitFor(
    `Subscription ${subNs}/${pkg}'s CSV to succeed`,
    async () => {
      const csvs = await listObjects<ClusterServiceVersion>(cluster, Resources.ClusterServiceVersion, subNs);
      return csvs.find((c) => c.status?.phase === CSVPhase.Succeeded && c.status.reason !== 'Copied')
        ?.metadata.name;
    },
    300_000,
    200,
  );
  const extension = (await getObject<ClusterExtension>(cluster, CE, '', `samples-${RUNS - 1}`))?.status
    ?.install;
  const rss = await rssBytes(pid);
  const hwm = await rssBytes(pid, 'VmHWM');
  emit({
    name: 'olmv1.manager_rss_mib',
    value: mib(rss),
    unit: 'MiB',
    inputs: {
      method:
        'VmRSS of /proc/<manager pid>/status, read once the Subscription’s CSV has succeeded; vmHWM: the high-water mark of the manager’s life',
      vmHWM: mib(hwm),
      clusterCatalogs: `corpus and ${RUNS} sample catalogs, Serving`,
      catalogSource: 'olm/corpus (the same corpus image), READY',
      subscription: `${subNs}/${pkg}: ${installedCSV} Succeeded`,
      clusterExtension: `samples-${RUNS - 1}: ${extension?.bundle.name ?? 'not installed'}`,
      catalog: corpus.inputs,
      manager: manager_,
      allocator: managerAllocator(),
      loadavg_1_5_15: load(),
    },
  });
}

/**
 * Full GETs of the catalog's `all` as a client makes them (gzip accepted, the body read and
 * inflated whole), then conditional ones with its Last-Modified, which must be 304.
 */
async function catalogdFigures(emit: Emit, url: string, corpus: CorpusImage) {
  const cold: number[] = [];
  let seen: Got | undefined;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    seen = await get(url, { 'Accept-Encoding': 'gzip' });
    cold.push(performance.now() - t);
    if (seen.status !== 200) throw new Error(`GET ${url}: ${seen.status}`);
  }
  // The same without gzip, for comparison: how much of the time compressing takes.
  const identity: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const got = await get(url, {});
    identity.push(performance.now() - t);
    if (got.status !== 200 || got.encoding) throw new Error(`GET ${url} without gzip: ${got.status}`);
  }
  const lastModified = seen!.lastModified;
  if (!lastModified) throw new Error(`GET ${url}: no Last-Modified`);
  const ims: number[] = [];
  for (let i = 0; i < RUNS * 2; i++) {
    const t = performance.now();
    const got = await get(url, { 'Accept-Encoding': 'gzip', 'If-Modified-Since': lastModified });
    ims.push(performance.now() - t);
    if (got.status !== 304) throw new Error(`GET ${url} If-Modified-Since ${lastModified}: ${got.status}`);
  }
  const inputs = {
    url,
    catalog: corpus.inputs,
    manager: manager_,
    loadavg_1_5_15: load(),
  };
  emit({
    name: 'olmv1.catalogd_all_cold_ms',
    value: round(median(cold)),
    unit: 'ms',
    inputs: {
      ...inputs,
      method:
        'GET with Accept-Encoding: gzip, the body read to its end and inflated, from this process (node:http); median',
      contentEncoding: seen!.encoding,
      wireMiB: mib(seen!.wireBytes),
      bodyMiB: mib(seen!.bodyBytes),
      samples: cold.map(round),
      withoutGzipSamples: identity.map(round),
    },
  });
  emit({
    name: 'olmv1.catalogd_all_ims_ms',
    value: round(median(ims)),
    unit: 'ms',
    inputs: {
      ...inputs,
      method: 'the same GET with If-Modified-Since of its Last-Modified, answered 304; median',
      lastModified,
      samples: ims.map(round),
    },
  });
}

interface Got {
  status: number;
  lastModified?: string;
  encoding?: string;
  wireBytes: number;
  bodyBytes: number;
}

function get(url: string, headers: Record<string, string>): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { headers }, (res) => {
      let wireBytes = 0;
      let bodyBytes = 0;
      res.on('data', (c: Buffer) => (wireBytes += c.length));
      const gzip = res.headers['content-encoding'] === 'gzip';
      const body = gzip ? res.pipe(createGunzip()) : res;
      if (gzip) body.on('data', (c: Buffer) => (bodyBytes += c.length));
      body.on('error', reject);
      body.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          ...(res.headers['last-modified'] ? { lastModified: res.headers['last-modified'] } : {}),
          ...(res.headers['content-encoding'] ? { encoding: res.headers['content-encoding'] } : {}),
          wireBytes,
          bodyBytes: gzip ? bodyBytes : wireBytes,
        }),
      );
      body.resume();
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * One install timed: the extension applied, then its InstallPlan created and Complete, the CSV
 * Succeeded and the extension's Installed condition True, each seen as its watch event arrives.
 * Watches, not polling: reading the namespace's CSVs and plans every few ms took more of the API
 * server's time than the install itself (2.8 s of CSV lists in five installs, by its
 * apiserver_request_duration_seconds), on the same two cores.
 */
async function timedInstall(
  cluster: BenchCluster,
  name: string,
  ns: string,
  pkg: string,
  catalog: Record<string, string>,
  timeoutMs = 300_000,
): Promise<Split> {
  const split: Partial<Split> = {};
  const seen: { extension?: unknown; csvs: Record<string, unknown> } = { csvs: {} };
  const stop = new AbortController();
  let t = Number.NaN;
  let done!: () => void;
  const installed = new Promise<void>((resolve) => (done = resolve));
  const at = () => performance.now() - t;
  // Each watch starts from its list's resourceVersion, taken before the apply: no event is missed.
  const watches = [
    await watchFrom<InstallPlan>(
      cluster,
      collectionPath(Resources.InstallPlan, ns),
      {},
      stop.signal,
      (ip) => {
        split.installPlan ??= at();
        if (ip.status?.phase === InstallPlanPhase.Complete) split.installPlanComplete ??= at();
      },
    ),
    await watchFrom<ClusterServiceVersion>(
      cluster,
      collectionPath(Resources.ClusterServiceVersion, ns),
      {},
      stop.signal,
      (csv) => {
        seen.csvs[csv.metadata.name ?? ''] = [csv.status?.phase, csv.status?.message];
        if (csv.status?.phase === CSVPhase.Succeeded) split.csvSucceeded ??= at();
      },
    ),
    await watchFrom<ClusterExtension>(
      cluster,
      collectionPath(CE, ''),
      { fieldSelector: `metadata.name=${name}` },
      stop.signal,
      (ext) => {
        seen.extension = ext.status?.conditions?.map((c) => [c.type, c.status, c.message]);
        if (condition(ext, 'Installed')?.status === 'True') {
          split.installed ??= at();
          done();
        }
      },
    ),
  ];
  t = performance.now();
  await cluster.create(CE, '', extension(name, ns, pkg, catalog));
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      installed,
      ...watches.map((w) =>
        w.ended.then(() => Promise.reject(new Error('a watch ended before the install'))),
      ),
      new Promise((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `ClusterExtension ${name} not Installed in ${timeoutMs} ms; last seen: ${JSON.stringify(seen)}`,
              ),
            ),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
    stop.abort();
    await Promise.allSettled(watches.map((w) => w.ended));
  }
  // Each step is an event of its own; should one not come, it took no longer than the step after it.
  split.csvSucceeded ??= split.installed;
  split.installPlanComplete ??= split.csvSucceeded;
  split.installPlan ??= split.installPlanComplete;
  return split as Split;
}

/**
 * A watch of `path` from the resourceVersion of a list of it, calling `onObject` for each object
 * added or changed after the list (what it lists is older than the clock); returns once the list is read, with the watch's end (a promise: not awaited
 * here, the watch runs on).
 */
async function watchFrom<T extends KubeObject>(
  cluster: BenchCluster,
  path: string,
  query: Record<string, string>,
  signal: AbortSignal,
  onObject: (o: T) => void,
): Promise<{ ended: Promise<void> }> {
  const list = await cluster.client.request<{ metadata: { resourceVersion: string }; items: T[] }>({
    path,
    query,
  });
  const ended = cluster.client
    .stream(
      {
        path,
        query: {
          ...query,
          watch: 'true',
          resourceVersion: list.metadata.resourceVersion,
          timeoutSeconds: '3600',
        },
        signal,
      },
      (line) => {
        const event = JSON.parse(line) as { type: string; object: T };
        if (event.type === 'ADDED' || event.type === 'MODIFIED') onObject(event.object);
        if (event.type === 'ERROR') throw new Error(`watch of ${path}: ${line}`);
      },
    )
    .catch((err: unknown) => {
      if (!signal.aborted) throw err;
    });
  return { ended };
}

/** Deletes the extension and waits for the garbage collector to take its CSVs, plans and group. */
async function uninstall(cluster: BenchCluster, name: string) {
  const ext = await getObject<ClusterExtension>(cluster, CE, '', name);
  if (!ext) return;
  await cluster.client.request({ method: 'DELETE', path: objectPath(CE, name, '') });
  const ns = ext.spec!.namespace;
  await waitFor(
    `ClusterExtension ${name}'s objects to be collected`,
    async () => {
      const left = [
        ...(await listObjects(cluster, Resources.ClusterServiceVersion, ns)),
        ...(await listObjects(cluster, Resources.InstallPlan, ns)),
        ...(await listObjects(cluster, Resources.OperatorGroup, ns)),
      ];
      return left.length === 0 || undefined;
    },
    180_000,
    200,
  );
}

function extension(
  name: string,
  namespace: string,
  packageName: string,
  labels: Record<string, string>,
): ClusterExtension {
  return {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterExtension',
    metadata: { name },
    spec: {
      namespace,
      serviceAccount: { name: 'installer' },
      source: { sourceType: 'Catalog', catalog: { packageName, selector: { matchLabels: labels } } },
    },
  };
}

/** A namespace with the ServiceAccount `installer`, bound to cluster-admin as OLM v1's tutorials bind theirs. */
async function extensionNamespace(cluster: BenchCluster, ns: string): Promise<string> {
  await cluster.create(core('namespaces'), '', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  } as KubeObject);
  await cluster.create(Builtin.ServiceAccount, ns, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'installer', namespace: ns },
  } as KubeObject);
  await cluster.create(Builtin.ClusterRoleBinding, '', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${ns}-installer` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: ns }],
  } as KubeObject);
  return ns;
}

/**
 * The ClusterCatalog `name` of the image `push` pushes to `ref`, labelled so that an extension
 * selects it alone; returns that label once the catalog is Serving.
 */
async function serveCatalog(
  cluster: BenchCluster,
  name: string,
  ref: string,
  push: (ref: string) => Promise<string>,
): Promise<Record<string, string>> {
  await push(ref);
  const labels = { 'bosun.dev/bench-catalog': name };
  await cluster.create(CC, '', {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { name, labels },
    spec: { source: { type: 'Image', image: { ref } } },
  } as KubeObject);
  await waitFor(
    `ClusterCatalog ${name} to be Serving`,
    async () => {
      const cc = await getObject<ClusterCatalog>(cluster, CC, '', name);
      return condition(cc, 'Serving')?.status === 'True' || undefined;
    },
    600_000,
    100,
  );
  return labels;
}

interface CorpusImage {
  image: string;
  digest: string;
  /** Packages whose every bundle has no dependency and supports AllNamespaces, in name order. */
  candidates: string[];
  inputs: Record<string, unknown>;
}

/** The corpus imported as `bosun catalog import --skip-invalid` writes it (bundles inline), pushed as one image. */
async function pushCorpus(
  work: string,
  corpus: string,
  host: string,
  push: RegistryClient,
): Promise<CorpusImage> {
  const dir = join(work, 'catalog');
  const c = capture();
  say('importing the corpus');
  const code = await main(['catalog', 'import', '--skip-invalid', corpus, dir], c.ctx);
  if (code !== 0) throw new Error(`catalog import failed: ${c.stderr.slice(-2000)}`);
  const files = await readCatalogFiles(dir);
  if (!files.ok) throw new Error(`${dir}: ${JSON.stringify(files.errors.slice(0, 3))}`);
  const loaded = await loadCatalog(dir);
  if (!loaded.ok) throw new Error(`${dir}: ${JSON.stringify(loaded.errors.slice(0, 3))}`);
  const image = `${host}/catalogs/corpus:v1`;
  say('pushing the corpus catalog image');
  const digest = await pushCatalog(push, image, files.value);
  const bytes = [...files.value.values()].reduce((n, b) => n + b.length, 0);
  return {
    image,
    digest,
    candidates: installablePackages(loaded.value),
    inputs: {
      catalog: 'the 2021 OperatorHub corpus, imported (bundles inline)',
      files: files.value.size,
      catalogMiB: mib(bytes),
      packages: loaded.value.packages.length,
      digest,
    },
  };
}

/** Packages, in name order, whose every bundle requires nothing and whose CSV supports AllNamespaces. */
export function installablePackages(config: DeclarativeConfig): string[] {
  const byPackage = new Map<string, BundleDoc[]>();
  for (const b of config.bundles) byPackage.set(b.package, [...(byPackage.get(b.package) ?? []), b]);
  const requires = new Set<string>([
    PropertyType.GVKRequired,
    PropertyType.PackageRequired,
    PropertyType.Constraint,
    PropertyType.LabelRequired,
  ]);
  return [...byPackage]
    .filter(
      ([, bundles]) =>
        bundles.length > 0 &&
        bundles.every((b) => !b.properties.some((p) => requires.has(p.type)) && allNamespaces(b)),
    )
    .map(([pkg]) => pkg)
    .sort();
}

/** Whether the bundle's CSV (its `olm.csv.metadata`, else its inline CSV object) supports AllNamespaces. */
function allNamespaces(b: BundleDoc): boolean {
  type Modes = { installModes?: { type: string; supported: boolean }[] };
  const supports = (m: Modes | undefined) =>
    m?.installModes?.some((x) => x.type === 'AllNamespaces' && x.supported) ?? false;
  const meta = b.properties.find((p) => p.type === PropertyType.CSVMetadata);
  if (meta) return supports(meta.value as Modes);
  for (const p of b.properties) {
    if (p.type !== PropertyType.BundleObject) continue;
    const data = (p.value as { data?: string }).data;
    if (!data) continue;
    const obj = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { kind?: string; spec?: Modes };
    if (obj.kind === 'ClusterServiceVersion') return supports(obj.spec);
  }
  return false;
}

const condition = (o: { status?: { conditions?: Condition[] } } | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

async function getObject<T>(
  cluster: BenchCluster,
  resource: Parameters<typeof objectPath>[0],
  ns: string,
  name: string,
): Promise<T | undefined> {
  return cluster.client.request<T>({ path: objectPath(resource, name, ns) }).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
}

async function listObjects<T = KubeObject>(
  cluster: BenchCluster,
  resource: Parameters<typeof collectionPath>[0],
  ns: string,
): Promise<T[]> {
  const list = await cluster.client.request<{ items: T[] }>({ path: collectionPath(resource, ns) });
  return list.items;
}

/** A plain-HTTP docker-registry on a free port of 127.0.0.1. */
async function plainRegistry(work: string) {
  const dir = join(work, 'registry');
  await mkdir(join(dir, 'storage'), { recursive: true });
  const host = `127.0.0.1:${await freePort()}`;
  const registry = await registryProcess(dir, baseRegistryConfig(join(dir, 'storage'), host), host);
  await registry.start();
  return { host, ...registry };
}
