/**
 * Catalog content: what the manager holds of each CatalogSource, below everything that reads it.
 *
 * This folder is the one room for it. Its readers (the controllers, the PackageManifest index,
 * the web catalog, install/) import from here, and nothing here imports them back:
 * - store.ts (this file): the CatalogStore port and its types; memory-store.ts, the store;
 * - spool.ts: fetched content kept on disk, so memory holds only what resolution reads;
 * - fetcher.ts: the CatalogFetcher port, with one file per kind of source (configmap.ts,
 *   http.ts, grpc.ts, image.ts), each turning a CatalogSource into content or a problem with its
 *   reason; registry-access.ts, how images are reached with a CatalogSource's pull Secrets;
 * - parse.ts and digest.ts: fetched bytes made a validated catalog, and its digest;
 * - bundles.ts: the BundleContent port, a bundle's manifests as an install reads them.
 * Kubernetes I/O stays with the controllers: a fetcher that reads the cluster is given a function
 * that does it (configmap.ts), so this folder is catalog logic and files only.
 */
import type { DeclarativeConfig } from '../../apis/fbc.js';

/** Names a CatalogSource. */
export interface CatalogRef {
  namespace: string;
  name: string;
}

/** A CatalogRef as one string, `namespace/name` (as an informer keys the CatalogSource), for keys of maps. */
export const refKey = (ref: CatalogRef): string =>
  ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;

/** A catalog's content as fetched, parsed and validated, before the store takes it. */
export interface CatalogContent {
  config: DeclarativeConfig;
  /** sha256 of the fetched content; changes exactly when the content does. */
  digest: string;
  /** The spooled file the bundles' inline manifests are read from (see spool.ts); the store removes it once the snapshot is replaced. */
  payloadFile?: string;
}

/** The content of one CatalogSource as last fetched, parsed and validated. */
export interface CatalogSnapshot extends CatalogContent {
  ref: CatalogRef;
  /** `spec.priority`: higher is preferred when several catalogs offer a bundle. */
  priority: number;
  /** When the content was fetched (clock milliseconds). */
  fetchedAt: number;
}

export interface CatalogHealth {
  ref: CatalogRef;
  healthy: boolean;
  /** Why the last fetch failed, naming the source and what to fix. */
  message?: string;
  /** When the source was last checked (clock milliseconds). */
  checkedAt: number;
}

/**
 * Catalog content held in the manager's memory (no registry pods): written by the CatalogSource
 * controller, read by the Subscription and InstallPlan controllers, the PackageManifest index and
 * the web catalog.
 */
export interface CatalogStore {
  get(ref: CatalogRef): CatalogSnapshot | undefined;
  health(ref: CatalogRef): CatalogHealth | undefined;
  /** The catalogs a namespace resolves from: its own namespace's and the global namespace's. */
  visibleFrom(namespace: string): CatalogSnapshot[];
  /** A bundle by name in one catalog. */
  findBundle(ref: CatalogRef, bundleName: string): DeclarativeConfig['bundles'][number] | undefined;
  set(snapshot: CatalogSnapshot): void;
  setHealth(health: CatalogHealth): void;
  delete(ref: CatalogRef): void;
  /** Told whenever a catalog's content or health changes; returns an unsubscribe function. */
  onChange(listener: (ref: CatalogRef) => void): () => void;
}
