/**
 * How `bosun migrate subscription` reads a ClusterCatalog's content from the address in its
 * status, which whoever may write that status chooses: only catalogd's path for that catalog, over
 * http(s), is followed (no other scheme, host path, credentials or query), no redirect is
 * followed, an answer past the size cap or that is no JSON stream is an error naming the
 * catalog's URL, and only documents of the package asked for are read. A real local HTTP server
 * answers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterCatalog } from '../../../src/apis/olmv1.js';
import { MaxAnswerBytes, metasUrl, readCatalogOffers } from '../../../src/cli/migrate-catalogs.js';

const catalog = (name: string, base: string | undefined, serving = true): ClusterCatalog => ({
  apiVersion: 'olm.operatorframework.io/v1',
  kind: 'ClusterCatalog',
  metadata: { name, labels: { team: 'a' } },
  spec: { source: { type: 'Image', image: { ref: 'x' } }, priority: 2 },
  status: {
    conditions: [
      {
        type: 'Serving',
        status: serving ? 'True' : 'False',
        reason: 'Available',
        message: '',
        lastTransitionTime: '',
      },
    ],
    ...(base !== undefined ? { urls: { base } } : {}),
  },
});

describe('a ClusterCatalog’s status.urls.base', () => {
  it('is followed to catalogd’s metas endpoint for that catalog', () => {
    const r = metasUrl(
      catalog('community', 'http://bosun.olm.svc:8080/catalogs/community'),
      'olm.bundle',
      'etcd',
    );
    expect('url' in r && r.url.href).toBe(
      'http://bosun.olm.svc:8080/catalogs/community/api/v1/metas?schema=olm.bundle&package=etcd',
    );
    const slash = metasUrl(catalog('community', 'https://h/x/catalogs/community/'), 'olm.channel', 'a&b=c');
    expect('url' in slash && slash.url.href).toBe(
      'https://h/x/catalogs/community/api/v1/metas?schema=olm.channel&package=a%26b%3Dc',
    );
  });

  it.each([
    [undefined, 'status.urls.base is not set'],
    ['', 'status.urls.base is not set'],
    ['not a url', 'is not a URL'],
    ['file:///etc/catalogs/community', 'is not an http(s) URL'],
    ['ftp://h/catalogs/community', 'is not an http(s) URL'],
    ['data:text/plain,/catalogs/community', 'is not an http(s) URL'],
    ['javascript:alert(1)//catalogs/community', 'is not an http(s) URL'],
    ['http://user:pw@h/catalogs/community', 'has credentials, a query or a fragment'],
    ['http://h/catalogs/community?x=1', 'has credentials, a query or a fragment'],
    ['http://h/catalogs/community#f', 'has credentials, a query or a fragment'],
    ['http://169.254.169.254/latest/meta-data', "is not catalogd's address for catalog community"],
    ['http://h/catalogs/other', "is not catalogd's address for catalog community"],
    ['http://h/catalogs/community/../../admin', "is not catalogd's address for catalog community"],
    ['http://h/catalogs/community/api/v1/all', "is not catalogd's address for catalog community"],
    ['http://h/catalogs/xcommunity', "is not catalogd's address for catalog community"],
  ])('%j is not followed', (base, message) => {
    const r = metasUrl(catalog('community', base), 'olm.bundle', 'etcd');
    expect('error' in r && r.error).toContain(message);
  });
});

describe('reading what a catalog serves', () => {
  let server: Server;
  let base: string;
  const answers = new Map<string, (res: import('node:http').ServerResponse) => void>();
  const asked: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      asked.push(req.url ?? '');
      const name = (req.url ?? '').split('/')[2] ?? '';
      const answer = answers.get(name);
      if (answer) answer(res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalogs`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const docs = (...d: object[]) => d.map((x) => JSON.stringify(x)).join('\n');
  const serve = (name: string, body: (schema: string) => string) =>
    answers.set(name, (res) =>
      res.end(body(res.req.url?.includes('olm.bundle') ? 'olm.bundle' : 'olm.channel')),
    );

  it('reads the bundles and channels of the package, and nothing of another package or schema', async () => {
    serve('good', (schema) =>
      schema === 'olm.bundle'
        ? docs(
            {
              schema: 'olm.bundle',
              package: 'etcd',
              name: 'etcd.v1',
              properties: [{ type: 'olm.gvk.required', value: { k: 1 } }, 'junk'],
            },
            { schema: 'olm.bundle', package: 'other', name: 'other.v1', properties: [] },
            { schema: 'olm.channel', package: 'etcd', name: 'smuggled', entries: [] },
          )
        : docs({ schema: 'olm.channel', package: 'etcd', name: 'stable', entries: [{ name: 'etcd.v1' }, 7] }),
    );
    const [offer] = await readCatalogOffers([catalog('good', `${base}/good`)], 'etcd');
    expect(offer).toEqual({
      name: 'good',
      labels: { team: 'a' },
      priority: 2,
      serving: true,
      bundles: [{ name: 'etcd.v1', properties: [{ type: 'olm.gvk.required', value: { k: 1 } }] }],
      channels: [{ name: 'stable', entries: [{ name: 'etcd.v1' }] }],
    });
  });

  it('does not ask a catalog that is not serving', async () => {
    asked.length = 0;
    const [offer] = await readCatalogOffers([catalog('idle', `${base}/idle`, false)], 'etcd');
    expect(offer).toMatchObject({ serving: false, bundles: [], channels: [] });
    expect(offer?.error).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it.each<[string, (res: import('node:http').ServerResponse) => void, string]>([
    [
      'a redirect to another host',
      (res) =>
        res
          .writeHead(302, {
            location: `${base.replace('127.0.0.1', 'localhost')}/good/api/v1/metas?schema=olm.bundle&package=etcd`,
          })
          .end(),
      'redirect',
    ],
    [
      'a redirect to the same server',
      (res) =>
        res.writeHead(307, { location: '/catalogs/good/api/v1/metas?schema=olm.bundle&package=etcd' }).end(),
      'redirect',
    ],
    ['an HTTP error', (res) => res.writeHead(500).end('boom'), 'HTTP 500'],
    ['not JSON', (res) => res.end('<html>hello</html>'), 'metas'],
    ['a truncated document', (res) => res.end('{"schema":"olm.bundle","name":'), 'metas'],
    [
      'an answer past the cap, in one piece',
      (res) => res.end(Buffer.alloc(MaxAnswerBytes + 1, 0x20)),
      `larger than ${MaxAnswerBytes} bytes`,
    ],
    [
      'an answer past the cap, streamed without a length',
      (res) => {
        const chunk = Buffer.alloc(2 ** 20, 0x20);
        let sent = 0;
        const more = () => {
          while (sent <= MaxAnswerBytes) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        res.on('error', () => undefined);
        more();
      },
      `larger than ${MaxAnswerBytes} bytes`,
    ],
  ])('%s is an error naming the URL, and nothing of it is read', async (_, answer, message) => {
    answers.set('bad', answer);
    const [offer] = await readCatalogOffers([catalog('bad', `${base}/bad`)], 'etcd');
    expect(offer?.error).toContain(message);
    expect(offer?.error).toContain(`${base}/bad/api/v1/metas?schema=olm.bundle&package=etcd`);
    expect(offer?.bundles).toEqual([]);
  });

  it('an address it will not follow is an error, and no request is sent', async () => {
    asked.length = 0;
    const [offer] = await readCatalogOffers([catalog('bad', `${base}/other`)], 'etcd');
    expect(offer?.error).toContain("is not catalogd's address for catalog bad");
    expect(asked).toEqual([]);
  });
});
