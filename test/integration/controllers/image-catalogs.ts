/**
 * Catalog and bundle images for the manager's tests, built with Bosun's image library from the
 * sample bundles (bundles/) and catalog (catalogs/bosun-samples) and pushed to a test registry:
 * the bundle images, and catalogs that name each bundle by its image only (no inline
 * `olm.bundle.object`, as the catalogs of the ecosystem are), whole or cut down to some bundles.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BundleAnnotation } from '../../../src/apis/bundle.js';
import { type DeclarativeConfig, PropertyType } from '../../../src/apis/fbc.js';
import type { FileMap } from '../../../src/util/tar-write.js';
import { buildBundleImage } from '../../../src/bundle/image.js';
import { readBundle, readBundleFiles } from '../../../src/bundle/read.js';
import { buildCatalogImage, readCatalogFiles } from '../../../src/catalog/image.js';
import { loadCatalog } from '../../../src/catalog/load.js';
import { pushImage } from '../../../src/oci/build.js';
import type { RegistryClient } from '../../../src/oci/client.js';
import { formatReference, parseReference } from '../../../src/oci/reference.js';
import type { TestImage } from '../../support/oci-images.js';

/** The repository (computed here: the benchmarks import this module, outside vitest). */
const repo = join(import.meta.dirname, '../../..');
export const samples = join(repo, 'catalogs/bosun-samples');
const bundlesDir = join(repo, 'bundles');

/** The API group of the sample operator, which a test moves to a group of its own (operator-support.ts's uniqueGroup). */
export const SampleGroup = 'sample.bosun.dev';

/** Every mention of the sample API group in `text` moved to `group`. */
const moved = (text: string, group: string) =>
  group === SampleGroup ? text : text.replaceAll(SampleGroup, group);

/**
 * Every sample bundle pushed as `<host>/bundles/<package>:v<version>` (under `bundles/<first
 * label of group>/` for another group, its API moved there), so a test's CRDs are its own: a CRD
 * is cluster-wide, and another test's newer version of it would refuse an older one. Returns the
 * bundle's name (its CSV's) → its image pinned by digest.
 */
export async function pushSampleBundles(
  client: RegistryClient,
  host: string,
  group = SampleGroup,
): Promise<Map<string, string>> {
  const prefix = group === SampleGroup ? 'bundles' : `bundles/${group.split('.')[0]}`;
  const images = new Map<string, string>();
  for (const pkg of await readdir(bundlesDir, { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue;
    for (const version of await readdir(join(bundlesDir, pkg.name))) {
      const dir = join(bundlesDir, pkg.name, version);
      const files = await readBundleFiles(dir);
      const read = await readBundle(dir);
      if (!files.ok || !read.ok) throw new Error(`${dir} does not read as a bundle`);
      const ref = parseReference(
        `${host}/${prefix}/${read.value.annotations[BundleAnnotation.Package]}:v${version}`,
      );
      const content: FileMap = new Map(
        [...files.value].map(([path, data]) => [
          path,
          Buffer.from(moved(Buffer.from(data).toString('utf8'), group)),
        ]),
      );
      const digest = await pushImage(client, ref, buildBundleImage(content, read.value.annotations));
      images.set(
        `${pkg.name}.v${version}`,
        formatReference({ registry: ref.registry, repository: ref.repository, digest }),
      );
    }
  }
  return images;
}

/** The sample catalog as loaded from catalogs/bosun-samples. */
export async function sampleCatalog(): Promise<DeclarativeConfig> {
  const loaded = await loadCatalog(samples);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  return loaded.value;
}

/**
 * The catalog's files (one `catalog.json`) with each bundle named by `image(bundle)` and no
 * inline objects; only the bundles `keep` keeps, with the channels' entries and the packages
 * cut down to them; the sample API group moved to `group`.
 */
export function imageOnlyCatalog(
  config: DeclarativeConfig,
  image: (bundle: string) => string,
  keep: (bundle: string) => boolean = () => true,
  group = SampleGroup,
): FileMap {
  const bundles = config.bundles
    .filter((b) => keep(b.name))
    .map((b) => ({
      ...b,
      image: image(b.name),
      properties: b.properties.filter((p) => p.type !== PropertyType.BundleObject),
    }));
  const kept = new Set(bundles.map((b) => b.name));
  const channels = config.channels
    .map((c) => ({ ...c, entries: c.entries.filter((e) => kept.has(e.name)) }))
    .filter((c) => c.entries.length > 0);
  const packages = config.packages.filter((p) => bundles.some((b) => b.package === p.name));
  const docs = [...packages, ...channels, ...bundles];
  return new Map([
    ['catalog.json', Buffer.from(moved(docs.map((d) => JSON.stringify(d)).join('\n'), group))],
  ]);
}

/** Pushes a catalog image of `files` to `ref` (a tag); returns its digest. */
export async function pushCatalog(client: RegistryClient, ref: string, files: FileMap): Promise<string> {
  return pushImage(client, parseReference(ref), buildCatalogImage(files));
}

/**
 * A catalog folder (the corpus import) pushed as one catalog image to `tag`, and loaded from the
 * folder as the manager loads it, for a test to compare what the manager serves with.
 */
export async function pushCatalogFolder(client: RegistryClient, dir: string, tag: string) {
  const files = await readCatalogFiles(dir);
  if (!files.ok) throw new Error(JSON.stringify(files.errors.slice(0, 3)));
  const digest = await pushCatalog(client, tag, files.value);
  const local = await loadCatalog(dir);
  if (!local.ok) throw new Error(JSON.stringify(local.errors.slice(0, 3)));
  return { files: files.value, digest, local: local.value };
}

/** Pushes an image made by hand (test/support/oci-images.ts: any layer a hostile image could hold) to `ref`. */
export async function pushRaw(client: RegistryClient, ref: string, img: TestImage): Promise<string> {
  const r = parseReference(ref);
  for (const blob of [img.config, ...img.layers])
    await client.pushBlob(r, { ...blob.descriptor, data: blob.data });
  return client.pushManifest(r, img.manifest, img.mediaType);
}
