/**
 * Pulling an image's content: its layers streamed from the registry, each verified against its
 * digest while it is applied, into a fresh folder or into memory. A layer that fails its digest
 * fails the extraction, and the folder goes with it.
 */
import type { RegistryClient, ResolvedImage } from './client.js';
import {
  DefaultExtractLimits,
  type ExtractLimits,
  type ExtractSummary,
  extractLayers,
  type ImageFiles,
  type LayerSource,
  readLayers,
} from './extract.js';
import { DefaultPlatform, type Platform } from './manifest.js';
import { formatReference, type ImageReference } from './reference.js';

export interface PullOptions {
  platform?: Platform;
  limits?: ExtractLimits;
  /** Only these paths of the image are kept (see ExtractOptions.only). */
  only?: readonly string[];
}

/** The layers of `image`, each opened as a verified stream, bounded by the image's total limit. */
export function registryLayers(
  client: RegistryClient,
  image: ResolvedImage,
  limits: ExtractLimits,
): LayerSource[] {
  return image.manifest.layers.map((layer) => ({
    digest: layer.digest,
    mediaType: layer.mediaType,
    // A compressed layer is never larger than what it inflates to, give or take its headers.
    open: () => client.blobStream(image.ref, layer, limits.maxTotalBytes + 1024 * 1024),
  }));
}

/** Pulls `ref` (the platform's image of an index) into `dest`, a folder that must not exist yet. */
export async function pullToFolder(
  client: RegistryClient,
  ref: ImageReference,
  dest: string,
  opts: PullOptions = {},
): Promise<{ image: ResolvedImage; summary: ExtractSummary }> {
  const image = await client.getImage(ref, opts.platform ?? DefaultPlatform);
  const limits = opts.limits ?? DefaultExtractLimits;
  const summary = await extractLayers(registryLayers(client, image, limits), dest, {
    image: formatReference(image.ref),
    limits,
    ...(opts.only && { only: opts.only }),
  });
  return { image, summary };
}

/** Pulls `ref` into memory. */
export async function pullToMemory(
  client: RegistryClient,
  ref: ImageReference,
  opts: PullOptions = {},
): Promise<{ image: ResolvedImage; files: ImageFiles }> {
  const image = await client.getImage(ref, opts.platform ?? DefaultPlatform);
  const limits = opts.limits ?? DefaultExtractLimits;
  const files = await readLayers(registryLayers(client, image, limits), {
    image: formatReference(image.ref),
    limits,
    ...(opts.only && { only: opts.only }),
  });
  return { image, files };
}
