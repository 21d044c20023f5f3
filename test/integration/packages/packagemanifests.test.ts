/**
 * The PackageManifest API through the real aggregator of the local control plane: kubectl and a
 * plain client list, get and watch PackageManifests, select them by label and field, fetch
 * icons, and are refused (403) where RBAC says so; discovery and `kubectl explain` work; the
 * serving certificate rotates without a gap. The repository's own catalog serves as the global
 * catalog, a second catalog as a namespace's own; the OperatorHub corpus (BOSUN_CORPUS_DIR) is
 * checked too.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { PackageManifest } from '../../../src/apis/packages.js';
import { catalogConfigMapData } from '../../../src/cli/commands/start.js';
import { Builtin } from '../../../src/kube/resources.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { defaultPackageApiAddress } from '../../../src/server/packageserver/listen.js';
import { IconPolicy } from '../../../src/web/icon-policy.js';
import { rawHttps } from '../../support/raw-request.js';
import { adminTls } from '../../support/users.js';
import { eventually, freshNamespace } from '../support.js';
import {
  client,
  ConfigMapResource,
  create,
  mergePatch,
  remove,
  Resources,
  serveCorpusCatalog,
} from '../controllers/support.js';
import { TestOperator, testCatalogSnapshot } from '../controllers/install-harness.js';
import { configMapCatalog, GlobalNamespace, managerWithPackageApi, repoCatalogs } from './support.js';

const run = promisify(execFile);
const globalCatalog = `samples-${process.pid}`;
const base = '/apis/packages.operators.coreos.com/v1';
const testop = TestOperator.package;

let manager: RunningManager;

async function kubectl(...args: string[]): Promise<{ out: string; err: string; code: number }> {
  try {
    const { stdout, stderr } = await run('kubectl', ['--kubeconfig', inject('kubeconfig'), ...args], {
      maxBuffer: 256 * 1024 * 1024,
    });
    return { out: stdout, err: stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { out: e.stdout ?? '', err: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : 1 };
  }
}

/** The test operator's catalog (package `testop`) as a JSON stream. */
function testopCatalog(): string {
  const { config } = testCatalogSnapshot();
  return [...config.packages, ...config.channels, ...config.bundles].map((d) => JSON.stringify(d)).join('\n');
}

async function listPackages(
  namespace: string,
  query: Record<string, string> = {},
): Promise<PackageManifest[]> {
  const path = namespace ? `${base}/namespaces/${namespace}/packagemanifests` : `${base}/packagemanifests`;
  const res = await client().request<{ items: PackageManifest[] }>({ path, query });
  return res.items;
}

let stopManager: () => Promise<void>;

beforeAll(async () => {
  ({ manager, stop: stopManager } = await managerWithPackageApi({
    packageApiAddr: defaultPackageApiAddress(),
    catalog: globalCatalog,
    displayName: 'Bosun samples',
  }));
  await eventually('the global catalog to be listed', async () => {
    const items = await listPackages('default', { labelSelector: `catalog=${globalCatalog}` });
    return items.length > 0 ? items : undefined;
  });
});

afterAll(async () => {
  await stopManager?.();
});

