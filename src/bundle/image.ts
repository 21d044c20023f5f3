/**
 * Bundle images, as operator-sdk's bundle Dockerfile makes them and opm and OLM read them:
 * `manifests/` and `metadata/` at the image root, and the annotations of
 * `metadata/annotations.yaml` as the image's labels (the package label is what makes it a bundle
 * image: olm/image-kind.ts).
 *
 * Built from a bundle directory's files, byte for byte as they are. Read from a registry by
 * digest, into memory, within the bundle limits (limits.ts) and the extraction's checks
 * (oci/extract.ts), then read and checked like a bundle directory: a bundle image is not trusted
 * more than a folder is.
 */
import type { Bundle } from '../apis/bundle.js';
import { BundleAnnotation } from '../apis/bundle.js';
import { ImageKind, imageKindOf, labelText, wrongKind } from '../olm/image-kind.js';
import { type BuiltImage, buildImage } from '../oci/build.js';
import type { RegistryClient, ResolvedImage } from '../oci/client.js';
import { OciError } from '../oci/errors.js';
import { type ImageFiles, readLayers } from '../oci/extract.js';
import { type InspectedImage, inspectImage } from '../oci/image-config.js';
import type { Platform } from '../oci/manifest.js';
import { registryLayers } from '../oci/pull.js';
import { formatReference, type ImageReference } from '../oci/reference.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import type { FileMap } from '../util/tar-write.js';
import { LimitEnv, type ReadLimits, readLimits } from './limits.js';
import { bundleFromFiles } from './read.js';

/** The folders of a bundle image: everything else in it is left unread. */
export const BundleImageFolders = ['manifests', 'metadata'] as const;

/** The image of a bundle directory's files (readBundleFiles), labelled with its annotations. */
export function buildBundleImage(
  files: FileMap,
  annotations: Readonly<Record<string, string>>,
  platform?: Platform,
): BuiltImage {
  return buildImage({
    files,
    labels: annotations,
    createdBy: 'bosun bundle build',
    ...(platform && { platform }),
  });
}

/** The image pinned to the digest it was found by: the index's when there is one, so any platform resolves. */
export function pinnedReference(image: ResolvedImage): string {
  const { registry, repository } = image.ref;
  return formatReference({ registry, repository, digest: image.index?.digest ?? image.digest });
}

export interface ImageBundle {
  image: ResolvedImage;
  /** `registry/repository@sha256:...`. */
  pinned: string;
  labels: Record<string, string>;
  /** The bundle's files as the image holds them (`manifests/...`, `metadata/...`). */
  files: FileMap;
  bundle: Bundle;
}

/**
 * A bundle from an image's files (pure): the files below `manifests/` and `metadata/`, read as a
 * bundle named `name`. A symlink there is refused, as in a bundle folder. A label that says
 * otherwise than `metadata/annotations.yaml` is a warning: the file is what opm and OLM read.
 */
export function bundleFromImageFiles(
  image: ImageFiles,
  labels: Readonly<Record<string, string>>,
  name: string,
): Result<{ files: FileMap; bundle: Bundle }> {
  const inside = (p: string) => BundleImageFolders.some((f) => p.startsWith(`${f}/`));
  const problems: Problem[] = [];
  for (const [path, target] of image.symlinks)
    if (inside(path))
      problems.push({
        file: `${name}:${path}`,
        message: `is a symbolic link (to ${target}); a bundle holds files only`,
      });
  if (problems.length) return fail(problems);
  const files: FileMap = new Map(
    [...image.files].filter(([p]) => inside(p)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const read = bundleFromFiles(files, name, true);
  if (!read.ok) return read;
  const warnings: Problem[] = [];
  const file = read.value.metadataFiles.annotations ?? name;
  for (const key of Object.values(BundleAnnotation)) {
    const label = labels[key];
    const annotation = read.value.annotations[key];
    if (label !== undefined && annotation !== undefined && label !== annotation)
      warnings.push({
        file,
        field: `annotations.${key}`,
        message: `is "${labelText(annotation)}", but the image's label says "${labelText(label)}"; the file is what opm and OLM read`,
      });
  }
  const bundle = warnings.length
    ? { ...read.value, warnings: [...(read.value.warnings ?? []), ...warnings] }
    : read.value;
  return ok({ files, bundle });
}

/**
 * Pulls the bundle image `ref` names (the platform's image of an index) into memory. An image
 * that is not a bundle image is refused, naming what it is; a bundle image whose content does not
 * read as a bundle gives the problems, naming the image and the file.
 */
export async function pullBundleImage(
  client: RegistryClient,
  ref: ImageReference,
  opts: { platform?: Platform; limits?: ReadLimits; resolved?: InspectedImage } = {},
): Promise<{ image: ResolvedImage; pinned: string; read: Result<ImageBundle> }> {
  const { image, config } = opts.resolved ?? (await inspectImage(client, ref, opts.platform));
  const pinned = pinnedReference(image);
  if (imageKindOf(config.labels) !== ImageKind.Bundle)
    throw new OciError(`${formatReference(image.ref)}: ${wrongKind(ImageKind.Bundle, config.labels)}`, {
      registry: ref.registry,
      repository: ref.repository,
      image: formatReference(image.ref),
    });
  const limits = opts.limits ?? readLimits();
  const content = await readLayers(registryLayers(client, image, limits), {
    image: formatReference(image.ref),
    limits: { ...limits, maxFileBytesRaise: `${LimitEnv.File} raises it` },
    only: BundleImageFolders,
  });
  const read = bundleFromImageFiles(content, config.labels, pinned);
  return {
    image,
    pinned,
    read: read.ok ? ok({ image, pinned, labels: config.labels, ...read.value }) : read,
  };
}
