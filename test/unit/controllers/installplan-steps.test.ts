import { describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { OperatorGroup } from '../../../src/apis/operators.js';
import type { CatalogRef, CatalogSnapshot } from '../../../src/controllers/context.js';
import { installTargets, locateBundle } from '../../../src/controllers/installplan-steps.js';

const bundle = (name: string): BundleDoc => ({
  schema: 'olm.bundle',
  package: 'p',
  name,
  image: '',
  properties: [],
});

function store(snapshots: { ref: CatalogRef; priority: number; bundles: string[] }[]) {
  const full: CatalogSnapshot[] = snapshots.map((s) => ({
    ref: s.ref,
    priority: s.priority,
    digest: 'd',
    fetchedAt: 0,
    config: { packages: [], channels: [], bundles: s.bundles.map(bundle), deprecations: [], others: [] },
  }));
  const same = (a: CatalogRef, b: CatalogRef) => a.name === b.name && a.namespace === b.namespace;
  return {
    get: (ref: CatalogRef) => full.find((s) => same(s.ref, ref)),
    findBundle: (ref: CatalogRef, name: string) =>
      full.find((s) => same(s.ref, ref))?.config.bundles.find((b) => b.name === name),
    visibleFrom: (ns: string) => full.filter((s) => s.ref.namespace === ns || s.ref.namespace === 'global'),
  };
}

const plan = (spec: { source?: string; sourceNamespace?: string }) => ({
  metadata: { name: 'ip', namespace: 'ops' },
  spec: { clusterServiceVersionNames: ['op.v1'], approval: 'Automatic' as const, approved: true, ...spec },
});

describe('locateBundle', () => {
  const catalogs = store([
    { ref: { namespace: 'global', name: 'low' }, priority: 0, bundles: ['op.v1'] },
    { ref: { namespace: 'global', name: 'high' }, priority: 10, bundles: ['op.v1'] },
    { ref: { namespace: 'elsewhere', name: 'hidden' }, priority: 99, bundles: ['op.v1'] },
  ]);

  it('uses the catalog the plan names', () => {
    const found = locateBundle(catalogs, plan({ source: 'low', sourceNamespace: 'global' }), 'op.v1');
    expect(found).toMatchObject({ kind: 'found', source: { name: 'low', namespace: 'global' } });
  });

  it('waits for a named catalog that is not loaded yet', () => {
    expect(
      locateBundle(catalogs, plan({ source: 'later', sourceNamespace: 'global' }), 'op.v1'),
    ).toMatchObject({
      kind: 'wait',
    });
  });

  it('fails when the named catalog does not have the bundle', () => {
    const r = locateBundle(catalogs, plan({ source: 'low', sourceNamespace: 'global' }), 'op.v9');
    expect(r).toEqual({ kind: 'failed', message: 'bundle op.v9 is not in catalog global/low' });
  });

  it('without a source, takes the visible catalog of highest priority', () => {
    expect(locateBundle(catalogs, plan({}), 'op.v1')).toMatchObject({
      kind: 'found',
      source: { name: 'high' },
    });
  });

  it('without a source and no visible catalog offering it, waits', () => {
    expect(locateBundle(catalogs, plan({}), 'op.v9')).toMatchObject({ kind: 'wait' });
  });
});

describe('installTargets', () => {
  const og = (name: string, spec: OperatorGroup['spec'] = {}): OperatorGroup => ({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name, namespace: 'ops' },
    spec,
  });

  it('is the one group’s targets', () => {
    expect(installTargets([og('g', { targetNamespaces: ['a'] })], [], 'ops')).toEqual({
      operatorGroup: 'g',
      namespaces: ['a'],
    });
    expect(installTargets([og('g')], [], 'ops')).toEqual({ operatorGroup: 'g', namespaces: [''] });
  });

  it('falls back to the own namespace without exactly one group (the CSV reports why)', () => {
    expect(installTargets([], [], 'ops')).toEqual({ operatorGroup: '', namespaces: ['ops'] });
    expect(installTargets([og('a'), og('b')], [], 'ops')).toEqual({ operatorGroup: '', namespaces: ['ops'] });
  });
});