describe('the PackageManifest API', () => {
  it('kubectl get packagemanifests prints NAME, CATALOG and AGE; the global catalog is seen from every namespace', async () => {
    const ns = await freshNamespace('pm');
    const res = await kubectl('get', 'packagemanifests', '-n', ns, '-l', `catalog=${globalCatalog}`);
    expect(res.code, res.err).toBe(0);
    const lines = res.out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+CATALOG\s+AGE$/);
    const rows = lines.slice(1).map((l) => l.split(/\s{2,}/));
    expect(rows.map((r) => r[0]).sort()).toEqual(['bosun-sample', 'bosun-sample-dashboard']);
    for (const r of rows) {
      expect(r[1]).toBe('Bosun samples');
      expect(r[2]).toMatch(/^\d+(s|m)/);
    }
  });

  it('fills the status as OLM does, and get -o yaml round-trips to the same object a client reads', async () => {
    const ns = await freshNamespace('pm');
    const res = await kubectl('get', 'packagemanifest', 'bosun-sample', '-n', ns, '-o', 'yaml');
    expect(res.code, res.err).toBe(0);
    const fromKubectl = parseYaml(res.out) as PackageManifest;
    const fromClient = await client().request<PackageManifest>({
      path: `${base}/namespaces/${ns}/packagemanifests/bosun-sample`,
    });
    expect(fromKubectl).toEqual(fromClient);
    expect(fromClient.metadata.namespace).toBe(ns);
    const s = fromClient.status;
    expect(s).toMatchObject({
      catalogSource: globalCatalog,
      catalogSourceDisplayName: 'Bosun samples',
      catalogSourcePublisher: 'Bosun',
      catalogSourceNamespace: GlobalNamespace,
      packageName: 'bosun-sample',
    });
    expect(s.channels.map((c) => c.name)).toEqual([...s.channels.map((c) => c.name)].sort());
    const def = s.channels.find((c) => c.name === s.defaultChannel)!;
    expect(def.currentCSV).toMatch(/^bosun-sample\.v/);
    expect(def.entries[0]!.name).toBe(def.currentCSV);
    expect(def.currentCSVDesc.version).toBe(def.entries[0]!.version);
    expect(def.currentCSVDesc.installModes?.length).toBeGreaterThan(0);
    expect(def.currentCSVDesc.customresourcedefinitions?.owned?.length).toBeGreaterThan(0);
    expect(fromClient.metadata.labels).toMatchObject({
      catalog: globalCatalog,
      'catalog-namespace': GlobalNamespace,
      'operatorframework.io/os.linux': 'supported',
      'operatorframework.io/arch.amd64': 'supported',
    });
    // What kubectl printed reads back: `kubectl get -f` of it finds the same object.
    const file = join(await mkdtemp(join(tmpdir(), 'pm-')), 'pm.yaml');
    await writeFile(file, res.out);
    const again = await kubectl('get', '-f', file, '-o', 'yaml');
    expect(again.code, again.err).toBe(0);
    expect(parseYaml(again.out)).toEqual(fromKubectl);
  });

  it('a namespace sees its own catalogs and the global ones; another namespace sees only the global ones', async () => {
    const ns = await freshNamespace('pm');
    const other = await freshNamespace('pm');
    await configMapCatalog(ns, 'own', { 'catalog.json': testopCatalog() });
    await eventually(`${testop} to be listed in its namespace`, async () =>
      (await listPackages(ns)).some((p) => p.metadata.name === testop) ? true : undefined,
    );
    const here = await listPackages(ns);
    expect(
      here.filter((p) => p.metadata.name === testop).map((p) => p.status.catalogSourceNamespace),
    ).toEqual([ns]);
    expect(here.some((p) => p.status.catalogSource === globalCatalog)).toBe(true);
    const there = await listPackages(other);
    expect(there.some((p) => p.metadata.name === testop)).toBe(false);
    expect(there.some((p) => p.status.catalogSource === globalCatalog)).toBe(true);
    const get = await kubectl('get', 'packagemanifest', testop, '-n', other);
    expect(get.code).not.toBe(0);
    expect(get.err).toContain(`"${testop}" not found`);
    // Across all namespaces each package is in its catalog's namespace.
    const all = await listPackages('');
    expect(all.find((p) => p.status.catalogSourceNamespace === ns)?.metadata.namespace).toBe(ns);
  });

  it('selects by label (equality and set) and by metadata.name, and refuses other fields', async () => {
    const ns = await freshNamespace('pm');
    const byName = await listPackages(ns, { fieldSelector: 'metadata.name=bosun-sample' });
    expect(byName.map((p) => p.metadata.name)).toEqual(['bosun-sample']);
    const set = await listPackages(ns, { labelSelector: `catalog in (${globalCatalog},nothing),provider` });
    expect(set.map((p) => p.metadata.name).sort()).toEqual(['bosun-sample', 'bosun-sample-dashboard']);
    const none = await listPackages(ns, { labelSelector: `catalog=${globalCatalog},!provider` });
    expect(none).toEqual([]);
    const bad = await kubectl(
      'get',
      'packagemanifests',
      '-n',
      ns,
      '--field-selector',
      'status.packageName=x',
    );
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('field label not supported: status.packageName');
  });

  it('serves the default channel head icon at packagemanifests/<name>/icon', async () => {
    const ns = await freshNamespace('pm');
    const pm = await client().request<PackageManifest>({
      path: `${base}/namespaces/${ns}/packagemanifests/bosun-sample`,
    });
    const def = pm.status.channels.find((c) => c.name === pm.status.defaultChannel)!;
    const icon = def.currentCSVDesc.icon![0]!;
    const res = await kubectl('get', '--raw', `${base}/namespaces/${ns}/packagemanifests/bosun-sample/icon`);
    expect(res.code, res.err).toBe(0);
    expect(Buffer.from(res.out, 'latin1').length).toBeGreaterThan(0);
    expect(res.out).toBe(Buffer.from(icon.base64data!, 'base64').toString('utf8'));
  });

  it('a watch sees a package appear within seconds of a catalog change, and go when it goes', async () => {
    const ns = await freshNamespace('pm');
    await configMapCatalog(
      ns,
      'own',
      { 'catalog.json': testopCatalog() },
      { updateStrategy: { registryPoll: { interval: '1s' } } },
    );
    const list = await eventually('the catalog to be listed', async () => {
      const res = await client().request<{ metadata: { resourceVersion: string }; items: PackageManifest[] }>(
        {
          path: `${base}/namespaces/${ns}/packagemanifests`,
          query: { labelSelector: 'catalog=own' },
        },
      );
      return res.items.length === 1 ? res : undefined;
    });
    const events: { type: string; name: string; at: number }[] = [];
    const abort = new AbortController();
    const watching = client()
      .stream(
        {
          path: `${base}/namespaces/${ns}/packagemanifests`,
          query: {
            watch: 'true',
            resourceVersion: list.metadata.resourceVersion,
            labelSelector: 'catalog=own',
          },
          signal: abort.signal,
          timeoutMs: 120_000,
        },
        (line) => {
          const e = JSON.parse(line) as { type: string; object: PackageManifest };
          events.push({ type: e.type, name: e.object.metadata.name, at: Date.now() });
        },
      )
      .catch(() => undefined);
    // The sample operators join the catalog, then leave it.
    const samples = await catalogConfigMapData(repoCatalogs);
    const changedAt = Date.now();
    await mergePatch(ConfigMapResource, ns, 'own', { data: samples });
    const added = await eventually('an ADDED event for bosun-sample', async () =>
      events.find((e) => e.type === 'ADDED' && e.name === 'bosun-sample'),
    );
    process.stderr.write(
      `[packagemanifests] watch event ${added.at - changedAt} ms after the catalog changed\n`,
    );
    await mergePatch(ConfigMapResource, ns, 'own', {
      data: Object.fromEntries(Object.keys(samples).map((k) => [k, null])),
    });
    await eventually('a DELETED event for bosun-sample', async () =>
      events.find((e) => e.type === 'DELETED' && e.name === 'bosun-sample'),
    );
    // Nothing before the list's resourceVersion is replayed, and the package that stayed is unchanged.
    expect(events.filter((e) => e.name === testop)).toEqual([]);
    abort.abort();
    await watching;
  });

  it('kubectl get -w prints a new package as a row', async () => {
    const ns = await freshNamespace('pm');
    const child = execFile('kubectl', [
      '--kubeconfig',
      inject('kubeconfig'),
      'get',
      'packagemanifests',
      '-n',
      ns,
      '-l',
      'catalog=own',
      '-w',
      '--request-timeout=0',
    ]);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await configMapCatalog(ns, 'own', { 'catalog.json': testopCatalog() });
      await eventually('kubectl -w to print the package', async () =>
        new RegExp(`^${testop}\\s+`, 'm').test(out) ? true : undefined,
      );
    } finally {
      child.kill();
    }
  });

  it('refuses (403) a user who may not list packagemanifests; a namespace viewer may, there only', async () => {
    const ns = await freshNamespace('pm');
    const other = await freshNamespace('pm');
    const nobody = await kubectl('get', 'packagemanifests', '-n', ns, '--as', 'nobody');
    expect(nobody.code).not.toBe(0);
    expect(nobody.err).toMatch(/Forbidden|forbidden/);
    expect(nobody.err).toContain('User "nobody" cannot list resource "packagemanifests"');
    await create(
      {
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        kind: 'RoleBinding',
        plural: 'rolebindings',
        namespaced: true,
      },
      ns,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'viewer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
      } as never,
    );
    const allowed = await eventually('the viewer to list packagemanifests', async () => {
      const r = await kubectl('get', 'packagemanifests', '-n', ns, '--as', 'viewer');
      return r.code === 0 ? r : undefined;
    });
    expect(allowed.out).toContain('bosun-sample');
    const elsewhere = await kubectl('get', 'packagemanifests', '-n', other, '--as', 'viewer');
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.err).toContain('cannot list resource "packagemanifests"');
    const icon = await kubectl(
      'get',
      '--raw',
      `${base}/namespaces/${other}/packagemanifests/bosun-sample/icon`,
      '--as',
      'viewer',
    );
    expect(icon.code).not.toBe(0);
  });

  it('discovery and kubectl explain describe the resource', async () => {
    const res = await kubectl('api-resources', '--api-group=packages.operators.coreos.com', '-o', 'wide');
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(
      /packagemanifests\s+packages\.operators\.coreos\.com\/v1\s+true\s+PackageManifest\s+get,list,watch|\[get list watch\]/,
    );
    const explain = await eventually('kubectl explain to know PackageManifest', async () => {
      const r = await kubectl('explain', 'packagemanifest.status.channels');
      return r.code === 0 ? r : undefined;
    });
    expect(explain.out).toContain('KIND:       PackageManifest');
    expect(explain.out).toContain('currentCSV');
  });

  it('rotating the serving certificate keeps the API available', async () => {
    const before = manager.packageApi!.rotateAt();
    await manager.packageApi!.rotate();
    expect(manager.packageApi!.rotateAt()).toBeGreaterThanOrEqual(before);
    const ns = await freshNamespace('pm');
    for (let i = 0; i < 5; i++) {
      const r = await kubectl(
        'get',
        'packagemanifests',
        '-n',
        ns,
        '-l',
        `catalog=${globalCatalog}`,
        '-o',
        'name',
      );
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain('packagemanifest.packages.operators.coreos.com/bosun-sample');
    }
  });
});

