/**
 * Browsing figures over the OperatorHub corpus catalog (BOSUN_CORPUS_DIR; the repository's sample
 * catalog without it), served by an http CatalogSource in the global namespace, against a control
 * plane of its own and the manager as its own process (`bosun operator run --package-api-addr`):
 *
 * - browse.list_ms: a list of every PackageManifest a namespace sees, through the API server's
 *   aggregator, as kubectl asks for it (a Table); median of 20, p95 in the inputs. Also the full
 *   JSON list (`-o yaml` asks for that) and `kubectl get packagemanifests` as a command, process
 *   start included.
 * - browse.get_ms: one PackageManifest through the aggregator (JSON); median of 50.
 * - browse.watch_event_ms: from a catalog change (a new catalog served) to the watch event for
 *   the package it adds; median of 3.
 * - the web catalog's first load and search-as-you-type latency in headless Chromium
 *   (browse-web.ts).
 * - browse.manager_rss_mib: the manager's resident memory with the corpus catalog projected,
 *   after the figures above once it has settled (V8 returns a burst's garbage some seconds
 *   later; the value right after is in the inputs). browse.soak_manager_rss_mib: the same after
 *   a soak of BOSUN_BROWSE_SOAK_S seconds (default 60) of a list every second with a watch open
 *   and the web catalog's index polled every 3 s, as an open page polls it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Resources } from '../../src/apis/operators.js';
import { catalogConfigMapData } from '../../src/cli/commands/start.js';
import { freePort } from '../../src/cluster/ports.js';
import { apiServiceAvailable } from '../../src/server/packageserver/register.js';
import { webFigures } from './browse-web.js';
import type { Emit } from './run.js';
import {
  benchCluster,
  coreResource as core,
  importedCorpus,
  managerAllocator,
  median,
  mib,
  quantile,
  round,
  rssBytes,
  runManager,
  serveText,
  settledRss,
  sleep,
  stopProcess,
  waitFor,
} from './support.js';

const run = promisify(execFile);
const globalNs = 'olm';
const base = '/apis/packages.operators.coreos.com/v1';
const TableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** The manager's JavaScript heap and external memory, from its own /metrics, in MiB. */
async function heapOf(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    heap_used_mib: mib(value('nodejs_heap_size_used_bytes')),
    heap_total_mib: mib(value('nodejs_heap_size_total_bytes')),
    external_mib: mib(value('nodejs_external_memory_bytes')),
  };
}

/** The catalog to browse: the corpus as `bosun catalog import` makes it, else catalogs/ as one stream. */
async function catalogText(): Promise<{ text: string; packages: number; source: string }> {
  const corpus = process.env.BOSUN_CORPUS_DIR;
  if (corpus) {
    const { text, config } = await importedCorpus(corpus);
    return { text, packages: config.packages.length, source: 'corpus' };
  }
  process.stderr.write('browse: BOSUN_CORPUS_DIR is not set; browsing the repository sample catalog\n');
  const data = await catalogConfigMapData(new URL('../../catalogs', import.meta.url).pathname);
  const text = Object.values(data).join('\n---\n');
  return { text, packages: (text.match(/^schema: olm\.package$/gm) ?? []).length, source: 'catalogs/' };
}

