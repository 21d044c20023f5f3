import { appendFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../src/apis/fbc.js';
import { CatalogFormat } from '../../../src/catalog/encode.js';
import { loadCatalog } from '../../../src/catalog/load.js';
import { catalogBundleManifests as manifestsOf } from '../../../src/catalog/content/bundles.js';
import { payloadOf } from '../../../src/catalog/payloads.js';
import { writeCatalog } from '../../../src/catalog/write.js';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import { bundleDecoder, decodeBundle, type InstallableBundle } from '../../../src/install/bundle-objects.js';
import { planInstall } from '../../../src/install/plan.js';
import type { Result } from '../../../src/util/result.js';
import { tempDir } from '../../support/temp-dir.js';
import { BundleName, manifestFiles, manifestText, sampleBundleDoc } from './support.js';

/** A decoder over decodeBundle that counts how often it really decodes. */
function counting(capacity?: number) {
  const calls: string[] = [];
  const decoder = bundleDecoder({
    ...(capacity !== undefined ? { capacity } : {}),
    decode: (doc: BundleDoc): Result<InstallableBundle> => {
      calls.push(doc.name);
      return decodeBundle(doc);
    },
  });
  return { decoder, calls };
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

const renamed = (doc: BundleDoc, name: string): BundleDoc => ({ ...doc, name });

describe('bundleDecoder', () => {
  it('decodes a bundle once for two reconciles, even from a catalog loaded again', async () => {
    const { decoder, calls } = counting();
    const first = await decoder.decode(manifestsOf(sampleBundleDoc()));
    // A reloaded catalog gives equal content in new objects.
    const second = await decoder.decode(manifestsOf(sampleBundleDoc()));
    expect(calls).toEqual([BundleName]);
    expect(second).toBe(first);
    expect(first).toEqual(decodeBundle(sampleBundleDoc()));
  });

  it('decodes a bundle again when its content changed under the same name', async () => {
    const { decoder, calls } = counting();
    const texts = manifestFiles().map(manifestText);
    const before = await decoder.decode(manifestsOf(sampleBundleDoc(texts)));
    const changed = texts.map((t) => t.replace('replicas: 1', 'replicas: 2'));
    expect(changed).not.toEqual(texts);
    const after = await decoder.decode(manifestsOf(sampleBundleDoc(changed)));
    expect(calls).toEqual([BundleName, BundleName]);
    expect(after).not.toEqual(before);
  });

  it('keeps failures too, and forgets the least recently used bundle beyond its capacity', async () => {
    const { decoder, calls } = counting(2);
    const broken: BundleDoc = { ...sampleBundleDoc([]), name: 'broken.v1' };
    expect((await decoder.decode(manifestsOf(broken))).ok).toBe(false);
    expect((await decoder.decode(manifestsOf(broken))).ok).toBe(false);
    await decoder.decode(manifestsOf(renamed(sampleBundleDoc(), 'a.v1')));
    await decoder.decode(manifestsOf(broken)); // used again: now 'a.v1' is the oldest
    await decoder.decode(manifestsOf(renamed(sampleBundleDoc(), 'b.v1'))); // evicts 'a.v1'
    await decoder.decode(manifestsOf(broken));
    await decoder.decode(manifestsOf(renamed(sampleBundleDoc(), 'a.v1')));
    expect(calls).toEqual(['broken.v1', 'a.v1', 'b.v1', 'a.v1']);
  });

  it('gives a decoded bundle that planning does not modify, so sharing it is safe', async () => {
    const decoded = await bundleDecoder().decode(manifestsOf(sampleBundleDoc()));
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.errors));
    const bundle = deepFreeze(decoded.value);
    const input = {
      bundle,
      namespace: 'ns',
      targets: { operatorGroup: 'og', namespaces: ['ns'] },
      source: { name: 'cat', namespace: 'olm' },
    };
    const once = planInstall(input);
    expect(once.ok).toBe(true);
    expect(planInstall(input)).toEqual(once);
  });
});

describe('bundleDecoder with manifests stored in a catalog file', () => {
  /** The sample bundle written as a catalog and loaded again: its manifests stay in the file. */
  async function loaded() {
    const dir = await tempDir('bosun-decoder-');
    const cfg = { ...emptyConfig(), bundles: [sampleBundleDoc()] };
    await writeCatalog(dir, cfg, { format: CatalogFormat.JSON });
    const r = await loadCatalog(dir);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const bundle = r.value.bundles[0]!;
    const file = join(dir, 'sample-operator', 'catalog.json');
    // Manifests long enough to be worth it stay in the file; the sample has some of each.
    const stored = bundle.properties.filter((p) => payloadOf(p.value) !== undefined);
    expect(stored.length).toBeGreaterThan(0);
    return { bundle, file };
  }

  it('reads the manifests when decoding, and nothing again for the same bundle', async () => {
    const { bundle, file } = await loaded();
    const { decoder, calls } = counting();
    const first = await decoder.decode(manifestsOf(bundle));
    expect(first).toEqual(decodeBundle(sampleBundleDoc()));
    await rm(file);
    expect(await decoder.decode(manifestsOf(bundle))).toBe(first);
    expect(calls).toEqual([BundleName]);
  });

  it('fails, naming the file, when the catalog file changed since it was loaded', async () => {
    const { bundle, file } = await loaded();
    await appendFile(file, '\n');
    await expect(bundleDecoder().decode(manifestsOf(bundle))).rejects.toThrow(
      `${file} has changed since the catalog was loaded`,
    );
  });
});
