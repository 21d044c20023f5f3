/**
 * The folders of src/ stand on floors, as design.md's Shape lists them: a module imports from its
 * own floor or below, never from above. Catalog content (src/catalog/content) sits below all its
 * readers, so packages/, web/ and install/ never import the controllers, and the controllers
 * reach bundle manifests only through the BundleContent port, never by reading catalog files.
 * Type imports count: a type from above ties a floor to what is above it as much as a value does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../../src');

/** Bottom up. Folders on one floor may import each other; none imports a floor above its own. */
const Floors: readonly (readonly string[])[] = [
  ['util'],
  ['apis'],
  ['olm'],
  ['oci'],
  ['bundle'],
  ['catalog'],
  ['resolver', 'olmv1'],
  ['install'],
  ['kube'],
  ['packages'],
  ['web'],
  ['controllers'],
  ['server'],
  ['manager'],
  ['cluster'],
  ['cli'],
];
const floorOf = new Map(Floors.flatMap((names, i) => names.map((n) => [n, i] as const)));

/**
 * Imports up a floor that are known and left: the CRD generators and the CRD index of apis/ read
 * YAML and the load schema with bundle/'s and catalog/'s code (apis/crds is generated from them).
 */
const KnownUpward = [
  'apis/crds/generate-kubernetes.ts -> bundle/yaml.ts',
  'apis/crds/index.ts -> bundle/yaml.ts',
  'apis/crds/precompile.ts -> bundle/csv-schema.ts',
  'apis/crds/precompile.ts -> catalog/schema.ts',
];

/** Every relative import and re-export of every module under src/, as `from -> to` (paths under src/). */
function imports(): { from: string; to: string }[] {
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  const found: { from: string; to: string }[] = [];
  for (const file of files) {
    const text = readFileSync(join(src, file), 'utf8');
    const specifiers = text.matchAll(
      /^\s*(?:import|export)\b[^'";]*?\bfrom\s*'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/gm,
    );
    for (const m of specifiers) {
      const target = resolve(dirname(join(src, file)), (m[1] ?? m[2])!).replace(/\.js$/, '.ts');
      found.push({ from: file, to: relative(src, target) });
    }
  }
  return found;
}

const folder = (path: string) => path.split('/')[0]!;

describe('the floors of src/', () => {
  const all = imports();

  it('reads imports at all (the check has something to check)', () => {
    expect(all.length).toBeGreaterThan(1000);
    expect(all).toContainEqual({ from: 'manager/manager.ts', to: 'controllers/context.ts' });
  });

  it('gives every folder of src/ a floor', () => {
    const folders = readdirSync(src, { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(folders.map((d) => d.name).filter((n) => !floorOf.has(n))).toEqual([]);
  });

  it('has no import up a floor but the known ones', () => {
    const upward = all
      .filter(({ from, to }) => floorOf.get(folder(to))! > floorOf.get(folder(from))!)
      .map(({ from, to }) => `${from} -> ${to}`)
      .sort();
    expect(upward).toEqual(KnownUpward);
  });

  it('keeps catalog content below all its readers: it imports none of them', () => {
    const readers = ['controllers', 'packages', 'web', 'server', 'manager', 'install', 'kube', 'cli'];
    const out = all.filter(
      ({ from, to }) => from.startsWith('catalog/content/') && readers.includes(folder(to)),
    );
    expect(out).toEqual([]);
  });

  it('gives install/ and the controllers bundle manifests through the BundleContent port only', () => {
    const readers = all.filter(
      ({ from, to }) => ['install', 'controllers'].includes(folder(from)) && to === 'catalog/payloads.ts',
    );
    expect(readers).toEqual([]);
  });
});
