/**
 * Upgrade figures, against a local control plane of its own and a manager running as its own
 * process (`bosun operator run`, compiled to dist/ first):
 * - upgrade.catalog_to_succeeded.configmap: seconds from publishing a new version into a
 *   ConfigMap catalog (the ConfigMap updated) to the new CSV `Succeeded` in a namespace subscribed
 *   to the package (median of 5 upgrades, each a new version);
 * - upgrade.catalog_to_succeeded.http: the same for an http catalog, from the moment the server
 *   serves the new content, with `registryPoll.interval: 1s` (the poll bounds it).
 * - upgrade.rollback_from_deadline: seconds from the deadline of an upgrade whose Deployment
 *   never becomes available (its CSV's creation + the Subscription's `bosun.dev/upgrade-deadline`,
 *   5s here) to the rollback complete (`status.rollback.phase` RolledBack, the previous CSV
 *   Succeeded again); median of 3, each a new broken version published into the ConfigMap catalog.
 * Timings are taken from an informer on CSVs (and a 100 ms poll of the Subscription for rollbacks).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BundleDoc } from '../../src/apis/fbc.js';
import type { KubeObject } from '../../src/apis/meta.js';
import { type CatalogSource, type ClusterServiceVersion, Resources } from '../../src/apis/operators.js';
import { objectPath } from '../../src/kube/client.js';
import { createInformer } from '../../src/kube/informer.js';
import { gadgetCrd, inline, operatorCsv, operatorDeployment } from '../support/operator-objects.js';
import type { Emit } from './run.js';
import {
  benchCluster,
  catalogConfigMap,
  coreResource as core,
  runManager,
  stopProcess,
  waitFor,
} from './support.js';

const pkg = 'upop';
const globalNs = 'olm';
const UPGRADES = 5;
const ROLLBACKS = 3;
const DEADLINE_S = 5;

const version = (i: number) => `1.${i}.0`;
const csvName = (i: number) => `${pkg}.v${version(i)}`;

/**
 * The package with versions 1.0.0 … 1.n.0, each replacing the one before, as a JSON stream; then
 * `broken` versions whose pods no node takes, each replacing 1.n.0 and skipping the broken ones
 * before it (so the newest is the channel's head and an upgrade from 1.n.0).
 */
function catalog(n: number, broken = 0): string {
  const crd = gadgetCrd('upgrade.bosun.dev');
  const bundles: BundleDoc[] = [];
  for (let i = 0; i <= n + broken; i++) {
    const deployment = operatorDeployment(pkg, pkg, pkg, `registry.example/upop:${version(i)}`);
    if (i > n)
      (deployment.spec.template.spec as Record<string, unknown>).nodeSelector = { 'bosun.dev/none': 'x' };
    const csv = operatorCsv(csvName(i), {
      owned: [{ name: 'gadgets.upgrade.bosun.dev', version: 'v1', kind: 'Gadget' }],
      permissions: [
        {
          serviceAccountName: pkg,
          rules: [{ apiGroups: ['upgrade.bosun.dev'], resources: ['gadgets'], verbs: ['*'] }],
        },
      ],
      deployments: [deployment],
    });
    const replaces = i > 0 ? { replaces: csvName(Math.min(i - 1, n)) } : {};
    const skips = i > n + 1 ? { skips: bundles.slice(n + 1).map((b) => b.name) } : {};
    const spec = { ...csv.spec, version: version(i), ...replaces, ...skips };
    bundles.push({
      schema: 'olm.bundle',
      package: pkg,
      name: csvName(i),
      image: '',
      properties: [
        { type: 'olm.package', value: { packageName: pkg, version: version(i) } },
        inline(crd),
        inline({ ...csv, spec }),
      ],
    });
  }
  const entries = bundles.map((b, i) => ({
    name: b.name,
    ...(i > 0 ? { replaces: csvName(Math.min(i - 1, n)) } : {}),
    ...(i > n + 1 ? { skips: bundles.slice(n + 1, i).map((x) => x.name) } : {}),
  }));
  const docs = [
    { schema: 'olm.package', name: pkg, defaultChannel: 'stable' },
    { schema: 'olm.channel', package: pkg, name: 'stable', entries },
    ...bundles,
  ];
  return docs.map((d) => JSON.stringify(d)).join('\n');
}

