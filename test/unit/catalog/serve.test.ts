import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../src/apis/fbc.js';
import {
  catalogFingerprint,
  catalogResponse,
  loadServedCatalog,
  noneMatchHits,
  reloadingCatalog,
  type ServedCatalog,
  strongETag,
} from '../../../src/catalog/serve.js';
import type { Problem } from '../../../src/util/result.js';
import { tempDir } from '../../support/temp-dir.js';
import { bosun, repo } from '../cli/run-bosun.js';

const body = Buffer.from('{"schema":"olm.package","name":"p"}\n');
const served: ServedCatalog = {
  body,
  config: { ...emptyConfig(), packages: [{ schema: 'olm.package', name: 'p' }] },
  etag: strongETag(body),
  packages: 1,
  bundles: 0,
  warnings: [],
};

async function sampleCatalog(): Promise<string> {
  const dir = await tempDir('bosun-serve-');
  await cp(join(repo, 'catalogs/bosun-samples'), dir, { recursive: true });
  return dir;
}

describe('strongETag', () => {
  it('is a quoted sha256 of the bytes, the same for the same bytes and not weak', () => {
    expect(strongETag(body)).toMatch(/^"sha256:[0-9a-f]{64}"$/);
    expect(strongETag(Buffer.from(body))).toBe(strongETag(body));
    expect(strongETag(Buffer.from('other'))).not.toBe(strongETag(body));
  });
});

describe('noneMatchHits', () => {
  const etag = '"sha256:abc"';
  it.each([
    [undefined, false],
    ['', false],
    ['"sha256:abc"', true],
    ['W/"sha256:abc"', true],
    ['"x", "sha256:abc"', true],
    ['"x","y"', false],
    ['*', true],
    ['sha256:abc', false],
    ['"sha256:abcd"', false],
  ])('If-None-Match %j matches: %s', (header, expected) => {
    expect(noneMatchHits(header, etag)).toBe(expected);
  });
});

describe('catalogResponse', () => {
  it('serves the catalog at / with its ETag, Content-Type and length', () => {
    const r = catalogResponse({ method: 'GET', url: '/' }, served);
    expect(r.status).toBe(200);
    expect(r.body).toBe(body);
    expect(r.headers).toMatchObject({
      ETag: served.etag,
      'Content-Type': 'application/json',
      'Content-Length': String(body.length),
    });
  });

  it('answers a request that has these bytes with 304 and no body', () => {
    const r = catalogResponse({ method: 'GET', url: '/?x=1', ifNoneMatch: served.etag }, served);
    expect(r).toEqual({
      status: 304,
      headers: { ETag: served.etag, 'Cache-Control': 'no-cache', Vary: 'Accept' },
    });
  });

  it('sends the whole catalog when the client holds another ETag', () => {
    expect(catalogResponse({ method: 'GET', url: '/', ifNoneMatch: '"sha256:old"' }, served).status).toBe(
      200,
    );
  });

  it('answers HEAD with the headers only', () => {
    const r = catalogResponse({ method: 'HEAD', url: '/' }, served);
    expect(r.status).toBe(200);
    expect(r.body).toBeUndefined();
    expect(r.headers['Content-Length']).toBe(String(body.length));
  });

  it('refuses other paths (404) and other methods (405)', () => {
    expect(catalogResponse({ method: 'GET', url: '/catalog.json' }, served).status).toBe(404);
    const post = catalogResponse({ method: 'POST', url: '/' }, served);
    expect(post.status).toBe(405);
    expect(post.headers.Allow).toBe('GET, HEAD');
  });
});

describe('loadServedCatalog', () => {
  it('serves what `bosun catalog render -o json` prints', async () => {
    const dir = await sampleCatalog();
    const loaded = await loadServedCatalog(dir);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
    const rendered = await bosun(dir, 'catalog', 'render', '.', '-o', 'json');
    expect(rendered.code).toBe(0);
    expect(loaded.value.body.toString()).toBe(rendered.stdout);
    expect(loaded.value).toMatchObject({ packages: 2, bundles: 6, etag: strongETag(loaded.value.body) });
  });

  it('refuses an invalid catalog with the validator problem: file, object, field', async () => {
    const dir = await sampleCatalog();
    const file = join(dir, 'bosun-sample/catalog.yaml');
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace('defaultChannel: stable', 'defaultChannel: nightly'),
    );
    const loaded = await loadServedCatalog(dir);
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.errors[0]).toMatchObject({ file, object: 'package bosun-sample', field: 'defaultChannel' });
  });
});

describe('reloadingCatalog', () => {
  it('reloads only when the files changed, and keeps the last valid catalog when they break', async () => {
    const dir = await sampleCatalog();
    const first = await loadServedCatalog(dir);
    if (!first.ok) throw new Error('sample catalog invalid');
    const invalid: Problem[][] = [];
    const reloaded: ServedCatalog[] = [];
    const catalog = reloadingCatalog(
      dir,
      { served: first.value, fingerprint: await catalogFingerprint(dir) },
      { onInvalid: (p) => invalid.push(p), onReload: (s) => reloaded.push(s) },
    );
    expect(await catalog.current()).toBe(first.value);

    const file = join(dir, 'bosun-sample/catalog.yaml');
    const good = await readFile(file, 'utf8');
    await writeFile(file, good.replace('defaultChannel: stable', 'defaultChannel: nightly'));
    expect(await catalog.current()).toBe(first.value);
    expect(invalid).toHaveLength(1);
    expect(await catalog.current()).toBe(first.value);
    expect(invalid).toHaveLength(1); // the same broken files are not reported again

    await writeFile(file, good.replace('defaultChannel: stable', 'defaultChannel: candidate'));
    const next = await catalog.current();
    expect(next.etag).not.toBe(first.value.etag);
    expect(next.body.toString()).toContain('"defaultChannel": "candidate"');
    expect(reloaded).toEqual([next]);
  });
});

describe('bosun catalog serve', () => {
  it('refuses an invalid catalog with the problem and exit 1, serving nothing', async () => {
    const dir = await sampleCatalog();
    const file = join(dir, 'bosun-sample/catalog.yaml');
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace('defaultChannel: stable', 'defaultChannel: nightly'),
    );
    const r = await bosun(dir, 'catalog', 'serve', '.', '--addr', '127.0.0.1:0');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: bosun-sample/catalog.yaml: package bosun-sample: defaultChannel:');
    expect(r.stderr).toContain('invalid catalog .: nothing served');
  });

  it.each([
    [['catalog', 'serve', '.', '--addr', 'localhost'], '--addr: "localhost" is not HOST:PORT'],
    [['catalog', 'serve', 'missing'], 'missing: no such file or directory, not a catalog directory'],
  ])('rejects %j with exit 2', async (args, message) => {
    const dir = await sampleCatalog();
    const r = await bosun(dir, ...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });
});
