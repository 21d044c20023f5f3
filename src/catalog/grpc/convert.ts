/**
 * What a registry server said, made the DeclarativeConfig `opm render` gives of the catalog it
 * serves, as far as the API carries it.
 *
 * How opm's server builds its answers from the catalog (operator-registry v1.73: pkg/cache
 * `processPackage` and `packagesFromModel`, pkg/api `ConvertModelBundleToAPIBundle`), and so what
 * comes back and what does not:
 * - GetPackage: the name, the default channel, each channel's name and head, and deprecation
 *   messages. A package's description and icon, and channels' properties, are not in it.
 * - ListBundles: one message per channel entry (a bundle in three channels comes three times), with
 *   the entry's replaces, skips and skipRange, and the bundle's image (`bundlePath`), properties
 *   and deprecation. Properties leave out `olm.bundle.object` and `olm.csv.metadata`; a bundle's
 *   `relatedImages` are not in the message at all. Manifests (`object`, `csvJson`) come along only
 *   for a bundle without an image; for the others, GetBundle gives them (and drops replaces and
 *   skips). Each manifest is JSON re-encoded by opm (`yaml.ToJSON` of the catalog's data), not the
 *   catalog's bytes.
 * - A bundle with `olm.csv.metadata` and no manifests gets a CSV made up by opm from the metadata,
 *   the package's icon and description, and its related images (a "stub": its install strategy
 *   has no deployments). It is read back here as what it came from: `olm.csv.metadata` and
 *   `relatedImages`, and the package's icon; never as a manifest, which Bosun would install.
 * - Orders are the server's: channel entries, properties and documents come in no order the
 *   catalog gave. Entries are written oldest version first, documents sorted by package and name.
 * - Documents of other schemas, and a package's empty `olm.deprecations`, are not served.
 *
 * The answers are also checked against each other (a server could say anything): every bundle
 * of a listed package and channel, one entry per bundle and channel, the copies of one bundle the
 * same in every channel, each channel's head the one its entries make, GetBundle answering for
 * the bundle asked. Each disagreement is a problem naming the object.
 *
 * Pure: answers in, documents and problems out.
 */
import {
  type BundleDoc,
  type ChannelDoc,
  type ChannelEntry,
  type DeclarativeConfig,
  type DeprecationEntry,
  type DeprecationsDoc,
  emptyConfig,
  type Icon,
  type PackageDoc,
  type Property,
  PropertyType,
  type RelatedImage,
  Schema,
} from '../../apis/fbc.js';
import { csvMetadata } from '../../bundle/render.js';
import { channelGraph } from '../../olm/channel-graph.js';
import { compareVersions, parseVersion } from '../../olm/version.js';
import { isRecord } from '../../util/record.js';
import type { Problem } from '../../util/result.js';
import { CatalogLimits } from '../limits.js';
import { checkDocument, schemaProblems } from '../schema.js';
import { objectName } from '../validate.js';
import { jsonNestingDepth } from './json-depth.js';
import type { GetBundleRequest, RegistryBundle, RegistryPackage } from './wire.js';

/** Everything the server answered, call by call. */
export interface RegistryAnswers {
  /** ListPackages, in the order sent. */
  listed: readonly string[];
  /** GetPackage of each listed name, in the same order. */
  packages: readonly RegistryPackage[];
  /** ListBundles: one per channel entry. */
  bundles: readonly RegistryBundle[];
  /** GetBundle answers, by bundleKey of the request. */
  manifests: ReadonlyMap<string, RegistryBundle>;
}

export const bundleKey = (pkg: string, name: string): string => JSON.stringify([pkg, name]);

/**
 * The GetBundle calls needed: one per bundle that has an image and came without manifests (opm
 * leaves them out of ListBundles for exactly those), asked in its first channel.
 */
export function bundlesToFetch(bundles: readonly RegistryBundle[]): GetBundleRequest[] {
  const out = new Map<string, GetBundleRequest>();
  for (const b of bundles) {
    const key = bundleKey(b.packageName, b.csvName);
    if (b.bundlePath === '' || b.object.length > 0 || b.csvJson !== '' || out.has(key)) continue;
    out.set(key, { pkgName: b.packageName, channelName: b.channelName, csvName: b.csvName });
  }
  return [...out.values()];
}

/**
 * How deep a property value may nest: a value sits three levels down in its bundle document
 * (document, properties, property), and documents are held to 100 levels where catalogs are
 * read (bundle/document-limits.ts), deeper than any real catalog's 20.
 */
