/**
 * Mirroring a catalog into another registry, the pure part: which images a catalog names (each
 * bundle's image and related images), where each goes under the mirror's prefix, and the catalog
 * with those references rewritten to the copies, pinned to their digests.
 *
 * An image keeps its repository path below the prefix, as `oc adm catalog mirror` places it:
 * `quay.io/org/op:v1` mirrored to `mirror.local/ocp` is `mirror.local/ocp/org/op`. Two sources
 * that would land in one repository (the same path on two registries) are refused rather than
 * one overwriting the other's tags.
 *
 * Only the catalog's own references are rewritten (`image` and `relatedImages` of each bundle);
 * the manifests a bundle carries are left byte for byte as published, as opm and oc leave them.
 */
import type { BundleDoc, DeclarativeConfig } from '../apis/fbc.js';
import { parseImageReference } from '../olm/image-reference.js';
import { formatReference, type ImageReference, parseReference } from '../oci/reference.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';

/** Where mirrored images go: a registry and a repository path below it (may be empty). */
export interface MirrorPrefix {
  registry: string;
  path: string;
}

/** One image to copy. */
export interface MirrorImage {
  /** The reference as the catalog names it. */
  source: string;
  /** The reference to copy from (completed: `docker.io/library/x`). */
  from: ImageReference;
  /** Where it goes: the mirror's repository, with the source's tag when it has one. */
  to: ImageReference;
  /** The bundles naming it, `package/bundle`, for messages. */
  usedBy: string[];
}

/**
 * Reads `<registry>[/<path>]`: the registry must be named as a host (with a dot or a port, or
 * `localhost`), as an image reference's first part must be to name a registry.
 */
export function parseMirrorPrefix(text: string): Result<MirrorPrefix> {
  const trimmed = text.replace(/\/+$/, '');
  const [registry = '', ...rest] = trimmed.split('/');
  const path = rest.join('/');
  const bad = (message: string) => fail([{ file: text, message }]);
  if (!(registry.includes('.') || registry.includes(':') || registry === 'localhost'))
    return bad(
      'does not start with a registry (a host with a dot or a port, or localhost: mirror.local/ocp)',
    );
  const probe = parseImageReference(`${registry}/${path ? `${path}/` : ''}x`);
  if (!probe.ok) return bad(`is not a registry and repository path: ${probe.error}`);
  return ok({ registry, path });
}

/** The mirror's repository for `from`: the prefix's path, then the source's repository. */
export function mirrorRepository(prefix: MirrorPrefix, from: ImageReference): ImageReference {
  return {
    registry: prefix.registry,
    repository: prefix.path ? `${prefix.path}/${from.repository}` : from.repository,
  };
}

const bundleName = (b: BundleDoc) => `${b.package}/${b.name}`;

/**
 * Every image the catalog's bundles name, once each, with where it goes; problems name the
 * bundle and field of a reference that is not one, and the images that would share a repository.
 */
export function planMirror(cfg: DeclarativeConfig, prefix: MirrorPrefix): Result<MirrorImage[]> {
  const images = new Map<string, MirrorImage>();
  const problems: Problem[] = [];
  for (const b of cfg.bundles) {
    const refs: [string, string][] = [];
    if (b.image) refs.push(['image', b.image]);
    for (const [i, r] of (b.relatedImages ?? []).entries())
      if (r.image) refs.push([`relatedImages[${i}].image`, r.image]);
    for (const [field, source] of refs) {
      const known = images.get(source);
      if (known) {
        if (!known.usedBy.includes(bundleName(b))) known.usedBy.push(bundleName(b));
        continue;
      }
      const parsed = parseImageReference(source);
      if (!parsed.ok) {
        problems.push({
          object: `bundle ${bundleName(b)}`,
          field,
          message: `is not an image reference: ${parsed.error}`,
        });
        continue;
      }
      const from = parseReference(source);
      const to = { ...mirrorRepository(prefix, from), ...(from.tag !== undefined && { tag: from.tag }) };
      images.set(source, { source, from, to, usedBy: [bundleName(b)] });
    }
  }
  // One target repository, one source repository: else tags and digests of two images mix.
  const byTarget = new Map<string, string>();
  for (const image of images.values()) {
    const target = formatReference({ registry: image.to.registry, repository: image.to.repository });
    const source = formatReference({ registry: image.from.registry, repository: image.from.repository });
    const other = byTarget.get(target);
    if (other !== undefined && other !== source)
      problems.push({
        object: `bundle ${image.usedBy[0]}`,
        message: `${image.source} and ${other} would both be mirrored to ${target}; mirror them with separate prefixes`,
      });
    else byTarget.set(target, source);
  }
  return problems.length ? fail(problems) : ok([...images.values()]);
}

/**
 * The catalog with each bundle's `image` and `relatedImages` replaced by the pinned copies
 * `copies` maps them to (source reference → `registry/repository@sha256:...`). Everything else is
 * the same object, so manifests stored outside the documents are still found.
 */
export function rewriteReferences(
  cfg: DeclarativeConfig,
  copies: ReadonlyMap<string, string>,
): DeclarativeConfig {
  const to = (source: string) => copies.get(source) ?? source;
  return {
    ...cfg,
    bundles: cfg.bundles.map((b) => ({
      ...b,
      image: b.image && to(b.image),
      ...(b.relatedImages && {
        relatedImages: b.relatedImages.map((r) => ({ ...r, image: r.image && to(r.image) })),
      }),
    })),
  };
}
