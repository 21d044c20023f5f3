/**
 * What the web catalog shows, built from a catalog's PackageManifests (src/packages/projection.ts,
 * the view `kubectl get packagemanifests` gives) and its FBC (for the upgrade edges, which a
 * PackageManifest does not carry), plus the cluster's Subscriptions, CSVs and InstallPlans for
 * where each package is installed. Pure: plain data in, the JSON of client/api.ts out.
 */
import { createHash } from 'node:crypto';
import { type DeclarativeConfig, PropertyType } from '../apis/fbc.js';
import type {
  ClusterServiceVersion,
  InstallPlan,
  Subscription,
  SubscriptionStatus,
} from '../apis/operators.js';
import type { APIDescription, CSVDescription, PackageChannel, PackageManifest } from '../apis/packages.js';
import { SuggestedNamespaceAnnotation } from '../packages/projection.js';
import { decode } from '../olm/property-value.js';
import { compareVersions, parseRange, parseVersion } from '../olm/version.js';
import { isRecord } from '../util/record.js';
import {
  ApiPath,
  type ApiView,
  type CatalogInfo,
  type ChannelView,
  EdgeKind,
  type EdgeView,
  type EntryView,
  type InstallContext,
  type InstallView,
  type Link,
  type PackageDetail,
  type PackageSummary,
} from './client/api.js';
import { iconMediaType, isServedImage } from './icon-policy.js';
import { firstParagraph } from './first-paragraph.js';
import type { RenderedDescription } from './markdown.js';

/** One catalog as the web catalog reads it. */
export interface CatalogContent {
  info: CatalogInfo;
  config: DeclarativeConfig;
  manifests: readonly PackageManifest[];
}

export const packageId = (catalog: string, name: string) => `${catalog}/${name}`;

/** A catalog's `olm.package` documents by name, built once per catalog (a card needs its icon and description). */
const packageDocs = new WeakMap<DeclarativeConfig, Map<string, DeclarativeConfig['packages'][number]>>();
function packageDoc(
  config: DeclarativeConfig,
  name: string,
): DeclarativeConfig['packages'][number] | undefined {
  let byName = packageDocs.get(config);
  if (!byName) {
    byName = new Map(config.packages.map((p) => [p.name, p]));
    packageDocs.set(config, byName);
  }
  return byName.get(name);
}

/** `/api/<kind>/<catalog>/<package>`, each part URI-encoded. */
export const packagePath = (base: string, catalog: string, name: string): string =>
  `${base}${encodeURIComponent(catalog)}/${encodeURIComponent(name)}`;

/** The channel the package page starts from: the default one, else the first. */
export function defaultChannelOf(m: PackageManifest): PackageChannel | undefined {
  return m.status.channels.find((c) => c.name === m.status.defaultChannel) ?? m.status.channels[0];
}

/** The icon a package shows: its default channel head's first, else the FBC package's. */
export function packageIcon(
  m: PackageManifest,
  config: DeclarativeConfig,
): { data: string; mediatype: string } | undefined {
  const fromCsv = defaultChannelOf(m)?.currentCSVDesc.icon?.[0];
  const fromPkg = packageDoc(config, m.status.packageName)?.icon;
  for (const icon of [fromCsv, fromPkg]) {
    const data = icon?.base64data?.replace(/\s+/g, '');
    if (data && isServedImage(icon?.mediatype) && /^[A-Za-z0-9+/]+=*$/.test(data)) {
      return { data, mediatype: iconMediaType(icon?.mediatype) };
    }
  }
  return undefined;
}

const splitList = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The names a card and the filters show (display name, provider, keywords, categories, capability)
 * are cut to this many characters, ending in `…`. A catalog may make one megabytes long without a
 * space; each is sent with the index, searched at every keystroke and laid out in its card: a 1 MB
 * display name made each of the first keystrokes of a search take 0.35 to 0.9 s (30 to 90 ms cut).
 * Names people read are far shorter.
 */
export const MaxLabelChars = 200;

