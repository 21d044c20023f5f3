/**
 * Bundles whose catalog names only their image (an `olm.bundle` with `image` and no inline
 * `olm.bundle.object`, as most catalogs of the ecosystem are): their manifests are pulled from
 * that image when an InstallPlan needs them, in-process, where OLM v0 runs an unpack Job per
 * bundle.
 *
 * The image is pulled by digest: the one its reference pins, or the one its tag resolves to now
 * (remembered for a minute, so planning an InstallPlan on every reconcile does not ask the
 * registry each time). Each layer is verified against its digest and read into memory within the
 * bundle limits and the extraction's checks (src/bundle/image.ts), then read and checked as a
 * bundle folder is. The image must hold the bundle the catalog says it does (its CSV's name is
 * the bundle's name, its package the bundle's package): a catalog pointing at another operator's
 * image is refused, not installed. Its manifests become the bundle's `olm.bundle.object`
 * properties as `opm render` gives them (base64 of each object's JSON), beside the properties
 * the catalog gave (which resolution used), and are kept on disk by digest
 * (bundle-image-cache.ts), so the next plan reads them from there.
 *
 * Credentials are the CatalogSource's pull Secrets (`spec.secrets`), as for its catalog image.
 */
import { createHash } from 'node:crypto';
import type { BundleDoc, Property } from '../../apis/fbc.js';
import { PropertyType } from '../../apis/fbc.js';
import { pullBundleImage } from '../../bundle/image.js';
import { bundleToDoc } from '../../bundle/render.js';
import type { RegistryClient } from '../../oci/client.js';
import { DigestMismatchError, LayerEntryError, OciError } from '../../oci/errors.js';
import { DefaultPlatform, type Platform } from '../../oci/manifest.js';
import { formatReference, type ImageReference, parseReference, withDigest } from '../../oci/reference.js';
import { formatProblem } from '../../util/result.js';
import { escapeControls } from '../../util/terminal.js';
import type { BundleImageCache } from './bundle-image-cache.js';
import {
  type BundleContentOutcome,
  BundleContentReason,
  bundleDigest,
  type BundleRef,
  type ImageBundleContent,
} from './bundles.js';
import type { RegistryAccess } from './registry-access.js';
import type { CatalogRef } from './store.js';

/** How long a tag's digest is taken as it was last resolved. */
const tagMemoryMs = 60_000;

/** What is kept of an unpacked image: the manifests as `olm.bundle.object` data, in opm's order. */
interface Unpacked {
  objects: string[];
}

export function imageBundleContent(deps: {
  access: RegistryAccess;
  /** The pull Secrets of a CatalogSource (`spec.secrets`), read when its bundles are pulled. */
  secretsOf: (catalog: CatalogRef) => readonly string[];
  cache: BundleImageCache;
  platform?: Platform;
  now?: () => number;
}): ImageBundleContent {
  const now = deps.now ?? Date.now;
  const tags = new Map<string, { digest: string; until: number }>();
  // One pull per digest at a time: plans of several namespaces may want one bundle at once.
  const pulling = new Map<string, Promise<BundleContentOutcome<Unpacked>>>();

  const unpack = async (ref: BundleRef, doc: BundleDoc, image: ImageReference, digest: string) => {
    if (deps.cache.has(digest)) return { ok: true as const, value: undefined };
    let inflight = pulling.get(digest);
    if (!inflight) {
      inflight = pull(deps, ref, doc, image, digest).finally(() => pulling.delete(digest));
      pulling.set(digest, inflight);
    }
    const pulled = await inflight;
    return pulled.ok ? { ok: true as const, value: pulled.value } : pulled;
  };

  return {
    async manifestsOf(ref, doc) {
      const where = `bundle ${doc.name}: image ${doc.image}`;
      let image: ImageReference;
      try {
        image = parseReference(doc.image);
      } catch (err) {
        return failed(BundleContentReason.BundleImageInvalid, `${where}: ${(err as Error).message}`);
      }
      const key = `${ref.catalog.namespace}/${ref.catalog.name} ${doc.image}`;
      let digest = image.digest;
      if (digest === undefined) {
        const known = tags.get(key);
        if (known && known.until > now()) digest = known.digest;
        else {
          const resolved = await withClient(deps, ref.catalog, where, (client) => client.resolve(image));
          if (!resolved.ok) return resolved;
          digest = resolved.value.digest;
          tags.set(key, { digest, until: now() + tagMemoryMs });
        }
      }
      const unpacked = await unpack(ref, doc, image, digest);
      if (!unpacked.ok) return unpacked;
      const pinned = formatReference(
        withDigest({ registry: image.registry, repository: image.repository }, digest),
      );
      const catalogDigest = bundleDigest(doc);
      return {
        ok: true,
        value: {
          // The catalog's document and the image's content: either changing is new content.
          digest: createHash('sha256').update(`${catalogDigest}\n${digest}`).digest('hex'),
          image: pinned,
          read: async () => {
            const kept = unpacked.value ?? parseUnpacked(await deps.cache.get(digest));
            if (!kept)
              return failed(
                BundleContentReason.ManifestsUnreadable,
                `${where}: the unpacked image was evicted; planning again pulls it`,
              );
            return { ok: true, value: withObjects(doc, kept.objects) };
          },
        },
      };
    },
  };
}

