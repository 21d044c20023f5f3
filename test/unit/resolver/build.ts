/**
 * Small builders for in-memory catalogs, so that each table test reads as data: packages with
 * channels of bundles, each bundle with what it provides and requires.
 */
import type {
  BundleDoc,
  ChannelDoc,
  DeclarativeConfig,
  PackageDoc,
  Property,
} from '../../../src/apis/fbc.js';
import type { Catalog, InstalledOperator, SubscriptionInput } from '../../../src/resolver/index.js';

export interface BundleSpec {
  name: string;
  version: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  /** APIs it provides, as `group/version/Kind`. */
  provides?: string[];
  /** APIs it requires (`olm.gvk.required`), as `group/version/Kind`. */
  requires?: string[];
  /** Packages it requires (`olm.package.required`): package name → version range. */
  needs?: Record<string, string>;
  labels?: string[];
  /** Any further properties (`olm.constraint`, `olm.label.required`, ...). */
  properties?: Property[];
}

export interface PackageSpec {
  name: string;
  defaultChannel?: string;
  /** Channel name → its entries (bundles), in any order. */
  channels: Record<string, BundleSpec[]>;
}

export const gvk = (s: string) => {
  const [group = '', version = '', kind = ''] = s.split('/');
  return { group, version, kind };
};

export function bundleProperties(pkg: string, b: BundleSpec): Property[] {
  return [
    { type: 'olm.package', value: { packageName: pkg, version: b.version } },
    ...(b.provides ?? []).map((g) => ({ type: 'olm.gvk', value: gvk(g) })),
    ...(b.requires ?? []).map((g) => ({ type: 'olm.gvk.required', value: gvk(g) })),
    ...Object.entries(b.needs ?? {}).map(([packageName, versionRange]) => ({
      type: 'olm.package.required',
      value: { packageName, versionRange },
    })),
    ...(b.labels ?? []).map((label) => ({ type: 'olm.label', value: { label } })),
    ...(b.properties ?? []),
  ];
}

export function config(packages: PackageSpec[]): DeclarativeConfig {
  const cfg: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  const seen = new Set<string>();
  for (const p of packages) {
    const doc: PackageDoc = { schema: 'olm.package', name: p.name };
    if (p.defaultChannel) doc.defaultChannel = p.defaultChannel;
    cfg.packages.push(doc);
    for (const [name, bundles] of Object.entries(p.channels)) {
      const channel: ChannelDoc = {
        schema: 'olm.channel',
        package: p.name,
        name,
        entries: bundles.map((b) => ({
          name: b.name,
          ...(b.replaces ? { replaces: b.replaces } : {}),
          ...(b.skips ? { skips: b.skips } : {}),
          ...(b.skipRange ? { skipRange: b.skipRange } : {}),
        })),
      };
      cfg.channels.push(channel);
      for (const b of bundles) {
        if (seen.has(b.name)) continue;
        seen.add(b.name);
        const doc: BundleDoc = {
          schema: 'olm.bundle',
          package: p.name,
          name: b.name,
          image: `example.com/${p.name}:${b.version}`,
          properties: bundleProperties(p.name, b),
        };
        cfg.bundles.push(doc);
      }
    }
  }
  return cfg;
}

export function catalog(
  name: string,
  packages: PackageSpec[],
  opts: { namespace?: string; priority?: number } = {},
): Catalog {
  return { name, namespace: opts.namespace ?? 'olm', priority: opts.priority ?? 0, config: config(packages) };
}

export function sub(
  name: string,
  pkg: string,
  channel: string,
  source: string,
  opts: { namespace?: string; sourceNamespace?: string; startingCSV?: string } = {},
): SubscriptionInput {
  return {
    name,
    namespace: opts.namespace ?? 'olm',
    package: pkg,
    channel,
    source,
    sourceNamespace: opts.sourceNamespace ?? 'olm',
    ...(opts.startingCSV ? { startingCSV: opts.startingCSV } : {}),
  };
}

export function installed(
  pkg: string,
  b: BundleSpec,
  from?: { name: string; namespace?: string },
): InstalledOperator {
  return {
    name: b.name,
    package: pkg,
    version: b.version,
    properties: bundleProperties(pkg, b),
    ...(from ? { catalog: { name: from.name, namespace: from.namespace ?? 'olm' } } : {}),
  };
}
