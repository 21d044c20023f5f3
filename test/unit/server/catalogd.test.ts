/**
 * catalogd's HTTP API as the manager's HTTP server answers it, over a real socket: `/api/v1/all`
 * and `/api/v1/metas` with v1's status codes (400 for another parameter, 404 for a catalog not
 * served, 405 for another method), `Last-Modified` and 304, HEAD, gzip (the whole content from
 * its compressed copy, made once per content); and no request path, however crafted, reaches
 * anything but a served catalog by its exact name.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metaLine, writeCatalogJsonl } from '../../../src/catalog/content/jsonl.js';
import { gzipFileOf, type ServedCatalogs, servedCatalogs } from '../../../src/catalog/content/served.js';
import { catalogdHandler } from '../../../src/server/catalogd.js';
import { type GzipCopies, gzipCopies } from '../../../src/server/catalogd-gzip.js';
import { formatHttpDate } from '../../../src/server/catalogd-request.js';
import { type RunningServer, startHttpServer } from '../../../src/server/http.js';
import { tempDir } from '../../support/temp-dir.js';

const lastModified = Date.UTC(2026, 10, 26, 12, 0, 0);
let server: RunningServer;
let dir: string;
let served: ServedCatalogs;
let copies: GzipCopies;
const copyErrors: unknown[] = [];
let lines: string[];
let all: string;
/** A catalog in the same folder that is not served: nothing may ever reach it. */
const unservedMarker = 'UNSERVED-SECRET-CONTENT';

