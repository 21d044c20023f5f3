/**
 * A catalog can never name a file for Bosun to read. Bundle objects whose text stays in a catalog
 * file are read through handles kept beside the documents (payloads.ts); a catalog that writes a
 * structure where a manifest's base64 belongs (shaped like such a handle, or anything else) is
 * refused where it is read, naming the file, the bundle and the field, by every reader: validate,
 * render, publish, serve, the manager's ConfigMap and spooled (http) content, and, should such a
 * document ever get past loading, the install decoder and the PackageManifest projection. The
 * bytes of the file it names appear in no output.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BundleDoc, emptyConfig } from '../../../src/apis/fbc.js';
import { toYaml } from '../../../src/bundle/yaml.js';
import { loadCatalog, parseFileParts } from '../../../src/catalog/load.js';
import { payloadOf, withPayloadsAll } from '../../../src/catalog/payloads.js';
import { loadServedCatalog, catalogFingerprint, reloadingCatalog } from '../../../src/catalog/serve.js';
import { catalogBundleManifests } from '../../../src/catalog/content/bundles.js';
import { parseCatalogFiles } from '../../../src/catalog/content/parse.js';
import { CatalogSpool } from '../../../src/catalog/content/spool.js';
import { bundleDecoder } from '../../../src/install/bundle-objects.js';
import { packageManifests } from '../../../src/packages/projection.js';
import type { Problem } from '../../../src/util/result.js';
import { formatProblem } from '../../../src/util/result.js';
import { tempDir } from '../../support/temp-dir.js';
import { bosun, repo } from '../cli/run-bosun.js';

const secret = `TOPSECRET-${randomUUID()}`;

/** A file only its owner may read, as a ServiceAccount token or a private key is. */
async function secretFile(): Promise<{ path: string; size: number; ino: number; mtimeMs: number }> {
  const dir = await tempDir('bosun-secret-');
  const path = join(dir, 'token');
  await writeFile(path, `${secret}\n`);
  await chmod(path, 0o600);
  const st = await stat(path);
  return { path, size: st.size, ino: st.ino, mtimeMs: st.mtimeMs };
}

/** Every shape a forged `data` takes: handles as the loader once made them, and other structures. */
async function forgedData(): Promise<[string, unknown][]> {
  const f = await secretFile();
  const identity = { ino: f.ino, size: f.size, mtimeMs: f.mtimeMs };
  const handle = { storedIn: f.path, offset: 0, length: f.size, identity };
  return [
    ['an exact handle to a mode-600 file', handle],
    ['a handle without identity', { storedIn: f.path, offset: 0, length: f.size }],
    ['a handle to /proc/self/environ', { storedIn: '/proc/self/environ', offset: 0, length: 4096, identity }],
    ['a handle with extra fields', { ...handle, data: 'aGVsbG8=', kind: 'StoredPayload' }],
    ['a handle in a list', [handle]],
    ['a number', 42],
    ['a boolean', true],
    ['null', null],
  ];
}

function catalogDocs(data: unknown): Record<string, unknown>[] {
  return [
    { schema: 'olm.package', name: 'p', defaultChannel: 'stable' },
    { schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1.0.0' }] },
    {
      schema: 'olm.bundle',
      package: 'p',
      name: 'p.v1.0.0',
      image: 'example.com/p:1.0.0',
      properties: [
        { type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } },
        { type: 'olm.bundle.object', value: { data } },
      ],
    },
  ];
}

const encode = {
  json: (docs: unknown[]) => docs.map((d) => JSON.stringify(d)).join('\n'),
  yaml: (docs: unknown[]) => docs.map((d) => `---\n${toYaml(d)}`).join(''),
};

async function catalogDir(format: 'json' | 'yaml', data: unknown): Promise<{ dir: string; file: string }> {
  const dir = await tempDir('bosun-forged-');
  await mkdir(join(dir, 'p'));
  const file = join(dir, 'p', `catalog.${format}`);
  await writeFile(file, encode[format](catalogDocs(data)));
  return { dir, file };
}

/** The refusal every reader must give: the file, the bundle and the field. */
function expectRefusal(problems: readonly Problem[], file: string): void {
  expect(problems).toContainEqual(
    expect.objectContaining({ file, object: 'bundle p.v1.0.0', field: 'properties[1].value.data' }),
  );
}

const shapes = await forgedData();
const cases = shapes.flatMap(([name, data]) =>
  (['json', 'yaml'] as const).map((format) => ({ name, data, format })),
);

