/**
 * OLM v1's API kinds (olm.operatorframework.io/v1), ClusterCatalog and ClusterExtension, as
 * TypeScript types. They mirror operator-controller v1.2.0's `api/v1` (clustercatalog_types.go,
 * clusterextension_types.go) field for field, so a manifest written for OLM v1 loads unchanged.
 * The CRDs under deploy/crds are generated from schemas type-checked against these types
 * (src/apis/crds/clustercatalog.ts, clusterextension.ts). Both kinds are cluster-scoped.
 */
import type { Condition, KubeObject, LabelSelector, ObjectMeta, ResourceType, Time } from './meta.js';

export const OlmV1Group = 'olm.operatorframework.io';

/** Where OLM v1's kinds are served (kept apart from `Resources`, which lists OLM v0's kinds). */
export const V1Resources = {
  ClusterCatalog: {
    group: OlmV1Group,
    version: 'v1',
    kind: 'ClusterCatalog',
    plural: 'clustercatalogs',
    namespaced: false,
  },
  ClusterExtension: {
    group: OlmV1Group,
    version: 'v1',
    kind: 'ClusterExtension',
    plural: 'clusterextensions',
    namespaced: false,
  },
} as const satisfies Record<string, ResourceType>;
export type OlmV1Kind = keyof typeof V1Resources;