export function clipLabel(text: string): string {
  if (text.length <= MaxLabelChars) return text;
  const cut = text.slice(0, MaxLabelChars - 1);
  // Never half of a character that takes two UTF-16 units.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

export function packageSummary(
  c: CatalogContent,
  m: PackageManifest,
  installs: InstallView[] = [],
): PackageSummary {
  const channel = defaultChannelOf(m);
  const desc: CSVDescription = channel?.currentCSVDesc ?? {};
  const annotations = desc.annotations ?? {};
  const name = m.status.packageName;
  const icon = packageIcon(m, c.config);
  const fbcDescription = packageDoc(c.config, name)?.description;
  const version = channel?.entries.find((e) => e.name === channel.currentCSV)?.version ?? desc.version;
  return {
    id: packageId(c.info.id, name),
    catalog: c.info.id,
    name,
    displayName: clipLabel(desc.displayName?.trim() || name),
    description: firstParagraph(annotations.description || desc.description || fbcDescription || ''),
    provider: clipLabel((desc.provider?.name ?? m.status.provider?.name ?? '').trim()),
    keywords: (desc.keywords ?? [])
      .map((k) => k.trim())
      .filter(Boolean)
      .map(clipLabel),
    categories: splitList(annotations.categories).map(clipLabel),
    ...(annotations.capabilities ? { capability: clipLabel(annotations.capabilities.trim()) } : {}),
    installModes: (desc.installModes ?? []).filter((i) => i.supported).map((i) => i.type),
    defaultChannel: channel?.name ?? m.status.defaultChannel,
    ...(version ? { version } : {}),
    ...(icon
      ? {
          icon: `${packagePath(ApiPath.Icons, c.info.id, name)}?v=${createHash('sha256').update(icon.data).digest('hex').slice(0, 16)}`,
        }
      : {}),
    ...(m.status.deprecation ? { deprecation: m.status.deprecation.message } : {}),
    installs,
  };
}

/** Only links a browser follows to another site or a mail program. */
export function safeUrl(url: string | undefined): string | undefined {
  const u = url?.trim();
  if (!u) return undefined;
  const parsed = URL.parse(u);
  return parsed && ['http:', 'https:', 'mailto:'].includes(parsed.protocol) ? parsed.href : undefined;
}

function apiViews(list: APIDescription[] | undefined): ApiView[] {
  const s = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  return (list ?? [])
    .map((a) => {
      const group = s(a.group);
      const name = s(a.name) ?? [s(a.kind), group].filter(Boolean).join('.');
      const view: ApiView = { name };
      for (const k of ['version', 'kind', 'displayName', 'description'] as const) {
        const v = s(a[k]);
        if (v) view[k] = v;
      }
      return view;
    })
    .filter((a) => a.name);
}

/** The versions of a package's bundles, from their `olm.package` property. */
function bundleVersions(config: DeclarativeConfig, pkg: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const b of config.bundles) {
    if (b.package !== pkg) continue;
    const v = decode(b.properties.find((p) => p.type === PropertyType.Package)?.value);
    if (isRecord(v) && typeof v.version === 'string') out.set(b.name, v.version);
  }
  return out;
}

/**
 * The channels of the package page: each with its entries newest first and the upgrade edges
 * among them (an entry's `replaces`, its `skips`, and every entry of the channel whose version
 * is in its `skipRange`). Channels the PackageManifest left out (no single head) are left out.
 */
