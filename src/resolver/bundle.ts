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
import { parseVersion } from './version.js';

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

export function readBundle(src: BundleSource): BundleInfo {
  const problems: BundleProblem[] = [];
  const provides: GVK[] = [];
  const labels: string[] = [];
  const requirements = new Map<string, Requirement>();
  let versionText = '';
  let packageName: string | undefined;

  src.properties.forEach((p, i) => {
    const field = `properties[${i}]`;
    const value = decode(p.value);
    switch (p.type) {
      case PropertyType.Package: {
        const v = (value ?? {}) as Record<string, unknown>;
        if (typeof v.version === 'string') versionText = v.version;
        if (typeof v.packageName === 'string') packageName = v.packageName;
        return;
      }
      case PropertyType.GVK:
        if (isGVK(value)) provides.push({ group: value.group, version: value.version, kind: value.kind });
        else problems.push({ field, message: 'olm.gvk needs group, version and kind' });
        return;
      case PropertyType.Label: {
        const label = (value as Record<string, unknown> | null)?.label;
        if (typeof label === 'string') labels.push(label);
        return;
      }
    }
    const compile = REQUIREMENT_TYPES[p.type];
    if (!compile) return;
    const key = `${p.type} ${canonical(value)}`;
    if (requirements.has(key)) return;
    const c = compile(value);
    requirements.set(key, {
      key,
      type: p.type,
      field,
      wants: c.wants,
      test: c.test,
      hint: c.hint,
      ...(typeof (value as Constraint | null)?.failureMessage === 'string'
        ? { failureMessage: (value as Constraint).failureMessage }
        : {}),
      ...(c.problem ? { problem: `${p.type}: ${c.problem}` } : {}),
    });
  });

  if (packageName !== undefined && packageName !== src.package) {
    problems.push({
      field: 'properties.olm.package.packageName',
      message: `is ${packageName} but the bundle is in package ${src.package}`,
    });
  }
  const version = parseVersion(versionText);
  if (versionText === '') problems.push({ field: 'properties.olm.package.version', message: 'is missing' });
  else if (!version)
    problems.push({ field: 'properties.olm.package.version', message: `${versionText} is not semver` });

  const sortedProvides = dedupeGVKs(provides);
  return {
    name: src.name,
    package: src.package,
    versionText,
    version,
    image: src.image ?? '',
    properties: src.properties.map((p) => ({ type: p.type, value: decode(p.value) })),
    provides: sortedProvides,
    providesKeys: sortedProvides.map(gvkKey),
    labels: [...new Set(labels)].sort(),
    requirements: [...requirements.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    problems,
  };
}

type Constraint = { failureMessage?: string };

/** Values normally arrive decoded; OLM's gRPC API carries them as JSON text, so accept that too. */
function decode(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return v;
  try {
    return JSON.parse(t);
  } catch {
    return v;
  }
}

/** JSON with sorted keys: the same requirement written twice, in any key order, is one requirement. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function dedupeGVKs(gvks: GVK[]): GVK[] {
  const byKey = new Map(gvks.map((g) => [gvkKey(g), g]));
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}