export default async function browse(emit: Emit): Promise<void> {
  const catalog = await catalogText();
  const cluster = await benchCluster('bench-browse');
  const served = await serveText(catalog.text);
  const webPort = await freePort();
  const manager = runManager(cluster.kubeconfig, globalNs, [
    '--package-api-addr',
    '0.0.0.0:0',
    '--metrics-addr',
    `127.0.0.1:${webPort}`,
  ]);
  const inputs = { catalog: catalog.source, packages: catalog.packages };
  try {
    await cluster.create(core('namespaces'), '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: globalNs },
    });
    await waitFor('the CatalogSource CRD', async () => {
      try {
        await cluster.client.request({ path: '/apis/operators.coreos.com/v1alpha1/catalogsources' });
        return true;
      } catch {
        return undefined;
      }
    });
    await cluster.create(Resources.CatalogSource, globalNs, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'community', namespace: globalNs },
      spec: {
        sourceType: 'http',
        address: served.url,
        displayName: 'Community Operators',
        publisher: 'OperatorHub',
      },
    } as never);
    await waitFor(
      'the PackageManifest API to be available',
      async () =>
        (await apiServiceAvailable(cluster.client).catch(() => undefined))?.available ? true : undefined,
      300_000,
    );
    const listPath = `${base}/namespaces/default/packagemanifests`;
    await waitFor(
      'every package to be listed',
      async () => {
        const list = await cluster.client
          .request<{ items: unknown[] }>({ path: listPath })
          .catch(() => undefined);
        return list?.items.length === catalog.packages ? true : undefined;
      },
      300_000,
    );

    const timed = async (fn: () => Promise<unknown>, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await fn();
        out.push(performance.now() - t0);
      }
      return out;
    };
    const table = await timed(() => cluster.client.request({ path: listPath, accept: TableAccept }), 20);
    emit({
      name: 'browse.list_ms',
      value: round(median(table)),
      unit: 'ms',
      inputs: { ...inputs, as: 'Table', p95_ms: round(quantile(table, 0.95)) },
    });
    const full = await timed(() => cluster.client.request({ path: listPath }), 10);
    emit({
      name: 'browse.list_json_ms',
      value: round(median(full)),
      unit: 'ms',
      inputs: { ...inputs, as: 'PackageManifestList' },
    });
    const kubectl = await timed(
      () =>
        run('kubectl', ['--kubeconfig', cluster.kubeconfig, 'get', 'packagemanifests', '-n', 'default'], {
          maxBuffer: 64 << 20,
        }),
      10,
    );
    emit({
      name: 'browse.kubectl_get_ms',
      value: round(median(kubectl)),
      unit: 'ms',
      inputs: { ...inputs, includes: 'kubectl process start' },
    });
    const names = (
      await cluster.client.request<{ items: { metadata: { name: string } }[] }>({ path: listPath })
    ).items.map((i) => i.metadata.name);
    let k = 0;
    const gets = await timed(
      () => cluster.client.request({ path: `${listPath}/${names[k++ % names.length]}` }),
      50,
    );
    emit({
      name: 'browse.get_ms',
      value: round(median(gets)),
      unit: 'ms',
      inputs: { ...inputs, p95_ms: round(quantile(gets, 0.95)) },
    });

    // A watch sees a package appear: a small catalog of its own, served anew each time.
    const watchTimes: number[] = [];
    const sample = Object.values(
      await catalogConfigMapData(new URL('../../catalogs', import.meta.url).pathname),
    ).join('\n---\n');
    for (let i = 0; i < 3; i++) {
      const ns = `browse-watch-${i}`;
      await cluster.create(core('namespaces'), '', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: ns },
      });
      const list = await cluster.client.request<{ metadata: { resourceVersion: string } }>({
        path: `${base}/namespaces/${ns}/packagemanifests`,
      });
      const abort = new AbortController();
      let seenAt = 0;
      const watching = cluster.client
        .stream(
          {
            path: `${base}/namespaces/${ns}/packagemanifests`,
            query: {
              watch: 'true',
              resourceVersion: list.metadata.resourceVersion,
              labelSelector: `catalog=own-${i}`,
            },
            signal: abort.signal,
            timeoutMs: 120_000,
          },
          () => {
            seenAt ||= performance.now();
          },
        )
        .catch(() => undefined);
      const own = await serveText(sample);
      const t0 = performance.now();
      await cluster.create(Resources.CatalogSource, ns, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        metadata: { name: `own-${i}`, namespace: ns },
        spec: { sourceType: 'http', address: own.url },
      } as never);
      await waitFor('the watch event', async () => (seenAt ? true : undefined), 60_000);
      watchTimes.push(seenAt - t0);
      abort.abort();
      await watching;
      await own.close();
    }
    emit({
      name: 'browse.watch_event_ms',
      value: round(median(watchTimes)),
      unit: 'ms',
      inputs: { from: 'CatalogSource created', runs: watchTimes.map(round) },
    });

    await webFigures(
      (f) => emit({ ...f, name: `browse.${f.name}`, inputs: { ...inputs, ...f.inputs } }),
      `http://127.0.0.1:${webPort}/`,
    );

    const settled = await settledRss(manager.pid!);
    const rss = settled.bytes;
    emit({
      name: 'browse.manager_rss_mib',
      value: mib(rss),
      unit: 'MiB',
      inputs: {
        ...inputs,
        after: 'the figures above, settled',
        right_after_mib: mib(settled.first),
        settled_in_s: settled.waitedS,
        allocator: managerAllocator(),
        ...(await heapOf(`http://127.0.0.1:${webPort}/metrics`)),
      },
    });

    const soakS = Number(process.env.BOSUN_BROWSE_SOAK_S ?? 60);
    const abort = new AbortController();
    let events = 0;
    const watching = cluster.client
      .stream(
        { path: listPath, query: { watch: 'true' }, signal: abort.signal, timeoutMs: (soakS + 60) * 1000 },
        () => {
          events++;
        },
      )
      .catch(() => undefined);
    let errors = 0;
    let lists = 0;
    // An open web catalog page too: it polls the index every 3 s with the ETag it last had.
    const page = { polls: 0, unchanged: 0, etag: '' };
    const end = Date.now() + soakS * 1000;
    for (let tick = 0; Date.now() < end; tick++) {
      await cluster.client.request({ path: listPath, accept: TableAccept }).then(
        () => lists++,
        () => errors++,
      );
      if (tick % 3 === 0)
        await pollIndex(`http://127.0.0.1:${webPort}/api/index`, page).catch(() => errors++);
      await sleep(1000);
    }
    abort.abort();
    await watching;
    const after = await rssBytes(manager.pid!);
    emit({
      name: 'browse.soak_manager_rss_mib',
      value: mib(after),
      unit: 'MiB',
      inputs: {
        ...inputs,
        ...(await heapOf(`http://127.0.0.1:${webPort}/metrics`)),
        soak_s: soakS,
        lists,
        web_polls: page.polls,
        web_polls_unchanged: page.unchanged,
        errors,
        watch_events: events,
        rss_before_mib: mib(rss),
        allocator: managerAllocator(),
        peak_mib: mib(await rssBytes(manager.pid!, 'VmHWM')),
      },
    });
  } finally {
    await stopProcess(manager);
    await served.close();
    await cluster.close();
  }
}

/** One poll of the web catalog's index, as the page makes it: with the ETag of the last answer. */
async function pollIndex(
  url: string,
  page: { polls: number; unchanged: number; etag: string },
): Promise<void> {
  const res = await fetch(url, { headers: page.etag ? { 'If-None-Match': page.etag } : {} });
  await res.arrayBuffer();
  if (res.status !== 200 && res.status !== 304) throw new Error(`${url}: HTTP ${res.status}`);
  page.polls++;
  if (res.status === 304) page.unchanged++;
  page.etag = res.headers.get('etag') ?? page.etag;
}
