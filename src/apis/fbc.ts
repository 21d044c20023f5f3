/**
 * OLM file-based catalog (FBC) schemas and the bundle properties Bosun reads and writes.
 * Field names are OLM's, so a catalog `opm` writes loads here and one Bosun writes passes
 * `opm validate`. These types are the one source of truth for catalog content in Bosun.
 */

export const Schema = {
  Package: 'olm.package',
  Channel: 'olm.channel',
  Bundle: 'olm.bundle',
  Deprecations: 'olm.deprecations',
  SemverTemplate: 'olm.semver',
} as const;
export type Schema = (typeof Schema)[keyof typeof Schema];

export const PropertyType = {
  Package: 'olm.package',
  GVK: 'olm.gvk',
  GVKRequired: 'olm.gvk.required',
  PackageRequired: 'olm.package.required',
  Constraint: 'olm.constraint',
  BundleObject: 'olm.bundle.object',
  CSVMetadata: 'olm.csv.metadata',
  Label: 'olm.label',
  LabelRequired: 'olm.label.required',
  Deprecated: 'olm.deprecated',
  Channel: 'olm.channel',
  SkipRange: 'olm.skipRange',
} as const;
export type PropertyType = (typeof PropertyType)[keyof typeof PropertyType];

export interface Property<T = unknown> {
  type: string;
  value: T;
}

export interface Icon {
  base64data: string;
  mediatype: string;
}

export interface PackageDoc {
  schema: typeof Schema.Package;
  name: string;
  defaultChannel?: string;
  icon?: Icon;
  description?: string;
  properties?: Property[];
}

export interface ChannelEntry {
  name: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

export interface ChannelDoc {
  schema: typeof Schema.Channel;
  package: string;
  name: string;
  entries: ChannelEntry[];
  properties?: Property[];
}

export interface RelatedImage {
  name: string;
  image: string;
}

export interface BundleDoc {
  schema: typeof Schema.Bundle;
  package: string;
  name: string;
  image: string;
  properties: Property[];
  relatedImages?: RelatedImage[];
}

export interface DeprecationEntry {
  reference: { schema: typeof Schema.Package | typeof Schema.Channel | typeof Schema.Bundle; name?: string };
  message: string;
}

export interface DeprecationsDoc {
  schema: typeof Schema.Deprecations;
  package: string;
  entries: DeprecationEntry[];
}

/** A document with a schema Bosun does not interpret; kept so that writing a catalog loses nothing. */
export interface OtherDoc {
  schema: string;
  package?: string;
  name?: string;
  [key: string]: unknown;
}

/** A whole catalog in memory, as `opm` models it (its DeclarativeConfig). */
export interface DeclarativeConfig {
  packages: PackageDoc[];
  channels: ChannelDoc[];
  bundles: BundleDoc[];
  deprecations: DeprecationsDoc[];
  others: OtherDoc[];
}

// ---- property values ----

export interface PackageProperty {
  packageName: string;
  version: string;
}

export interface GVKProperty {
  group: string;
  version: string;
  kind: string;
}

export interface PackageRequiredProperty {
  packageName: string;
  versionRange: string;
}

export interface LabelProperty {
  label: string;
}

/** `olm.constraint`: exactly one of the constraint fields is set; `all`/`any`/`not` nest. */
export interface Constraint {
  failureMessage?: string;
  gvk?: GVKProperty;
  package?: PackageRequiredProperty;
  all?: { constraints: Constraint[] };
  any?: { constraints: Constraint[] };
  not?: { constraints: Constraint[] };
  cel?: { rule: string };
}

/** `olm.bundle.object`: one manifest of the bundle, base64-encoded JSON or YAML. */
export interface BundleObjectProperty {
  data: string;
}

/** The semver template (`opm alpha render-template semver`) input. */
export interface SemverTemplate {
  schema: typeof Schema.SemverTemplate;
  generateMajorChannels?: boolean;
  generateMinorChannels?: boolean;
  /** Which kind of generated channel wins the default on a tie: `major` or `minor`. */
  defaultChannelTypePreference?: 'major' | 'minor';
  /** From earlier opm releases: link every entry to the previous one with `replaces`, no skips. */
  avoidSkipPatch?: boolean;
  candidate?: { bundles: { image: string }[] };
  fast?: { bundles: { image: string }[] };
  stable?: { bundles: { image: string }[] };
}

export function emptyConfig(): DeclarativeConfig {
  return { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
}
