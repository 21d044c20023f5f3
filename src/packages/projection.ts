/**
 * A catalog's packages as PackageManifests, filled as OLM's packageserver fills them
 * (package-server/provider/registry.go `newPackageManifest`, over opm's registry API):
 *
 * - one PackageManifest per package, in the catalog's namespace, created when the CatalogSource
 *   was, labelled with the CatalogSource's labels plus `catalog`, `catalog-namespace`,
 *   `provider` and `provider-url`, plus the default channel's CSV labels, plus
 *   `operatorframework.io/os.linux` and `operatorframework.io/arch.amd64` where the CSV names
 *   no OS or architecture;
 * - channels sorted by name, each with its head bundle (`currentCSV`) described from that
 *   bundle's CSV (`currentCSVDesc`), and its entries newest version first, leaving out bundles
 *   that carry the legacy `olm.deprecated` property;
 * - the provider from the default channel's CSV (or the first channel's);
 * - deprecations from the package's `olm.deprecations` document.
 *
 * Where a channel has no single head or its head's CSV cannot be read, the channel is left
 * out, as OLM elides it; a package left with no channel is left out. The CSV is the bundle's
 * `olm.bundle.object` CSV when it has one, else one made from `olm.csv.metadata` (as opm's
 * registry does). Beyond OLM: the CSV's `operatorframework.io/suggested-namespace` annotation is
 * copied onto the PackageManifest's own annotations, so a client need not open a channel for it.
 */
import { type BundleDoc, type DeclarativeConfig, PropertyType } from '../apis/fbc.js';
import type {
  AppLink,
  CSVDescription,
  Deprecation,
  PackageChannel,
  PackageChannelEntry,
  PackageManifest,
} from '../apis/packages.js';
import { PackageManifestKind, PackagesApiVersion } from '../apis/packages.js';
import { channelGraph } from '../olm/channel-graph.js';
import { decode } from '../olm/property-value.js';
import { compareNewestFirst, parseVersion } from '../olm/version.js';
import { parseYamlOne } from '../bundle/yaml.js';
import { isRecord } from '../util/record.js';

/** The CatalogSource a catalog came from: what PackageManifests copy of it. */
export interface CatalogSourceInfo {
  name: string;
  namespace: string;
  displayName?: string;
  publisher?: string;
  labels?: Record<string, string>;
  creationTimestamp?: string;
}

/** Reads the bundle documents' stored manifests (catalog-spooled payloads); identity where none are stored. */
export type PayloadReader = (docs: readonly BundleDoc[]) => Promise<BundleDoc[]>;

export const SuggestedNamespaceAnnotation = 'operatorframework.io/suggested-namespace';
const OsLabelPrefix = 'operatorframework.io/os.';
const ArchLabelPrefix = 'operatorframework.io/arch.';

type Json = Record<string, unknown>;

