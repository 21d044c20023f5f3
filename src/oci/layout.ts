/**
 * OCI image layouts: images in a folder (`oci-layout`, `index.json`, `blobs/<alg>/<hex>`), as
 * `skopeo copy oci:`, `crane push --format oci` and `opm` read and write them. Blobs are written
 * to a temporary file (O_EXCL|O_NOFOLLOW) and renamed into place only once their digest is
 * verified, so a layout never holds a blob that is not its digest; blobs are read without
 * following links and verified as they stream, like a registry's. Digests are checked before
 * they become file names, so none can name a path outside `blobs/`.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readFileNoFollow } from '../util/confined-fs.js';
import { writeFileAtomic } from '../util/fs.js';
import type { RegistryClient } from './client.js';
import { digestError, digestHex, verifyingStream } from './digest.js';
import { OciError } from './errors.js';
import {
  type Descriptor,
  type ImageIndex,
  MaxManifestBytes,
  type Platform,
  parseManifest,
} from './manifest.js';
import { MediaType } from './media-types.js';
import { formatReference, type ImageReference } from './reference.js';

/** The annotation an index entry names its tag with. */
export const RefNameAnnotation = 'org.opencontainers.image.ref.name';

const CreateFlags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

export class ImageLayout {
  private constructor(readonly dir: string) {}