export const MaxPropertyDepth = 97;

export function registryToConfig(answers: RegistryAnswers): {
  config: DeclarativeConfig;
  problems: Problem[];
} {
  const problems: Problem[] = [];
  const config = emptyConfig();
  const packages = collectPackages(answers, problems);
  const entries = collectEntries(answers.bundles, packages, problems);
  const bundles = collectBundles(answers, problems);

  for (const pkg of [...packages.values()].sort((a, b) => cmp(a.name, b.name))) {
    const doc: PackageDoc = { schema: Schema.Package, name: pkg.name };
    if (pkg.defaultChannelName) doc.defaultChannel = pkg.defaultChannelName;
    const icon = bundles.icons.get(pkg.name);
    if (icon) doc.icon = icon;
    config.packages.push(doc);

    const deprecated: DeprecationEntry[] = [];
    if (pkg.deprecation) deprecated.push(deprecation({ schema: Schema.Package }, pkg.deprecation.message));
    for (const ch of [...pkg.channels].sort((a, b) => cmp(a.name, b.name))) {
      const list = sortEntries(entries.get(bundleKey(pkg.name, ch.name)) ?? [], bundles.versions, pkg.name);
      const channel: ChannelDoc = { schema: Schema.Channel, package: pkg.name, name: ch.name, entries: list };
      config.channels.push(channel);
      checkHead(pkg.name, ch.name, ch.csvName, list, problems);
      if (ch.deprecation)
        deprecated.push(deprecation({ schema: Schema.Channel, name: ch.name }, ch.deprecation.message));
    }
    for (const b of bundles.docs.filter((d) => d.package === pkg.name)) {
      config.bundles.push(b);
      const message = bundles.deprecations.get(bundleKey(pkg.name, b.name));
      if (message !== undefined)
        deprecated.push(deprecation({ schema: Schema.Bundle, name: b.name }, message));
    }
    if (deprecated.length > 0) {
      const doc: DeprecationsDoc = { schema: Schema.Deprecations, package: pkg.name, entries: deprecated };
      config.deprecations.push(doc);
    }
  }
  return { config, problems };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const deprecation = (reference: DeprecationEntry['reference'], message: string): DeprecationEntry => ({
  reference,
  message,
});

/** GetPackage answers by name, each for the name asked, each name listed once. */
function collectPackages(answers: RegistryAnswers, problems: Problem[]): Map<string, RegistryPackage> {
  const out = new Map<string, RegistryPackage>();
  answers.listed.forEach((name, i) => {
    const pkg = answers.packages[i];
    const object = objectName.package(name);
    if (out.has(name)) {
      problems.push({ object, message: 'ListPackages named this package more than once' });
    } else if (!pkg || pkg.name !== name) {
      problems.push({
        object,
        message: `GetPackage answered for package ${JSON.stringify(pkg?.name ?? '')} instead`,
      });
    } else {
      const seen = new Set<string>();
      for (const ch of pkg.channels) {
        if (seen.has(ch.name))
          problems.push({
            object,
            field: 'channels',
            message: `GetPackage lists channel ${ch.name} more than once`,
          });
        seen.add(ch.name);
      }
      out.set(name, pkg);
    }
  });
  return out;
}

/** Channel entries by bundleKey(package, channel), from ListBundles. */
function collectEntries(
  bundles: readonly RegistryBundle[],
  packages: ReadonlyMap<string, RegistryPackage>,
  problems: Problem[],
): Map<string, ChannelEntry[]> {
  const out = new Map<string, ChannelEntry[]>();
  const seen = new Set<string>();
  for (const b of bundles) {
    const object = objectName.bundle(b.csvName);
    const pkg = packages.get(b.packageName);
    if (!pkg) {
      problems.push({
        object,
        field: 'packageName',
        message: `ListBundles sent it for package ${JSON.stringify(b.packageName)}, which ListPackages and GetPackage do not list`,
      });
      continue;
    }
    if (!pkg.channels.some((c) => c.name === b.channelName)) {
      problems.push({
        object,
        field: 'channelName',
        message: `ListBundles sent it in channel ${JSON.stringify(b.channelName)}, which GetPackage does not list for package ${b.packageName}`,
      });
      continue;
    }
    const at = JSON.stringify([b.packageName, b.channelName, b.csvName]);
    if (seen.has(at)) {
      problems.push({
        object,
        message: `ListBundles sent it more than once in channel ${b.packageName}/${b.channelName}`,
      });
      continue;
    }
    seen.add(at);
    const entry: ChannelEntry = { name: b.csvName };
    if (b.replaces) entry.replaces = b.replaces;
    if (b.skips.length > 0) entry.skips = [...b.skips];
    if (b.skipRange) entry.skipRange = b.skipRange;
    const key = bundleKey(b.packageName, b.channelName);
    const list = out.get(key) ?? [];
    out.set(key, list);
    list.push(entry);
  }
  return out;
}

/** Oldest version first, then by name: the order catalogs are usually written in. */
function sortEntries(
  list: ChannelEntry[],
  versions: ReadonlyMap<string, string>,
  pkg: string,
): ChannelEntry[] {
  const version = (e: ChannelEntry) => parseVersion(versions.get(bundleKey(pkg, e.name)));
  return list.sort((a, b) => {
    const [va, vb] = [version(a), version(b)];
    const byVersion = va && vb ? compareVersions(va, vb) : 0;
    return byVersion !== 0 ? byVersion : cmp(a.name, b.name);
  });
}

/** The head GetPackage names must be the one the entries ListBundles sent make. */
function checkHead(pkg: string, channel: string, said: string, entries: ChannelEntry[], problems: Problem[]) {
  const { head, heads } = channelGraph(entries);
  if (head === null || head === said) return; // no single head: validation says why
  problems.push({
    object: objectName.channel(pkg, channel),
    message: `GetPackage names ${said || '""'} its head, but the entries ListBundles sent make ${heads.join(', ')} the head`,
  });
}

interface Bundles {
  docs: BundleDoc[];
  /** The olm.package version of each bundle, by bundleKey. */
  versions: Map<string, string>;
  /** Bundles' deprecation messages, by bundleKey. */
  deprecations: Map<string, string>;
  /** A package's icon, where a stub CSV showed it. */
  icons: Map<string, Icon>;
}

/** One document per bundle, from its first ListBundles copy, the others checked against it. */
function collectBundles(answers: RegistryAnswers, problems: Problem[]): Bundles {
  const out: Bundles = { docs: [], versions: new Map(), deprecations: new Map(), icons: new Map() };
  const first = new Map<string, RegistryBundle>();
  for (const b of answers.bundles) {
    const key = bundleKey(b.packageName, b.csvName);
    const earlier = first.get(key);
    if (earlier) {
      const differs = differingField(earlier, b);
      if (differs)
        problems.push({
          object: objectName.bundle(b.csvName),
          field: differs,
          message: `ListBundles sent it different in channels ${earlier.channelName} and ${b.channelName} of package ${b.packageName}`,
        });
      continue;
    }
    first.set(key, b);
    const fetched = answers.manifests.get(key);
    if (fetched && (fetched.csvName !== b.csvName || fetched.packageName !== b.packageName)) {
      problems.push({
        object: objectName.bundle(b.csvName),
        message: `GetBundle answered for bundle ${JSON.stringify(fetched.csvName)} of package ${JSON.stringify(fetched.packageName)} instead`,
      });
      continue;
    }
    const doc = bundleDoc(b, fetched ?? b, problems, out.icons);
    if (!doc) continue;
    out.docs.push(doc);
    const version = packageVersion(doc);
    if (version) out.versions.set(key, version);
    if (b.deprecation) out.deprecations.set(key, b.deprecation.message);
  }
  out.docs.sort((a, b) => cmp(a.package, b.package) || cmp(a.name, b.name));
  return out;
}

/** The first field in which two channels' copies of a bundle differ (entry fields aside). */
function differingField(a: RegistryBundle, b: RegistryBundle): string | undefined {
  if (a.bundlePath !== b.bundlePath) return 'bundlePath';
  if (a.csvJson !== b.csvJson) return 'csvJson';
  if (!sameList(a.object, b.object)) return 'object';
  if (!sameList(a.properties.map(propertyText), b.properties.map(propertyText))) return 'properties';
  if ((a.deprecation?.message ?? null) !== (b.deprecation?.message ?? null)) return 'deprecation';
  return undefined;
}

const propertyText = (p: { type: string; value: string }) => `${p.type}\0${p.value}`;
const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((s, i) => s === b[i]);

function bundleDoc(
  b: RegistryBundle,
  manifests: RegistryBundle,
  problems: Problem[],
  icons: Map<string, Icon>,
): BundleDoc | undefined {
  const object = objectName.bundle(b.csvName);
  const before = problems.length;
  const properties: Property[] = [];
  b.properties.forEach((p, i) => {
    const value = parsePropertyValue(p.value);
    if (value.ok) properties.push({ type: p.type, value: value.value });
    else
      problems.push({ object, field: `properties[${i}].value`, message: `the ${p.type} value ${value.why}` });
  });
  const doc: BundleDoc = {
    schema: Schema.Bundle,
    package: b.packageName,
    name: b.csvName,
    image: b.bundlePath,
    properties,
  };

  const stub = stubCSV(manifests);
  if (stub) {
    // opm fills the stub from `olm.csv.metadata` field for field (pkg/api csvMetadataToCsv), so it
    // reads back as rendering made it; its description may be the package's, which opm puts in
    // when the metadata has none.
    properties.push({ type: PropertyType.CSVMetadata, value: csvMetadata(stub) });
    const related = relatedImagesOf(stub);
    if (related.length > 0) doc.relatedImages = related;
    const icon = iconOf(stub);
    if (icon) icons.set(b.packageName, icon);
  } else {
    manifests.object.forEach((text, i) => {
      const data = Buffer.from(text, 'utf8').toString('base64');
      if (data.length > CatalogLimits.maxPayloadChars)
        problems.push({
          object,
          field: `object[${i}]`,
          message: `the manifest is ${mib(text.length)} (${mib(data.length)} as base64), past the limit of ${mib(CatalogLimits.maxPayloadChars)} for one manifest in a catalog`,
        });
      else properties.push({ type: PropertyType.BundleObject, value: { data } });
    });
  }
  // Values of the property types OLM interprets are held to their shapes, as where catalog files
  // are read (load.ts): what follows relies on them.
  const checked: unknown = doc;
  if (!checkDocument.bundle(checked))
    problems.push(...schemaProblems(checkDocument.bundle.errors ?? [], '', object));
  return problems.length === before ? doc : undefined;
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

type Parsed = { ok: true; value: unknown } | { ok: false; why: string };

/** A property's value, JSON text, held to the nesting catalogs are held to. */
export function parsePropertyValue(text: string): Parsed {
  const depth = jsonNestingDepth(text, MaxPropertyDepth);
  if (depth > MaxPropertyDepth) return { ok: false, why: `nests more than ${MaxPropertyDepth} levels deep` };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, why: `is not JSON: ${(err as Error).message}` };
  }
}

