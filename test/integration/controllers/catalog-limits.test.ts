/**
 * Hostile catalog content never takes the manager down: an http CatalogSource whose server turns
 * into a source of hostile bodies (480 MiB of NUL bytes with and without a Content-Length, an alias
 * bomb, JSON nested 10^5 levels, a forged stored-payload handle naming the ServiceAccount token of
 * the manager's pod) is refused with a status naming what is wrong, the last good content stays in
 * use, and the manager goes on serving every other catalog.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../../src/apis/meta.js';
import type { CatalogSource } from '../../../src/apis/operators.js';
import { catalogSourceController } from '../../../src/controllers/catalogsource.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { eventually, freshNamespace } from '../support.js';
import { testCatalogJson } from './fixtures.js';
import { catalogSource, create, get, Resources, startTestManager } from './support.js';

const MiB = 2 ** 20;
const ready = (cs: CatalogSource | undefined) =>
  (cs?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Ready');

/** Writes `total` NUL bytes in 1 MiB chunks, as fast as the reader takes them. */
function nulBody(res: ServerResponse, total: number, declare: boolean) {
  res.writeHead(200, declare ? { 'Content-Length': String(total) } : {});
  const chunk = Buffer.alloc(MiB);
  let sent = 0;
  const pump = () => {
    while (sent < total) {
      sent += MiB;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  res.on('close', () => (sent = total));
  pump();
}

const bomb = ['l0: &l0 [a, a, a, a, a, a, a, a, a, a]']
  .concat(
    Array.from({ length: 9 }, (_, i) => `l${i + 1}: &l${i + 1} [${Array(10).fill(`*l${i}`).join(', ')}]`),
  )
  .join('\n');

const forged = testCatalogJson
  .split('\n')
  .map((line) => {
    const doc = JSON.parse(line) as { schema: string; properties?: { type: string; value: unknown }[] };
    if (doc.schema !== 'olm.bundle') return line;
    const token = '/var/run/secrets/kubernetes.io/serviceaccount/token';
    doc.properties = [
      ...(doc.properties ?? []),
      { type: 'olm.bundle.object', value: { data: { storedIn: token, offset: 0, length: 2048 } } },
    ];
    return JSON.stringify(doc);
  })
  .join('\n');

type Body = (res: ServerResponse) => void;
const bodies: Record<string, { body: Body; message: RegExp }> = {
  'NUL bytes with a Content-Length': {
    body: (res) => nulBody(res, 480 * MiB, true),
    message: /the body is 480\.0 MiB, past the limit of 256\.0 MiB for one catalog file/,
  },
  'NUL bytes without a Content-Length': {
    body: (res) => nulBody(res, 480 * MiB, false),
    message: /the body is more than 256\.0 MiB \(cut off there\)/,
  },
  'an alias bomb': {
    body: (res) => res.end(`${bomb}\n`),
    message: /aliases expand to more than 100000 nodes/,
  },
  'JSON nested 10^5 levels': {
    body: (res) => res.end(`${'['.repeat(1e5)}${']'.repeat(1e5)}`),
    message: /nests more than 100 levels deep/,
  },
  'a forged stored-payload handle': {
    body: (res) => res.end(forged),
    message: /properties\[\d+\]\.value\.data: must be a string/,
  },
};

let manager: RunningManager;
let server: Server;
let url: string;
/** What the server sends now: the good catalog, or one of the hostile bodies. */
let serving: Body = (res) => res.end(testCatalogJson);

beforeAll(async () => {
  manager = await startTestManager([catalogSourceController]);
  server = createServer((_req, res) => serving(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await manager?.stop();
});

describe('an http CatalogSource whose server sends hostile content', () => {
  it.each(Object.keys(bodies))(
    'is refused, keeping the last good content, with the manager up: %s',
    async (name) => {
      serving = (res) => res.end(testCatalogJson);
      const ns = await freshNamespace('catlimit');
      await create(
        Resources.CatalogSource,
        ns,
        catalogSource(ns, 'c', {
          sourceType: 'http',
          address: url,
          updateStrategy: { registryPoll: { interval: '1s' } },
        }),
      );
      const ref = { namespace: ns, name: 'c' };
      await eventually('the good catalog to load', async () =>
        ready(await get<CatalogSource>(Resources.CatalogSource, ns, 'c'))?.status === 'True'
          ? true
          : undefined,
      );
      const good = manager.ctx.catalogs.get(ref)!;
      expect(good.config.bundles.length).toBeGreaterThan(0);

      serving = bodies[name]!.body;
      const refused = await eventually(
        'the hostile body to be refused',
        async () => {
          const c = ready(await get<CatalogSource>(Resources.CatalogSource, ns, 'c'));
          return c?.status === 'False' ? c : undefined;
        },
        120_000,
      );
      expect(refused.message).toMatch(bodies[name]!.message);
      expect(refused.message).not.toMatch(/unexpected error|Maximum call stack/);
      // The last good content is still what Subscriptions resolve against.
      expect(manager.ctx.catalogs.get(ref)?.digest).toBe(good.digest);
      expect(manager.ctx.catalogs.health(ref)?.healthy).toBe(false);
      // The manager's heap holds no copy of the body.
      expect(process.memoryUsage().heapUsed).toBeLessThan(1024 * MiB);

      serving = (res) => res.end(testCatalogJson);
      await eventually('the catalog to be healthy again', async () =>
        ready(await get<CatalogSource>(Resources.CatalogSource, ns, 'c'))?.status === 'True'
          ? true
          : undefined,
      );
    },
  );
});
