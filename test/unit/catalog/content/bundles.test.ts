/**
 * Bundle content as the manager gives it to installs: a bundle of a catalog the manager spooled is
 * found in the store, said what it is (its digest) without reading anything, and read from the
 * spooled file; what cannot be had is a value with its reason, naming the bundle or the file.
 */
import { appendFile, rm } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../../src/apis/fbc.js';
import {
  type BundleContent,
  BundleContentReason,
  bundleDigest,
  catalogBundleContent,
} from '../../../../src/catalog/content/bundles.js';
import { MemoryCatalogStore } from '../../../../src/catalog/content/memory-store.js';
import { parseSpooled } from '../../../../src/catalog/content/parse.js';
import { CatalogSpool } from '../../../../src/catalog/content/spool.js';
import { payloadOf } from '../../../../src/catalog/payloads.js';
import { tempDir } from '../../../support/temp-dir.js';
import { BundleName, sampleBundleDoc } from '../../install/support.js';

const catalog = { namespace: 'olm', name: 'samples' };

/** The sample bundle published as a one-package catalog, as an HTTP server would serve it. */
function catalogText(bundle: BundleDoc): string {
  const pkg = { schema: 'olm.package', name: bundle.package, defaultChannel: 'stable' };
  const channel = {
    schema: 'olm.channel',
    package: bundle.package,
    name: 'stable',
    entries: [{ name: bundle.name }],
  };
  return [pkg, channel, bundle].map((d) => JSON.stringify(d)).join('\n');
}

describe('catalogBundleContent', () => {
  let spool: CatalogSpool;
  let store: MemoryCatalogStore;
  let content: BundleContent;
  let file: string;

  beforeEach(async () => {
    spool = await CatalogSpool.open(await tempDir('bosun-bundles-'));
    store = new MemoryCatalogStore('olm', (f) => spool.remove(f));
    content = catalogBundleContent(store);
    // The manager's own path: the body spooled, parsed with its manifests left in the file.
    const spooled = await spool.writeFiles(catalog, [
      { name: 'http://catalog/', bytes: Buffer.from(catalogText(sampleBundleDoc())) },
    ]);
    const parsed = await parseSpooled(spool, spooled, undefined, 'http://catalog/');
    if (!parsed.ok) throw new Error(parsed.message);
    store.set({ ref: catalog, priority: 0, fetchedAt: 0, ...parsed.content });
    file = spooled.path;
  });

  afterEach(async () => {
    await spool.close();
  });

  it('reads a spooled bundle’s manifests from the spool, as they were published', async () => {
    const listed = store.findBundle(catalog, BundleName)!;
    const stored = listed.properties.filter((p) => payloadOf(p.value) !== undefined);
    expect(stored.length).toBeGreaterThan(0); // the test is about manifests left in the file
    const found = await content.objects({ catalog, name: BundleName, image: '' });
    if (!found.ok) throw new Error(found.message);
    expect(found.value.digest).toBe(bundleDigest(listed));
    const read = await found.value.read();
    if (!read.ok) throw new Error(read.message);
    expect(read.value.properties).toEqual(sampleBundleDoc().properties);
    // The store's bundle stays as small as it was: reading made a copy.
    expect(store.findBundle(catalog, BundleName)!.properties.filter((p) => payloadOf(p.value))).toEqual(
      stored,
    );
  });

  it('says what a bundle is without reading it, and a spool file gone is a value naming the file', async () => {
    await rm(file);
    const found = await content.objects({ catalog, name: BundleName });
    if (!found.ok) throw new Error(found.message);
    expect(found.value.digest).toBe(bundleDigest(store.findBundle(catalog, BundleName)!));
    const read = await found.value.read();
    expect(read).toMatchObject({ ok: false, reason: BundleContentReason.ManifestsUnreadable });
    if (!read.ok) expect(read.message).toContain(file);
  });

  it('refuses manifests from a spool file that changed since the catalog was loaded', async () => {
    await appendFile(file, '\n');
    const found = await content.objects({ catalog, name: BundleName });
    if (!found.ok) throw new Error(found.message);
    expect(await found.value.read()).toEqual({
      ok: false,
      reason: BundleContentReason.ManifestsUnreadable,
      message: `${file} has changed since the catalog was loaded; load it again`,
    });
  });

  it.each([
    ['a catalog that is not loaded', { namespace: 'olm', name: 'other' }, BundleName],
    ['a bundle the catalog does not list', catalog, 'sample-operator.v9.9.9'],
  ])('finds nothing in %s, naming the bundle and the catalog', async (_, ref, name) => {
    expect(await content.objects({ catalog: ref, name })).toEqual({
      ok: false,
      reason: BundleContentReason.BundleNotFound,
      message: `bundle ${name} is not in catalog ${ref.namespace}/${ref.name}`,
    });
  });
});

describe('bundleDigest', () => {
  it.each<[string, (d: BundleDoc) => BundleDoc]>([
    ['name', (d) => ({ ...d, name: 'other.v1' })],
    ['package', (d) => ({ ...d, package: 'other' })],
    ['image', (d) => ({ ...d, image: 'quay.io/x/y@sha256:0' })],
    ['a property', (d) => ({ ...d, properties: d.properties!.slice(1) })],
    ['property order', (d) => ({ ...d, properties: [...d.properties!].reverse() })],
  ])('changes with the bundle’s %s', (_, change) => {
    expect(bundleDigest(change(sampleBundleDoc()))).not.toBe(bundleDigest(sampleBundleDoc()));
  });
});