  /** A layout in `dir`: made when missing, opened (and checked) when it is one already. */
  static async open(dir: string): Promise<ImageLayout> {
    await mkdir(join(dir, 'blobs', 'sha256'), { recursive: true });
    const layout = new ImageLayout(dir);
    try {
      const marker = JSON.parse((await readFileNoFollow(join(dir, 'oci-layout'))).toString('utf8')) as {
        imageLayoutVersion?: unknown;
      };
      if (typeof marker.imageLayoutVersion !== 'string' || !marker.imageLayoutVersion.startsWith('1.'))
        throw new OciError(`${dir}/oci-layout: imageLayoutVersion is not 1.x`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        if (err instanceof OciError) throw err;
        throw new OciError(`${dir}/oci-layout: cannot be read: ${(err as Error).message}`);
      }
      await writeFileAtomic(join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
      await layout.writeIndex({
        kind: 'index',
        schemaVersion: 2,
        mediaType: MediaType.OciIndex,
        manifests: [],
      });
    }
    return layout;
  }

  private blobPath(digest: string): string {
    const bad = digestError(digest);
    if (bad) throw new OciError(`${this.dir}: ${bad}`);
    return join(this.dir, 'blobs', digest.slice(0, digest.indexOf(':')), digestHex(digest));
  }

  async hasBlob(digest: string): Promise<boolean> {
    try {
      return (await stat(this.blobPath(digest))).isFile();
    } catch {
      return false;
    }
  }

  /** Stores a blob from a stream, verified against `descriptor` before it takes its name. */
  async writeBlob(descriptor: Descriptor, data: Readable | Uint8Array): Promise<void> {
    const path = this.blobPath(descriptor.digest);
    if (await this.hasBlob(descriptor.digest)) {
      if (!(data instanceof Uint8Array)) data.destroy();
      return;
    }
    await mkdir(join(path, '..'), { recursive: true });
    const temp = `${path}.${randomBytes(6).toString('hex')}.partial`;
    try {
      const handle = await open(temp, CreateFlags, 0o644);
      const verify = verifyingStream(descriptor, { image: this.dir, digest: descriptor.digest });
      // The write stream closes the handle when it ends or fails.
      await pipeline(data instanceof Uint8Array ? [data] : data, verify, handle.createWriteStream());
      await rename(temp, path);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  /** A blob's bytes as a stream verified against `descriptor`, not following links. */
  async blobStream(descriptor: Descriptor): Promise<Readable> {
    const path = this.blobPath(descriptor.digest);
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: unknown) => {
      throw new OciError(`${this.dir}: blob ${descriptor.digest}: ${(err as Error).message}`, {
        digest: descriptor.digest,
      });
    });
    const verify = verifyingStream(descriptor, { image: this.dir, digest: descriptor.digest });
    const source = handle.createReadStream();
    source.on('error', (err) => verify.destroy(err));
    verify.on('close', () => source.destroy());
    source.pipe(verify);
    return verify;
  }

  async readBlob(descriptor: Descriptor, maxBytes: number): Promise<Buffer> {
    if (descriptor.size > maxBytes)
      throw new OciError(
        `${this.dir}: blob ${descriptor.digest} is ${descriptor.size} bytes, past the limit of ${maxBytes}`,
      );
    const chunks: Buffer[] = [];
    for await (const chunk of await this.blobStream(descriptor)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** The layout's index.json. */
  async index(): Promise<ImageIndex> {
    const path = join(this.dir, 'index.json');
    const bytes = await readFileNoFollow(path);
    if (bytes.length > MaxManifestBytes) throw new OciError(`${path}: is larger than an index may be`);
    const index = parseManifest(bytes, MediaType.OciIndex, { image: path });
    if (index.kind !== 'index') throw new OciError(`${path}: is not an image index`);
    return index;
  }

  private async writeIndex(index: ImageIndex): Promise<void> {
    const { kind: _kind, ...doc } = index;
    await writeFileAtomic(join(this.dir, 'index.json'), `${JSON.stringify(doc)}\n`);
  }

  /** Names `descriptor` in index.json, under `tag` when given (replacing what had that tag). */
  async addManifest(descriptor: Descriptor, tag?: string): Promise<void> {
    const index = await this.index();
    const annotations = { ...descriptor.annotations, ...(tag !== undefined && { [RefNameAnnotation]: tag }) };
    const entry: Descriptor = { ...descriptor, ...(Object.keys(annotations).length > 0 && { annotations }) };
    const kept = index.manifests.filter((m) =>
      tag !== undefined ? m.annotations?.[RefNameAnnotation] !== tag : m.digest !== descriptor.digest,
    );
    await this.writeIndex({ ...index, manifests: [...kept, entry] });
  }

  /** The index entry tagged `tag`, or the one with digest `tag`. */
  async find(tag: string): Promise<Descriptor> {
    const index = await this.index();
    const found = index.manifests.find((m) => m.annotations?.[RefNameAnnotation] === tag || m.digest === tag);
    if (!found) throw new OciError(`${this.dir}: index.json names no image "${tag}"`);
    return found;
  }
}

/**
 * Copies `ref` from a registry into the layout, tagged with its tag: the index it names (every
 * platform's manifest, config and layers) or the image manifest, each blob verified.
 */
export async function pullToLayout(
  client: RegistryClient,
  ref: ImageReference,
  layout: ImageLayout,
  opts: { maxBlobBytes: number; platforms?: Platform[] },
): Promise<Descriptor> {
  const top = await client.getManifest(ref);
  const manifests =
    top.manifest.kind === 'index'
      ? await Promise.all(top.manifest.manifests.map((d) => client.getManifest(ref, d.digest)))
      : [top];
  for (const m of manifests) {
    if (m.manifest.kind !== 'manifest')
      throw new OciError(`${formatReference(ref)}: an index inside an index is not copied into a layout`);
    for (const blob of [m.manifest.config, ...m.manifest.layers])
      if (!(await layout.hasBlob(blob.digest)))
        await layout.writeBlob(
          blob,
          await client.blobStream({ ...ref, digest: m.digest }, blob, opts.maxBlobBytes),
        );
    if (m !== top)
      await layout.writeBlob({ mediaType: m.mediaType, digest: m.digest, size: m.bytes.length }, m.bytes);
  }
  const descriptor: Descriptor = { mediaType: top.mediaType, digest: top.digest, size: top.bytes.length };
  await layout.writeBlob(descriptor, top.bytes);
  await layout.addManifest(descriptor, ref.tag);
  return descriptor;
}

/** Pushes the layout's image `tag` (an index or a manifest, and all it names) to `ref`. */
export async function pushFromLayout(
  client: RegistryClient,
  layout: ImageLayout,
  tag: string,
  ref: ImageReference,
  opts: { maxBlobBytes: number; chunkSize?: number },
): Promise<string> {
  const top = await layout.find(tag);
  const pushManifest = async (d: Descriptor, asTag?: string): Promise<string> => {
    const bytes = await layout.readBlob(d, MaxManifestBytes);
    const manifest = parseManifest(bytes, d.mediaType, { image: layout.dir, digest: d.digest });
    if (manifest.kind === 'index') for (const child of manifest.manifests) await pushManifest(child);
    else
      for (const blob of [manifest.config, ...manifest.layers])
        await client.pushBlob(
          ref,
          { ...blob, data: await layout.readBlob(blob, opts.maxBlobBytes) },
          opts.chunkSize !== undefined ? { chunkSize: opts.chunkSize } : {},
        );
    return client.pushManifest(ref, bytes, manifest.mediaType, asTag ?? d.digest);
  };
  return pushManifest(top, ref.tag ?? top.digest);
}
