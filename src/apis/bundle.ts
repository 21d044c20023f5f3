/**
 * OLM registry+v1 bundles as Bosun reads them: `manifests/` (one Kubernetes object per file, by
 * convention) and `metadata/annotations.yaml` (+ optional `dependencies.yaml`, `properties.yaml`).
 * The annotation keys are OLM's, so bundles built for OLM load unchanged.
 */
import type { Property } from './fbc.js';

/** The annotation keys of `metadata/annotations.yaml` (also the bundle image's labels). */
export const BundleAnnotation = {
  MediaType: 'operators.operatorframework.io.bundle.mediatype.v1',
  Manifests: 'operators.operatorframework.io.bundle.manifests.v1',
  Metadata: 'operators.operatorframework.io.bundle.metadata.v1',
  Package: 'operators.operatorframework.io.bundle.package.v1',
  Channels: 'operators.operatorframework.io.bundle.channels.v1',
  DefaultChannel: 'operators.operatorframework.io.bundle.channel.default.v1',
} as const;
export type BundleAnnotation = (typeof BundleAnnotation)[keyof typeof BundleAnnotation];

/** The only bundle media type Bosun installs (`plain+v0` and `helm` are OLM v1 formats it does not). */
export const BundleMediaType = {
  RegistryV1: 'registry+v1',
} as const;
export type BundleMediaType = (typeof BundleMediaType)[keyof typeof BundleMediaType];

/** CSV annotations that carry upgrade-graph data. */
export const CSVAnnotation = {
  SkipRange: 'olm.skipRange',
  Properties: 'operatorframework.io/properties',
} as const;

/** A Kubernetes object as plain JSON, as read from a manifest. */
export type KubeManifest = Record<string, unknown> & {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: unknown;
};

/** One object of a bundle and where it came from. */
export interface BundleManifest {
  /** Path relative to the bundle root, e.g. `manifests/etcd.csv.yaml`. */
  file: string;
  /** Index of the document in its file (0 for single-document files). */
  doc: number;
  object: KubeManifest;
  /** Size of the object's source text in bytes, for the per-object size limit. */
  size: number;
}

/** A registry+v1 bundle read from a directory or archive, not yet validated. */
export interface Bundle {
  /** Where it was read from (directory or archive path), for messages. */
  source: string;
  /** True when read from an archive: file names in messages read `archive:path`. */
  archive?: boolean;
  /** The `annotations` map of `metadata/annotations.yaml`; empty for package-manifest bundles. */
  annotations: Record<string, string>;
  manifests: BundleManifest[];
  /** `metadata/dependencies.yaml` entries (`olm.gvk`, `olm.package`, `olm.constraint`, ...). */
  dependencies: Property[];
  /** `metadata/properties.yaml` entries. */
  properties: Property[];
  /** The file of each metadata part that was present, for messages. */
  metadataFiles: { annotations?: string; dependencies?: string; properties?: string };
  /** What reading left out or tolerated that a user should hear about (e.g. a manifest file's later documents). */
  warnings?: import('../util/result.js').Problem[];
}

/** Bosun's limit on one manifest object, as OLM's (etcd's request size limit leaves room for ~1 MiB). */
export const MaxManifestBytes = 1024 * 1024;