function packageVersion(doc: BundleDoc): string | undefined {
  const p = doc.properties.find((q) => q.type === PropertyType.Package);
  return isRecord(p?.value) && typeof p.value.version === 'string' ? p.value.version : undefined;
}

/**
 * The CSV opm made up for a bundle that has `olm.csv.metadata` and no manifests, or undefined:
 * it is the bundle's only object and its csvJson, and its install strategy is opm's placeholder
 * (`deployment` with no deployments), which no installable CSV has.
 */
export function stubCSV(b: RegistryBundle): Record<string, unknown> | undefined {
  if (b.object.length !== 1 || b.object[0] !== b.csvJson) return undefined;
  let csv: unknown;
  try {
    csv = JSON.parse(b.csvJson);
  } catch {
    return undefined;
  }
  if (!isRecord(csv) || csv.kind !== 'ClusterServiceVersion' || !isRecord(csv.spec)) return undefined;
  const install = csv.spec.install;
  const placeholder =
    isRecord(install) &&
    install.strategy === 'deployment' &&
    isRecord(install.spec) &&
    install.spec.deployments === null &&
    Object.keys(install.spec).length === 1;
  return placeholder ? csv : undefined;
}

function relatedImagesOf(csv: Record<string, unknown>): RelatedImage[] {
  const list = isRecord(csv.spec) && Array.isArray(csv.spec.relatedImages) ? csv.spec.relatedImages : [];
  return list.filter(isRecord).map((r) => ({
    name: typeof r.name === 'string' ? r.name : '',
    image: typeof r.image === 'string' ? r.image : '',
  }));
}

/** The package's icon, which opm copies into every stub. */
function iconOf(csv: Record<string, unknown>): Icon | undefined {
  const icons = isRecord(csv.spec) && Array.isArray(csv.spec.icon) ? csv.spec.icon : [];
  const icon: unknown = icons[0];
  if (!isRecord(icon) || typeof icon.base64data !== 'string' || typeof icon.mediatype !== 'string')
    return undefined;
  return { base64data: icon.base64data, mediatype: icon.mediatype };
}
