/** Small builders for catalog documents in tests. */
import {
  type BundleDoc,
  type ChannelDoc,
  type ChannelEntry,
  type DeclarativeConfig,
  emptyConfig,
  type PackageDoc,
  type Property,
} from '../../../src/apis/fbc.js';

export const pkgDoc = (name: string, defaultChannel?: string): PackageDoc => ({
  schema: 'olm.package',
  name,
  ...(defaultChannel ? { defaultChannel } : {}),
});

export const channelDoc = (pkg: string, name: string, entries: ChannelEntry[]): ChannelDoc => ({
  schema: 'olm.channel',
  package: pkg,
  name,
  entries,
});

export const bundleDoc = (pkg: string, version: string, extra: Property[] = []): BundleDoc => ({
  schema: 'olm.bundle',
  package: pkg,
  name: `${pkg}.v${version}`,
  image: `registry.example/bosun/${pkg}-bundle:v${version}`,
  properties: [{ type: 'olm.package', value: { packageName: pkg, version } }, ...extra],
});

/** A one-package catalog whose channel `stable` has `entries` (bundle versions parsed from names). */
export function packageWith(pkg: string, entries: ChannelEntry[], channel = 'stable'): DeclarativeConfig {
  const cfg = emptyConfig();
  cfg.packages.push(pkgDoc(pkg, channel));
  cfg.channels.push(channelDoc(pkg, channel, entries));
  for (const e of entries) cfg.bundles.push(bundleDoc(pkg, e.name.slice(pkg.length + 2)));
  return cfg;
}

/** `name` of package `pkg` at `version`, as bundleDoc names it. */
export const n = (pkg: string, version: string): string => `${pkg}.v${version}`;
