/**
 * Reads what the resolver needs from a bundle's properties: package and version, the APIs it
 * provides, its labels, and its requirements (sorted and de-duplicated, so that the order in
 * which a catalog lists properties never changes a resolution).
 */
import { type Property, PropertyType } from '../apis/fbc.js';
import {
  type Compiled,
  constraintRequirement,
  gvkRequirement,
  isGVK,
  labelRequirement,
  packageRequirement,
} from './constraint.js';
import { type BundleInfo, type BundleProblem, type GVK, gvkKey, type Requirement } from './model.js';
import { decode } from '../olm/property-value.js';
import { parseVersion } from '../olm/version.js';
import { canonicalJson } from '../util/canonical-json.js';

export interface BundleSource {
  name: string;
  package: string;
  image?: string;
  properties: readonly Property[];
}

const REQUIREMENT_TYPES: Record<string, (v: unknown) => Compiled> = {
  [PropertyType.GVKRequired]: gvkRequirement,
  [PropertyType.PackageRequired]: packageRequirement,
  [PropertyType.LabelRequired]: labelRequirement,
  [PropertyType.Constraint]: (v) => constraintRequirement(v),
};

/**
 * Reads a bundle. What the catalog index needs for every bundle (package, version text, the APIs
 * it provides, its labels) is read at once; requirements and the parsed version are read on
 * first use, since a resolution looks at only a few of a large catalog's bundles.
 */
export function readBundle(src: BundleSource): BundleInfo {
  return new Bundle(src);
}

class Bundle implements BundleInfo {
  readonly name: string;
  readonly package: string;
  readonly image: string;
  readonly properties: readonly Property[];
  readonly versionText: string;
  readonly provides: GVK[];
  readonly providesKeys: string[];
  readonly labels: string[];
  readonly deprecated: BundleProblem | null;
  private readonly declaredPackage: string | undefined;
  private readonly malformed: BundleProblem[];
  private parsed?: { version: BundleInfo['version']; requirements: Requirement[]; problems: BundleProblem[] };

  constructor(src: BundleSource) {
    this.name = src.name;
    this.package = src.package;
    this.image = src.image ?? '';
    this.properties = src.properties;
    let versionText = '';
    let declaredPackage: string | undefined;
    let provides: GVK[] | undefined;
    let labels: string[] | undefined;
    let deprecatedAt: string | undefined;
    const malformed: BundleProblem[] = [];
    src.properties.forEach((p, i) => {
      if (p.type === PropertyType.Package) {
        const v = (decode(p.value) ?? {}) as Record<string, unknown>;
        if (typeof v.version === 'string') versionText = v.version;
        if (typeof v.packageName === 'string') declaredPackage = v.packageName;
      } else if (p.type === PropertyType.GVK) {
        const value = decode(p.value);
        if (isGVK(value)) {
          provides ??= [];
          provides.push({ group: value.group, version: value.version, kind: value.kind });
        } else
          malformed.push({ field: `properties[${i}]`, message: 'olm.gvk needs group, version and kind' });
      } else if (p.type === PropertyType.Deprecated) {
        deprecatedAt ??= `properties[${i}]`;
      } else if (p.type === PropertyType.Label) {
        const label = (decode(p.value) as Record<string, unknown> | null)?.label;
        if (typeof label === 'string') {
          labels ??= [];
          labels.push(label);
        }
      }
    });
    this.versionText = versionText;
    this.deprecated = deprecatedAt
      ? { field: deprecatedAt, message: 'olm.deprecated: the bundle is deprecated and cannot be installed' }
      : null;
    this.declaredPackage = declaredPackage;
    this.malformed = malformed;
    this.provides = provides ? dedupeGVKs(provides) : NONE;
    this.providesKeys = provides ? this.provides.map(gvkKey) : NONE;
    this.labels = labels ? [...new Set(labels)].sort() : NONE;
  }

  get version(): BundleInfo['version'] {
    return this.read().version;
  }

  get requirements(): Requirement[] {
    return this.read().requirements;
  }

  get problems(): BundleProblem[] {
    return this.read().problems;
  }

  private read(): NonNullable<Bundle['parsed']> {
    if (this.parsed) return this.parsed;
    const problems = [...this.malformed];
    if (this.declaredPackage !== undefined && this.declaredPackage !== this.package) {
      problems.push({
        field: 'properties.olm.package.packageName',
        message: `is ${this.declaredPackage} but the bundle is in package ${this.package}`,
      });
    }
    const version = parseVersion(this.versionText) ?? null;
    if (this.versionText === '')
      problems.push({ field: 'properties.olm.package.version', message: 'is missing' });
    else if (!version) {
      problems.push({
        field: 'properties.olm.package.version',
        message: `${this.versionText} is not semver`,
      });
    }
    this.parsed = { version, requirements: readRequirements(this.properties), problems };
    return this.parsed;
  }
}

const NONE: never[] = [];

function readRequirements(properties: readonly Property[]): Requirement[] {
  let requirements: Map<string, Requirement> | undefined;
  properties.forEach((p, i) => {
    const compile = REQUIREMENT_TYPES[p.type];
    if (!compile) return;
    const value = decode(p.value);
    // The same requirement written twice, in any key order, is one requirement.
    const key = `${p.type} ${canonicalJson(value)}`;
    requirements ??= new Map();
    if (requirements.has(key)) return;
    const c = compile(value);
    const failureMessage = (value as Constraint | null)?.failureMessage;
    requirements.set(key, {
      key,
      type: p.type,
      field: `properties[${i}]`,
      wants: c.wants,
      test: c.test,
      hint: c.hint,
      ...(typeof failureMessage === 'string' ? { failureMessage } : {}),
      ...(c.problem ? { problem: `${p.type}: ${c.problem}` } : {}),
    });
  });
  if (!requirements) return NONE;
  return [...requirements.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

type Constraint = { failureMessage?: string };

/** Sorted by key, without repeats; most bundles provide a handful, so no map is needed. */
function dedupeGVKs(gvks: GVK[]): GVK[] {
  if (gvks.length === 1) return gvks;
  const keyed = gvks
    .map((g) => [gvkKey(g), g] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.filter((k, i) => i === 0 || k[0] !== keyed[i - 1]![0]).map((k) => k[1]);
}