/** The catalog's document with the image's manifests as its objects. */
function withObjects(doc: BundleDoc, objects: readonly string[]): BundleDoc {
  const properties: Property[] = [
    ...doc.properties.filter((p) => p.type !== PropertyType.BundleObject),
    ...objects.map((data) => ({ type: PropertyType.BundleObject, value: { data } })),
  ];
  return { ...doc, properties };
}

function parseUnpacked(bytes: Buffer | undefined): Unpacked | undefined {
  if (bytes === undefined) return undefined;
  return JSON.parse(bytes.toString('utf8')) as Unpacked;
}

async function pull(
  deps: Parameters<typeof imageBundleContent>[0],
  ref: BundleRef,
  doc: BundleDoc,
  image: ImageReference,
  digest: string,
): Promise<BundleContentOutcome<Unpacked>> {
  const pinned = formatReference(
    withDigest({ registry: image.registry, repository: image.repository }, digest),
  );
  const where = `bundle ${doc.name}: image ${pinned}`;
  const got = await withClient(deps, ref.catalog, where, (client) =>
    pullBundleImage(client, withDigest(image, digest), { platform: deps.platform ?? DefaultPlatform }),
  );
  if (!got.ok) return got;
  const { read } = got.value;
  if (!read.ok)
    return failed(
      BundleContentReason.BundleImageInvalid,
      `${where}: ${read.errors.slice(0, 5).map(formatProblem).join('; ')}`,
    );
  const rendered = bundleToDoc(read.value.bundle, { image: pinned });
  if (!rendered.ok)
    return failed(
      BundleContentReason.BundleImageInvalid,
      `${where}: ${rendered.errors.slice(0, 5).map(formatProblem).join('; ')}`,
    );
  // The image must be the bundle the catalog resolved: another CSV or package is another operator.
  if (rendered.value.name !== doc.name || rendered.value.package !== doc.package)
    return failed(
      BundleContentReason.BundleImageInvalid,
      `${where}: holds bundle ${rendered.value.name} of package ${rendered.value.package}, but the catalog names it for bundle ${doc.name} of package ${doc.package}`,
    );
  const objects = rendered.value.properties
    .filter((p) => p.type === PropertyType.BundleObject)
    .map((p) => (p.value as { data: string }).data);
  const unpacked: Unpacked = { objects };
  await deps.cache.put(digest, Buffer.from(JSON.stringify(unpacked)));
  return { ok: true, value: unpacked };
}

/**
 * Runs `use` with a client carrying the catalog's pull Secrets; registry failures become
 * outcomes led by `where` (`bundle <name>: image <ref>`); a registry's error that names the image
 * already is not led by it twice.
 */
async function withClient<T>(
  deps: Parameters<typeof imageBundleContent>[0],
  catalog: CatalogRef,
  where: string,
  use: (client: RegistryClient) => Promise<T>,
): Promise<BundleContentOutcome<T>> {
  const opened = await deps.access.clientFor(catalog.namespace, deps.secretsOf(catalog));
  if (!opened.ok) return failed(BundleContentReason.BundleImagePullFailed, `${where}: ${opened.message}`);
  try {
    return { ok: true, value: await use(opened.client) };
  } catch (err) {
    if (!(err instanceof OciError)) throw err;
    // An image whose layers are unsafe, or that is no bundle image, is the image's fault; the
    // rest (unreachable, unknown, refused, content failing its digest) the registry's.
    const invalid =
      err instanceof LayerEntryError ||
      (!(err instanceof DigestMismatchError) &&
        /image \(label|is not a registry\+v1 bundle image/.test(err.message));
    return failed(
      invalid ? BundleContentReason.BundleImageInvalid : BundleContentReason.BundleImagePullFailed,
      err.where.registry && err.message.startsWith(err.where.registry)
        ? `${where.slice(0, where.indexOf(': image ') + 8)}${err.message}`
        : `${where}: ${err.message}`,
    );
  } finally {
    await opened.client.close();
  }
}

function failed(
  reason: BundleContentReason,
  message: string,
): { ok: false; reason: BundleContentReason; message: string } {
  // Entry names, labels and registry text are the image's or registry's: made inert.
  return { ok: false, reason, message: escapeControls(message) };
}
