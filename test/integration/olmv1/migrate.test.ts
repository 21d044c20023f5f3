/**
 * `bosun migrate subscription` on a running manager: an operator installed by a Subscription
 * from a CatalogSource of `sourceType: grpc` with `image:` (a catalog image pushed to a real
 * registry) is handed over to a ClusterExtension resolving from a ClusterCatalog of the same
 * image, by the real `bosun` command in a process of its own. The operator is not installed
 * again: its CSV, Deployment and Pods keep their uids, its custom resource stays, the CSV comes to
 * be owned by the extension, and the Subscription and its InstallPlans go. `--dry-run` changes
 * nothing; what v1 cannot take (a group targeting some namespaces, a package a ClusterExtension
 * owns) is refused, naming why, and changes nothing.
 *
 * The package is renamed for this file (bosun-sample-<random>): a migration is refused while any
 * other Subscription manages the package, and other files leave Subscriptions of bosun-sample.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BundleAnnotation } from '../../../src/apis/bundle.js';
import type { KubeObject } from '../../../src/apis/meta.js';
import { type ClusterCatalog, type ClusterExtension, V1Resources } from '../../../src/apis/olmv1.js';
import {
  type CatalogSource,
  type ClusterServiceVersion,
  type InstallPlan,
  Resources,
  type Subscription,
} from '../../../src/apis/operators.js';
import { buildBundleImage } from '../../../src/bundle/image.js';
import { readBundle, readBundleFiles } from '../../../src/bundle/read.js';
import { collectionPath, objectPath } from '../../../src/kube/client.js';
import { Builtin } from '../../../src/kube/resources.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { pushImage } from '../../../src/oci/build.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { formatReference, parseReference } from '../../../src/oci/reference.js';
import type { FileMap } from '../../../src/util/tar-write.js';
import { repo } from '../../support/bosun-build.js';
import { spawnBosun } from '../../support/bosun-process.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { eventually, freshNamespace } from '../support.js';
import { imageOnlyCatalog, pushCatalog, SampleGroup, sampleCatalog } from '../controllers/image-catalogs.js';
import { uniqueGroup } from '../controllers/operator-support.js';
import {
  catalogSource,
  client,
  create,
  get,
  list,
  remove,
  subscription,
  startTestManager,
} from '../controllers/support.js';

const missing = await registryAvailable();
if (missing) console.warn(`the migrate tests are skipped: ${missing}`);

const CC = V1Resources.ClusterCatalog;
const CE = V1Resources.ClusterExtension;
const Pod = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true } as const;

let manager: RunningManager;
let registry: TestRegistry;
let push: RegistryClient;
const group = uniqueGroup();
/** This file's own package name: no other file's Subscription manages it. */
const pkg = `bosun-sample-${randomBytes(3).toString('hex')}`;
let catalogRef: string;
let catalogName: string;

/** The catalog's files with package bosun-sample renamed `pkg` (bundle names, the CSVs' names, stay). */
function renamed(files: FileMap): FileMap {
  const text = Buffer.from(files.get('catalog.json')!).toString('utf8');
  const docs = text.split('\n').map((line) => {
    const d = JSON.parse(line) as Record<string, unknown>;
    if (d.schema === 'olm.package') d.name = pkg;
    else d.package = pkg;
    for (const p of (d.properties as { type: string; value: { packageName?: string } }[] | undefined) ?? [])
      if (p.type === 'olm.package') p.value.packageName = pkg;
    return JSON.stringify(d);
  });
  return new Map([['catalog.json', Buffer.from(docs.join('\n'))]]);
}

/**
 * The sample bundles of `versions` pushed with their package renamed `pkg` (the engine checks a
 * bundle image's package against the catalog's) and their API moved to `group`; bundle → image.
 */
async function pushRenamedBundles(versions: readonly string[]): Promise<Map<string, string>> {
  const images = new Map<string, string>();
  for (const version of versions) {
    const dir = join(repo, 'bundles/bosun-sample', version);
    const files = await readBundleFiles(dir);
    const read = await readBundle(dir);
    if (!files.ok || !read.ok) throw new Error(`${dir} does not read as a bundle`);
    const content: FileMap = new Map(
      [...files.value].map(([path, data]) => {
        let text = Buffer.from(data).toString('utf8').replaceAll(SampleGroup, group);
        if (path === 'metadata/annotations.yaml')
          text = text.replace(
            `${BundleAnnotation.Package}: bosun-sample`,
            `${BundleAnnotation.Package}: ${pkg}`,
          );
        return [path, Buffer.from(text)];
      }),
    );
    const annotations = { ...read.value.annotations, [BundleAnnotation.Package]: pkg };
    const ref = parseReference(`${registry.host}/bundles/${pkg}:v${version}`);
    const digest = await pushImage(push, ref, buildBundleImage(content, annotations));
    images.set(
      `bosun-sample.v${version}`,
      formatReference({ registry: ref.registry, repository: ref.repository, digest }),
    );
  }
  return images;
}