const corpus = process.env.BOSUN_CORPUS_DIR;
describe.skipIf(!corpus)('the PackageManifest API over the OperatorHub corpus (BOSUN_CORPUS_DIR)', () => {
  it('lists every package of the corpus catalog, with OLM fields on real packages', async () => {
    const ns = `corpus-pm-${process.pid}`;
    const { config, served } = await serveCorpusCatalog(corpus!, ns, 'corpus');
    try {
      const items = await eventually(
        'the corpus packages to be listed',
        async () => {
          const list = await listPackages(ns, { labelSelector: 'catalog=corpus' });
          return list.length === config.packages.length ? list : undefined;
        },
        180_000,
      );
      expect(items.length).toBe(config.packages.length);
      const res = await kubectl('get', 'packagemanifests', '-n', ns, '-l', 'catalog=corpus', '--no-headers');
      expect(res.code, res.err).toBe(0);
      expect(res.out.trim().split('\n').length).toBe(config.packages.length);
      const etcd = items.find((p) => p.metadata.name === 'etcd')!;
      expect(etcd.status.defaultChannel).toBe('singlenamespace-alpha');
      const def = etcd.status.channels.find((c) => c.name === 'singlenamespace-alpha')!;
      expect(def.currentCSV).toBe('etcdoperator.v0.9.4');
      expect(def.currentCSVDesc.displayName).toBe('etcd');
      expect(def.currentCSVDesc.customresourcedefinitions?.owned?.map((c) => c.kind).sort()).toEqual([
        'EtcdBackup',
        'EtcdCluster',
        'EtcdRestore',
      ]);
      expect(def.entries.map((e) => e.version)).toEqual(['0.9.4', '0.9.2', '0.9.0']);
      const iconRes = await kubectl('get', '--raw', `${base}/namespaces/${ns}/packagemanifests/etcd/icon`);
      expect(iconRes.code).toBe(0);
      expect(Buffer.from(iconRes.out, 'latin1').subarray(1, 4).toString()).toBe('PNG');

      // Every real icon is still served as the image it is (the policy turns only what no <img>
      // shows into a download), sandboxed and not sniffed.
      const admin = await adminTls(inject('kubeconfig'));
      const served: Record<string, number> = {};
      for (const p of items) {
        const declared = p.status.channels.find((c) => c.name === p.status.defaultChannel)?.currentCSVDesc
          .icon?.[0]?.mediatype;
        const res = await rawHttps(
          admin.server,
          `${base}/namespaces/${ns}/packagemanifests/${p.metadata.name}/icon`,
          {
            ...(admin.cert ? { cert: admin.cert, key: admin.key! } : {}),
            ...(admin.ca ? { ca: admin.ca } : {}),
          },
        );
        expect(res.status, p.metadata.name).toBe(200);
        const type = String(res.headers['content-type']);
        served[type] = (served[type] ?? 0) + 1;
        if (declared) expect(type, p.metadata.name).toBe(declared.trim().toLowerCase());
        expect(res.headers['content-disposition'], p.metadata.name).toBe('inline');
        expect(res.headers['x-content-type-options'], p.metadata.name).toBe('nosniff');
        expect(res.headers['content-security-policy'], p.metadata.name).toBe(IconPolicy);
      }
      console.log(`[packagemanifests] corpus icons served by type: ${JSON.stringify(served)}`);
    } finally {
      await remove(Resources.CatalogSource, ns, 'corpus');
      await remove(Builtin.Namespace, '', ns);
      await served.close();
    }
  });
});
