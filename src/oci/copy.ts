/**
 * Copying an image from one repository to another, registry to registry, by digest: the index
 * and every platform's manifest in it, each manifest's config and layers, all byte for byte, so
 * the copy has the digests of the original and a reference pinned to one is pinned to the other.
 * Blobs the target has are not sent again; between repositories of one registry they are
 * mounted; the rest stream from source to target in chunks, verified against their digest on
 * the way (and by the target registry again), never whole in memory.
 */
import type { RegistryClient } from './client.js';
import { OciError } from './errors.js';
import type { Descriptor, Manifest } from './manifest.js';
import { formatReference, type ImageReference } from './reference.js';

export interface CopyReport {
  /** The digest of what `from` named (index or manifest): the copy's digest too. */
  digest: string;
  mediaType: string;
  /** Image manifests copied (one per platform). */
  manifests: number;
  /** Blobs by what it took: uploaded, mounted from another repository, already there, or left out. */
  blobs: { uploaded: number; mounted: number; present: number; skipped: number };
  /** Bytes uploaded. */
  bytes: number;
}

/** A layer the image's author marked as not to be copied between registries (Windows base layers). */
const nonDistributable = (d: Descriptor) =>
  /\.(foreign|nondistributable)\./.test(d.mediaType) && (d.urls?.length ?? 0) > 0;

/**
 * Copies what `from` names to the repository of `to`, tagged `to.tag` when it has one (else
 * stored by digest only). A blob past `maxBlobBytes` is refused.
 */
export async function copyImage(
  client: RegistryClient,
  from: ImageReference,
  to: ImageReference,
  opts: { maxBlobBytes: number },
): Promise<CopyReport> {
  const report: CopyReport = {
    digest: '',
    mediaType: '',
    manifests: 0,
    blobs: { uploaded: 0, mounted: 0, present: 0, skipped: 0 },
    bytes: 0,
  };
  const target = { registry: to.registry, repository: to.repository };
  const mountFrom =
    from.registry === to.registry && from.repository !== to.repository ? from.repository : undefined;

  const copyBlobs = async (manifestDigest: string, blobs: Descriptor[]) => {
    const source = { ...from, digest: manifestDigest };
    for (const blob of blobs) {
      if (nonDistributable(blob)) {
        report.blobs.skipped++;
        continue;
      }
      const outcome = await client.pushBlobFrom(
        target,
        blob,
        () => client.blobStream(source, blob, opts.maxBlobBytes),
        mountFrom ? { mountFrom } : {},
      );
      report.blobs[outcome]++;
      if (outcome === 'uploaded') report.bytes += blob.size;
    }
  };

  // Children first, the manifest that names them last: a registry refuses a manifest whose
  // blobs or children it does not have yet.
  const copyManifest = async (manifest: Manifest, digest: string, depth: number) => {
    if (manifest.kind === 'manifest') {
      await copyBlobs(digest, [manifest.config, ...manifest.layers]);
      report.manifests++;
      return;
    }
    if (depth >= 2) throw new OciError(`${formatReference(from)}: indexes nest more than two deep`);
    for (const child of manifest.manifests) {
      const fetched = await client.getManifest(from, child.digest);
      await copyManifest(fetched.manifest, fetched.digest, depth + 1);
      await client.pushManifest(target, fetched.bytes, fetched.mediaType, fetched.digest);
    }
  };

  const top = await client.getManifest(from);
  await copyManifest(top.manifest, top.digest, 0);
  await client.pushManifest(target, top.bytes, top.mediaType, to.tag ?? top.digest);
  report.digest = top.digest;
  report.mediaType = top.mediaType;
  return report;
}
