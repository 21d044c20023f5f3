import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BundleDoc, ChannelDoc, DeclarativeConfig, PackageDoc } from '../../../src/apis/fbc.js';
import { CatalogFormat, encodeConfig } from '../../../src/catalog/encode.js';
import { loadCatalog } from '../../../src/catalog/load.js';
import { commitFiles, renderCatalogFiles, writeCatalog } from '../../../src/catalog/write.js';
import { type ConfinedFs, realConfinedFs } from '../../../src/util/confined-fs.js';
import { snapshot } from './snapshot.js';
import { runs } from '../../support/properties.js';
import { tempDir } from '../../support/temp-dir.js';

const tmp = () => tempDir('bosun-write-');

/** Values a property may hold: JSON without -0 (which JSON cannot tell from 0). */
const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: 'grapheme' }),
    fc.constantFrom(
      '} {',
      'null',
      'true',
      '1.0',
      '2021-07-21',
      '- item',
      'key: value',
      '#hash',
      "'quote",
      '"dq',
      '  spaced  ',
      'multi\nline\n',
      '\ttab',
    ),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), tie('value'), { maxKeys: 3 }),
  ),
})).value;

const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);

/** Arbitrary catalogs (not necessarily valid graphs: writing must not care). */
const catalog: fc.Arbitrary<DeclarativeConfig> = fc
  .uniqueArray(label, { minLength: 1, maxLength: 3 })
  .chain((names) =>
    fc.record({
      packages: fc.constant(
        names.map((name): PackageDoc => ({ schema: 'olm.package', name, defaultChannel: 'stable' })),
      ),
      channels: fc.constant(
        names.map((p): ChannelDoc => ({
          schema: 'olm.channel',
          package: p,
          name: 'stable',
          entries: [{ name: `${p}.v1.0.0` }],
        })),
      ),
      bundles: fc.tuple(
        ...names.map((p) =>
          fc.array(jsonValue, { maxLength: 3 }).map((values): BundleDoc => ({
            schema: 'olm.bundle',
            package: p,
            name: `${p}.v1.0.0`,
            image: '',
            properties: [
              { type: 'olm.package', value: { packageName: p, version: '1.0.0' } },
              ...values.map((value) => ({ type: 'bosun.test', value })),
            ],
          })),
        ),
      ),
      deprecations: fc.constant([]),
      others: fc.constant([]),
    }),
  );

describe('writing catalogs', () => {
  it.each(Object.values(CatalogFormat))('write → load gives back what was written (%s)', async (format) => {
    await fc.assert(
      fc.asyncProperty(catalog, async (cfg) => {
        const dir = await tmp();
        await writeCatalog(dir, cfg, { format });
        const loaded = await loadCatalog(dir);
        if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
        expect(canonical(loaded.value)).toEqual(canonical(cfg));
      }),
      runs(40),
    );
  });

  it('is deterministic: the order documents arrive in does not change the bytes', async () => {
    await fc.assert(
      fc.asyncProperty(catalog, fc.integer(), async (cfg, seed) => {
        const shuffled: DeclarativeConfig = {
          ...cfg,
          packages: shuffle(cfg.packages, seed),
          channels: shuffle(cfg.channels, seed + 1),
          bundles: shuffle(cfg.bundles, seed + 2),
        };
        for (const f of Object.values(CatalogFormat))
          expect(await encodeConfig(shuffled, f)).toBe(await encodeConfig(cfg, f));
      }),
      runs(50),
    );
  });

  it('writes one file per package, in opm’s shapes', async () => {
    const cfg: DeclarativeConfig = {
      packages: [{ schema: 'olm.package', name: 'b', defaultChannel: 'stable' }],
      channels: [
        {
          schema: 'olm.channel',
          package: 'b',
          name: 'stable',
          entries: [{ skips: ['b.v0.9.0'], name: 'b.v1.0.0' }],
        },
      ],
      bundles: [],
      deprecations: [],
      others: [{ schema: 'x.global', note: 'no package' }],
    };
    const yaml = await renderCatalogFiles(cfg, CatalogFormat.YAML);
    expect([...yaml.keys()]).toEqual(['__global/catalog.yaml', 'b/catalog.yaml']);
    expect(yaml.get('b/catalog.yaml')).toBe(
      '---\ndefaultChannel: stable\nname: b\nschema: olm.package\n---\nentries:\n- name: b.v1.0.0\n  skips:\n  - b.v0.9.0\nname: stable\npackage: b\nschema: olm.channel\n',
    );
    const json = (await renderCatalogFiles(cfg, CatalogFormat.JSON)).get('b/catalog.json')!;
    expect(json.split('\n').slice(0, 5)).toEqual([
      '{',
      '    "schema": "olm.package",',
      '    "name": "b",',
      '    "defaultChannel": "stable"',
      '}',
    ]);
    expect(json).toContain('"name": "b.v1.0.0",\n            "skips"');
  });
});