/** An object of one of OLM v1's kinds. */
export interface OlmV1Object<Kind extends OlmV1Kind, Spec, Status> extends KubeObject {
  apiVersion: `${typeof OlmV1Group}/v1`;
  kind: Kind;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

// ---------------------------------------------------------------------------------------------
// ClusterCatalog

export const SourceType = { Image: 'Image' } as const;
export type SourceType = (typeof SourceType)[keyof typeof SourceType];

export const AvailabilityMode = { Available: 'Available', Unavailable: 'Unavailable' } as const;
export type AvailabilityMode = (typeof AvailabilityMode)[keyof typeof AvailabilityMode];

export interface ImageSource {
  /** An image reference by tag or digest, e.g. `quay.io/operatorhubio/catalog:latest`. */
  ref: string;
  /** How often to look for a new digest behind a tag; refused for a digest reference. */
  pollIntervalMinutes?: number;
}

/** A discriminated union: `type` says which member is set (only `Image` exists in v1). */
export interface CatalogSource {
  type: SourceType;
  image?: ImageSource;
}

export interface ClusterCatalogSpec {
  source: CatalogSource;
  /** Breaks ties between catalogs offering the same bundle; higher wins. Default 0. */
  priority?: number;
  /** `Unavailable` stops serving the catalog's content without deleting the object. */
  availabilityMode?: AvailabilityMode;
}

export interface ResolvedImageSource {
  /** The digest reference the content was read from. */
  ref: string;
}

export interface ResolvedCatalogSource {
  type: SourceType;
  image: ResolvedImageSource;
}

export interface ClusterCatalogURLs {
  /** Where the catalog's HTTP API is served (`<base>/api/v1/all`, `<base>/api/v1/metas`). */
  base: string;
}

export interface ClusterCatalogStatus {
  conditions?: Condition[];
  resolvedSource?: ResolvedCatalogSource;
  urls?: ClusterCatalogURLs;
  /** When the served content last changed. */
  lastUnpacked?: Time;
}

export type ClusterCatalog = OlmV1Object<'ClusterCatalog', ClusterCatalogSpec, ClusterCatalogStatus>;

/** A ClusterCatalog's condition types (operator-controller v1.2.0's api/v1/common_types.go). */
export const ClusterCatalogConditionType = { Serving: 'Serving', Progressing: 'Progressing' } as const;
export type ClusterCatalogConditionType =
  (typeof ClusterCatalogConditionType)[keyof typeof ClusterCatalogConditionType];

/** The reasons v1 gives those conditions: Progressing's, then Serving's. */
export const ClusterCatalogConditionReason = {
  Succeeded: 'Succeeded',
  Retrying: 'Retrying',
  Blocked: 'Blocked',
  Available: 'Available',
  Unavailable: 'Unavailable',
  UserSpecifiedUnavailable: 'UserSpecifiedUnavailable',
} as const;
export type ClusterCatalogConditionReason =
  (typeof ClusterCatalogConditionReason)[keyof typeof ClusterCatalogConditionReason];

// ---------------------------------------------------------------------------------------------
// ClusterExtension

export const ExtensionSourceType = { Catalog: 'Catalog' } as const;
export type ExtensionSourceType = (typeof ExtensionSourceType)[keyof typeof ExtensionSourceType];

export const UpgradeConstraintPolicy = {
  CatalogProvided: 'CatalogProvided',
  SelfCertified: 'SelfCertified',
} as const;
export type UpgradeConstraintPolicy = (typeof UpgradeConstraintPolicy)[keyof typeof UpgradeConstraintPolicy];

export const CRDUpgradeSafetyEnforcement = { None: 'None', Strict: 'Strict' } as const;
export type CRDUpgradeSafetyEnforcement =
  (typeof CRDUpgradeSafetyEnforcement)[keyof typeof CRDUpgradeSafetyEnforcement];

export interface CatalogFilter {
  packageName: string;
  /** A version range in v1's notation (Masterminds semver constraints). */
  version?: string;
  channels?: string[];
  /** Which ClusterCatalogs to resolve from, by label; all of them when unset. */
  selector?: LabelSelector;
  upgradeConstraintPolicy?: UpgradeConstraintPolicy;
}

/** A discriminated union: `sourceType` says which member is set (only `Catalog` exists in v1). */
export interface SourceConfig {
  sourceType: ExtensionSourceType;
  catalog?: CatalogFilter;
}

export interface ServiceAccountReference {
  name: string;
}

export interface CRDUpgradeSafetyPreflightConfig {
  enforcement: CRDUpgradeSafetyEnforcement;
}

export interface PreflightConfig {
  crdUpgradeSafety: CRDUpgradeSafetyPreflightConfig;
}

export interface ClusterExtensionInstallConfig {
  preflight?: PreflightConfig;
}

export const ExtensionConfigType = { Inline: 'Inline' } as const;
export type ExtensionConfigType = (typeof ExtensionConfigType)[keyof typeof ExtensionConfigType];

/**
 * Configuration of the bundle, a discriminated union as `source` is (only `Inline` exists). v1
 * checks `inline` against a schema the bundle gives; for a registry+v1 bundle that is
 * `watchNamespace`, allowed as the CSV's install modes allow it.
 */
export interface ClusterExtensionConfig {
  configType: ExtensionConfigType;
  inline?: Record<string, unknown>;
}

export interface ClusterExtensionSpec {
  /** The namespace the extension's namespaced objects are installed into; immutable. */
  namespace: string;
  serviceAccount: ServiceAccountReference;
  source: SourceConfig;
  install?: ClusterExtensionInstallConfig;
  config?: ClusterExtensionConfig;
  /** Minutes an install or upgrade may take before it counts as failed (10 to 720). */
  progressDeadlineMinutes?: number;
}

export interface BundleMetadata {
  name: string;
  version: string;
}

export interface ClusterExtensionInstallStatus {
  bundle: BundleMetadata;
}

export interface ClusterExtensionStatus {
  conditions?: Condition[];
  install?: ClusterExtensionInstallStatus;
}

/**
 * v1's CRD does not require `spec` (controller-gen leaves a struct field without omitempty's
 * pointer optional), so an object without one is stored: the type says so.
 */
export type ClusterExtension = Omit<
  OlmV1Object<'ClusterExtension', ClusterExtensionSpec, ClusterExtensionStatus>,
  'spec'
> & { spec?: ClusterExtensionSpec };
