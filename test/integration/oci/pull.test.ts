/**
 * Images pulled from a real registry into a folder, into memory and into an OCI image layout,
 * and pushed from a layout back: layers applied in order with their whiteouts, each verified
 * against its digest while it is applied, and a layer the registry serves wrong leaves nothing.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../../../src/oci/client.js';
import { DigestMismatchError, LayerEntryError } from '../../../src/oci/errors.js';
import { ImageLayout, pullToLayout, pushFromLayout } from '../../../src/oci/layout.js';
import { pullToFolder, pullToMemory } from '../../../src/oci/pull.js';
import { parseReference } from '../../../src/oci/reference.js';
import { gzipLayer, imageOf, indexOf, type TestImage, zstdLayer } from '../../support/oci-images.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { tempDir } from '../../support/temp-dir.js';

const missing = await registryAvailable();
if (missing) console.warn(`OCI registry tests skipped: ${missing}`);

const MiB = 1024 * 1024;

async function push(client: RegistryClient, ref: string, image: TestImage): Promise<void> {
  const r = parseReference(ref);
  for (const blob of [image.config, ...image.layers])
    await client.pushBlob(r, { ...blob.descriptor, data: blob.data });
  await client.pushManifest(r, image.manifest, image.mediaType);
}

describe.skipIf(missing !== undefined)('pulling image content from a registry', () => {
  let registry: TestRegistry;
  let client: RegistryClient;
  const catalog = imageOf([
    gzipLayer([
      { path: 'configs/etcd/catalog.json', data: '{"schema":"olm.package","name":"etcd"}' },
      { path: 'configs/old/catalog.json', data: '{"schema":"olm.package","name":"old"}' },
      { path: 'bin/opm', data: 'binary', mode: 0o755 },
    ]),
    zstdLayer([
      { path: 'configs/.wh.old' },
      { path: 'configs/new/catalog.json', data: '{"schema":"olm.package","name":"new"}' },
    ]),
  ]);
  beforeAll(async () => {
    registry = await startRegistry({ kind: 'plain' });
    client = new RegistryClient();
    await push(client, `${registry.host}/catalogs/community:v1`, catalog);
    return () => client.close();
  });

  it('applies the layers in order into a fresh folder', async () => {
    const dest = join(await tempDir('bosun-pull-'), 'catalog');
    const { image, summary } = await pullToFolder(
      client,
      parseReference(`${registry.host}/catalogs/community:v1`),
      dest,
      {
        only: ['configs'],
      },
    );
    expect(image.digest).toBe(catalog.digest);
    expect(summary.files).toBe(3);
    expect(await readFile(join(dest, 'configs/new/catalog.json'), 'utf8')).toContain('"new"');
    expect(existsSync(join(dest, 'configs/old'))).toBe(false);
    expect(existsSync(join(dest, 'bin'))).toBe(false);
    const { files } = await pullToMemory(client, parseReference(`${registry.host}/catalogs/community:v1`));
    expect([...files.files.keys()].sort()).toEqual([
      'bin/opm',
      'configs/etcd/catalog.json',
      'configs/new/catalog.json',
    ]);
  });

  it('removes the folder when a layer does not match its digest', async () => {
    const layer = gzipLayer([
      { path: 'configs/x/catalog.json', data: '{"schema":"olm.package","name":"x"}' },
    ]);
    const image = imageOf([catalog.layers[0]!, layer]);
    await push(client, `${registry.host}/catalogs/tampered:v1`, image);
    const stored = registry.blobPath(layer.descriptor.digest);
    const evil = Buffer.from(await readFile(stored));
    evil[evil.length - 3] = evil[evil.length - 3]! ^ 0x01;
    await writeFile(stored, evil);
    const dest = join(await tempDir('bosun-pull-'), 'catalog');
    const err = await pullToFolder(
      client,
      parseReference(`${registry.host}/catalogs/tampered:v1`),
      dest,
    ).catch((e: unknown) => e);
    // Either the inflation notices the damage first or the digest does: both leave nothing.
    expect(err instanceof DigestMismatchError || err instanceof LayerEntryError).toBe(true);
    expect((err as Error).message).toContain(layer.descriptor.digest);
    expect(existsSync(dest)).toBe(false);
  });

  it('refuses an image whose layers go past the size limit, keeping nothing', async () => {
    const dest = join(await tempDir('bosun-pull-'), 'catalog');
    const err = await pullToFolder(client, parseReference(`${registry.host}/catalogs/community:v1`), dest, {
      limits: { maxFileBytes: 10, maxTotalBytes: 1000, maxEntries: 100 },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `${registry.host}/catalogs/community:v1@${catalog.digest}: layer ${catalog.layers[0]!.descriptor.digest}: entry "configs/etcd/catalog.json": it is 38 bytes, past the limit of 10 for one file; nothing was extracted`,
    );
    expect(existsSync(dest)).toBe(false);
  });

  it('copies a two-platform index into an image layout and from there to another repository', async () => {
    const arm = imageOf([gzipLayer([{ path: 'arch', data: 'arm64' }])], {
      platform: { os: 'linux', architecture: 'arm64' },
    });
    await push(client, `${registry.host}/catalogs/multi:arm`, arm);
    await push(client, `${registry.host}/catalogs/multi:amd`, catalog);
    const index = indexOf([
      { image: catalog, platform: { os: 'linux', architecture: 'amd64' } },
      { image: arm, platform: { os: 'linux', architecture: 'arm64' } },
    ]);
    await client.pushManifest(
      parseReference(`${registry.host}/catalogs/multi:v1`),
      index.bytes,
      index.mediaType,
    );

    const layout = await ImageLayout.open(await tempDir('bosun-layout-'));
    const copied = await pullToLayout(client, parseReference(`${registry.host}/catalogs/multi:v1`), layout, {
      maxBlobBytes: MiB,
    });
    expect(copied.digest).toBe(index.digest);
    expect((await layout.find('v1')).digest).toBe(index.digest);
    const reopened = await ImageLayout.open(layout.dir);
    expect((await reopened.index()).manifests.map((m) => m.digest)).toEqual([index.digest]);

    const digest = await pushFromLayout(
      client,
      reopened,
      'v1',
      parseReference(`${registry.host}/mirror/multi:v2`),
      {
        maxBlobBytes: MiB,
        chunkSize: 64,
      },
    );
    expect(digest).toBe(index.digest);
    const onArm = await client.getImage(parseReference(`${registry.host}/mirror/multi:v2`), {
      os: 'linux',
      architecture: 'arm64',
    });
    expect(onArm.digest).toBe(arm.digest);
    expect(
      (await client.blobBytes(onArm.ref, onArm.manifest.layers[0]!, MiB)).equals(arm.layers[0]!.data),
    ).toBe(true);
  });
});

const corpus = process.env.BOSUN_CORPUS_DIR;
if (!corpus)
  console.warn('OCI round trip of the corpus skipped: set BOSUN_CORPUS_DIR to the OperatorHub corpus');

describe.skipIf(missing !== undefined || !corpus)('the 2021 OperatorHub corpus through a registry', () => {
  it('every package, pushed as an image of its manifests, pulls back byte for byte', async () => {
    const registry = await startRegistry({ kind: 'plain' });
    const client = new RegistryClient();
    const { readdir, readFile: read } = await import('node:fs/promises');
    const packages = (await readdir(corpus!, { withFileTypes: true })).filter((d) => d.isDirectory());
    let files = 0;
    for (const pkg of packages) {
      const entries = (await readdir(join(corpus!, pkg.name), { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name).slice(corpus!.length + 1));
      const contents = new Map(
        await Promise.all(entries.map(async (p) => [p, await read(join(corpus!, p))] as const)),
      );
      const image = imageOf([gzipLayer([...contents].map(([path, data]) => ({ path, data })))]);
      const name = pkg.name.toLowerCase().replace(/[^a-z0-9-]/g, '-');
      await push(client, `${registry.host}/corpus/${name}:v1`, image);
      const pulled = await pullToMemory(client, parseReference(`${registry.host}/corpus/${name}:v1`));
      expect([...pulled.files.files.keys()].sort()).toEqual([...contents.keys()].sort());
      for (const [path, data] of contents) expect(pulled.files.files.get(path)!.equals(data)).toBe(true);
      files += contents.size;
    }
    console.log(`corpus through the registry: ${packages.length} packages, ${files} files`);
    expect(packages.length).toBeGreaterThan(190);
    await client.close();
  });
});
