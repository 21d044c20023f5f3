/**
 * catalogd's HTTP API as the manager's HTTP server answers it, over a real socket: `/api/v1/all`
 * and `/api/v1/metas` with v1's status codes (400 for another parameter, 404 for a catalog not
 * served, 405 for another method), `Last-Modified` and 304, HEAD, gzip; and no request path,
 * however crafted, reaches anything but a served catalog by its exact name.
 */
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metaLine, writeCatalogJsonl } from '../../../src/catalog/content/jsonl.js';
import { servedCatalogs } from '../../../src/catalog/content/served.js';
import { catalogdHandler } from '../../../src/server/catalogd.js';
import { formatHttpDate } from '../../../src/server/catalogd-request.js';
import { type RunningServer, startHttpServer } from '../../../src/server/http.js';
import { tempDir } from '../../support/temp-dir.js';

const lastModified = Date.UTC(2026, 10, 26, 12, 0, 0);
let server: RunningServer;
let lines: string[];
let all: string;
/** A catalog in the same folder that is not served: nothing may ever reach it. */
const unservedMarker = 'UNSERVED-SECRET-CONTENT';

beforeAll(async () => {
  const dir = await tempDir('bosun-catalogd-');
  const docs: unknown[] = [{ schema: 'olm.package', name: 'etcd', defaultChannel: 'alpha' }];
  docs.push({ schema: 'olm.channel', package: 'etcd', name: 'alpha', entries: [{ name: 'etcd.v1' }] });
  for (let i = 0; i < 20; i++)
    docs.push({
      schema: 'olm.bundle',
      package: 'etcd',
      name: `etcd.v${i}`,
      image: `quay.io/etcd:v${i}`,
      properties: [],
    });
  docs.push({ schema: 'olm.package', name: 'kafka' });
  const source = join(dir, 'catalog.json');
  await writeFile(source, docs.map((d) => JSON.stringify(d)).join('\n'));
  const file = join(dir, 'ops.jsonl');
  const written = await writeCatalogJsonl([source], file);
  lines = docs.map(metaLine);
  all = lines.join('');
  await writeFile(join(dir, 'private.jsonl'), `{"schema":"${unservedMarker}"}\n`);
  await writeFile(join(dir, 'passwd'), unservedMarker);
  const served = servedCatalogs({ remove: async () => {} });
  served.set('ops', { file, ...written, digest: 'sha256:0', image: 'r/c@sha256:0', lastModified });
  server = await startHttpServer({
    address: '127.0.0.1:0',
    registry: new Registry(),
    notReady: () => undefined,
    catalogd: catalogdHandler({ catalogs: served }),
  });
});
afterAll(async () => {
  await server?.close();
});

