/**
 * Catalogs are read within CatalogLimits (catalog/limits.ts): a file, a whole catalog, one inline
 * manifest and an HTTP body past its limit are refused quickly, naming the file and the limit,
 * with nothing read past it; `catalog serve` keeps serving the last valid catalog when hostile
 * content is written into its directory.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../src/apis/fbc.js';
import { toYaml } from '../../../src/bundle/yaml.js';
import { CatalogLimits, maxCatalogFileBytes } from '../../../src/catalog/limits.js';
import { loadCatalog, parseFileParts } from '../../../src/catalog/load.js';
import { catalogFingerprint, loadServedCatalog, reloadingCatalog } from '../../../src/catalog/serve.js';
import { CatalogSpool } from '../../../src/catalog/content/spool.js';
import { formatProblem, type Problem } from '../../../src/util/result.js';
import { tempDir } from '../../support/temp-dir.js';
import { bosun } from '../cli/run-bosun.js';

const MiB = 2 ** 20;

/** A file of `size` bytes that takes no room: a hole reads as NUL bytes. */
async function sparse(file: string, size: number): Promise<void> {
  await writeFile(file, '');
  await truncate(file, size);
}

async function timed<T>(fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  expect(performance.now() - t0).toBeLessThan(10_000);
  return out;
}

const valid = [
  { schema: 'olm.package', name: 'p', defaultChannel: 'stable' },
  { schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1.0.0' }] },
  {
    schema: 'olm.bundle',
    package: 'p',
    name: 'p.v1.0.0',
    image: 'example.com/p:1.0.0',
    properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }],
  },
];
const yamlOf = (docs: unknown[]) => docs.map((d) => `---\n${toYaml(d)}`).join('');

describe('catalog files past the per-file limit', () => {
  it.each([
    ['480 MiB of NUL bytes (under the old 500 MiB limit)', 480 * MiB],
    ['just past the limit', CatalogLimits.maxFileBytes + 1],
  ])('are refused unread by the loader and catalog validate: %s', async (_name, size) => {
    const dir = await tempDir('bosun-limits-');
    const file = join(dir, 'catalog.yaml');
    await sparse(file, size);
    const loaded = await timed(() => loadCatalog(dir));
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) {
      expect(loaded.errors).toHaveLength(1);
      expect(loaded.errors[0]).toMatchObject({ file });
      expect(loaded.errors[0]!.message).toMatch(/past the limit of 256\.0 MiB for one catalog file/);
    }
    const r = await timed(() => bosun(dir, 'catalog', 'validate', '.'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/catalog\.yaml: cannot read: is .* past the limit of 256\.0 MiB/);
  });

  it('are refused by the manager reading a spooled body, as a problem of that catalog', async () => {
    const dir = await tempDir('bosun-limits-');
    const file = join(dir, 'spooled.fbc');
    await sparse(file, 300 * MiB);
    const problems: Problem[] = [];
    await timed(() =>
      parseFileParts(file, [{ name: 'http://c', base: 0, length: 300 * MiB }], emptyConfig(), problems),
    );
    expect(problems.map(formatProblem).join('\n')).toMatch(/past the limit of 256\.0 MiB/);
  });

  it('is raised with BOSUN_CATALOG_MAX_FILE_MIB, never past 500 MiB', () => {
    expect(maxCatalogFileBytes({})).toBe(256 * MiB);
    expect(maxCatalogFileBytes({ BOSUN_CATALOG_MAX_FILE_MIB: '300' })).toBe(300 * MiB);
    expect(maxCatalogFileBytes({ BOSUN_CATALOG_MAX_FILE_MIB: '9000' })).toBe(500 * MiB);
    expect(maxCatalogFileBytes({ BOSUN_CATALOG_MAX_FILE_MIB: 'lots' })).toBe(256 * MiB);
  });
});

describe('a catalog whose files add up past the total limit', () => {
  it.each([
    ['three files of 200 MiB', [200, 200, 200]],
    ['many files of 100 MiB in subfolders', [100, 100, 100, 100, 100, 100]],
  ])('is refused before any file is read: %s', async (_name, sizes) => {
    const dir = await tempDir('bosun-limits-');
    for (const [i, size] of sizes.entries()) {
      await mkdir(join(dir, `p${i}`));
      await sparse(join(dir, `p${i}`, 'catalog.json'), size * MiB);
    }
    const loaded = await timed(() => loadCatalog(dir));
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) {
      expect(loaded.errors).toEqual([
        { file: dir, message: expect.stringMatching(/past the limit of 512\.0 MiB for one catalog/) },
      ]);
    }
  });
});

