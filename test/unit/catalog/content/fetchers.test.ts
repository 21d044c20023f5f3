/**
 * The configmap and http fetchers, each on its own: a CatalogSource in, content or a failure with
 * its reason out; content the store holds already is given back unparsed; what is not kept leaves
 * no file in the spool. The ConfigMap is read through the reader port (a table here; the
 * controller's reader of the cluster is covered by the CatalogSource integration tests), the
 * HTTP body from a server on loopback.
 */
import { readdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CatalogSource } from '../../../../src/apis/operators.js';
import { type ConfigMapRead, configMapFetcher } from '../../../../src/catalog/content/configmap.js';
import { type FetchOutcome, FetchFailureReason } from '../../../../src/catalog/content/fetcher.js';
import { httpFetcher } from '../../../../src/catalog/content/http.js';
import { CatalogSpool } from '../../../../src/catalog/content/spool.js';
import type { CatalogContent } from '../../../../src/catalog/content/store.js';
import { tempDir } from '../../../support/temp-dir.js';

const fbc = [
  { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' },
  { schema: 'olm.channel', package: 'foo', name: 'stable', entries: [{ name: 'foo.v1.0.0' }] },
  {
    schema: 'olm.bundle',
    package: 'foo',
    name: 'foo.v1.0.0',
    image: 'example.com/foo:v1',
    properties: [{ type: 'olm.package', value: { packageName: 'foo', version: '1.0.0' } }],
  },
]
  .map((d) => JSON.stringify(d))
  .join('\n');
const invalid = fbc.replace('"defaultChannel":"stable"', '"defaultChannel":"beta"');

const source = (spec: Partial<CatalogSource['spec']>): CatalogSource => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  metadata: { namespace: 'ns', name: 'cat' },
  spec: { sourceType: 'configmap', ...spec },
});

const never = new AbortController().signal;

function content(outcome: FetchOutcome): CatalogContent {
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.content;
}

let spool: CatalogSpool;
beforeEach(async () => {
  spool = await CatalogSpool.open(await tempDir('bosun-fetchers-'));
});
afterEach(async () => {
  await spool.close();
});
/** The spooled files: only content the store may hold keeps one. */
const spooled = async () => (await readdir(spool.dir)).filter((f) => f !== 'owner');

describe('configMapFetcher', () => {
  const configMap = (data?: Record<string, string>): ConfigMapRead => ({
    ok: true,
    configMap: {
      metadata: { name: 'cm', namespace: 'ns', uid: 'u1', resourceVersion: '7' },
      ...(data ? { data } : {}),
    },
  });
  const fetcher = (answer: ConfigMapRead, asked: string[] = []) =>
    configMapFetcher({
      spool,
      read: async (namespace, name) => {
        asked.push(`${namespace}/${name}`);
        return answer;
      },
    });

  it.each<[string, Partial<CatalogSource['spec']>, ConfigMapRead, FetchFailureReason, string]>([
    [
      'no spec.configMap',
      {},
      configMap({ catalog: fbc }),
      FetchFailureReason.SpecInvalidError,
      'spec.configMap: sourceType configmap needs the name of a ConfigMap in the same namespace',
    ],
    [
      'a ConfigMap that does not exist',
      { configMap: 'cm' },
      { ok: false, notFound: true, message: 'configmaps "cm" not found' },
      FetchFailureReason.ConfigMapError,
      'ConfigMap ns/cm (spec.configMap) does not exist: create it with FBC documents in its data, or fix spec.configMap',
    ],
    [
      'a ConfigMap the API server refuses to give',
      { configMap: 'cm' },
      { ok: false, notFound: false, message: 'Forbidden: configmaps "cm" is forbidden' },
      FetchFailureReason.ConfigMapError,
      'ConfigMap ns/cm: Forbidden: configmaps "cm" is forbidden',
    ],
    [
      'a ConfigMap without data',
      { configMap: 'cm' },
      configMap(),
      FetchFailureReason.ConfigMapError,
      "ConfigMap ns/cm has no data: put the catalog's FBC documents under any key",
    ],
  ])('refuses %s, saying what to fix', async (_, spec, answer, reason, message) => {
    expect(await fetcher(answer).fetch(source(spec), undefined, never)).toEqual({
      ok: false,
      reason,
      message,
    });
    expect(await spooled()).toEqual([]);
  });

  it('refuses data that is not a valid catalog, naming the key, and keeps no file of it', async () => {
    const outcome = await fetcher(configMap({ catalog: invalid })).fetch(
      source({ configMap: 'cm' }),
      undefined,
      never,
    );
    expect(outcome).toMatchObject({ ok: false, reason: FetchFailureReason.InvalidCatalog });
    if (!outcome.ok)
      expect(outcome.message).toMatch(/^ConfigMap ns\/cm is not a valid file-based catalog: .*beta/);
    expect(await spooled()).toEqual([]);
  });

  it('reads the ConfigMap the source names, and gives back held content unparsed', async () => {
    const asked: string[] = [];
    const read = fetcher(configMap({ catalog: fbc }), asked);
    const first = await read.fetch(source({ configMap: 'cm' }), undefined, never);
    expect(first).toMatchObject({
      ok: true,
      configMap: { name: 'cm', namespace: 'ns', uid: 'u1', resourceVersion: '7' },
    });
    const held = content(first);
    expect(held.config.bundles.map((b) => b.name)).toEqual(['foo.v1.0.0']);
    expect(await spooled()).toHaveLength(1);
    // The next poll finds the same bytes: the content held is the answer, and its copy is gone.
    expect(content(await read.fetch(source({ configMap: 'cm' }), held, never))).toBe(held);
    expect(await spooled()).toHaveLength(1);
    expect(asked).toEqual(['ns/cm', 'ns/cm']);
  });
});

