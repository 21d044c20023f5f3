/**
 * The distribution client against a real registry (Debian's docker-registry, the distribution
 * project's v2.8) on 127.0.0.1: what is pushed comes back byte for byte and verified, tags
 * resolve to digests, indexes give each platform its image, uploads skip what is there, and
 * every way a pull can go wrong is an error naming the image and what failed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { DigestMismatchError, OciError } from '../../../src/oci/errors.js';
import { MediaType } from '../../../src/oci/media-types.js';
import { parseReference } from '../../../src/oci/reference.js';
import {
  type Blob,
  type TestImage,
  blobOf,
  gzipLayer,
  imageOf,
  indexOf,
  zstdLayer,
} from '../../support/oci-images.js';
import { capture } from '../../support/capture.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';

const missing = await registryAvailable();
if (missing) console.warn(`OCI registry tests skipped: ${missing}`);

const MiB = 1024 * 1024;

async function push(client: RegistryClient, ref: string, image: TestImage, tag = true): Promise<void> {
  const r = parseReference(ref);
  for (const blob of [image.config, ...image.layers])
    await client.pushBlob(r, { ...blob.descriptor, data: blob.data });
  await client.pushManifest(r, image.manifest, image.mediaType, tag ? r.tag : image.digest);
}

describe.skipIf(missing !== undefined)('a plain registry on 127.0.0.1', () => {
  let registry: TestRegistry;
  let client: RegistryClient;
  const image = imageOf([
    gzipLayer([
      { path: 'configs/', type: 'dir' },
      { path: 'configs/a.json', data: '{"schema":"olm.package"}' },
    ]),
    zstdLayer([{ path: 'configs/b.json', data: 'b'.repeat(10_000) }]),
    blobOf(Buffer.from(Array.from({ length: 3 * MiB }, (_, i) => i % 251)), MediaType.OciLayer),
  ]);
  beforeAll(async () => {
    registry = await startRegistry({ kind: 'plain' });
    client = new RegistryClient();
    return () => client.close();
  });

  it('pushes a three-layer image and pulls it back byte for byte, verified', async () => {
    const ref = `${registry.host}/bosun/round-trip:v1`;
    await push(client, ref, image);
    const pulled = await client.getImage(parseReference(ref));
    expect(pulled.digest).toBe(image.digest);
    expect(pulled.bytes.equals(image.manifest)).toBe(true);
    expect(pulled.manifest.layers.map((l) => l.digest)).toEqual(image.layers.map((l) => l.descriptor.digest));
    const config = await client.blobBytes(pulled.ref, pulled.manifest.config, MiB);
    expect(config.equals(image.config.data)).toBe(true);
    for (const [i, layer] of pulled.manifest.layers.entries())
      expect((await client.blobBytes(pulled.ref, layer, 10 * MiB)).equals(image.layers[i]!.data)).toBe(true);
  });

  it('resolves a tag to the digest of its manifest, and a Docker schema 2 manifest too', async () => {
    const ref = parseReference(`${registry.host}/bosun/resolve:latest`);
    await push(client, `${registry.host}/bosun/resolve:latest`, image);
    expect(await client.resolve(ref)).toEqual({
      digest: image.digest,
      mediaType: MediaType.OciManifest,
      size: image.manifest.length,
    });
    const docker = imageOf(image.layers.slice(0, 1), { docker: true });
    await push(client, `${registry.host}/bosun/resolve:docker`, docker);
    const resolved = await client.resolve(parseReference(`${registry.host}/bosun/resolve:docker`));
    expect(resolved.digest).toBe(docker.digest);
    expect(resolved.mediaType).toBe(MediaType.DockerManifest);
    const pulled = await client.getImage(parseReference(`${registry.host}/bosun/resolve@${docker.digest}`));
    expect(pulled.manifest.mediaType).toBe(MediaType.DockerManifest);
  });

  it('picks the platform asked for from an index of two, linux/amd64 by default', async () => {
    const amd = imageOf([gzipLayer([{ path: 'arch', data: 'amd64' }])]);
    const arm = imageOf([gzipLayer([{ path: 'arch', data: 'arm64' }])], {
      platform: { os: 'linux', architecture: 'arm64' },
    });
    const base = `${registry.host}/bosun/multi`;
    await push(client, `${base}:amd`, amd);
    await push(client, `${base}:arm`, arm);
    for (const docker of [false, true]) {
      const index = indexOf(
        [
          { image: amd, platform: { os: 'linux', architecture: 'amd64' } },
          { image: arm, platform: { os: 'linux', architecture: 'arm64', variant: 'v8' } },
        ],
        docker,
      );
      await client.pushManifest(parseReference(`${base}:v1`), index.bytes, index.mediaType);
      const chosen = await client.getImage(parseReference(`${base}:v1`));
      expect(chosen.digest).toBe(amd.digest);
      expect(chosen.index?.digest).toBe(index.digest);
      const onArm = await client.getImage(parseReference(`${base}:v1`), {
        os: 'linux',
        architecture: 'arm64',
      });
      expect(onArm.digest).toBe(arm.digest);
      const layer = await client.blobBytes(onArm.ref, onArm.manifest.layers[0]!, MiB);
      expect(layer.equals(arm.layers[0]!.data)).toBe(true);
      // An index without the platform is an error naming it and what the index has.
      const s390x = client.getImage(parseReference(`${base}:v1`), { os: 'linux', architecture: 's390x' });
      await expect(s390x).rejects.toThrow(
        new RegExp(
          `${base}:v1: the index ${index.digest} has no linux/s390x image \\(ImagePlatformMissing\\); it has images for linux/amd64, linux/arm64/v8`,
        ),
      );
      // So does the CLI, for a catalog image of arm64 only, with the reason a CatalogSource gives.
      const armOnly = indexOf(
        [{ image: arm, platform: { os: 'linux', architecture: 'arm64', variant: 'v8' } }],
        docker,
      );
      await client.pushManifest(parseReference(`${base}:arm-only`), armOnly.bytes, armOnly.mediaType);
      const cli = capture();
      expect(await main(['catalog', 'render', `${base}:arm-only`], cli.ctx)).not.toBe(0);
      expect(cli.stderr).toContain(
        `error: ${base}:arm-only: the index ${armOnly.digest} has no linux/amd64 image (ImagePlatformMissing); it has images for linux/arm64/v8`,
      );
    }
  });

  it('skips blobs the repository has (HEAD) and mounts from another repository', async () => {
    const ref = parseReference(`${registry.host}/bosun/skip:v1`);
    const layer = image.layers[0]!;
    expect(await client.hasBlob(ref, layer.descriptor.digest)).toBe(false);
    expect(await client.pushBlob(ref, { ...layer.descriptor, data: layer.data })).toBe('uploaded');
    expect(await client.hasBlob(ref, layer.descriptor.digest)).toBe(true);
    expect(await client.pushBlob(ref, { ...layer.descriptor, data: layer.data })).toBe('present');
    const other = parseReference(`${registry.host}/bosun/skip-mounted:v1`);
    expect(
      await client.pushBlob(other, { ...layer.descriptor, data: layer.data }, { mountFrom: 'bosun/skip' }),
    ).toBe('mounted');
    expect(await client.hasBlob(other, layer.descriptor.digest)).toBe(true);
  });

  it('pushes a blob in chunks (PATCH, then PUT) that pulls back whole', async () => {
    const ref = parseReference(`${registry.host}/bosun/chunked:v1`);
    const big = image.layers[2]!;
    expect(await client.pushBlob(ref, { ...big.descriptor, data: big.data }, { chunkSize: MiB })).toBe(
      'uploaded',
    );
    expect((await client.blobBytes(ref, big.descriptor, 4 * MiB)).equals(big.data)).toBe(true);
    // A size that does not divide into chunks: the last PATCH is short.
    const odd = blobOf(Buffer.from('x'.repeat(MiB + 12_345)), MediaType.OciLayer);
    expect(await client.pushBlob(ref, { ...odd.descriptor, data: odd.data }, { chunkSize: 300_000 })).toBe(
      'uploaded',
    );
    expect((await client.blobBytes(ref, odd.descriptor, 4 * MiB)).equals(odd.data)).toBe(true);
  });

  it('refuses a blob whose stored bytes no longer match its digest, keeping nothing', async () => {
    const ref = `${registry.host}/bosun/tampered:v1`;
    const layer: Blob = gzipLayer([
      { path: 'configs/catalog.json', data: '{"schema":"olm.package","name":"good"}' },
    ]);
    const tampered = imageOf([layer]);
    await push(client, ref, tampered);
    const stored = registry.blobPath(layer.descriptor.digest);
    const original = await readFile(stored);
    const evil = Buffer.from(original);
    evil[evil.length - 5] = evil[evil.length - 5]! ^ 0xff; // same size, other content
    await writeFile(stored, evil);
    const pulled = await client.getImage(parseReference(ref));
    const read = client.blobBytes(pulled.ref, pulled.manifest.layers[0]!, MiB);
    await expect(read).rejects.toBeInstanceOf(DigestMismatchError);
    await expect(client.blobBytes(pulled.ref, pulled.manifest.layers[0]!, MiB)).rejects.toThrow(
      new RegExp(
        `${registry.host}/bosun/tampered:v1@${pulled.digest}: blob ${layer.descriptor.digest} has the digest sha256:[0-9a-f]{64}: the registry served other content`,
      ),
    );
  });

  it('refuses a manifest whose bytes are not the digest asked for', async () => {
    const ref = parseReference(`${registry.host}/bosun/wrong-manifest:v1`);
    // An image of its own: the registry keeps one copy of equal content for every repository.
    const own = imageOf([gzipLayer([{ path: 'own', data: 'wrong-manifest' }])]);
    await push(client, `${registry.host}/bosun/wrong-manifest:v1`, own);
    // The registry stores manifests as blobs too: change the stored bytes behind the digest.
    const stored = registry.blobPath(own.digest);
    const evil = Buffer.from(
      (await readFile(stored)).toString().replace('"schemaVersion":2', '"schemaVersion":2 '),
    );
    await writeFile(stored, evil);
    await expect(client.getManifest({ ...ref, digest: own.digest })).rejects.toThrow(
      new RegExp(
        `the registry served a manifest with the digest sha256:[0-9a-f]{64} for ${own.digest}; it was not used`,
      ),
    );
    // By tag, the digest the registry names is checked against the bytes it sends.
    await expect(client.getManifest(ref)).rejects.toThrow(
      new RegExp(
        `the registry names the digest ${own.digest} for the manifest it served, whose digest is sha256:[0-9a-f]{64}; it was not used`,
      ),
    );
  });

  it('refuses a layer over the size limit before fetching it, and one whose descriptor lies while it streams', async () => {
    const ref = parseReference(`${registry.host}/bosun/round-trip:v1`);
    const pulled = await client.getImage(ref);
    const big = pulled.manifest.layers[2]!;
    await expect(client.blobStream(pulled.ref, big, MiB)).rejects.toThrow(
      `${registry.host}/bosun/round-trip:v1@${pulled.digest}: blob ${big.digest} is ${3 * MiB} bytes, past the limit of ${MiB}; nothing was fetched`,
    );
    // A descriptor that says the blob is small: the bytes past it are refused as they arrive.
    await expect(client.blobBytes(pulled.ref, { ...big, size: 1000 }, MiB)).rejects.toBeInstanceOf(
      DigestMismatchError,
    );
  });

  it('names the registry and the repository when the image is not there', async () => {
    await expect(client.getImage(parseReference(`${registry.host}/bosun/nothing:v9`))).rejects.toThrow(
      `${registry.host}/bosun/nothing:v9: cannot fetch the manifest v9: the registry has no such thing (404): MANIFEST_UNKNOWN: manifest unknown`,
    );
  });

  it('says the registry is down when it is, and works again once it is back', async () => {
    const ref = parseReference(`${registry.host}/bosun/round-trip:v1`);
    await registry.stop();
    try {
      const down = new RegistryClient();
      const err = await down.getImage(ref).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OciError);
      expect((err as Error).message).toBe(
        `${registry.host}/bosun/round-trip:v1: cannot fetch the manifest v1: nothing answers at ${registry.host} (connection refused): is the registry running?`,
      );
      await down.close();
    } finally {
      await registry.start();
    }
    expect((await client.getImage(ref)).digest).toBe(image.digest);
  });
});