/**
 * The catalogd API of the ClusterCatalog, answered by this test from what the manager served
 * (its bundles and channels of `pkg`), while no manager runs: the command can then plan, and no
 * controller is there to adopt anything.
 */
async function standInCatalogd(): Promise<{ base: string; close: () => Promise<void> }> {
  const cc = (await get<ClusterCatalog>(CC, '', catalogName))!;
  const answers = new Map<string, string>();
  for (const schema of ['olm.bundle', 'olm.channel']) {
    const res = await fetch(`${cc.status!.urls!.base}/api/v1/metas?schema=${schema}&package=${pkg}`);
    answers.set(schema, await res.text());
  }
  const server = createServer((req, res) => {
    const schema = new URL(req.url ?? '', 'http://x').searchParams.get('schema') ?? '';
    res.end(answers.get(schema) ?? '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalogs/${catalogName}`;
  return { base, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Once the manager serves the ClusterCatalog's catalogd API again at the address in its status. */
async function catalogServedAgain(stale: string): Promise<void> {
  await eventually('the ClusterCatalog to be served by the restarted manager', async () => {
    const base = (await get<ClusterCatalog>(CC, '', catalogName))?.status?.urls?.base;
    if (!base || base === stale) return undefined;
    const res = await fetch(`${base}/api/v1/metas?schema=olm.package`).catch(() => undefined);
    return res?.ok ? true : undefined;
  });
}

beforeAll(async () => {
  if (missing) return;
  registry = await startRegistry({ kind: 'plain' });
  push = new RegistryClient();
  const keep = (b: string) => b === 'bosun-sample.v0.1.0' || b === 'bosun-sample.v0.1.1';
  const bundleImages = await pushRenamedBundles(['0.1.0', '0.1.1']);
  const files = imageOnlyCatalog(await sampleCatalog(), (b) => bundleImages.get(b)!, keep, group);
  catalogRef = `${registry.host}/catalogs/migrate:latest`;
  await pushCatalog(push, catalogRef, renamed(files));
  manager = await startTestManager();
  // The same catalog image as a ClusterCatalog: both front ends name the same bundles.
  catalogName = `migrate-${randomBytes(3).toString('hex')}`;
  await create<ClusterCatalog>(CC, '', {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { name: catalogName },
    spec: { source: { type: 'Image', image: { ref: catalogRef } } },
  });
  await eventually(`ClusterCatalog ${catalogName} to be Serving`, async () => {
    const cc = await get<ClusterCatalog>(CC, '', catalogName);
    return cc?.status?.conditions?.find((c) => c.type === 'Serving')?.status === 'True' ? cc : undefined;
  });
}, 120_000);
afterAll(async () => {
  // The catalogs' registry goes with this file: later files' managers should not poll it.
  if (catalogName)
    for (const cc of [catalogName, `${catalogName}-low`]) await remove(CC, '', cc).catch(() => undefined);
  await manager?.stop();
  await push?.close();
});

/** The real `bosun` command, from dist/, in a process of its own. */
function bosun(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawnBosun([...args, '--kubeconfig', inject('kubeconfig')]);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code: code ?? 1, stdout, stderr })));
}

const uid = (o: KubeObject | undefined) => o?.metadata?.uid;

async function pods(ns: string, labels: Record<string, string>): Promise<KubeObject[]> {
  const res = await client().request<{ items: KubeObject[] }>({
    path: collectionPath(Pod, ns),
    query: {
      labelSelector: Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    },
  });
  return res.items;
}

/** A namespace with an OperatorGroup for all namespaces and a Subscription to `pkg` from a grpc image CatalogSource, installed. */
async function subscribed(name: string) {
  const ns = await freshNamespace('migrate');
  await create(Resources.OperatorGroup, ns, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'global', namespace: ns },
    spec: {},
  });
  await create(
    Resources.CatalogSource,
    ns,
    catalogSource(ns, 'images', { sourceType: 'grpc', image: catalogRef }),
  );
  await create(
    Resources.Subscription,
    ns,
    subscription(ns, name, {
      name: pkg,
      source: 'images',
      channel: 'stable',
      installPlanApproval: 'Automatic',
    }),
  );
  let last: unknown;
  const sub = await eventually(
    'the Subscription to install its operator',
    async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, name);
      last = {
        sub: s?.status,
        cs: (await get<CatalogSource>(Resources.CatalogSource, ns, 'images'))?.status,
        plans: (await list<InstallPlan>(Resources.InstallPlan, ns)).map((p) => p.status),
      };
      const installed = s?.status?.installedCSV;
      if (!installed) return undefined;
      const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, installed);
      return csv?.status?.phase === 'Succeeded' ? s : undefined;
    },
    60_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`, { cause: err });
  });
  return { ns, sub };
}

describe.skipIf(missing !== undefined)('bosun migrate subscription', () => {
  it('hands a Subscription’s operator to a ClusterExtension without reinstalling it: same CSV, Deployment, Pods and custom resource; the Subscription and its InstallPlans go; --dry-run and refusals change nothing', async () => {
    const name = `sample-${randomBytes(3).toString('hex')}`;
    const { ns, sub } = await subscribed(name);
    const csvName = sub.status!.installedCSV!;
    expect(csvName).toBe('bosun-sample.v0.1.1');
    const csv = (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csvName))!;
    const depName = csv.spec.install.spec!.deployments[0]!.name;
    const dep = (await get<KubeObject & { spec: { selector: { matchLabels: Record<string, string> } } }>(
      Builtin.Deployment,
      ns,
      depName,
    ))!;
    const podsBefore = await eventually('the operator’s Pods', async () => {
      const p = await pods(ns, dep.spec.selector.matchLabels);
      return p.length > 0 ? p : undefined;
    });
    const Widget = {
      group,
      version: 'v1alpha1',
      kind: 'Widget',
      plural: 'widgets',
      namespaced: true,
    } as const;
    const widget = await create<KubeObject>(Widget, ns, {
      apiVersion: `${group}/v1alpha1`,
      kind: 'Widget',
      metadata: { name: 'kept', namespace: ns },
      spec: { size: 1 },
    } as KubeObject);
    const plansBefore = await list<InstallPlan>(Resources.InstallPlan, ns);
    expect(plansBefore.length).toBeGreaterThan(0);

    // --dry-run: the plan, and nothing changed.
    const dry = await bosun(
      'migrate',
      'subscription',
      '-n',
      ns,
      name,
      '--service-account',
      'installer',
      '--dry-run',
    );
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`create ClusterExtension ${name}`);
    expect(dry.stdout).toContain(`packageName:     ${pkg}`);
    expect(dry.stdout).toContain('channels:        stable');
    expect(dry.stdout).toContain(`adopts ClusterServiceVersion ${ns}/${csvName}`);
    expect(dry.stdout).toContain('dry run: nothing changed');
    expect(await get(CE, '', name)).toBeUndefined();
    const afterDry = await get<Subscription>(Resources.Subscription, ns, name);
    expect(uid(afterDry)).toBe(uid(sub));
    expect(afterDry?.spec).toEqual(sub.spec);
    expect(await list(Resources.InstallPlan, ns)).toHaveLength(plansBefore.length);
    expect(
      (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csvName))?.metadata
        .ownerReferences ?? [],
    ).toEqual(csv.metadata.ownerReferences ?? []);

    // No controller to adopt the CSV (the manager stopped): the wait times out, nothing is deleted, the extension stays.
    const stand = await standInCatalogd();
    await manager.stop();
    await client().request({
      method: 'PATCH',
      path: `${objectPath(CC, catalogName)}/status`,
      body: { status: { urls: { base: stand.base } } },
      contentType: 'application/merge-patch+json',
    });
    const timedOut = await bosun(
      'migrate',
      'subscription',
      '-n',
      ns,
      name,
      '--service-account',
      'installer',
      '--timeout',
      '3s',
    );
    await stand.close();
    expect(timedOut.code, timedOut.stderr).toBe(1);
    expect(timedOut.stdout).toContain(`created ClusterExtension ${name}`);
    expect(timedOut.stderr).toContain(
      `ClusterExtension ${name} did not take over ${csvName} within 3 s; nothing deleted`,
    );
    expect(timedOut.stderr).toContain(`Last seen: no Installed condition`);
    expect(timedOut.stderr).toContain(`ClusterServiceVersion ${csvName} not owned by the extension yet`);
    expect(timedOut.stderr).toContain(`kubectl delete clusterextension ${name} --cascade=orphan`);
    expect(uid(await get(Resources.Subscription, ns, name))).toBe(uid(sub));
    expect(await list(Resources.InstallPlan, ns)).toHaveLength(plansBefore.length);
    expect(await get(CE, '', name)).toBeDefined();
    // Given up: the extension deleted (it owns nothing yet), the manager started again.
    await remove(CE, '', name);
    manager = await startTestManager();
    await catalogServedAgain(stand.base);
    // A second catalog serving the package, of lower priority: the extension is pinned to the first by its name.
    const low = `${catalogName}-low`;
    await create<ClusterCatalog>(CC, '', {
      apiVersion: 'olm.operatorframework.io/v1',
      kind: 'ClusterCatalog',
      metadata: { name: low },
      spec: { source: { type: 'Image', image: { ref: catalogRef } }, priority: -1 },
    });
    await eventually(`ClusterCatalog ${low} to be Serving`, async () => {
      const cc = await get<ClusterCatalog>(CC, '', low);
      return cc?.status?.conditions?.find((c) => c.type === 'Serving')?.status === 'True' ? cc : undefined;
    });

    const started = Date.now();
    const run = await bosun('migrate', 'subscription', '-n', ns, name, '--service-account', 'installer');
    const tookMs = Date.now() - started;
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`deleted Subscription ${ns}/${name}`);
    expect(run.stdout).toContain(`kept OperatorGroup ${ns}/global`);
    console.info(`bosun migrate subscription took ${tookMs} ms`);

    // The extension is Installed on the same bundle, and owns the same CSV object.
    const ext = (await get<ClusterExtension>(CE, '', name))!;
    expect(ext.status?.install?.bundle).toEqual({ name: csvName, version: '0.1.1' });
    expect(ext.status?.conditions?.find((c) => c.type === 'Installed')?.status).toBe('True');
    expect(ext.metadata.annotations?.['bosun.dev/migrated-from-subscription']).toBe(name);
    // Automatic: no version (it keeps upgrading along its channel); two catalogs serve the package: the selector names the one chosen.
    expect(ext.spec?.source.catalog).toEqual({
      packageName: pkg,
      channels: ['stable'],
      selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } },
      upgradeConstraintPolicy: 'CatalogProvided',
    });
    expect(run.stdout).toContain(`selector:        olm.operatorframework.io/metadata.name=${catalogName}`);
    const csvAfter = (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csvName))!;
    expect(uid(csvAfter)).toBe(uid(csv));
    expect(csvAfter.metadata.ownerReferences).toContainEqual(
      expect.objectContaining({ kind: 'ClusterExtension', name, uid: ext.metadata.uid }),
    );
    // Not restarted: the same Deployment and Pods, and the custom resource is still there.
    expect(uid(await get(Builtin.Deployment, ns, depName))).toBe(uid(dep));
    expect((await pods(ns, dep.spec.selector.matchLabels)).map(uid).sort()).toEqual(
      podsBefore.map(uid).sort(),
    );
    expect(uid(await get(Widget, ns, 'kept'))).toBe(uid(widget));
    // The Subscription and its InstallPlans are gone; the extension made no plan of its own.
    expect(await get(Resources.Subscription, ns, name)).toBeUndefined();
    await eventually('the InstallPlans to be gone', async () =>
      (await list(Resources.InstallPlan, ns)).length === 0 ? true : undefined,
    );
    // A few seconds on, the operator is still the same: the extension did not install it again.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(uid(await get(Builtin.Deployment, ns, depName))).toBe(uid(dep));
    expect(uid(await get(Resources.ClusterServiceVersion, ns, csvName))).toBe(uid(csv));
    expect(await list(Resources.InstallPlan, ns)).toHaveLength(0);

    // Refused: a package a ClusterExtension owns (now the migrated one), and a group that targets some namespaces.
    const owned = await freshNamespace('migrate-owned');
    await create(Resources.OperatorGroup, owned, {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'global', namespace: owned },
      spec: {},
    });
    await create(Resources.Subscription, owned, subscription(owned, 'again', { name: pkg, source: 'none' }));
    const scoped = await freshNamespace('migrate-scoped');
    await create(Resources.OperatorGroup, scoped, {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'own', namespace: scoped },
      spec: { targetNamespaces: [scoped] },
    });
    await create(
      Resources.Subscription,
      scoped,
      subscription(scoped, 'scoped', { name: pkg, source: 'none' }),
    );
    for (const [where, subName, reason] of [
      [owned, 'again', `package "${pkg}" is already managed by ClusterExtension ${name}`],
      [
        scoped,
        'scoped',
        `OperatorGroup ${scoped}/own: spec.targetNamespaces: targets ${scoped}; a ClusterExtension (v1.2.0) installs for all namespaces only`,
      ],
    ] as const) {
      const before = await get<Subscription>(Resources.Subscription, where, subName);
      const refused = await bosun(
        'migrate',
        'subscription',
        '-n',
        where,
        subName,
        '--service-account',
        'installer',
      );
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain(`cannot migrate Subscription ${where}/${subName}, nothing changed`);
      expect(refused.stderr).toContain(reason);
      expect(refused.stdout).toBe('');
      expect(await get(CE, '', subName)).toBeUndefined();
      expect((await get<Subscription>(Resources.Subscription, where, subName))?.metadata.uid).toBe(
        uid(before),
      );
    }
  }, 120_000);
});
