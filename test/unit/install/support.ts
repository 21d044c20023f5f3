/**
 * The sample bundle under test/fixtures/install/bundle as a catalog would carry it: an
 * `olm.bundle` document whose manifests are `olm.bundle.object` properties (base64 of the YAML
 * files, as written), next to the package and GVK properties opm renders.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundleDoc, Property } from '../../../src/apis/fbc.js';
import { decodeBundle, type InstallableBundle } from '../../../src/install/index.js';

export const fixtures = fileURLToPath(new URL('../../fixtures/install/', import.meta.url));
const manifestsDir = join(fixtures, 'bundle', 'manifests');

export const BundleName = 'sample-operator.v0.2.0';

export function manifestFiles(): string[] {
  return readdirSync(manifestsDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

export function manifestText(file: string): string {
  return readFileSync(join(manifestsDir, file), 'utf8');
}

export function bundleObjectProperty(text: string): Property {
  return { type: 'olm.bundle.object', value: { data: Buffer.from(text, 'utf8').toString('base64') } };
}

/** The sample bundle doc; `texts` replaces the manifests (e.g. to reorder or break them). */
export function sampleBundleDoc(texts: string[] = manifestFiles().map(manifestText)): BundleDoc {
  return {
    schema: 'olm.bundle',
    package: 'sample-operator',
    name: BundleName,
    image: '',
    properties: [
      { type: 'olm.package', value: { packageName: 'sample-operator', version: '0.2.0' } },
      { type: 'olm.gvk', value: { group: 'example.com', kind: 'Widget', version: 'v1' } },
      ...texts.map(bundleObjectProperty),
    ],
  };
}

export function sampleBundle(texts?: string[]): InstallableBundle {
  const decoded = decodeBundle(sampleBundleDoc(texts));
  if (!decoded.ok) throw new Error(`sample bundle does not decode: ${JSON.stringify(decoded.errors)}`);
  return decoded.value;
}
