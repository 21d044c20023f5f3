import { describe, expect, it } from 'vitest';
import type { BundleDoc, DeclarativeConfig } from '../../../src/apis/fbc.js';
import { parseMirrorPrefix, planMirror, rewriteReferences } from '../../../src/catalog/mirror.js';

const D = `sha256:${'a'.repeat(64)}`;

function bundle(name: string, image: string, related: string[] = []): BundleDoc {
  return {
    schema: 'olm.bundle',
    package: 'p',
    name,
    image,
    properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }],
    relatedImages: related.map((image, i) => ({ name: `r${i}`, image })),
  };
}
const config = (...bundles: BundleDoc[]): DeclarativeConfig => ({
  packages: [],
  channels: [],
  bundles,
  deprecations: [],
  others: [],
});
const prefix = { registry: 'mirror.local:5000', path: 'ocp/4' };

describe('mirror prefixes', () => {
  it.each([
    ['mirror.local', { registry: 'mirror.local', path: '' }],
    ['mirror.local/', { registry: 'mirror.local', path: '' }],
    ['127.0.0.1:5000/a/b', { registry: '127.0.0.1:5000', path: 'a/b' }],
    ['localhost/m', { registry: 'localhost', path: 'm' }],
  ])('%s is registry and path %j', (text, want) => {
    expect(parseMirrorPrefix(text)).toEqual({ ok: true, value: want });
  });

  it.each(['mirror', 'org/repo', 'mirror.local/UPPER', 'mirror.local/a//b', 'mirror.local/a@sha256:x'])(
    '%s is refused: it names no registry, or no valid path',
    (text) => {
      expect(parseMirrorPrefix(text).ok).toBe(false);
    },
  );
});

describe('the images a catalog names, and where each goes', () => {
  it('each bundle image and related image goes below the prefix with its repository path and tag', () => {
    const plan = planMirror(
      config(bundle('b1', 'quay.io/org/b:1', ['quay.io/org/op:v1', `gcr.io/x/y/z@${D}`, 'busybox'])),
      prefix,
    );
    if (!plan.ok) throw new Error(JSON.stringify(plan.errors));
    expect(plan.value.map((i) => [i.source, i.to])).toEqual([
      ['quay.io/org/b:1', { registry: 'mirror.local:5000', repository: 'ocp/4/org/b', tag: '1' }],
      ['quay.io/org/op:v1', { registry: 'mirror.local:5000', repository: 'ocp/4/org/op', tag: 'v1' }],
      [`gcr.io/x/y/z@${D}`, { registry: 'mirror.local:5000', repository: 'ocp/4/x/y/z' }],
      // Docker Hub's short names are completed as Docker completes them.
      ['busybox', { registry: 'mirror.local:5000', repository: 'ocp/4/library/busybox', tag: 'latest' }],
    ]);
    expect(plan.value[2]!.from).toMatchObject({ registry: 'gcr.io', repository: 'x/y/z', digest: D });
  });

  it('an image several bundles name is copied once and names them all; empty images are skipped', () => {
    const plan = planMirror(
      config(
        bundle('b1', '', ['quay.io/org/op:v1']),
        bundle('b2', 'quay.io/org/b:2', ['quay.io/org/op:v1', '']),
      ),
      prefix,
    );
    if (!plan.ok) throw new Error(JSON.stringify(plan.errors));
    expect(plan.value.map((i) => [i.source, i.usedBy])).toEqual([
      ['quay.io/org/op:v1', ['p/b1', 'p/b2']],
      ['quay.io/org/b:2', ['p/b2']],
    ]);
  });

  it('a reference that is not one is a problem naming the bundle and field', () => {
    const plan = planMirror(
      config(bundle('b1', 'quay.io/org/b:1', ['docker.io/strimzi/operator@@sha256:1'])),
      prefix,
    );
    expect(plan.ok).toBe(false);
    if (!plan.ok)
      expect(plan.errors).toEqual([
        expect.objectContaining({ object: 'bundle p/b1', field: 'relatedImages[0].image' }),
      ]);
  });

  it('two registries with the same repository path, which would share one mirror repository, are refused', () => {
    const plan = planMirror(config(bundle('b1', 'quay.io/org/op:v1', ['docker.io/org/op:v1'])), prefix);
    expect(plan.ok).toBe(false);
    if (!plan.ok)
      expect(plan.errors[0]!.message).toMatch(/would both be mirrored to mirror.local:5000\/ocp\/4\/org\/op/);
  });
});

describe('the rewritten catalog', () => {
  it('names the pinned copies in image and relatedImages, and nothing else changes', () => {
    const b = bundle('b1', 'quay.io/org/b:1', ['quay.io/org/op:v1', 'quay.io/other/unmapped:v1']);
    const cfg = config(b);
    const copies = new Map([
      ['quay.io/org/b:1', `m/org/b@${D}`],
      ['quay.io/org/op:v1', `m/org/op@${D}`],
    ]);
    const out = rewriteReferences(cfg, copies);
    expect(out.bundles[0]!.image).toBe(`m/org/b@${D}`);
    expect(out.bundles[0]!.relatedImages).toEqual([
      { name: 'r0', image: `m/org/op@${D}` },
      { name: 'r1', image: 'quay.io/other/unmapped:v1' },
    ]);
    // The same property objects: manifests stored beside the documents are keyed by them.
    expect(out.bundles[0]!.properties).toBe(b.properties);
    // The input is left as it was.
    expect(b.image).toBe('quay.io/org/b:1');
    expect(b.relatedImages![0]!.image).toBe('quay.io/org/op:v1');
  });
});