/** One request sent byte for byte as written (no client normalises or refuses the path). */
async function raw(
  path: string,
  opts: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const { port } = new URL(server.url);
  const head = [
    `${opts.method ?? 'GET'} ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    'Connection: close',
    ...Object.entries(opts.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  const socket = connect(Number(port), '127.0.0.1');
  socket.write(Buffer.from(head, 'latin1'));
  const chunks: Buffer[] = [];
  for await (const c of socket) chunks.push(c as Buffer);
  const response = Buffer.concat(chunks);
  const end = response.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = response.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  let body: Buffer = response.subarray(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

function dechunk(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', at);
    const size = parseInt(b.subarray(at, eol).toString('latin1'), 16);
    if (!size) return Buffer.concat(out);
    out.push(b.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

describe('GET /catalogs/<name>/api/v1/all', () => {
  it('answers the catalog as JSON Lines with its length and Last-Modified', async () => {
    const got = await raw('/catalogs/ops/api/v1/all');
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('application/jsonl');
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(all)));
    expect(got.headers['last-modified']).toBe('Thu, 26 Nov 2026 12:00:00 GMT');
    expect(got.body.toString('utf8')).toBe(all);
  });

  it('HEAD answers the same headers and no body', async () => {
    const got = await raw('/catalogs/ops/api/v1/all', { method: 'HEAD' });
    expect(got.status).toBe(200);
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(all)));
    expect(got.body.length).toBe(0);
  });

  it('gzips when asked, and the body unzips to the catalog', async () => {
    const got = await raw('/catalogs/ops/api/v1/all', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(got.headers['content-encoding']).toBe('gzip');
    expect(got.headers['vary']).toBe('Accept-Encoding');
    expect(gunzipSync(got.body).toString('utf8')).toBe(all);
  });

  it('answers If-Modified-Since at or after the content with 304 and nothing else, and before it with the content', async () => {
    const same = await raw('/catalogs/ops/api/v1/all', {
      headers: { 'If-Modified-Since': formatHttpDate(lastModified) },
    });
    expect(same.status).toBe(304);
    expect(same.body.length).toBe(0);
    expect(same.headers['content-type']).toBeUndefined();
    const older = await raw('/catalogs/ops/api/v1/all', {
      headers: { 'If-Modified-Since': formatHttpDate(lastModified - 1000) },
    });
    expect(older.status).toBe(200);
    expect(older.body.toString('utf8')).toBe(all);
  });

  it('answers 404 for a catalog not served and 405 for another method', async () => {
    expect((await raw('/catalogs/other/api/v1/all')).status).toBe(404);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])
      expect((await raw('/catalogs/ops/api/v1/all', { method })).status).toBe(405);
  });
});

describe('GET /catalogs/<name>/api/v1/metas', () => {
  it.each([
    ['schema=olm.package', (l: string) => l.includes('"schema":"olm.package"')],
    ['package=etcd', (l: string) => l.includes('"package":"etcd"')],
    ['schema=olm.bundle&name=etcd.v7', (l: string) => l.includes('"name":"etcd.v7"')],
    ['name=alpha&package=etcd&schema=olm.channel', (l: string) => l.includes('"schema":"olm.channel"')],
    ['package=kafka', () => false],
    ['', () => true],
  ])('?%s answers the matching lines in catalog order', async (query, keep) => {
    const got = await raw(`/catalogs/ops/api/v1/metas?${query}`);
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('application/jsonl');
    expect(got.body.toString('utf8')).toBe(lines.filter(keep).join(''));
  });

  it('answers 400 for another parameter (before looking for the catalog), 304 when not modified', async () => {
    expect((await raw('/catalogs/ops/api/v1/metas?version=1')).status).toBe(400);
    expect((await raw('/catalogs/other/api/v1/metas?version=1')).status).toBe(400);
    expect((await raw('/catalogs/other/api/v1/metas?schema=x')).status).toBe(404);
    const not = await raw('/catalogs/ops/api/v1/metas?package=etcd', {
      headers: { 'If-Modified-Since': formatHttpDate(lastModified) },
    });
    expect(not.status).toBe(304);
  });
});

describe('a crafted path', () => {
  // Traversal plain and encoded (once, twice, overlong UTF-8), encoded and doubled separators,
  // backslashes, NUL, names of files beside the served one, case and lookalikes.
  it.each([
    '/catalogs/../passwd',
    '/catalogs/../private.jsonl',
    '/catalogs/ops/../private/api/v1/all',
    '/catalogs/%2e%2e/api/v1/all',
    '/catalogs/%2e%2e%2fpasswd/api/v1/all',
    '/catalogs/..%2fpasswd/api/v1/all',
    '/catalogs/..%2Fprivate.jsonl/api/v1/all',
    '/catalogs/%252e%252e%252fpasswd/api/v1/all',
    '/catalogs/%c0%ae%c0%ae%c0%afpasswd/api/v1/all',
    '/catalogs/ops%2F..%2Fprivate/api/v1/all',
    '/catalogs/ops%2f..%2fprivate/api/v1/all',
    '/catalogs/..%5cprivate/api/v1/all',
    '/catalogs/..\\private/api/v1/all',
    '/catalogs//private/api/v1/all',
    '/catalogs/private/api/v1/all',
    '/catalogs/private.jsonl/api/v1/all',
    '/catalogs/ops.jsonl/api/v1/all',
    '/catalogs/ops%00/api/v1/all',
    '/catalogs/OPS/api/v1/all',
    '/catalogs/%6fps/api/v1/all',
    '/catalogs/ops/api/v1/all/../../../../passwd',
    '/catalogs/ops/api/v1/metas/..%2f..%2f..%2fprivate',
  ])('%s reaches nothing', async (path) => {
    const got = await raw(path);
    expect([400, 404]).toContain(got.status);
    expect(got.body.toString('latin1')).not.toContain(unservedMarker);
    expect(got.body.toString('latin1')).not.toContain('olm.package');
  });
});