describe('an inline manifest past the document limit', () => {
  it.each(['yaml', 'json'] as const)('is refused, naming the file and where it is (%s)', async (format) => {
    const dir = await tempDir('bosun-limits-');
    const file = join(dir, `catalog.${format}`);
    const data = randomBytes(Math.ceil((17 * MiB * 3) / 4)).toString('base64');
    const bundle = {
      ...valid[2]!,
      properties: [...(valid[2]!.properties as unknown[]), { type: 'olm.bundle.object', value: { data } }],
    };
    const docs = [valid[0]!, valid[1]!, bundle];
    await writeFile(file, format === 'yaml' ? yamlOf(docs) : docs.map((d) => JSON.stringify(d)).join('\n'));
    const loaded = await timed(() => loadCatalog(dir));
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) {
      expect(loaded.errors[0]).toMatchObject({ file });
      expect(loaded.errors[0]!.message).toMatch(
        /the "data" value at byte \d+ is 17\.0 MiB, past the limit of 16\.0 MiB/,
      );
    }
  });
});

describe('an HTTP body streamed to the spool', () => {
  /** An endless body of NUL chunks, counting how many were taken. */
  function endless(chunk: number) {
    const taken = { chunks: 0 };
    async function* body() {
      const zeros = new Uint8Array(chunk);
      for (;;) {
        taken.chunks++;
        yield zeros;
      }
    }
    return { body: body(), taken };
  }

  it.each([
    ['in 1 MiB chunks', MiB],
    ['in 64 KiB chunks', 64 * 1024],
    ['in one chunk larger than the limit', 9 * MiB],
  ])('is cut off at the limit and its file removed: %s', async (_name, chunk) => {
    const spool = await CatalogSpool.open(await tempDir('bosun-spool-'));
    try {
      const { body, taken } = endless(chunk);
      await expect(
        spool.writeStream({ namespace: 'olm', name: 'c' }, 'http://c', body, 8 * MiB),
      ).rejects.toThrow(
        /the body is more than 8\.0 MiB \(cut off there\), past the limit of 8\.0 MiB for one catalog file/,
      );
      expect(taken.chunks * chunk).toBeLessThanOrEqual(8 * MiB + chunk);
      expect((await readdir(spool.dir)).filter((f) => f.endsWith('.fbc'))).toEqual([]);
    } finally {
      await spool.close();
    }
  });
});

describe('catalog serve, when hostile content is written into its directory', () => {
  const bomb = ['l0: &l0 [a, a, a, a, a, a, a, a, a, a]']
    .concat(
      Array.from({ length: 9 }, (_, i) => `l${i + 1}: &l${i + 1} [${Array(10).fill(`*l${i}`).join(', ')}]`),
    )
    .join('\n');
  it.each([
    ['a YAML alias bomb', async (f: string) => writeFile(`${f}.yaml`, `${bomb}\n`)],
    ['a YAML cycle', async (f: string) => writeFile(`${f}.yaml`, 'schema: &a\n  x: *a\n')],
    [
      'JSON nested 10^5 levels',
      async (f: string) => writeFile(`${f}.json`, `${'['.repeat(1e5)}${']'.repeat(1e5)}`),
    ],
    ['a 17 MiB document', async (f: string) => writeFile(`${f}.yaml`, `schema: ${'x'.repeat(17 * MiB)}\n`)],
    ['a 300 MiB file', async (f: string) => sparse(`${f}.json`, 300 * MiB)],
  ])('keeps serving the last valid catalog: %s', async (_name, write) => {
    const dir = await tempDir('bosun-serve-');
    await writeFile(join(dir, 'catalog.yaml'), yamlOf(valid));
    const first = await loadServedCatalog(dir);
    if (!first.ok) throw new Error(first.errors.map(formatProblem).join('\n'));
    const invalid: Problem[][] = [];
    const served = reloadingCatalog(
      dir,
      { served: first.value, fingerprint: await catalogFingerprint(dir) },
      { onInvalid: (p) => invalid.push(p) },
    );
    await write(join(dir, 'hostile'));
    expect(await timed(() => served.current())).toBe(first.value);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]![0]!.file).toMatch(/hostile\.(yaml|json)$/);
    // It answers again at once, and reads the directory again once it is fixed.
    for (const f of await readdir(dir)) if (f.startsWith('hostile')) await rm(join(dir, f));
    await writeFile(
      join(dir, 'catalog.yaml'),
      yamlOf([{ ...valid[0]!, description: 'fixed' }, valid[1]!, valid[2]!]),
    );
    const fixed = await served.current();
    expect(fixed).not.toBe(first.value);
    expect(fixed.config.packages[0]!.description).toBe('fixed');
  });
});