const say = (line: string) => process.stderr.write(`upgrade bench: ${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function upgrade(emit: Emit): Promise<void> {
  const keepAlive = setInterval(() => {}, 1 << 30);
  const cluster = await benchCluster('upbench');
  say(`control plane up at ${cluster.server}`);
  const { client, create } = cluster;
  const manager = runManager(cluster.kubeconfig, globalNs);
  let served = catalog(0);
  const server = createServer((_req, res) => res.writeHead(200).end(served));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/all`;
  try {
    await catalogConfigMap(cluster, globalNs, 'upcat', catalog(0));
    const source = (name: string, spec: CatalogSource['spec']) =>
      waitFor('the CRDs', () =>
        create(Resources.CatalogSource, globalNs, {
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'CatalogSource',
          metadata: { name, namespace: globalNs },
          spec,
        } as KubeObject),
      );
    await source('cm', { sourceType: 'configmap', configMap: 'upcat' });
    await source('web', {
      sourceType: 'http',
      address: url,
      updateStrategy: { registryPoll: { interval: '1s' } },
    } as CatalogSource['spec']);

    const succeededAt = new Map<string, number>();
    const csvs = createInformer<ClusterServiceVersion>(client, Resources.ClusterServiceVersion);
    const seen = (c: ClusterServiceVersion) => {
      const key = `${c.metadata.namespace}/${c.metadata.name}`;
      if (c.status?.phase === 'Succeeded' && !succeededAt.has(key)) succeededAt.set(key, performance.now());
    };
    csvs.on({ add: seen, update: (_, c) => seen(c) });
    csvs.start();
    await csvs.synced();
    const succeeded = (ns: string, i: number) =>
      waitFor(`${ns} ${csvName(i)} Succeeded`, async () => succeededAt.get(`${ns}/${csvName(i)}`), 120_000);

    const subscribed = async (ns: string, from: string, annotations: Record<string, string> = {}) => {
      await create(core('namespaces'), '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await create(Resources.OperatorGroup, ns, {
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        metadata: { name: 'og', namespace: ns },
        spec: { targetNamespaces: [ns] },
      } as KubeObject);
      await create(Resources.Subscription, ns, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: pkg, namespace: ns, annotations },
        spec: { name: pkg, channel: 'stable', source: from, sourceNamespace: globalNs },
      } as KubeObject);
      await succeeded(ns, 0);
    };
    await subscribed('up-cm', 'cm', { 'bosun.dev/upgrade-deadline': `${DEADLINE_S}s` });
    await subscribed('up-http', 'web');
    say('version 1.0.0 installed from both catalogs');

    const viaConfigMap: number[] = [];
    const viaHttp: number[] = [];
    for (let i = 1; i <= UPGRADES; i++) {
      const text = catalog(i);
      let t = performance.now();
      await client.request({
        method: 'PATCH',
        path: objectPath(core('configmaps'), 'upcat', globalNs),
        body: { data: { 'catalog.json': text } },
        contentType: 'application/merge-patch+json',
      });
      viaConfigMap.push(((await succeeded('up-cm', i)) - t) / 1000);
      t = performance.now();
      served = text;
      viaHttp.push(((await succeeded('up-http', i)) - t) / 1000);
      say(
        `upgrade to ${version(i)}: configmap ${viaConfigMap.at(-1)!.toFixed(2)} s, http ${viaHttp.at(-1)!.toFixed(2)} s`,
      );
    }
    const rollbacks: number[] = [];
    for (let k = 1; k <= ROLLBACKS; k++) {
      const broken = csvName(UPGRADES + k);
      await client.request({
        method: 'PATCH',
        path: objectPath(core('configmaps'), 'upcat', globalNs),
        body: { data: { 'catalog.json': catalog(UPGRADES, k) } },
        contentType: 'application/merge-patch+json',
      });
      const created = await waitFor(`${broken} created`, async () => csvs.get(`up-cm/${broken}`), 60_000);
      const deadlineAt = Date.parse(created.metadata.creationTimestamp!) + DEADLINE_S * 1000;
      const sub = objectPath(Resources.Subscription, pkg, 'up-cm');
      const doneAt = await waitFor(
        `the rollback from ${broken}`,
        async () => {
          const s = await client.request<{ status?: { rollback?: { phase?: string; from?: string } } }>({
            path: sub,
          });
          return s.status?.rollback?.phase === 'RolledBack' && s.status.rollback.from === broken
            ? Date.now()
            : undefined;
        },
        120_000,
        100,
      );
      rollbacks.push((doneAt - deadlineAt) / 1000);
      say(`rollback from ${version(UPGRADES + k)}: ${rollbacks.at(-1)!.toFixed(2)} s after its deadline`);
    }
    const inputs = { upgrades: UPGRADES, manager: 'separate process (dist)' };
    emit({
      name: 'upgrade.rollback_from_deadline',
      value: median(rollbacks),
      unit: 's',
      inputs: { rollbacks: ROLLBACKS, deadline: `${DEADLINE_S}s`, manager: 'separate process (dist)' },
    });
    emit({ name: 'upgrade.catalog_to_succeeded.configmap', value: median(viaConfigMap), unit: 's', inputs });
    emit({
      name: 'upgrade.catalog_to_succeeded.http',
      value: median(viaHttp),
      unit: 's',
      inputs: { ...inputs, registryPoll: '1s' },
    });
    await csvs.stop();
  } finally {
    server.close();
    await stopProcess(manager);
    await cluster.close();
    clearInterval(keepAlive);
  }
}
