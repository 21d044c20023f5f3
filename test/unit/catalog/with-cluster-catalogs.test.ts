/**
 * The store controllers are given: a CatalogSource's ref reads the CatalogSources' store, a
 * ClusterCatalog's (namespace '') the ClusterCatalogs'; what resolves and lists a namespace's
 * catalogs, and who hears of changes, see CatalogSources only.
 */
import { describe, expect, it } from 'vitest';
import type { DeclarativeConfig } from '../../../src/apis/fbc.js';
import { MemoryCatalogStore } from '../../../src/catalog/content/memory-store.js';
import type { CatalogSnapshot } from '../../../src/catalog/content/store.js';
import { withClusterCatalogs } from '../../../src/catalog/content/with-cluster-catalogs.js';

const config = (bundle: string): DeclarativeConfig => ({
  packages: [],
  channels: [],
  bundles: [{ schema: 'olm.bundle', name: bundle, package: 'p', image: '', properties: [] }],
  deprecations: [],
  others: [],
});
const snapshot = (namespace: string, name: string, bundle: string): CatalogSnapshot => ({
  ref: { namespace, name },
  priority: 0,
  config: config(bundle),
  digest: `d-${bundle}`,
  fetchedAt: 0,
});

describe('withClusterCatalogs', () => {
  it('routes by ref: a namespaced one to CatalogSources, a cluster-wide one to ClusterCatalogs', () => {
    const sources = new MemoryCatalogStore('olm');
    const clusterCatalogs = new MemoryCatalogStore('');
    const store = withClusterCatalogs(sources, clusterCatalogs);
    store.set(snapshot('olm', 'same', 'from-source'));
    store.set(snapshot('', 'same', 'from-cluster-catalog'));
    expect(store.findBundle({ namespace: 'olm', name: 'same' }, 'from-source')).toBeDefined();
    expect(store.findBundle({ namespace: '', name: 'same' }, 'from-cluster-catalog')).toBeDefined();
    expect(store.findBundle({ namespace: '', name: 'same' }, 'from-source')).toBeUndefined();
    expect(sources.list().map((s) => s.ref)).toEqual([{ namespace: 'olm', name: 'same' }]);
    expect(clusterCatalogs.list().map((s) => s.ref)).toEqual([{ namespace: '', name: 'same' }]);
    store.delete({ namespace: '', name: 'same' });
    expect(store.get({ namespace: '', name: 'same' })).toBeUndefined();
    expect(store.get({ namespace: 'olm', name: 'same' })).toBeDefined();
  });

  it('resolves a namespace from CatalogSources only, and tells listeners of theirs only', () => {
    const sources = new MemoryCatalogStore('olm');
    const clusterCatalogs = new MemoryCatalogStore('');
    const store = withClusterCatalogs(sources, clusterCatalogs);
    const heard: string[] = [];
    store.onChange((ref) => heard.push(`${ref.namespace}/${ref.name}`));
    store.set(snapshot('', 'cc', 'b1'));
    store.set(snapshot('team', 'cs', 'b2'));
    expect(store.visibleFrom('team').map((s) => s.ref.name)).toEqual(['cs']);
    expect(store.visibleFrom('').map((s) => s.ref.name)).toEqual([]);
    expect(heard).toEqual(['team/cs']);
  });
});