beforeAll(async () => {
  dir = await tempDir('bosun-catalogd-');
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
  // Files are removed as the spool removes them (served.ts's remove), so a test sees what goes.
  const remove = (path: string) => rm(path, { force: true });
  served = servedCatalogs({ remove });
  served.set('ops', { file, ...written, digest: 'sha256:0', image: 'r/c@sha256:0', lastModified });
  copies = gzipCopies({ catalogs: served, remove, onError: (err) => copyErrors.push(err) });
  server = await startHttpServer({
    address: '127.0.0.1:0',
    registry: new Registry(),
    notReady: () => undefined,
    catalogd: catalogdHandler({ catalogs: served, gzipCopies: copies }),
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

/** Serves, under `name`, a catalog of `bundles` bundles (about 100 bytes each) in a new file; its lines. */
async function serveContent(
  name: string,
  bundles: number,
  tag: string,
): Promise<{ file: string; body: string }> {
  const docs: unknown[] = [{ schema: 'olm.package', name }];
  for (let i = 0; i < bundles; i++)
    docs.push({
      schema: 'olm.bundle',
      package: name,
      name: `${name}.${tag}.v${i}`,
      image: `quay.io/${name}:${tag}-${i}`,
    });
  const source = join(dir, `${name}-${tag}.json`);
  await writeFile(source, docs.map((d) => JSON.stringify(d)).join('\n'));
  const file = join(dir, `${name}-${tag}.jsonl`);
  const written = await writeCatalogJsonl([source], file);
  served.set(name, {
    file,
    ...written,
    digest: `sha256:${tag}`,
    image: `r/${name}@sha256:${tag}`,
    lastModified,
  });
  return { file, body: docs.map(metaLine).join('') };
}

const gzipped = (path: string, method = 'GET') =>
  raw(path, { method, headers: { 'Accept-Encoding': 'gzip' } });

/** Files of the folder left half-made: temporary copies. */
const leftovers = async () => (await readdir(dir)).filter((f) => f.endsWith('.tmp'));

/** Waits for served.ts's removals, which it does not wait for itself. */
async function gone(file: string): Promise<boolean> {
  for (let i = 0; i < 100 && existsSync(file); i++) await new Promise((r) => setTimeout(r, 10));
  return !existsSync(file);
}

describe('gzip of the whole content: compressed once, then sent from its copy', () => {
  it('the first gzip request is compressed as it streams and makes the copy; the next is the copy, with its length', async () => {
    const { file, body } = await serveContent('once', 3000, 'a');
    expect(existsSync(gzipFileOf(file))).toBe(false);
    const first = await gzipped('/catalogs/once/api/v1/all');
    expect(first.status).toBe(200);
    expect(first.headers['content-length']).toBeUndefined();
    expect(gunzipSync(first.body).toString('utf8')).toBe(body);
    await copies.settled();
    const copy = await readFile(gzipFileOf(file));
    expect(gunzipSync(copy).toString('utf8')).toBe(body);

    const second = await gzipped('/catalogs/once/api/v1/all');
    expect(second.status).toBe(200);
    expect(second.headers['content-length']).toBe(String(copy.length));
    // The very bytes of the copy: not compressed again.
    expect(second.body.equals(copy)).toBe(true);
    expect(gunzipSync(second.body).toString('utf8')).toBe(body);
    for (const got of [first, second]) {
      expect(got.headers['content-encoding']).toBe('gzip');
      expect(got.headers['content-type']).toBe('application/jsonl');
      expect(got.headers['vary']).toBe('Accept-Encoding');
      expect(got.headers['x-content-type-options']).toBe('nosniff');
      expect(got.headers['last-modified']).toBe(formatHttpDate(lastModified));
    }
    // metas without a parameter is the same body: the copy too; with one, a selection compressed as it streams.
    const everything = await gzipped('/catalogs/once/api/v1/metas');
    expect(everything.body.equals(copy)).toBe(true);
    const some = await gzipped('/catalogs/once/api/v1/metas?schema=olm.bundle');
    expect(some.headers['content-encoding']).toBe('gzip');
    expect(some.headers['content-length']).toBeUndefined();
    const bundleLines = body.split('\n').filter((l) => l.includes('"schema":"olm.bundle"'));
    expect(gunzipSync(some.body).toString('utf8')).toBe(bundleLines.map((l) => `${l}\n`).join(''));
    // A client that does not take gzip still gets the plain file.
    const plainBody = await raw('/catalogs/once/api/v1/all');
    expect(plainBody.headers['content-encoding']).toBeUndefined();
    expect(plainBody.body.toString('utf8')).toBe(body);
    expect(await leftovers()).toEqual([]);
  });

  it('HEAD answers the headers GET would: without a length while the copy is missing, with its length after', async () => {
    const { file } = await serveContent('head', 3000, 'a');
    const before = await gzipped('/catalogs/head/api/v1/all', 'HEAD');
    expect(before.status).toBe(200);
    expect(before.headers['content-encoding']).toBe('gzip');
    expect(before.headers['content-length']).toBeUndefined();
    expect(before.body.length).toBe(0);
    await copies.settled();
    const after = await gzipped('/catalogs/head/api/v1/all', 'HEAD');
    expect(after.headers['content-encoding']).toBe('gzip');
    expect(after.headers['content-length']).toBe(String((await readFile(gzipFileOf(file))).length));
    expect(after.headers['last-modified']).toBe(formatHttpDate(lastModified));
    expect(after.body.length).toBe(0);
    const get = await gzipped('/catalogs/head/api/v1/all');
    expect(get.headers['content-length']).toBe(after.headers['content-length']);
  });

  it('content replaced: the next answer is the new content, and the old copy is gone', async () => {
    const old = await serveContent('swap', 3000, 'old');
    await gzipped('/catalogs/swap/api/v1/all');
    await copies.settled();
    expect(existsSync(gzipFileOf(old.file))).toBe(true);
    const next = await serveContent('swap', 2000, 'new');
    expect(await gone(gzipFileOf(old.file))).toBe(true);
    expect(await gone(old.file)).toBe(true);
    for (let i = 0; i < 2; i++) {
      const got = await gzipped('/catalogs/swap/api/v1/all');
      expect(gunzipSync(got.body).toString('utf8')).toBe(next.body);
      await copies.settled();
    }
    expect(existsSync(gzipFileOf(next.file))).toBe(true);
    // Its catalog gone: so is its copy.
    served.delete('swap');
    expect(await gone(gzipFileOf(next.file))).toBe(true);
    expect(await leftovers()).toEqual([]);
  });

  it('a copy finished after its content was replaced is removed, not left behind', async () => {
    const old = await serveContent('late', 3000, 'old');
    const catalog = served.get('late')!;
    // The copy starts, and the content is replaced before it can be finished.
    expect(await copies.open('late', catalog)).toBeUndefined();
    const next = await serveContent('late', 2000, 'new');
    await copies.settled();
    expect(await gone(gzipFileOf(old.file))).toBe(true);
    expect(await leftovers()).toEqual([]);
    const got = await gzipped('/catalogs/late/api/v1/all');
    expect(gunzipSync(got.body).toString('utf8')).toBe(next.body);
  });

  it('a copy that cannot be made is reported once, leaves no temporary file, and every answer is still whole', async () => {
    const { file, body } = await serveContent('broken', 3000, 'a');
    // Something that is no file where the copy goes: the rename into place fails.
    await mkdir(gzipFileOf(file));
    const errorsBefore = copyErrors.length;
    for (let i = 0; i < 3; i++) {
      const got = await gzipped('/catalogs/broken/api/v1/all');
      expect(got.status).toBe(200);
      expect(got.headers['content-length']).toBeUndefined();
      expect(gunzipSync(got.body).toString('utf8')).toBe(body);
      await copies.settled();
    }
    // Tried once for this content, not once per request.
    expect(copyErrors.length).toBe(errorsBefore + 1);
    expect(await leftovers()).toEqual([]);
    await rm(gzipFileOf(file), { recursive: true });
    copyErrors.splice(errorsBefore);
  });

  it('concurrent first requests are each answered whole, and leave one copy and no temporary file', async () => {
    const { file, body } = await serveContent('race', 3000, 'a');
    const got = await Promise.all(Array.from({ length: 4 }, () => gzipped('/catalogs/race/api/v1/all')));
    for (const g of got) expect(gunzipSync(g.body).toString('utf8')).toBe(body);
    await copies.settled();
    expect(gunzipSync(await readFile(gzipFileOf(file))).toString('utf8')).toBe(body);
    expect((await readdir(dir)).filter((f) => f.startsWith('race-a.jsonl'))).toEqual([
      'race-a.jsonl',
      'race-a.jsonl.gz',
    ]);
    const later = await Promise.all(Array.from({ length: 4 }, () => gzipped('/catalogs/race/api/v1/all')));
    for (const g of later) {
      expect(g.headers['content-length']).toBeDefined();
      expect(gunzipSync(g.body).toString('utf8')).toBe(body);
    }
    expect(copyErrors).toEqual([]);
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