describe('a catalog whose bundle object data is not a string', () => {
  it.each(cases)('is refused by the loader: $name ($format)', async ({ data, format }) => {
    const { dir, file } = await catalogDir(format, data);
    const loaded = await loadCatalog(dir);
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expectRefusal(loaded.errors, file);
  });

  it.each(cases)(
    'is refused by catalog validate, render and publish, which print none of the file: $name ($format)',
    async ({ data, format }) => {
      const { dir, file } = await catalogDir(format, data);
      const before = await readFile(file);
      const runs = [
        await bosun(dir, 'catalog', 'validate', '.'),
        await bosun(dir, 'catalog', 'render', '.', '-o', 'json'),
        await bosun(dir, 'catalog', 'render', '.', '-o', 'yaml'),
        await bosun(dir, 'catalog', 'publish', '.', join(repo, 'bundles/bosun-sample/0.1.1')),
      ];
      for (const r of runs) {
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain('properties[1].value.data');
        expect(r.stdout + r.stderr).not.toContain(secret);
      }
      // Nothing was written into the catalog.
      expect(await readFile(file)).toEqual(before);
    },
  );

  it.each(cases)(
    'is refused by catalog serve, which keeps serving the last valid catalog: $name ($format)',
    async ({ data, format }) => {
      const { dir, file } = await catalogDir(format, 'aGVsbG8=');
      const first = await loadServedCatalog(dir);
      if (!first.ok) throw new Error(first.errors.map(formatProblem).join('\n'));
      expect((await loadServedCatalog(dir)).ok).toBe(true);
      const invalid: Problem[][] = [];
      const served = reloadingCatalog(
        dir,
        { served: first.value, fingerprint: await catalogFingerprint(dir) },
        { onInvalid: (p) => invalid.push(p) },
      );
      await writeFile(file, encode[format](catalogDocs(data)));
      const now = await served.current();
      expect(now).toBe(first.value);
      expect(Buffer.from(now.body).toString()).not.toContain(secret);
      expect(invalid).toHaveLength(1);
      expectRefusal(invalid[0]!, file);
    },
  );

  it.each(cases)(
    'is refused in a ConfigMap or an HTTP body the manager fetched: $name ($format)',
    async ({ data, format }) => {
      const text = encode[format](catalogDocs(data));
      const parsed = parseCatalogFiles([{ name: 'ConfigMap olm/c data.catalog', text }], 'ConfigMap olm/c');
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.message).toContain(
          'ConfigMap olm/c data.catalog: bundle p.v1.0.0: properties[1].value.data',
        );
        expect(parsed.message).not.toContain(secret);
      }
      // Spooled to disk, as an http body is, and parsed with the manifests left in the file.
      const spool = await CatalogSpool.open(await tempDir('bosun-spool-'));
      try {
        const spooled = await spool.writeFiles({ namespace: 'olm', name: 'c' }, [
          { name: 'http://catalog', bytes: Buffer.from(text) },
        ]);
        const cfg = emptyConfig();
        const problems: Problem[] = [];
        await parseFileParts(spooled.path, spooled.parts, cfg, problems);
        expectRefusal(problems, 'http://catalog');
        expect(cfg.bundles).toEqual([]);
      } finally {
        await spool.close();
      }
    },
  );

  it.each(shapes)(
    'never becomes a handle, should it get past loading: the installer and the PackageManifest projection read no file (%s)',
    async (_name, data) => {
      const bundle = catalogDocs(data)[2] as unknown as BundleDoc;
      const object = bundle.properties[1]!;
      expect(payloadOf(object.value)).toBeUndefined();
      // Reading the payloads leaves the document as it is: there is nothing stored to read.
      const [read] = await withPayloadsAll([bundle]);
      expect(read).toBe(bundle);
      const decoded = await bundleDecoder().decode(catalogBundleManifests(bundle));
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) {
        expect(decoded.errors).toContainEqual(
          expect.objectContaining({
            field: 'properties[1].value.data',
            message: 'must be the base64 of a manifest',
          }),
        );
      }
      expect(JSON.stringify(decoded)).not.toContain(secret);
      const cfg = { ...emptyConfig(), bundles: [bundle] };
      const source = { name: 'c', namespace: 'olm', displayName: 'C', publisher: 'P' };
      const pms = await packageManifests(cfg, source, withPayloadsAll);
      expect(JSON.stringify(pms)).not.toContain(secret);
    },
  );
});

describe('stored bundle objects', () => {
  it('are text in the document, their handles kept beside it and pointing into the file loaded', async () => {
    const manifest = Buffer.from(
      JSON.stringify({ kind: 'ConfigMap', data: { x: 'y'.repeat(400) } }),
    ).toString('base64');
    const { dir, file } = await catalogDir('json', manifest);
    const loaded = await loadCatalog(dir);
    if (!loaded.ok) throw new Error(loaded.errors.map(formatProblem).join('\n'));
    const value = loaded.value.bundles[0]!.properties[1]!.value as Record<string, unknown>;
    expect(value.data).toBe('');
    expect(payloadOf(value)).toMatchObject({ storedIn: file, length: manifest.length });
    // A copy of the value (what a catalog could write) holds no handle.
    expect(payloadOf({ ...value })).toBeUndefined();
    const [read] = await withPayloadsAll(loaded.value.bundles);
    expect(read!.properties[1]!.value).toEqual({ data: manifest });
  });

  it('are made of a catalog string only as the place of that very string in the file loaded', async () => {
    // Short and long strings; long ones are left in the file. Placeholder-like text stays text.
    for (const data of ['', 'bosunlift12345678n0x', `bosunlift${'a'.repeat(300)}n0x`, 'QUJD'.repeat(100)]) {
      const { dir, file } = await catalogDir('yaml', data);
      const loaded = await loadCatalog(dir);
      if (!loaded.ok) throw new Error(loaded.errors.map(formatProblem).join('\n'));
      const value = loaded.value.bundles[0]!.properties[1]!.value;
      const stored = payloadOf(value);
      if (stored) {
        expect(stored.storedIn).toBe(file);
        expect((await readFile(file, 'utf8')).slice(stored.offset, stored.offset + stored.length)).toBe(data);
      }
      const [read] = await withPayloadsAll(loaded.value.bundles);
      expect((read!.properties[1]!.value as { data: string }).data).toBe(data);
    }
  });
});
