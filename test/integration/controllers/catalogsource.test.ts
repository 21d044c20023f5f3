import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import jsyaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogSource } from '../../../src/apis/operators.js';
import { catalogSourceController } from '../../../src/controllers/catalogsource.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { eventually, freshNamespace } from '../support.js';
import { testCatalogDocs, testCatalogJson } from './fixtures.js';
import {
  catalogSource,
  ConfigMapResource,
  create,
  eventsFor,
  get,
  mergePatch,
  readyCondition,
  remove,
  Resources,
  startTestManager,
} from './support.js';

let manager: RunningManager;

beforeAll(async () => {
  manager = await startTestManager([catalogSourceController]);
});
afterAll(async () => {
  await manager?.stop();
});

type Status = NonNullable<CatalogSource['status']> & { lastSync?: string };

/** A local HTTP server serving the test catalog, that can be switched to failing. */
async function catalogServer(): Promise<{ url: string; failing: { on: boolean }; close(): Promise<void> }> {
  const failing = { on: false };
  const server: Server = createServer((_req, res) => {
    if (failing.on) {
      res.writeHead(503).end('down for maintenance');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/jsonl' }).end(testCatalogJson);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v1/all`,
    failing,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('CatalogSource controller', () => {
  it('a configmap source whose ConfigMap holds FBC documents becomes READY and is stored', async () => {
    const ns = await freshNamespace('catsrc');
    const yamlDocs = testCatalogDocs.map((d) => jsyaml.dump(d)).join('---\n');
    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'catalog' },
      data: { 'catalog.yaml': yamlDocs },
    } as never);
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'cm', { sourceType: 'configmap', configMap: 'catalog' }),
    );

    const cs = await eventually('the CatalogSource to be READY', async () => {
      const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'cm');
      return c?.status?.connectionState?.lastObservedState === 'READY' ? c : undefined;
    });
    const status = cs.status as Status;
    expect(readyCondition(cs)).toMatchObject({ status: 'True', reason: 'Synced' });
    expect(status.lastSync).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(status.configMapReference).toMatchObject({ name: 'catalog', namespace: ns });
    const snapshot = manager.ctx.catalogs.get({ namespace: ns, name: 'cm' });
    expect(snapshot?.config.packages.map((p) => p.name).sort()).toEqual(['bar', 'baz', 'foo', 'qux']);
    expect(snapshot?.digest).toMatch(/^sha256:/);
    expect(manager.ctx.catalogs.health({ namespace: ns, name: 'cm' })?.healthy).toBe(true);
    const events = await eventsFor(ns, 'cm');
    expect(events.map((e) => e.reason)).toContain('CatalogSynced');
  });

  it('a change to a configmap source’s ConfigMap reaches the store in seconds, not at the next poll', async () => {
    const ns = await freshNamespace('catsrc');
    const withoutQux = testCatalogDocs.filter((d) => JSON.stringify(d).indexOf('"qux') === -1);
    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'catalog' },
      data: { 'catalog.json': withoutQux.map((d) => JSON.stringify(d)).join('\n') },
    } as never);
    await create(
      Resources.CatalogSource,
      ns,
      // Polled only hourly: what reaches the store within the test came through the watch.
      catalogSource(ns, 'watched', {
        sourceType: 'configmap',
        configMap: 'catalog',
        updateStrategy: { registryPoll: { interval: '1h' } },
      }),
    );
    const ref = { namespace: ns, name: 'watched' };
    const packages = () =>
      manager.ctx.catalogs
        .get(ref)
        ?.config.packages.map((p) => p.name)
        .sort();
    await eventually('the first content', async () => (packages()?.length === 3 ? true : undefined));
    expect(packages()).toEqual(['bar', 'baz', 'foo']);

    const changed = Date.now();
    await mergePatch(ConfigMapResource, ns, 'catalog', { data: { 'catalog.json': testCatalogJson } });
    await eventually(
      'the new package in the store',
      async () => (packages()?.includes('qux') ? true : undefined),
      15_000,
    );
    console.log(`configmap catalog change to the store: ${Date.now() - changed} ms`);
  });

  it('a configmap source naming a missing ConfigMap says so, and becomes READY once it exists', async () => {
    const ns = await freshNamespace('catsrc');
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'late', {
        sourceType: 'configmap',
        configMap: 'later',
        updateStrategy: { registryPoll: { interval: '1s' } },
      }),
    );
    const failing = await eventually('a ConfigMapError', async () => {
      const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'late');
      return readyCondition(c)?.status === 'False' ? c : undefined;
    });
    expect(readyCondition(failing)).toMatchObject({ reason: 'ConfigMapError' });
    expect(readyCondition(failing)?.message).toContain(`ConfigMap ${ns}/later`);
    expect(failing.status?.connectionState?.lastObservedState).toBe('TRANSIENT_FAILURE');

    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'later' },
      data: { a: testCatalogJson },
    } as never);
    const fixed = await eventually('READY after the ConfigMap appears', async () => {
      const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'late');
      return readyCondition(c)?.status === 'True' ? c : undefined;
    });
    expect(fixed.status?.connectionState?.lastObservedState).toBe('READY');
    expect(fixed.status?.reason).toBeUndefined();
  });

  it('an http source becomes READY, keeps its content while the server fails, and recovers', async () => {
    const ns = await freshNamespace('catsrc');
    const server = await catalogServer();
    try {
      await create(
        Resources.CatalogSource,
        ns,
        catalogSource(ns, 'web', {
          sourceType: 'http',
          address: server.url,
          updateStrategy: { registryPoll: { interval: '1s' } },
        }),
      );
      const cs = await eventually('the http CatalogSource to be READY', async () => {
        const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'web');
        return c?.status?.connectionState?.lastObservedState === 'READY' ? c : undefined;
      });
      expect(cs.status?.connectionState?.address).toBe(server.url);
      const ref = { namespace: ns, name: 'web' };
      const digest = manager.ctx.catalogs.get(ref)?.digest;
      expect(digest).toBeDefined();

      server.failing.on = true;
      const down = await eventually('TRANSIENT_FAILURE while the server fails', async () => {
        const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'web');
        return c?.status?.connectionState?.lastObservedState === 'TRANSIENT_FAILURE' ? c : undefined;
      });
      expect(readyCondition(down)).toMatchObject({ status: 'False', reason: 'RegistryServerError' });
      expect(readyCondition(down)?.message).toContain('HTTP 503');
      expect(down.status?.reason).toBe('RegistryServerError');
      // The last good content stays in use, marked unhealthy.
      expect(manager.ctx.catalogs.get(ref)?.digest).toBe(digest);
      expect(manager.ctx.catalogs.health(ref)?.healthy).toBe(false);
      expect(
        (await eventsFor(ns, 'web')).some((e) => e.type === 'Warning' && e.reason === 'RegistryServerError'),
      ).toBe(true);

      server.failing.on = false;
      const back = await eventually('READY again', async () => {
        const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'web');
        return readyCondition(c)?.status === 'True' ? c : undefined;
      });
      expect(back.status?.message).toBeUndefined();
      expect(manager.ctx.catalogs.health(ref)?.healthy).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('an http source polls with If-None-Match: an unchanged catalog is answered 304 and stays READY', async () => {
    const ns = await freshNamespace('catsrc');
    const etag = '"v1"';
    const seen: { conditional: boolean; status: number }[] = [];
    const server: Server = createServer((req, res) => {
      const conditional = req.headers['if-none-match'] === etag;
      seen.push({ conditional, status: conditional ? 304 : 200 });
      if (conditional) res.writeHead(304, { ETag: etag }).end();
      else res.writeHead(200, { ETag: etag, 'Content-Type': 'application/json' }).end(testCatalogJson);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      await create(
        Resources.CatalogSource,
        ns,
        catalogSource(ns, 'tagged', {
          sourceType: 'http',
          address: url,
          updateStrategy: { registryPoll: { interval: '1s' } },
        }),
      );
      const ref = { namespace: ns, name: 'tagged' };
      await eventually('three polls after the first', async () => (seen.length >= 4 ? true : undefined));
      expect(seen[0]).toEqual({ conditional: false, status: 200 });
      expect(seen.slice(1, 4)).toEqual(Array(3).fill({ conditional: true, status: 304 }));
      const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'tagged');
      expect(readyCondition(c)?.status).toBe('True');
      expect(manager.ctx.catalogs.get(ref)?.config.packages.map((p) => p.name)).toEqual(
        JSON.parse(`[${testCatalogJson.split('\n').join(',')}]`)
          .filter((d: { schema: string }) => d.schema === 'olm.package')
          .map((d: { name: string }) => d.name),
      );
    } finally {
      await new Promise((r) => server.close(() => r(undefined)));
    }
  });

  it('an invalid catalog is reported with the problems that make it invalid', async () => {
    const ns = await freshNamespace('catsrc');
    const broken = testCatalogJson.replace('"defaultChannel":"stable"', '"defaultChannel":"nightly"');
    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'broken' },
      data: { 'catalog.json': broken },
    } as never);
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'broken', { sourceType: 'configmap', configMap: 'broken' }),
    );
    const cs = await eventually('an InvalidCatalog condition', async () => {
      const c = await get<CatalogSource>(Resources.CatalogSource, ns, 'broken');
      return readyCondition(c)?.reason === 'InvalidCatalog' ? c : undefined;
    });
    expect(readyCondition(cs)?.message).toContain('nightly');
    expect(manager.ctx.catalogs.get({ namespace: ns, name: 'broken' })).toBeUndefined();
  });

  it('deleting a CatalogSource drops its content from the store', async () => {
    const ns = await freshNamespace('catsrc');
    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { x: testCatalogJson },
    } as never);
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'gone', { sourceType: 'configmap', configMap: 'c' }),
    );
    const ref = { namespace: ns, name: 'gone' };
    await eventually('content in the store', async () => manager.ctx.catalogs.get(ref));
    await remove(Resources.CatalogSource, ns, 'gone');
    await eventually('content dropped', async () => (manager.ctx.catalogs.get(ref) ? undefined : true));
    expect(manager.ctx.catalogs.health(ref)).toBeUndefined();
  });
});
