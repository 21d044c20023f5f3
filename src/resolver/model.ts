/**
 * The resolver's internal view of catalog content: bundles with their properties read once,
 * and channel entries (a bundle as offered by one channel of one catalog) as the unit of choice.
 */
import type { ChannelEntry, Property } from '../apis/fbc.js';
import type { CatalogKey } from './types.js';
import type { Range, Version } from '../olm/version.js';

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

export const gvkKey = (g: GVK): string => `${g.group}/${g.version}/${g.kind}`;
/** As people write it: `etcd.database.coreos.com/v1beta2 EtcdBackup`. */
export const gvkText = (g: GVK): string => `${g.group ? `${g.group}/` : ''}${g.version} ${g.kind}`;

/** Which index can find the bundles that may satisfy a requirement, so that not every bundle is tested. */
export type LookupHint =
  | { kind: 'gvk'; key: string }
  | { kind: 'package'; name: string }
  | { kind: 'label'; label: string }
  | { kind: 'union'; hints: LookupHint[] }
  | { kind: 'all' };

/** One requirement of a bundle: a dependency on some other bundle being in the namespace. */
export interface Requirement {
  /** Canonical text of the property; requirements are sorted and de-duplicated by it. */
  key: string;
  /** The property type it comes from. */
  type: string;
  /** Where it is in the bundle, e.g. `properties[3]`. */
  field: string;
  /** What it asks for, in words: `a provider of g/v Kind`, `package etcd in range >=0.9.0`. */
  wants: string;
  failureMessage?: string;
  test: (b: BundleInfo) => boolean;
  hint: LookupHint;
  /** Set when the property is malformed; such a bundle cannot be chosen. */
  problem?: string;
}

export interface BundleProblem {
  field: string;
  message: string;
}

/** A bundle's facts, read from its properties once. */
export interface BundleInfo {
  readonly name: string;
  readonly package: string;
  readonly versionText: string;
  readonly version: Version | null;
  readonly image: string;
  readonly properties: readonly Property[];
  readonly provides: readonly GVK[];
  readonly providesKeys: readonly string[];
  readonly labels: readonly string[];
  readonly requirements: readonly Requirement[];
  /** Why the bundle is unusable, if it is (no version, malformed property, missing bundle document). */
  readonly problems: readonly BundleProblem[];
  /**
   * Set when the bundle carries OLM's legacy `olm.deprecated` property: it is never chosen, though
   * its channel still passes through it and an installed copy may stay.
   */
  readonly deprecated: BundleProblem | null;
}

export interface CatalogInfo {
  key: CatalogKey;
  priority: number;
}

/** A candidate: a bundle as one channel of one catalog offers it, or an installed bundle. */
export interface Entry {
  /** Unique per catalog, channel and bundle; `installed/<name>` for an installed bundle. */
  id: string;
  bundle: BundleInfo;
  catalog: CatalogInfo;
  channel: string;
  isDefaultChannel: boolean;
  /** Position in the channel's upgrade chain, 0 for the head. */
  rank: number;
  replaces: string | null;
  skips: string[];
  skipRange: Range | null;
  installed: boolean;
  /**
   * A `startingCSV` that its channel skips: a Subscription may install it, but it is on no
   * upgrade chain, so (as in OLM) it meets no other bundle's requirement, nor its own.
   */
  offChain?: boolean;
}

export const entryId = (catalog: CatalogKey, channel: string, bundle: string): string =>
  `${catalog.namespace}/${catalog.name}/${channel}/${bundle}`;

export type { ChannelEntry };