describe('commitFiles is all or nothing', () => {
  async function seeded() {
    const dir = await tmp();
    await mkdir(join(dir, 'a'), { recursive: true });
    await writeFile(join(dir, 'a/catalog.yaml'), 'old a\n');
    await writeFile(join(dir, 'gone.yaml'), 'old gone\n');
    return dir;
  }
  const changes = [
    { path: 'a/catalog.yaml', content: 'new a\n' },
    { path: 'b/catalog.yaml', content: 'new b\n' },
    { path: 'gone.yaml', content: null },
  ];

  it('applies every change', async () => {
    const dir = await seeded();
    expect(await commitFiles(dir, changes)).toEqual([]);
    expect(await snapshot(dir)).toEqual({
      'a/catalog.yaml': Buffer.from('new a\n').toString('base64'),
      'b/catalog.yaml': Buffer.from('new b\n').toString('base64'),
    });
  });

  it.each([
    ['writing the second temporary file', 'createFile', 2],
    ['moving the second old file aside', 'rename', 2],
    ['renaming the last new file into place', 'rename', 4],
  ] as const)('leaves the directory as it was when %s fails', async (_, op, nth) => {
    const dir = await seeded();
    const before = await snapshot(dir);
    let calls = 0;
    const failing =
      <T extends unknown[], R>(name: string, fn: (...a: T) => Promise<R>) =>
      async (...a: T): Promise<R> => {
        if (name === op && ++calls === nth) throw new Error(`injected ${name} failure`);
        return fn(...a);
      };
    const fs: ConfinedFs = {
      ...realConfinedFs,
      createFile: failing('createFile', realConfinedFs.createFile),
      rename: failing('rename', realConfinedFs.rename),
    };
    await expect(commitFiles(dir, changes, fs)).rejects.toThrow(/nothing was changed: injected/);
    expect(await snapshot(dir)).toEqual(before);
    expect(await readFile(join(dir, 'a/catalog.yaml'), 'utf8')).toBe('old a\n');
  });
});

function shuffle<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1664525 + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The same catalog with documents in one order, so that equality ignores order. */
function canonical(cfg: DeclarativeConfig): DeclarativeConfig {
  const key = (d: { package?: string; name?: string }) => `${d.package ?? ''}/${d.name ?? ''}`;
  const by = <T extends { package?: string; name?: string }>(xs: T[]) =>
    [...xs].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return { ...cfg, packages: by(cfg.packages), channels: by(cfg.channels), bundles: by(cfg.bundles) };
}

describe('YAML with inline manifests', () => {
  it('writes exactly what dumping every string would write', async () => {
    const { toYaml } = await import('../../../src/bundle/yaml.js');
    const { encodeDocuments } = await import('../../../src/catalog/encode.js');
    const big = Buffer.from('{"kind":"ConfigMap"}'.repeat(40)).toString('base64');
    const doc = {
      schema: 'olm.bundle',
      name: 'b.v1.0.0',
      package: 'b',
      image: '',
      properties: [
        { type: 'olm.bundle.object', value: { data: big } },
        { type: 'olm.bundle.object', value: { data: '1'.repeat(300) } },
        { type: 'olm.bundle.object', value: { data: 'c2hvcnQ=' } },
        { type: 'olm.package', value: { packageName: 'b', version: '1.0.0' } },
      ],
    };
    expect(encodeDocuments([doc], CatalogFormat.YAML)).toBe(`---\n${toYaml(doc)}`);
  });
});
