import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import jsyaml from 'js-yaml';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { CatalogSource, OperatorGroup, Subscription } from '../../../src/apis/operators.js';
import {
  applyDefaults,
  applyWebViewer,
  catalogConfigMapData,
  WebViewer,
} from '../../../src/cli/commands/start.js';
import { type RunningManager, startManager } from '../../../src/manager/manager.js';
import { eventually, freshNamespace } from '../support.js';
import { testCatalogJson } from './fixtures.js';
import { ConfigMapResource, catalogSource, client, create, get, Resources, subscription } from './support.js';

const lines: Record<string, unknown>[] = [];
let manager: RunningManager;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  manager = await startManager({
    kubeconfig: inject('kubeconfig'),
    installCrds: true,
    metricsAddr: '127.0.0.1:0',
    logger: pino({ level: 'debug' }, sink),
  });
});
afterAll(async () => {
  await manager?.stop();
});

describe('manager', () => {
  it('serves /healthz and /readyz once the informers have synced', async () => {
    expect(manager.ready()).toBe(true);
    const health = await fetch(`${manager.url}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${manager.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toBe('ok\n');
    expect((await fetch(`${manager.url}/nothing`)).status).toBe(404);
  });

  it('counts reconciles and resolutions in /metrics, and logs each reconcile with its own child logger', async () => {
    const ns = await freshNamespace('mgr');
    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { c: testCatalogJson },
    } as never);
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'test', { sourceType: 'configmap', configMap: 'c' }),
    );
    await create(Resources.Subscription, ns, subscription(ns, 'qux', { name: 'qux', source: 'test' }));
    await eventually('the Subscription to be resolved', async () => {
      const s = await get<Subscription>(Resources.Subscription, ns, 'qux');
      return s?.status?.currentCSV ? s : undefined;
    });

    const text = await (await fetch(`${manager.url}/metrics`)).text();
    expect(text).toMatch(/bosun_reconcile_total\{controller="subscription",outcome="success"\} [1-9]/);
    expect(text).toMatch(/bosun_reconcile_total\{controller="catalogsource",outcome="requeue"\} [1-9]/);
    expect(text).toMatch(/bosun_resolution_duration_seconds_count [1-9]/);
    expect(text).toMatch(/bosun_reconcile_duration_seconds_bucket\{le="[^"]+",controller="subscription"\}/);
    expect(text).toContain('bosun_workqueue_depth{controller="installplan"}');
    expect(text).toContain('bosun_reconcile_errors_total');
    expect(text).toMatch(/process_resident_memory_bytes \d+/);

    const reconcileLines = lines.filter((l) => l.namespace === ns && l.reconcileID);
    const kinds = new Set(reconcileLines.map((l) => l.kind));
    expect(kinds).toContain('Subscription');
    expect(kinds).toContain('CatalogSource');
    const created = reconcileLines.find((l) => l.msg === 'installplan created');
    expect(created).toMatchObject({ kind: 'Subscription', namespace: ns, csv: 'qux.v1.0.0' });
    // A reconcile's lines share its ID; different reconciles have different IDs.
    expect(new Set(reconcileLines.map((l) => l.reconcileID)).size).toBeGreaterThan(1);
  });

  it("bosun start's defaults: catalogs/ as the global CatalogSource olm/bosun-catalog, and the global OperatorGroup", async () => {
    await applyDefaults(manager.ctx.applier, fileURLToPath(new URL('../../../catalogs', import.meta.url)));
    const cs = await eventually('olm/bosun-catalog to be READY', async () => {
      const c = await get<CatalogSource>(Resources.CatalogSource, 'olm', 'bosun-catalog');
      return c?.status?.connectionState?.lastObservedState === 'READY' ? c : undefined;
    });
    expect(cs.spec).toMatchObject({ sourceType: 'configmap', configMap: 'bosun-catalog' });
    const packages = manager.ctx.catalogs.get({ namespace: 'olm', name: 'bosun-catalog' })?.config.packages;
    expect(packages?.map((p) => p.name)).toContain('bosun-sample');
    // Visible from any namespace, as the global catalog namespace's catalogs are.
    expect(manager.ctx.catalogs.visibleFrom('anywhere').map((c) => c.ref.name)).toContain('bosun-catalog');
    const og = await get<OperatorGroup>(Resources.OperatorGroup, 'operators', 'global-operators');
    // Neither targetNamespaces nor a selector: every namespace, as OLM's global-operators.
    expect(og?.spec?.targetNamespaces).toBeUndefined();
    expect(og?.spec?.selector).toBeUndefined();
    // The example Subscription names that catalog and a package in it.
    const example = jsyaml.load(
      await readFile(
        new URL('../../../deploy/examples/subscription-bosun-sample.yaml', import.meta.url),
        'utf8',
      ),
    ) as Subscription;
    expect(example.spec).toMatchObject({
      source: 'bosun-catalog',
      sourceNamespace: 'olm',
      name: 'bosun-sample',
    });
    expect(example.metadata.namespace).toBe('operators');
  });

  it("bosun start's web viewer: its token shows the web catalog the cluster's namespaced catalogs", async () => {
    const ns = await freshNamespace('viewer');
    // The sample catalog: the web catalog shows packages whose channel heads are whole operators.
    const data = await catalogConfigMapData(fileURLToPath(new URL('../../../catalogs', import.meta.url)));
    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data,
    } as never);
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'team', { sourceType: 'configmap', configMap: 'c' }),
    );
    await eventually('the namespaced catalog to be READY', async () => {
      const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'team');
      return c?.status?.connectionState?.lastObservedState === 'READY' ? c : undefined;
    });
    await applyWebViewer(manager.ctx.applier);
    const issued = await client().request<{ status: { token: string } }>({
      method: 'POST',
      path: `/api/v1/namespaces/${WebViewer.namespace}/serviceaccounts/${WebViewer.name}/token`,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      },
    });
    type Index = { viewer?: { user?: string }; catalogs: { id: string; namespace: string }[] };
    const index = async (headers: Record<string, string> = {}) =>
      (await (await fetch(`${manager.url}/api/index`, { headers })).json()) as Index;
    const anonymous = await index();
    // RBAC takes a moment to reach the API server's authorizer, and the manager keeps an answer some seconds.
    const signedIn = await eventually('the viewer to see the namespaced catalog', async () => {
      const i = await index({ Authorization: `Bearer ${issued.status.token}` });
      return i.catalogs.some((c) => c.id === `${ns}/team`) ? i : undefined;
    });
    expect(signedIn.viewer?.user).toBe(`system:serviceaccount:${WebViewer.namespace}:${WebViewer.name}`);
    // A namespaced catalog: hidden from anyone, shown to the viewer.
    const ids = (i: Index) => i.catalogs.map((c) => c.id);
    expect(ids(anonymous)).not.toContain(`${ns}/team`);
    expect(ids(signedIn)).toContain(`${ns}/team`);
  });

  it('refuses to start without a cluster to talk to, saying what to do', async () => {
    await expect(startManager({ kubeconfig: '/nonexistent/kubeconfig', metricsAddr: null })).rejects.toThrow(
      /kubeconfig \/nonexistent\/kubeconfig does not exist.*bosun cluster up/,
    );
  });
});
