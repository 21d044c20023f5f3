/**
 * Images built from files, the same bytes and so the same digest for the same files, labels and
 * platform on every machine: one layer, a reproducible tar (bundle/archive.ts: sorted entries,
 * owner root, fixed modes and mtime) compressed by a gzip without name or time; a config with the
 * platform, the labels and `rootfs.diff_ids`, and no timestamp anywhere; an OCI manifest.
 * Building is pure; pushing to a registry and writing to an OCI layout are the I/O beside it.
 */
import { type FileMap, gzipReproducible, packTar } from '../util/tar-write.js';
import type { RegistryClient } from './client.js';
import { sha256Digest } from './digest.js';
import { OciError } from './errors.js';
import type { ImageLayout } from './layout.js';
import { DefaultPlatform, type Descriptor, type Platform } from './manifest.js';
import { MediaType } from './media-types.js';
import { formatReference, type ImageReference } from './reference.js';

export interface Blob {
  descriptor: Descriptor;
  data: Buffer;
}

export interface BuiltImage {
  /** The manifest's bytes, which its digest covers. */
  manifest: Blob;
  config: Blob;
  layers: Blob[];
  /** The uncompressed layer's digest (`rootfs.diff_ids`). */
  diffIds: string[];
}

export interface BuildInput {
  /** The image's files by path from its root (`manifests/x.yaml`, `configs/pkg/catalog.json`). */
  files: FileMap;
  labels: Readonly<Record<string, string>>;
  platform?: Platform;
  /** What made the layer, in the config's history (`bosun bundle build`): no time, no version. */
  createdBy: string;
}

const blobOf = (data: Buffer, mediaType: string): Blob => ({
  descriptor: { mediaType, digest: sha256Digest(data), size: data.length },
  data,
});

/** Sorted keys: the config's bytes must not depend on the order labels were given in. */
const sorted = (labels: Readonly<Record<string, string>>) =>
  Object.fromEntries(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]!]),
  );

export function buildImage(input: BuildInput): BuiltImage {
  const platform = input.platform ?? DefaultPlatform;
  const tar = packTar(input.files);
  const layer = blobOf(gzipReproducible(tar), MediaType.OciLayerGzip);
  const diffId = sha256Digest(tar);
  const config = blobOf(
    Buffer.from(
      JSON.stringify({
        architecture: platform.architecture,
        os: platform.os,
        ...(platform.variant !== undefined && { variant: platform.variant }),
        config: { Labels: sorted(input.labels) },
        rootfs: { type: 'layers', diff_ids: [diffId] },
        history: [{ created_by: input.createdBy }],
      }),
    ),
    MediaType.OciConfig,
  );
  const manifest = blobOf(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MediaType.OciManifest,
        config: config.descriptor,
        layers: [layer.descriptor],
      }),
    ),
    MediaType.OciManifest,
  );
  return { manifest, config, layers: [layer], diffIds: [diffId] };
}

/**
 * Pushes a built image to `ref` under its tag (blobs the repository has are not sent again);
 * returns the manifest's digest. A reference with a digest is refused: the build decides it.
 */
export async function pushImage(
  client: RegistryClient,
  ref: ImageReference,
  image: BuiltImage,
): Promise<string> {
  if (ref.digest !== undefined)
    throw new OciError(
      `${formatReference(ref)}: an image is pushed to a tag; its digest is what the build makes (${image.manifest.descriptor.digest})`,
      { image: formatReference(ref) },
    );
  for (const blob of [...image.layers, image.config])
    await client.pushBlob(ref, { ...blob.descriptor, data: blob.data });
  return client.pushManifest(ref, image.manifest.data, MediaType.OciManifest, ref.tag ?? 'latest');
}

/** Writes a built image into an OCI layout, tagged `tag` (replacing what had that tag). */
export async function writeImageToLayout(layout: ImageLayout, image: BuiltImage, tag: string): Promise<void> {
  for (const blob of [...image.layers, image.config, image.manifest])
    await layout.writeBlob(blob.descriptor, blob.data);
  await layout.addManifest(image.manifest.descriptor, tag);
}
