/**
 * Images as inputs of `catalog render` (a catalog image renders its FBC, a bundle image its
 * olm.bundle, as `opm render` renders them) and `catalog publish` (a bundle image is published
 * pinned to its digest). Which an image is, its labels say (olm/image-kind.ts).
 */
import { emptyConfig } from '../../../apis/fbc.js';
import type { Bundle } from '../../../apis/bundle.js';
import { pullBundleImage } from '../../../bundle/image.js';
import { bundleToDoc } from '../../../bundle/render.js';
import { validateBundle } from '../../../bundle/validate.js';
import { openCatalogImage } from '../../../catalog/image.js';
import { ImageKind, imageKindOf, noKind } from '../../../olm/image-kind.js';
import type { RegistryClient } from '../../../oci/client.js';
import { OciError } from '../../../oci/errors.js';
import { inspectImage } from '../../../oci/image-config.js';
import type { Platform } from '../../../oci/manifest.js';
import { formatReference, parseReference } from '../../../oci/reference.js';
import type { Result } from '../../../util/result.js';
import type { RenderedInput } from './inputs.js';

const nothingToDispose = async () => undefined;

/**
 * The FBC of the image `text` names. A bundle image's document names the image as it was given,
 * as opm's does. A catalog's manifests are read from the pulled files until the result is
 * disposed (`await using`): write the catalog before then.
 */
export async function renderImageInput(
  client: RegistryClient,
  text: string,
  platform: Platform,
): Promise<RenderedInput & AsyncDisposable> {
  const ref = parseReference(text);
  const inspected = await inspectImage(client, ref, platform);
  const config = emptyConfig();
  const kind = imageKindOf(inspected.config.labels);
  if (kind === ImageKind.Bundle) {
    const pulled = await pullBundleImage(client, ref, { platform, resolved: inspected });
    const read = pulled.read.ok ? ok(pulled.read.value.bundle) : pulled.read;
    const rendered = renderBundle(read, text);
    return { ...rendered, [Symbol.asyncDispose]: nothingToDispose };
  }
  if (kind === ImageKind.Catalog || kind === ImageKind.SqliteCatalog) {
    // A sqlite catalog is refused by name there.
    const opened = await openCatalogImage(client, ref, { platform, resolved: inspected });
    return {
      config: opened.loaded.ok ? opened.loaded.value : config,
      errors: opened.loaded.ok ? [] : opened.loaded.errors,
      warnings: [],
      [Symbol.asyncDispose]: () => opened[Symbol.asyncDispose](),
    };
  }
  throw new OciError(`${formatReference(inspected.image.ref)}: ${noKind(inspected.config.labels)}`, {
    image: formatReference(inspected.image.ref),
  });
}

const ok = <T>(value: T) => ({ ok: true as const, value });

/** A bundle read from an image, validated and rendered with `image` as its image. */
function renderBundle(read: Result<Bundle>, image: string): RenderedInput {
  const config = emptyConfig();
  if (!read.ok) return { config, errors: read.errors, warnings: [] };
  const v = validateBundle(read.value);
  if (v.errors.length) return { config, errors: v.errors, warnings: v.warnings };
  const doc = bundleToDoc(read.value, { image });
  if (!doc.ok) return { config, errors: doc.errors, warnings: v.warnings };
  config.bundles.push(doc.value);
  return { config, errors: [], warnings: v.warnings };
}

/** A bundle image for `catalog publish`: its bundle, and its reference pinned to the digest it was pulled by. */
export async function bundleImageInput(
  client: RegistryClient,
  text: string,
  platform: Platform,
): Promise<{ read: Result<Bundle>; pinned: string }> {
  const pulled = await pullBundleImage(client, parseReference(text), { platform });
  return { read: pulled.read.ok ? ok(pulled.read.value.bundle) : pulled.read, pinned: pulled.pinned };
}