describe('httpFetcher', () => {
  let server: Server;
  let url: string;
  let body = fbc;
  let status = 200;
  const requests: IncomingMessage['headers'][] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.headers);
      const etag = `"${body.length}"`;
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304).end();
      res.writeHead(status, { ETag: etag, 'Content-Type': 'application/json' }).end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });
  beforeEach(() => {
    body = fbc;
    status = 200;
    requests.length = 0;
  });

  it.each(['', 'ftp://example.com/catalog', 'file:///etc/passwd', '/catalog.json'])(
    'refuses spec.address %j, which is no http(s) URL',
    async (address) => {
      const outcome = await httpFetcher({ spool }).fetch(
        source({ sourceType: 'http', address }),
        undefined,
        never,
      );
      expect(outcome).toMatchObject({ ok: false, reason: FetchFailureReason.SpecInvalidError });
      if (!outcome.ok)
        expect(outcome.message).toMatch(
          /^spec\.address: sourceType http needs an http:\/\/ or https:\/\/ URL/,
        );
      expect(requests).toEqual([]);
    },
  );

  it('refuses an error status and a body that is not a valid catalog, keeping no file', async () => {
    status = 500;
    expect(
      await httpFetcher({ spool }).fetch(source({ sourceType: 'http', address: url }), undefined, never),
    ).toEqual({
      ok: false,
      reason: FetchFailureReason.RegistryServerError,
      message: `GET ${url}: HTTP 500 Internal Server Error`,
      address: url,
    });
    status = 200;
    body = invalid;
    const outcome = await httpFetcher({ spool }).fetch(
      source({ sourceType: 'http', address: url }),
      undefined,
      never,
    );
    expect(outcome).toMatchObject({ ok: false, reason: FetchFailureReason.InvalidCatalog, address: url });
    expect(await spooled()).toEqual([]);
  });

  it('asks with the ETag of the content the store holds, and keeps that content on 304', async () => {
    const fetcher = httpFetcher({ spool });
    const cs = source({ sourceType: 'http', address: url });
    const held = content(await fetcher.fetch(cs, undefined, never));
    expect(content(await fetcher.fetch(cs, held, never))).toBe(held);
    expect(requests.map((h) => h['if-none-match'])).toEqual([undefined, `"${fbc.length}"`]);
    // Content the store no longer holds is asked for whole.
    content(await fetcher.fetch(cs, undefined, never));
    expect(requests[2]!['if-none-match']).toBeUndefined();
    expect(await spooled()).toHaveLength(2);
  });

  it('keeps its ETags to itself: another manager’s fetcher asks for the whole body', async () => {
    const cs = source({ sourceType: 'http', address: url });
    const held = content(await httpFetcher({ spool }).fetch(cs, undefined, never));
    const other = await httpFetcher({ spool }).fetch(cs, held, never);
    expect(requests.map((h) => h['if-none-match'])).toEqual([undefined, undefined]);
    // The same bytes again: the held content stands and the new copy is removed.
    expect(content(other)).toBe(held);
    expect(await spooled()).toHaveLength(1);
  });

  it('stops when its signal does', async () => {
    const stop = new AbortController();
    stop.abort(new Error('manager stopping'));
    const outcome = await httpFetcher({ spool }).fetch(
      source({ sourceType: 'http', address: url }),
      undefined,
      stop.signal,
    );
    expect(outcome).toMatchObject({ ok: false, reason: FetchFailureReason.RegistryServerError });
    expect(requests).toEqual([]);
  });
});
