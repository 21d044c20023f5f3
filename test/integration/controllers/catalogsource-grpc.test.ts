/**
 * CatalogSources of sourceType grpc with `spec.address`, read by a running manager from opm
 * v1.73.0's own `opm serve` (test/support/opm-serve.ts; skipped, saying why, when opm cannot be
 * built here): the catalog becomes READY and installs, a poll of the same catalog loads nothing,
 * a server that goes away keeps the last content in use. An address is only ever dialled as a
 * TCP host and port: no CatalogSource can make the manager open a Unix socket, ask another DNS
 * server or spread over a host list, and a port that is no registry is refused as such.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Server } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import { loadCatalog } from '../../../src/catalog/load.js';
import { payloadOf } from '../../../src/catalog/payloads.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import type { GoProgram } from '../../support/go-tool.js';
import { opmBinary } from '../../support/opm.js';
import { type OpmServer, startOpmServe } from '../../support/opm-serve.js';
import { tempDir } from '../../support/temp-dir.js';
import { repo } from '../../unit/cli/run-bosun.js';
import { eventually, freshNamespace } from '../support.js';
import { sampleCatalogsData, uniqueGroup } from './operator-support.js';
import {
  catalogSource,
  catalogSourceWhen,
  create,
  eventsFor,
  get,
  readyCondition,
  Resources,
  startTestManager,
  subscription,
} from './support.js';

const samples = join(repo, 'catalogs/bosun-samples');

let manager: RunningManager;
let opm: GoProgram = { ok: false, why: 'not looked for yet' };

beforeAll(async () => {
  opm = await opmBinary();
  manager = await startTestManager();
});
afterAll(async () => {
  await manager?.stop();
});

async function opmServe(ctx: TestContext, dir: string): Promise<OpmServer> {
  if (!opm.ok) {
    console.warn(`the opm serve CatalogSource test is skipped: ${opm.why}`);
    ctx.skip();
  }
  return startOpmServe(opm.ok ? opm.path : '', dir);
}

/** catalogs/bosun-samples written to a folder of the test's, its sample API group moved to `group`. */
async function samplesInGroup(group: string): Promise<string> {
  const dir = await tempDir('grpc-samples-');
  for (const [name, text] of Object.entries(await sampleCatalogsData(group)))
    await writeFile(join(dir, name), text);
  return dir;
}

