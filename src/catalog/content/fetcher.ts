/**
 * The CatalogFetcher port: one CatalogSource in, its catalog content out, or a problem with the
 * reason its status should give. One fetcher per kind of source, each in a file of its own
 * (configmap.ts, http.ts, grpc.ts, image.ts); the manager builds them and hands the CatalogSource controller
 * a registry keyed by kind (CatalogFetchers), so a new kind of source is one new file here and one
 * line in src/manager/manager.ts. Which kind a CatalogSource is, how often it is polled, and what
 * its status and events say stay with the controller.
 *
 * A fetcher is given the content the store holds now (`previous`): content with the same digest
 * is not parsed again but given back as it is, which is what most polls find.
 */
import type { CatalogSource, ConfigMapResourceReference } from '../../apis/operators.js';
import { PlatformMissingError } from '../../oci/errors.js';
import type { CatalogContent } from './store.js';

/** Why a fetch failed. The first three are OLM's `status.reason` values (CatalogSourceReason). */
export const FetchFailureReason = {
  ConfigMapError: 'ConfigMapError',
  RegistryServerError: 'RegistryServerError',
  SpecInvalidError: 'SpecInvalidError',
  /** The source answered, but not with a valid file-based catalog. */
  InvalidCatalog: 'InvalidCatalog',
  /** A multi-platform catalog image with no image for the platform read (linux/amd64). */
  ImagePlatformMissing: PlatformMissingError.reason,
  /** No fetcher reads this kind of source (yet). */
  SourceTypeNotSupported: 'SourceTypeNotSupported',
} as const;
export type FetchFailureReason = (typeof FetchFailureReason)[keyof typeof FetchFailureReason];

/** Where fetched content came from, for the CatalogSource's status. */
export interface FetchedFrom {
  /** `status.connectionState.address`. */
  address?: string;
  /**
   * A catalog image pinned to the digest that was read (`registry/repository@sha256:...`): OLM
   * has no field for it, so the Ready condition and the CatalogSynced Event say it.
   */
  image?: string;
  /** `status.configMapReference`, but for when it was read (the controller's clock says). */
  configMap?: Omit<ConfigMapResourceReference, 'lastUpdateTime'>;
}

export type FetchOutcome =
  | ({ ok: true; content: CatalogContent } & FetchedFrom)
  | { ok: false; reason: FetchFailureReason; message: string; address?: string };

export interface CatalogFetcher {
  /**
   * Reads the content `source` names. Expected failures (the source is missing, unreachable,
   * or not a valid catalog) are outcomes naming the source and what to fix; a thrown error is a
   * bug or an I/O failure of the manager itself, and the reconcile is retried.
   */
  fetch(
    source: CatalogSource,
    previous: CatalogContent | undefined,
    signal: AbortSignal,
  ): Promise<FetchOutcome>;
}

/**
 * The kinds of source a CatalogSource can name. `grpc` is a CatalogSource of sourceType grpc with
 * `spec.address` (an `opm serve`); `image` one of sourceType grpc with `spec.image`.
 */
export const SourceKind = {
  ConfigMap: 'configmap',
  Http: 'http',
  Grpc: 'grpc',
  Image: 'image',
} as const;
export type SourceKind = (typeof SourceKind)[keyof typeof SourceKind];

/** The fetchers the manager runs, by the kind of source each reads; a kind without one is not supported. */
export type CatalogFetchers = Readonly<Partial<Record<SourceKind, CatalogFetcher>>>;
