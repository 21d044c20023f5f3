/**
 * One CatalogStore over two: the CatalogSources' (namespaced refs) and OLM v1's ClusterCatalogs'
 * (cluster-wide refs, namespace ''). An install finds a bundle by its catalog's ref in either,
 * the same way; what lists and resolves a namespace's catalogs (v0's resolver, the
 * PackageManifest API, the web catalog) sees only CatalogSources, as in OLM, where a
 * ClusterCatalog is no CatalogSource.
 */
import type { CatalogStore } from './store.js';

export function withClusterCatalogs(sources: CatalogStore, clusterCatalogs: CatalogStore): CatalogStore {
  const of = (ref: { namespace: string }) => (ref.namespace === '' ? clusterCatalogs : sources);
  return {
    get: (ref) => of(ref).get(ref),
    health: (ref) => of(ref).health(ref),
    visibleFrom: (namespace) => sources.visibleFrom(namespace),
    findBundle: (ref, name) => of(ref).findBundle(ref, name),
    set: (snapshot) => of(snapshot.ref).set(snapshot),
    setHealth: (health) => of(health.ref).setHealth(health),
    delete: (ref) => of(ref).delete(ref),
    // Listeners resolve namespaces from CatalogSources; a ClusterCatalog's content is awaited by
    // the ClusterExtension controller, which watches the ClusterCatalogs themselves.
    onChange: (listener) => sources.onChange(listener),
  };
}
