/**
 * `packages.operators.coreos.com/v1` PackageManifest: the read-only view of a catalog's packages
 * that OLM's packageserver serves as an aggregated API, and that `kubectl get packagemanifests`,
 * the `kubectl operator` plugin and OperatorHub-style consoles read. Field names and JSON shapes
 * are OLM's, so those clients decode Bosun's objects unchanged.
 */
import type { ObjectMeta } from './meta.js';

export const PackagesGroup = 'packages.operators.coreos.com';
export const PackagesVersion = 'v1';
export const PackagesApiVersion = `${PackagesGroup}/${PackagesVersion}`;
export const PackageManifestKind = 'PackageManifest';
export const PackageManifestResource = 'packagemanifests';

export interface AppLink {
  name?: string;
  url?: string;
}

export interface Maintainer {
  name?: string;
  email?: string;
}

export interface Icon {
  base64data?: string;
  mediatype?: string;
}

export interface Deprecation {
  message: string;
}

export interface InstallMode {
  type: string;
  supported: boolean;
}

/** A CSV's `spec.customresourcedefinitions` (or `apiservicedefinitions`) entry, as the CSV has it. */
export type APIDescription = Record<string, unknown> & { name?: string; version?: string; kind?: string };

export interface CSVDescription {
  displayName?: string;
  icon?: Icon[];
  version?: string;
  provider?: AppLink;
  annotations?: Record<string, string>;
  keywords?: string[];
  links?: AppLink[];
  maintainers?: Maintainer[];
  maturity?: string;
  /** The CSV's `spec.description` (Markdown). */
  description?: string;
  installModes?: InstallMode[];
  customresourcedefinitions?: { owned?: APIDescription[]; required?: APIDescription[] };
  apiservicedefinitions?: { owned?: APIDescription[]; required?: APIDescription[] };
  nativeApis?: { group: string; version: string; kind: string }[];
  minKubeVersion?: string;
  relatedImages?: string[];
}

export interface PackageChannelEntry {
  /** The bundle (CSV) name. */
  name: string;
  version?: string;
  deprecation?: Deprecation;
}

export interface PackageChannel {
  name: string;
  /** The channel head: the bundle nothing else in the channel replaces or skips. */
  currentCSV: string;
  currentCSVDesc: CSVDescription;
  deprecation?: Deprecation;
  entries: PackageChannelEntry[];
}

export interface PackageManifestStatus {
  catalogSource: string;
  catalogSourceDisplayName: string;
  catalogSourcePublisher: string;
  catalogSourceNamespace: string;
  provider?: AppLink;
  packageName: string;
  deprecation?: Deprecation;
  channels: PackageChannel[];
  defaultChannel: string;
}

export interface PackageManifest {
  apiVersion: typeof PackagesApiVersion;
  kind: typeof PackageManifestKind;
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: Record<string, never>;
  status: PackageManifestStatus;
}