export function channelViews(config: DeclarativeConfig, m: PackageManifest): ChannelView[] {
  const pkg = m.status.packageName;
  const versions = bundleVersions(config, pkg);
  const out: ChannelView[] = [];
  for (const pc of m.status.channels) {
    const fbc = config.channels.find((c) => c.package === pkg && c.name === pc.name);
    const fbcEntries = fbc?.entries ?? [];
    const byName = new Map(fbcEntries.map((e) => [e.name, e]));
    const deprecated = new Map(pc.entries.map((e) => [e.name, e.deprecation?.message]));
    const names = [...new Set([...pc.entries.map((e) => e.name), ...fbcEntries.map((e) => e.name)])];
    const parsed = new Map(names.map((n) => [n, parseVersion(versions.get(n))]));
    names.sort((a, b) => {
      const va = parsed.get(a);
      const vb = parsed.get(b);
      if (va && vb) return compareVersions(vb, va) || a.localeCompare(b);
      if (va || vb) return va ? -1 : 1;
      return a.localeCompare(b);
    });
    const entries: EntryView[] = names.map((name) => {
      const e = byName.get(name);
      const version = versions.get(name);
      const deprecation = deprecated.get(name);
      return {
        name,
        ...(version ? { version } : {}),
        ...(e?.replaces ? { replaces: e.replaces } : {}),
        ...(e?.skips?.length ? { skips: e.skips } : {}),
        ...(e?.skipRange ? { skipRange: e.skipRange } : {}),
        ...(deprecation ? { deprecation } : {}),
      };
    });
    const edges: EdgeView[] = [];
    for (const e of fbcEntries) {
      if (e.replaces) edges.push({ from: e.replaces, to: e.name, kind: EdgeKind.Replaces });
      for (const s of e.skips ?? []) edges.push({ from: s, to: e.name, kind: EdgeKind.Skips });
      const range = e.skipRange ? parseRange(e.skipRange) : undefined;
      if (range?.ok) {
        for (const other of names) {
          const v = parsed.get(other);
          if (other !== e.name && v && range.range.test(v)) {
            edges.push({ from: other, to: e.name, kind: EdgeKind.SkipRange });
          }
        }
      }
    }
    const headVersion = versions.get(pc.currentCSV) ?? pc.currentCSVDesc.version;
    out.push({
      name: pc.name,
      head: pc.currentCSV,
      ...(headVersion ? { headVersion } : {}),
      ...(pc.deprecation ? { deprecation: pc.deprecation.message } : {}),
      entries,
      edges,
    });
  }
  return out;
}

export function packageDetail(
  c: CatalogContent,
  m: PackageManifest,
  opts: {
    installs: InstallView[];
    install: InstallContext;
    render: (markdown: string) => RenderedDescription;
  },
): PackageDetail {
  const summary = packageSummary(c, m, opts.installs);
  const desc: CSVDescription = defaultChannelOf(m)?.currentCSVDesc ?? {};
  const annotations = desc.annotations ?? {};
  const fbcDescription = packageDoc(c.config, m.status.packageName)?.description;
  const rendered = opts.render(desc.description || fbcDescription || '');
  const links: Link[] = (desc.links ?? []).flatMap((l) => {
    const url = safeUrl(l.url);
    return url ? [{ name: l.name?.trim() || url, url }] : [];
  });
  const repository = safeUrl(annotations.repository);
  if (repository && !links.some((l) => l.url === repository))
    links.push({ name: 'Repository', url: repository });
  const providerUrl = safeUrl(desc.provider?.url ?? m.status.provider?.url);
  const suggested = annotations[SuggestedNamespaceAnnotation]?.trim();
  const text = (v: string | undefined) => (v?.trim() ? { value: v.trim() } : undefined);
  const optional = <K extends string>(key: K, v: string | undefined) =>
    (text(v) ? { [key]: text(v)!.value } : {}) as { [P in K]?: string };
  return {
    ...summary,
    descriptionHtml: rendered.html,
    descriptionTruncated: rendered.truncated,
    ...(providerUrl ? { providerUrl } : {}),
    maintainers: (desc.maintainers ?? []).map((mt) => ({
      ...(mt.name ? { name: mt.name } : {}),
      ...(mt.email ? { email: mt.email } : {}),
    })),
    links,
    ...optional('maturity', desc.maturity),
    ...(repository ? { repository } : {}),
    ...optional('containerImage', annotations.containerImage),
    ...optional('createdAt', annotations.createdAt),
    ...optional('minKubeVersion', desc.minKubeVersion),
    ...(suggested ? { suggestedNamespace: suggested } : {}),
    channels: channelViews(c.config, m),
    apis: {
      owned: [
        ...apiViews(desc.customresourcedefinitions?.owned),
        ...apiViews(desc.apiservicedefinitions?.owned),
      ],
      required: [
        ...apiViews(desc.customresourcedefinitions?.required),
        ...apiViews(desc.apiservicedefinitions?.required),
      ],
    },
    install: opts.install,
  };
}