/** The PackageManifests of one catalog, sorted by name. */
export async function packageManifests(
  config: DeclarativeConfig,
  source: CatalogSourceInfo,
  readPayloads: PayloadReader,
): Promise<PackageManifest[]> {
  const bundles = new Map<string, BundleDoc>();
  for (const b of config.bundles) bundles.set(`${b.package}/${b.name}`, b);
  const channelsByPackage = groupBy(config.channels, (c) => c.package);

  // Each package's channel heads are read (their CSVs decoded) when that package is projected,
  // and let go after: read for all packages at once, the heads' manifests of the corpus catalog
  // took 39 MiB of the manager's memory at once, for a projection that keeps 4 MiB.
  const headsOf = async (pkgChannels: readonly DeclarativeConfig['channels'][number][]) => {
    const heads = new Map<string, BundleDoc>();
    for (const channel of pkgChannels) {
      const head = channelGraph(channel.entries).head;
      const doc = head === null ? undefined : bundles.get(`${channel.package}/${head}`);
      if (doc) heads.set(doc.name, doc);
    }
    const headDocs = [...heads.values()];
    const read = await readPayloads(headDocs);
    const csvs = new Map<string, Json>();
    headDocs.forEach((doc, i) => {
      const csv = bundleCSV(read[i]!);
      if (csv) csvs.set(doc.name, csv);
    });
    return csvs;
  };

  // Icons are most of a projection's bytes, and a CSV's icon is often the package's own (already
  // held by the catalog) or that of the package's other channel heads: one copy is kept of each.
  const strings = new Map<string, string>();
  for (const pkg of config.packages)
    if (pkg.icon?.base64data) strings.set(pkg.icon.base64data, pkg.icon.base64data);
  const intern = (s: string): string => {
    const known = strings.get(s);
    if (known !== undefined) return known;
    strings.set(s, s);
    return s;
  };

  const out: PackageManifest[] = [];
  for (const pkg of config.packages) {
    const deprecations = deprecationsOf(config, pkg.name);
    const channels: PackageChannel[] = [];
    const csvByChannel = new Map<string, Json>();
    let defaultElided = false;
    const pkgChannels = [...(channelsByPackage.get(pkg.name) ?? [])].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    const csvs = await headsOf(pkgChannels);
    for (const channel of pkgChannels) {
      const head = channelGraph(channel.entries).head;
      const csv = head === null ? undefined : csvs.get(head);
      if (head === null || !csv) {
        defaultElided ||= channel.name === pkg.defaultChannel;
        continue;
      }
      csvByChannel.set(channel.name, csv);
      channels.push({
        name: channel.name,
        currentCSV: str(csv, 'metadata', 'name') ?? head,
        currentCSVDesc: describeCSV(csv, intern),
        ...optional('deprecation', deprecations.channels.get(channel.name)),
        entries: channelEntries(channel.entries, pkg.name, bundles, deprecations.bundles),
      });
    }
    if (channels.length === 0) continue;

    let defaultChannel = pkg.defaultChannel ?? (pkgChannels.length === 1 ? pkgChannels[0]!.name : '');
    if (defaultElided) defaultChannel = channels[0]!.name;
    const defaultCSV = csvByChannel.get(defaultChannel) ?? csvByChannel.get(channels[0]!.name)!;
    const provider = appLink(rec(defaultCSV, 'spec', 'provider'));

    const labels: Record<string, string> = {
      ...source.labels,
      catalog: source.name,
      'catalog-namespace': source.namespace,
      provider: provider.name ?? '',
      'provider-url': provider.url ?? '',
    };
    for (const [k, v] of Object.entries(rec(defaultCSV, 'metadata', 'labels') ?? {}))
      if (typeof v === 'string') labels[k] = v;
    const keys = Object.keys(labels);
    if (!keys.some((k) => k.startsWith(OsLabelPrefix))) labels[`${OsLabelPrefix}linux`] = 'supported';
    if (!keys.some((k) => k.startsWith(ArchLabelPrefix))) labels[`${ArchLabelPrefix}amd64`] = 'supported';

    const suggested = str(defaultCSV, 'metadata', 'annotations', SuggestedNamespaceAnnotation);
    out.push({
      apiVersion: PackagesApiVersion,
      kind: PackageManifestKind,
      metadata: {
        name: pkg.name,
        namespace: source.namespace,
        labels,
        ...(suggested ? { annotations: { [SuggestedNamespaceAnnotation]: suggested } } : {}),
        ...(source.creationTimestamp ? { creationTimestamp: source.creationTimestamp } : {}),
      },
      spec: {},
      status: {
        catalogSource: source.name,
        catalogSourceDisplayName: source.displayName ?? '',
        catalogSourcePublisher: source.publisher ?? '',
        catalogSourceNamespace: source.namespace,
        provider,
        packageName: pkg.name,
        ...optional('deprecation', deprecations.package),
        channels,
        defaultChannel,
      },
    });
  }
  return out.sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
  );
}

/** Reads nothing: for catalogs whose manifests are all in memory. */
export const inMemoryPayloads: PayloadReader = async (docs) => [...docs];

/** A channel's entries, newest version first (an unparsable version counts as 0.0.0, as OLM's sort has it). */
function channelEntries(
  entries: DeclarativeConfig['channels'][number]['entries'],
  pkg: string,
  bundles: ReadonlyMap<string, BundleDoc>,
  deprecated: ReadonlyMap<string, Deprecation>,
): PackageChannelEntry[] {
  const out: { entry: PackageChannelEntry; version: ReturnType<typeof parseVersion> }[] = [];
  for (const e of entries) {
    const doc = bundles.get(`${pkg}/${e.name}`);
    if (doc?.properties.some((p) => p.type === PropertyType.Deprecated)) continue;
    const version = doc ? bundleVersion(doc) : undefined;
    out.push({
      entry: {
        name: e.name,
        ...(version ? { version } : {}),
        ...optional('deprecation', deprecated.get(e.name)),
      },
      version: parseVersion(version) ?? parseVersion('0.0.0'),
    });
  }
  // Stable: entries of equal version keep the channel's order.
  return out.sort((a, b) => compareNewestFirst(a.version ?? null, b.version ?? null)).map((x) => x.entry);
}

