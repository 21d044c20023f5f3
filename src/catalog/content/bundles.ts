/**
 * The BundleContent port: a bundle's manifests, as an install reads them. The InstallPlan and
 * Subscription controllers (and the decoder of src/install they hand them to) are given one by the
 * manager, and never read a catalog file themselves.
 *
 * Today a catalog carries each bundle's manifests inline (`olm.bundle.object`), their text left in
 * the catalog's spooled file (src/catalog/payloads.ts) until a bundle is read: catalogBundleContent
 * finds the bundle in the catalog store and reads them from there. A bundle whose catalog names
 * only its image has them pulled from it (bundle-images.ts: by digest, kept on disk), given the
 * same way, each an `olm.bundle.object`, as `opm render` gives them.
 *
 * Finding a bundle and reading its manifests are two steps: `objects` finds it and says what its
 * content is (`digest`) without reading anything, so a reader that keeps what it made of a bundle
 * (the InstallPlan's decoder) reads nothing for content it has seen; `read` reads it.
 */
import { createHash } from 'node:crypto';
import { type BundleDoc, PropertyType } from '../../apis/fbc.js';
import { payloadOf, withPayloads } from '../payloads.js';
import type { CatalogRef, CatalogStore } from './store.js';

/** A bundle: its catalog, its name there, and the image the catalog names for it. */
export interface BundleRef {
  catalog: CatalogRef;
  /** The bundle's name, which is also its CSV's name. */
  name: string;
  /**
   * The bundle's image (`olm.bundle` `image`), where its manifests are when the catalog does not
   * carry them inline. The catalog's own content reads only what the catalog carries.
   */
  image?: string;
}

/** Why a bundle's manifests are not to be had. */
export const BundleContentReason = {
  /** The catalog is not loaded, or does not list the bundle. */
  BundleNotFound: 'BundleNotFound',
  /** The manifests could not be read: the file they were kept in is gone or was replaced. */
  ManifestsUnreadable: 'ManifestsUnreadable',
  /** The bundle's image could not be pulled: the registry is unreachable, refused, or does not have it. */
  BundleImagePullFailed: 'BundleImagePullFailed',
  /** The bundle's image is not the bundle: not a bundle image, unsafe, unreadable, or another operator's. */
  BundleImageInvalid: 'BundleImageInvalid',
} as const;
export type BundleContentReason = (typeof BundleContentReason)[keyof typeof BundleContentReason];

export type BundleContentOutcome<T> =
  { ok: true; value: T } | { ok: false; reason: BundleContentReason; message: string };

/** A bundle found, and its manifests to be read. */
export interface BundleManifests {
  /** Identifies the manifests without reading them: equal digests, equal manifests. */
  digest: string;
  /** The image the manifests were unpacked from, pinned by digest; none for a catalog's inline manifests. */
  image?: string;
  /** The bundle document with every manifest's text in it (each `olm.bundle.object` its data). */
  read(): Promise<BundleContentOutcome<BundleDoc>>;
}

export interface BundleContent {
  objects(ref: BundleRef): Promise<BundleContentOutcome<BundleManifests>>;
}

/** The manifests of bundles the catalog names only by image (bundle-images.ts makes one). */
export interface ImageBundleContent {
  /** The manifests of `doc`, a catalog bundle with an image and no inline objects. */
  manifestsOf(ref: BundleRef, doc: BundleDoc): Promise<BundleContentOutcome<BundleManifests>>;
}

/**
 * The bundles of the catalogs in the store, their manifests read from where the catalog keeps
 * them; with `images`, a bundle whose catalog carries no manifests but names an image has them
 * pulled from that image (bundle-images.ts). Manifests the catalog carries win: they are what
 * the catalog's author published, and reading them costs no registry.
 */
export function catalogBundleContent(
  catalogs: Pick<CatalogStore, 'findBundle'>,
  images?: ImageBundleContent,
): BundleContent {
  return {
    objects: async (ref) => {
      const bundle = catalogs.findBundle(ref.catalog, ref.name);
      if (bundle === undefined) {
        return {
          ok: false,
          reason: BundleContentReason.BundleNotFound,
          message: `bundle ${ref.name} is not in catalog ${ref.catalog.namespace}/${ref.catalog.name}`,
        };
      }
      const inline = bundle.properties.some((p) => p.type === PropertyType.BundleObject);
      if (images && !inline && bundle.image) return images.manifestsOf(ref, bundle);
      return { ok: true, value: catalogBundleManifests(bundle) };
    },
  };
}

/** The manifests of a catalog's bundle document, inline or left in the catalog's file. */
export function catalogBundleManifests(bundle: BundleDoc): BundleManifests {
  return {
    digest: bundleDigest(bundle),
    read: async () => {
      try {
        return { ok: true, value: await withPayloads(bundle) };
      } catch (err) {
        // The catalog file changed or went since it was loaded: newer content replaced it.
        return {
          ok: false,
          reason: BundleContentReason.ManifestsUnreadable,
          message: (err as Error).message,
        };
      }
    },
  };
}

/**
 * A digest of what decoding a bundle reads: its name, package, image and every property (a stored
 * manifest by where it is stored, in a file that must not have changed since).
 */
export function bundleDigest(doc: BundleDoc): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([doc.name, doc.package, doc.image]));
  for (const p of doc.properties ?? []) {
    hash.update(`\n${JSON.stringify(p)}`);
    // A stored manifest's `data` is empty: where its text is stands for it.
    const stored = payloadOf(p.value);
    if (stored) hash.update(`\0${JSON.stringify(stored)}`);
  }
  return hash.digest('hex');
}