// ---- where packages are installed ----

/** The cluster objects the installed state is read from (informer caches). */
export interface ClusterObjects {
  subscriptions: readonly Subscription[];
  csvs: readonly ClusterServiceVersion[];
  installPlans: readonly InstallPlan[];
}

/** What a Subscription's catalog offers at the head of a channel. */
export type ChannelHead = (
  catalog: string,
  pkg: string,
  channel: string | undefined,
) => { csv: string; version?: string } | undefined;

/**
 * Where each package is installed, by package id (`<namespace>/<source>/<package>`): one view
 * per Subscription, with its CSV's phase and the upgrade waiting for it, if any. An upgrade is
 * the CSV the Subscription moves to (`currentCSV` ahead of `installedCSV`), else a newer head of
 * its channel in the catalog that the Subscription has not picked up yet.
 */
export function installViews(cluster: ClusterObjects, head: ChannelHead): Map<string, InstallView[]> {
  const csvKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;
  const csvs = new Map(cluster.csvs.map((c) => [csvKey(c.metadata.namespace, c.metadata.name ?? ''), c]));
  const plans = new Map(
    cluster.installPlans.map((p) => [csvKey(p.metadata.namespace, p.metadata.name ?? ''), p]),
  );
  const out = new Map<string, InstallView[]>();
  for (const sub of cluster.subscriptions) {
    const ns = sub.metadata.namespace ?? '';
    const catalog = `${sub.spec.sourceNamespace || ns}/${sub.spec.source}`;
    const status: Partial<SubscriptionStatus> = sub.status ?? {};
    const installed = status.installedCSV ? csvs.get(csvKey(ns, status.installedCSV)) : undefined;
    const planName = status.installPlanRef?.name ?? status.installplan?.name;
    const plan = planName ? plans.get(csvKey(ns, planName)) : undefined;
    const waits =
      plan !== undefined &&
      plan.spec.approved !== true &&
      (plan.status?.phase === 'RequiresApproval' || plan.spec.approval === 'Manual');
    const view: InstallView = {
      namespace: ns,
      subscription: sub.metadata.name ?? '',
      ...(sub.spec.channel ? { channel: sub.spec.channel } : {}),
      approval: sub.spec.installPlanApproval ?? 'Automatic',
      ...(status.state ? { state: status.state } : {}),
    };
    if (status.installedCSV) {
      view.installedCSV = status.installedCSV;
      const v = installed?.spec?.version;
      if (v) view.installedVersion = v;
      if (installed?.status?.phase) view.phase = installed.status.phase;
      const target = status.currentCSV;
      const offered = head(catalog, sub.spec.name, sub.spec.channel);
      const plannedFor = plan?.spec.clusterServiceVersionNames?.includes(target ?? '') ? plan : undefined;
      if (target && target !== status.installedCSV) {
        const version = offered && offered.csv === target ? offered.version : undefined;
        view.upgrade = {
          csv: target,
          ...(version ? { version } : {}),
          waitsForApproval: plannedFor !== undefined && waits,
        };
      } else if (offered && offered.csv !== status.installedCSV && isNewer(offered.version, v)) {
        view.upgrade = {
          csv: offered.csv,
          ...(offered.version ? { version: offered.version } : {}),
          waitsForApproval: false,
        };
      }
    } else if (waits) {
      view.installWaitsForApproval = true;
    }
    const id = packageId(catalog, sub.spec.name);
    const list = out.get(id);
    if (list) list.push(view);
    else out.set(id, [view]);
  }
  for (const list of out.values()) list.sort((a, b) => a.namespace.localeCompare(b.namespace));
  return out;
}

/** True when `offered` is a newer version than `installed`; unknown versions are taken as newer. */
function isNewer(offered: string | undefined, installed: string | undefined): boolean {
  const a = parseVersion(offered);
  const b = parseVersion(installed);
  return a === undefined || b === undefined || compareVersions(a, b) > 0;
}