function bundleVersion(doc: BundleDoc): string | undefined {
  const p = doc.properties.find((q) => q.type === PropertyType.Package);
  const value = decode(p?.value);
  return isRecord(value) && typeof value.version === 'string' ? value.version : undefined;
}

interface PackageDeprecations {
  package?: Deprecation;
  channels: Map<string, Deprecation>;
  bundles: Map<string, Deprecation>;
}

function deprecationsOf(config: DeclarativeConfig, pkg: string): PackageDeprecations {
  const out: PackageDeprecations = { channels: new Map(), bundles: new Map() };
  for (const doc of config.deprecations) {
    if (doc.package !== pkg) continue;
    for (const e of doc.entries) {
      const d = { message: e.message };
      if (e.reference.schema === 'olm.package') out.package = d;
      else if (e.reference.schema === 'olm.channel' && e.reference.name)
        out.channels.set(e.reference.name, d);
      else if (e.reference.schema === 'olm.bundle' && e.reference.name) out.bundles.set(e.reference.name, d);
    }
  }
  return out;
}

/**
 * The bundle's CSV: its `olm.bundle.object` of kind ClusterServiceVersion (manifests must already
 * be read), else a CSV made from `olm.csv.metadata`; undefined when it has neither.
 */
export function bundleCSV(doc: BundleDoc): Json | undefined {
  let metadata: Json | undefined;
  for (const p of doc.properties) {
    if (p.type === PropertyType.BundleObject) {
      const data = (decode(p.value) as { data?: unknown } | undefined)?.data;
      if (typeof data !== 'string') continue;
      const text = Buffer.from(data, 'base64').toString('utf8');
      // Only the CSV is parsed: the other manifests (CRDs above all) are most of the bytes.
      if (!text.includes('ClusterServiceVersion')) continue;
      const parsed = parseYamlOne(text, doc.name);
      if (parsed.ok && isRecord(parsed.value) && parsed.value.kind === 'ClusterServiceVersion')
        return parsed.value;
    } else if (p.type === PropertyType.CSVMetadata) {
      const v = decode(p.value);
      if (isRecord(v)) metadata = v;
    }
  }
  return metadata ? csvFromMetadata(doc, metadata) : undefined;
}

/** The CSV opm's registry gives for a bundle that carries only `olm.csv.metadata`. */
function csvFromMetadata(doc: BundleDoc, m: Json): Json {
  const spec: Json = {};
  const copy = (from: string, to = from) => {
    if (m[from] !== undefined) spec[to] = m[from];
  };
  copy('apiServiceDefinitions', 'apiservicedefinitions');
  copy('crdDescriptions', 'customresourcedefinitions');
  copy('description');
  copy('displayName');
  copy('installModes');
  copy('keywords');
  copy('links');
  copy('maintainers');
  copy('maturity');
  copy('minKubeVersion');
  copy('nativeAPIs');
  copy('provider');
  const version = bundleVersion(doc);
  if (version) spec.version = version;
  if (doc.relatedImages?.length) spec.relatedImages = doc.relatedImages;
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: doc.name,
      ...(isRecord(m.annotations) ? { annotations: m.annotations } : {}),
      ...(isRecord(m.labels) ? { labels: m.labels } : {}),
    },
    spec,
  };
}