describe('a CatalogSource of sourceType grpc with spec.address', () => {
  it('reads the catalog opm serve serves, installs from it, loads it once however often it polls, and keeps it while the server is gone', async (ctx) => {
    // The samples with the operator's API in a group of this test's own: the test control plane
    // is shared, and another test installing an older bosun-sample must not meet this newer CRD.
    const server = await opmServe(ctx, await samplesInGroup(uniqueGroup()));
    let stopped = false;
    try {
      const ns = await freshNamespace('grpc-catsrc');
      await create(Resources.OperatorGroup, ns, {
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        metadata: { name: 'og', namespace: ns },
        spec: { targetNamespaces: [ns] },
      });
      await create(
        Resources.CatalogSource,
        ns,
        catalogSource(ns, 'registry', {
          sourceType: 'grpc',
          address: server.address,
          updateStrategy: { registryPoll: { interval: '1s' } },
        }),
      );
      const cs = await catalogSourceWhen(
        ns,
        'registry',
        (c) => c?.status === 'True',
        'the grpc CatalogSource to be READY',
      );
      expect(cs.status?.connectionState).toMatchObject({
        lastObservedState: 'READY',
        address: server.address,
      });
      const ref = { namespace: ns, name: 'registry' };
      const held = manager.ctx.catalogs.get(ref)!;
      const local = await loadCatalog(samples);
      if (!local.ok) throw new Error(JSON.stringify(local.errors));
      const names = (docs: { name: string }[]) => docs.map((d) => d.name).sort();
      expect(names(held.config.packages)).toEqual(names(local.value.packages));
      expect(names(held.config.bundles)).toEqual(names(local.value.bundles));
      // Kept as any fetched catalog: the manifests stay in the spooled file until installed.
      const stored = held.config.bundles.flatMap((b) => b.properties).filter((p) => payloadOf(p.value));
      expect(stored.length).toBeGreaterThan(0);
      expect(stored.every((p) => payloadOf(p.value)!.storedIn === held.payloadFile)).toBe(true);

      await create(
        Resources.Subscription,
        ns,
        subscription(ns, 'dashboard', {
          name: 'bosun-sample-dashboard',
          source: 'registry',
          channel: 'stable',
        }),
      );
      for (const csv of ['bosun-sample-dashboard.v0.2.0', 'bosun-sample.v0.2.1'])
        await eventually(
          `CSV ${csv} to be Succeeded`,
          async () =>
            (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csv))?.status?.phase ===
              'Succeeded' || undefined,
          120_000,
        );

      // Every second a poll; the same catalog each time is loaded (and announced) once.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(manager.ctx.catalogs.get(ref)).toBe(held);
      const synced = (await eventsFor(ns, 'registry')).filter((e) => e.reason === 'CatalogSynced');
      expect(synced).toHaveLength(1);

      await server.stop();
      stopped = true;
      const down = await catalogSourceWhen(
        ns,
        'registry',
        (c) => c?.status === 'False',
        'the source to fail',
      );
      expect(readyCondition(down)).toMatchObject({ reason: 'RegistryServerError' });
      expect(readyCondition(down)?.message).toMatch(
        new RegExp(`^registry ${RegExp.escape(server.address)}: `),
      );
      expect(down.status?.reason).toBe('RegistryServerError');
      expect(down.status?.connectionState?.lastObservedState).toBe('TRANSIENT_FAILURE');
      expect(manager.ctx.catalogs.get(ref)?.digest).toBe(held.digest);
      expect(manager.ctx.catalogs.health(ref)?.healthy).toBe(false);
    } finally {
      if (!stopped) await server.stop();
    }
  });

  it('is dialled only as a TCP host and port: a socket, another DNS server, a host list or a URL is refused and never dialled', async () => {
    const dir = await tempDir('bosun-grpc-address-');
    const socket = join(dir, 'registry.sock');
    let connections = 0;
    const listener: Server = createTcpServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((done) => listener.listen(socket, done));
    try {
      const ns = await freshNamespace('grpc-address');
      const addresses = [
        `unix:${socket}`,
        `unix://${socket}`,
        'unix-abstract:bosun-registry',
        `passthrough:///unix:${socket}`,
        'dns://127.0.0.1:53/registry.olm.svc:50051',
        'ipv4:127.0.0.1:50051,127.0.0.2:50051',
        'http://127.0.0.1:50051/',
        'registry.olm.svc',
        '',
      ];
      for (const [i, address] of addresses.entries())
        await create(
          Resources.CatalogSource,
          ns,
          catalogSource(ns, `a${i}`, { sourceType: 'grpc', address }),
        );
      for (const [i, address] of addresses.entries()) {
        const cs = await catalogSourceWhen(
          ns,
          `a${i}`,
          (c) => c?.status === 'False',
          `a${i} (${address}) to be refused`,
        );
        expect(readyCondition(cs), address).toMatchObject({ reason: 'SpecInvalidError' });
        expect(readyCondition(cs)?.message, address).toMatch(
          /^spec\.address: ".*" is not a registry address: /,
        );
        expect(cs.status?.reason, address).toBe('SpecInvalidError');
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise((done) => listener.close(done));
    }
  });

  it('refuses a port that answers, but not as a registry, naming the address', async () => {
    const http = createHttpServer((_req, res) => res.end('<html>not gRPC</html>'));
    await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
    const address = `127.0.0.1:${(http.address() as { port: number }).port}`;
    try {
      const ns = await freshNamespace('grpc-notregistry');
      await create(Resources.CatalogSource, ns, catalogSource(ns, 'web', { sourceType: 'grpc', address }));
      const cs = await catalogSourceWhen(ns, 'web', (c) => c?.status === 'False', 'the source to be refused');
      expect(readyCondition(cs)).toMatchObject({ reason: 'RegistryServerError' });
      expect(readyCondition(cs)?.message).toMatch(
        new RegExp(`^registry ${RegExp.escape(address)}: health check: `),
      );
      expect(cs.status?.connectionState).toMatchObject({ lastObservedState: 'TRANSIENT_FAILURE', address });
      expect(manager.ctx.catalogs.get({ namespace: ns, name: 'web' })).toBeUndefined();
    } finally {
      http.closeAllConnections();
      await new Promise((done) => http.close(done));
    }
  });
});
