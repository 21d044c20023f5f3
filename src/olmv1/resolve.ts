/**
 * Resolution for a ClusterExtension, as operator-controller v1.2.0's CatalogResolver
 * (internal/operator-controller/resolve/catalog.go) answers it: pure, over the ClusterCatalogs
 * and each one's documents of the package. The catalogs the selector picks are walked in name
 * order (as the API server lists them), Unavailable ones left out; in each, the bundles in the
 * asked channels, in the version range and (unless SelfCertified) successors of the installed
 * bundle are candidates, the newest not deprecated first. Across catalogs a non-deprecated
 * candidate beats a deprecated one, then the higher priority; a tie is v1's ambiguity error.
 * Every message is worded as v1 words it.
 */
import type { BundleDoc, DeprecationsDoc } from '../apis/fbc.js';
import { type BundleMetadata, type CatalogFilter, UpgradeConstraintPolicy } from '../apis/olmv1.js';
import { compareVersions } from '../olm/version.js';
import type { Result } from '../util/result.js';
import { catalogSelector } from './catalog-selector.js';
import { goList, goQuote } from './go-quote.js';
import { type MmConstraints, parseMmConstraints } from './masterminds-semver.js';
import type { PackageContent } from './package-content.js';
import {
  type BundlePredicate,
  bundleVersion,
  inAnyChannel,
  inMastermindsRange,
  successorsOf,
  versionString,
} from './predicates.js';

export interface V1Catalog {
  name: string;
  priority?: number;
  labels?: Record<string, string>;
  availabilityMode?: string;
  /** Whether its Serving condition is True: v1 stops with an error at a catalog that is not. */
  serving: boolean;
  /** Its documents of the package asked for. */
  content: PackageContent;
}

export interface V1Resolved {
  bundle: BundleDoc;
  /** blang's String() of the bundle's version. */
  version: string;
  catalog: string;
  /** The package's deprecations in the catalog the bundle came from, if any. */
  deprecation?: DeprecationsDoc;
}

interface Found {
  bundle: BundleDoc;
  catalog: string;
  priority: number;
  deprecation?: DeprecationsDoc;
}

export function resolveV1(
  source: CatalogFilter,
  catalogs: readonly V1Catalog[],
  installed?: BundleMetadata,
  /** Bundles kept out (Bosun's: versions a rollback holds back); v1 has no such input. */
  held: ReadonlySet<string> = new Set(),
): Result<V1Resolved, string> {
  const fail = (message: string) => ({ ok: false as const, errors: message });
  const pkg = source.packageName;
  const channels = source.channels ?? [];
  const versionRange = source.version ?? '';

  const selector = catalogSelector(source.selector);
  if (!selector.ok) return fail(`desired catalog selector is invalid: ${selector.message}`);

  let range: MmConstraints | undefined;
  if (versionRange !== '') {
    const parsed = parseMmConstraints(versionRange);
    if (!parsed.ok)
      return fail(`desired version range ${goQuote(versionRange)} is invalid: ${parsed.message}`);
    range = parsed.value;
  }

  const walked = catalogs
    .filter((c) => selector.value(c.labels))
    .filter((c) => c.availabilityMode !== 'Unavailable')
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  let found: Found[] = [];
  for (const cat of walked) {
    if (!cat.serving)
      return fail(
        `error walking catalogs: error getting package ${goQuote(pkg)} from catalog ${goQuote(cat.name)}: catalog ${goQuote(cat.name)} is not being served`,
      );
    const content = cat.content;
    if (!content.found) continue;

    const predicates: BundlePredicate[] = [];
    // v1 deletes the channels not asked for from the package in place, so successors below are
    // read from the asked channels only.
    const inChannels =
      channels.length > 0 ? content.channels.filter((c) => channels.includes(c.name)) : content.channels;
    if (channels.length > 0) predicates.push(inAnyChannel(inChannels));
    if (range) predicates.push(inMastermindsRange(range));
    if (held.size > 0) predicates.push((b) => !held.has(b.name));
    if (source.upgradeConstraintPolicy !== UpgradeConstraintPolicy.SelfCertified && installed) {
      const successors = successorsOf(installed, inChannels);
      if (!successors.ok)
        return fail(`error walking catalogs: error finding upgrade edges: ${successors.message}`);
      predicates.push(successors.value);
    }
    const candidates = content.bundles.filter((b) => predicates.every((p) => p(b)));
    if (candidates.length === 0) continue;

    const deprecation = content.deprecation;
    const deprecated = deprecatedBundles(deprecation);
    // Stable: equal bundles keep their (name) order.
    candidates.sort(
      (a, b) => Number(deprecated.has(a.name)) - Number(deprecated.has(b.name)) || newestFirst(a, b),
    );
    const best = candidates[0]!;
    const last = found.at(-1);
    if (last) {
      const bestDeprecated = deprecated.has(best.name);
      const lastDeprecated = deprecatedBundles(last.deprecation).has(last.bundle.name);
      if (bestDeprecated && !lastDeprecated) continue;
      if (!bestDeprecated && lastDeprecated) found = [];
    }
    found.push({ bundle: best, catalog: cat.name, priority: cat.priority ?? 0, deprecation });
  }

  if (found.length > 1) {
    const top = Math.max(...found.map((f) => f.priority));
    const atTop = found.filter((f) => f.priority === top);
    if (atTop.length === 1) found = atTop;
  }
  if (found.length !== 1) return fail(resolutionError(pkg, versionRange, channels, installed, found));

  const chosen = found[0]!;
  const version = bundleVersion(chosen.bundle);
  if (!version)
    return fail(
      `error getting resolved bundle version for bundle ${goQuote(chosen.bundle.name)}: no valid version in its olm.package property`,
    );
  return {
    ok: true,
    value: {
      bundle: chosen.bundle,
      version: versionString(version),
      catalog: chosen.catalog,
      ...(chosen.deprecation ? { deprecation: chosen.deprecation } : {}),
    },
  };
}

function deprecatedBundles(d: DeprecationsDoc | undefined): Set<string> {
  return new Set(
    (d?.entries ?? []).filter((e) => e.reference?.schema === 'olm.bundle').map((e) => e.reference.name ?? ''),
  );
}

/** v1's compare.ByVersion: newest first, a bundle without a valid version last. */
function newestFirst(a: BundleDoc, b: BundleDoc): number {
  const va = bundleVersion(a);
  const vb = bundleVersion(b);
  if (!va || !vb) return Number(!va) - Number(!vb);
  return compareVersions(vb, va);
}

/** v1's resolutionError. */
function resolutionError(
  pkg: string,
  version: string,
  channels: readonly string[],
  installed: BundleMetadata | undefined,
  found: readonly Found[],
): string {
  let s = '';
  if (installed) s += `error upgrading from currently installed version ${goQuote(installed.version)}: `;
  s +=
    found.length > 1
      ? `found bundles for package ${goQuote(pkg)} `
      : `no bundles found for package ${goQuote(pkg)} `;
  if (version !== '') s += `matching version ${goQuote(version)} `;
  if (channels.length > 0) s += `in channels ${goList(channels)} `;
  const names = found.map((f) => f.catalog).sort();
  if (names.length > 1) s += `in multiple catalogs with the same priority ${goList(names)} `;
  return s.trim();
}