/** OLM's `CreateCSVDescription`: the CSV's descriptive fields, with API descriptions trimmed. */
export function describeCSV(csv: Json, intern: (s: string) => string = (s) => s): CSVDescription {
  const spec = rec(csv, 'spec') ?? {};
  const desc: CSVDescription = {};
  const set = <K extends keyof CSVDescription>(key: K, value: CSVDescription[K] | undefined) => {
    if (value !== undefined && value !== '') desc[key] = value;
  };
  set('displayName', strOf(spec.displayName));
  const icons = (Array.isArray(spec.icon) ? spec.icon : []).filter(isRecord).map((i) => ({
    ...(typeof i.base64data === 'string' && i.base64data ? { base64data: intern(i.base64data) } : {}),
    ...(typeof i.mediatype === 'string' && i.mediatype ? { mediatype: i.mediatype } : {}),
  }));
  if (icons.length > 0) desc.icon = icons;
  set('version', strOf(spec.version));
  set('provider', appLink(rec(spec, 'provider')));
  const annotations = rec(csv, 'metadata', 'annotations');
  if (annotations) desc.annotations = stringsOf(annotations);
  set('description', strOf(spec.description));
  if (Array.isArray(spec.installModes))
    desc.installModes = spec.installModes
      .filter(isRecord)
      .map((m) => ({ type: String(m.type ?? ''), supported: m.supported === true }));
  const crds = rec(spec, 'customresourcedefinitions');
  desc.customresourcedefinitions = {
    owned: apiDescriptions(crds?.owned, ['name', 'version', 'kind', 'displayName', 'description']),
    required: apiDescriptions(crds?.required, ['name', 'version', 'kind', 'displayName', 'description']),
  };
  const apis = rec(spec, 'apiservicedefinitions');
  const apiFields = ['name', 'group', 'version', 'kind', 'displayName', 'description'];
  desc.apiservicedefinitions = {
    owned: apiDescriptions(apis?.owned, apiFields),
    required: apiDescriptions(apis?.required, apiFields),
  };
  if (Array.isArray(spec.nativeAPIs))
    desc.nativeApis = spec.nativeAPIs.filter(isRecord).map((g) => ({
      group: String(g.group ?? ''),
      version: String(g.version ?? ''),
      kind: String(g.kind ?? ''),
    }));
  set('minKubeVersion', strOf(spec.minKubeVersion));
  const images = csvImages(csv);
  if (images.length > 0) desc.relatedImages = images;
  if (Array.isArray(spec.keywords)) desc.keywords = spec.keywords.filter((k) => typeof k === 'string');
  set('maturity', strOf(spec.maturity));
  desc.links = (Array.isArray(spec.links) ? spec.links : []).filter(isRecord).map(appLink);
  desc.maintainers = (Array.isArray(spec.maintainers) ? spec.maintainers : []).filter(isRecord).map((m) => ({
    ...(typeof m.name === 'string' && m.name ? { name: m.name } : {}),
    ...(typeof m.email === 'string' && m.email ? { email: m.email } : {}),
  }));
  return desc;
}

/** The operator's images (every container of every install Deployment) and the CSV's related images, sorted. */
function csvImages(csv: Json): string[] {
  const images = new Set<string>();
  const deployments = rec(csv, 'spec', 'install', 'spec')?.deployments;
  for (const d of Array.isArray(deployments) ? deployments : []) {
    const pod = rec(d, 'spec', 'template', 'spec');
    for (const kind of ['initContainers', 'containers']) {
      const list = pod?.[kind];
      for (const c of Array.isArray(list) ? list : [])
        if (isRecord(c) && typeof c.image === 'string' && c.image) images.add(c.image);
    }
  }
  const related = rec(csv, 'spec')?.relatedImages;
  for (const r of Array.isArray(related) ? related : [])
    if (isRecord(r) && typeof r.image === 'string' && r.image) images.add(r.image);
  return [...images].sort();
}

function apiDescriptions(list: unknown, fields: readonly string[]): Json[] {
  return (Array.isArray(list) ? list : []).filter(isRecord).map((d) => {
    const out: Json = {};
    for (const f of fields) if (d[f] !== undefined && d[f] !== '') out[f] = d[f];
    return out;
  });
}

function appLink(v: unknown): AppLink {
  if (!isRecord(v)) return {};
  return {
    ...(typeof v.name === 'string' && v.name ? { name: v.name } : {}),
    ...(typeof v.url === 'string' && v.url ? { url: v.url } : {}),
  };
}

function rec(v: unknown, ...path: string[]): Json | undefined {
  let at: unknown = v;
  for (const p of path) at = isRecord(at) ? at[p] : undefined;
  return isRecord(at) ? at : undefined;
}

function str(v: unknown, ...path: string[]): string | undefined {
  let at: unknown = v;
  for (const p of path) at = isRecord(at) ? at[p] : undefined;
  return typeof at === 'string' ? at : undefined;
}

const strOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function stringsOf(r: Json): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) if (typeof v === 'string') out[k] = v;
  return out;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function groupBy<T>(list: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of list) {
    const k = key(t);
    const group = out.get(k);
    if (group) group.push(t);
    else out.set(k, [t]);
  }
  return out;
}
